"""The structural rules of a log, checked one event at a time.

:class:`LogState` is the state a log is in after its events so far: the open turn and
step, the tool calls of the open step still awaiting a result, where each turn started
and ended, the latest request header, and the surface. ``advance`` checks the next
event against it and applies it, in one dispatch per event; an event that may not come
next raises before anything changes. Live append and whole-log validation run the same
rules, so a log this package wrote always loads, and validity is prefix-closed (every
prefix of a valid log is valid).

The rules:

- ``turn/start`` numbers the next turn (last + 1) and needs no turn open; ``turn/end``
  closes the open turn once its step is closed. ``session/end-seed`` may come anywhere:
  the harness writes it inside the open turn when a seed was cut mid-turn.
- ``step/start`` opens the next step (last + 1, from 1 in each turn) of the open turn;
  ``step/end`` closes it.
- ``assistant/chunk``, ``assistant/message``, ``tool/call`` and ``tool/result`` that
  append belong to the open step and name its turn and step.
- A ``tool/call`` names a call requested by an assistant message of the open step and
  not yet started; a ``tool/result`` answers a requested call not yet answered (it may
  come without a ``tool/call`` when the call never started). ``step/end`` forgets calls
  left unanswered, as the reference harness does.
- Surface replaces (compaction) are surface maintenance: they may come between turns,
  and their own rules live in :mod:`dsh_session._surface`.
- Every other event (request headers and context, compaction, retries, approvals, the
  harness's foreign types) may come anywhere. The harness's optional checker
  (core/session invariant.ts) is stricter in places dsh's writers already respect; see
  docs/decisions/2026-12-02-harness-vocabulary.md.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NoReturn

from dsh_llm._content import (
    FileBlock,
    ImageBlock,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from dsh_llm._ids import CallId
from dsh_session._surface import Surface
from dsh_session.errors import SessionValidationError
from dsh_session.events import (
    AssistantChunkEvent,
    AssistantMessageEvent,
    InboxSplicedEvent,
    Replace,
    RequestHeader,
    RequestHeaderEvent,
    SessionEvent,
    StepEndEvent,
    StepStartEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnEndEvent,
    TurnStartEvent,
    UserMessageEvent,
)


class LogState:
    """Where a log stands after its events so far; see the module docstring."""

    __slots__ = (
        "_awaiting",
        "_turn_ends",
        "_turn_starts",
        "last_step",
        "last_turn",
        "open_step",
        "open_turn",
        "request_header",
        "surface",
    )

    def __init__(self, events: Sequence[SessionEvent]) -> None:
        self.surface = Surface(events)
        self.open_turn: int | None = None
        """The number of the open turn, or ``None`` between turns."""
        self.open_step: int | None = None
        """The number of the open step of the open turn, or ``None``."""
        self.last_turn = 0
        """The highest turn number started so far (0 if none)."""
        self.last_step = 0
        """The highest step number started in the open (or last) turn."""
        self.request_header: RequestHeader | None = None
        """The latest ``request/header`` snapshot."""
        # Calls requested in the open step and not yet answered: call id -> started.
        self._awaiting: dict[str, bool] = {}
        self._turn_starts: list[int] = []
        self._turn_ends: list[int] = []

    def advance(self, event: SessionEvent) -> None:
        """Check that ``event`` may come next and apply it. Raises
        :class:`SessionValidationError` and changes nothing when it may not."""
        rule = _ADVANCES.get(type(event))
        if rule is not None:
            rule(self, event)

    def advance_in_order(self, events: Iterable[SessionEvent], log: list[SessionEvent]) -> int:
        """:meth:`advance` over a whole log: append each event to ``log`` (the list this
        state's surface reads earlier events from), then check and apply it, while each
        item is the session event whose seq is its position; return how many were
        applied (``len(log)`` at the end, else the position of the one appended last).
        ``events`` may be an iterator validating stored rows as it goes, so each event
        is checked while it is still in the CPU's caches. One dispatch per event and no
        call in between: this is the loop of a load. A chunk (the commonest event) in
        its open step is passed inline, without a call."""
        rule_of = _ADVANCES.get
        append = log.append
        for position, event in enumerate(events):
            append(event)
            cls = type(event)
            if cls is AssistantChunkEvent:
                data = event.data
                if (
                    data.step == self.open_step
                    and data.turn == self.open_turn
                    and event.seq == position
                ):
                    continue
            rule = rule_of(cls)
            if rule is None and not isinstance(event, SessionEvent):
                return position  # anything may be passed at run time
            if event.seq != position:
                return position
            if rule is not None:
                rule(self, event)
        return len(log)

    def turn_open_at(self, seq: int) -> int | None:
        """The turn that is open right after event ``seq`` (``None`` if none is)."""
        index = bisect_right(self._turn_starts, seq) - 1
        if index < 0:
            return None
        if index < len(self._turn_ends) and self._turn_ends[index] <= seq:
            return None
        return index + 1  # turns are numbered 1, 2, ... in log order

    # --- one step per event type: every check first, then the change -----------------
    # Each rule tests the passing case inline (``data.turn == self.open_turn`` can only
    # hold while a turn is open: numbers start at 1) and calls the check that finds and
    # words the problem only when it fails.

    def _advance_turn_start(self, event: TurnStartEvent) -> None:
        if self.open_turn is not None:
            _reject(event, f"turn {self.open_turn} is still open", "type")
        turn = event.data.turn
        if turn != self.last_turn + 1:
            _reject(event, f"the next turn is {self.last_turn + 1}", "data.turn")
        self.open_turn = self.last_turn = turn
        self.last_step = 0
        if self._awaiting:
            self._awaiting.clear()
        self._turn_starts.append(event.seq)

    def _advance_turn_end(self, event: TurnEndEvent) -> None:
        turn = event.data.turn
        if turn != self.open_turn:
            self._check_in_turn(event, turn)
        if self.open_step is not None:
            _reject(event, f"step {self.open_step} is still open", "type")
        self.open_turn = None
        if self._awaiting:
            self._awaiting.clear()
        self._turn_ends.append(event.seq)

    def _advance_step_start(self, event: StepStartEvent) -> None:
        data = event.data
        if data.turn != self.open_turn:
            self._check_in_turn(event, data.turn)
        if self.open_step is not None:
            _reject(event, f"step {self.open_step} is still open", "type")
        if data.step != self.last_step + 1:
            _reject(
                event,
                f"the next step of turn {self.open_turn} is {self.last_step + 1}",
                "data.step",
            )
        self.open_step = self.last_step = data.step

    def _advance_step_end(self, event: StepEndEvent) -> None:
        data = event.data
        if data.step != self.open_step or data.turn != self.open_turn:
            self._check_in_step(event, data.turn, data.step)
        self.open_step = None
        if self._awaiting:
            self._awaiting.clear()

    def _advance_chunk(self, event: AssistantChunkEvent) -> None:
        data = event.data
        if data.step != self.open_step or data.turn != self.open_turn:
            self._check_in_step(event, data.turn, data.step)

    def _advance_surface_only(self, event: SessionEvent) -> None:
        # A user message, or a replace (surface maintenance, checked by the surface).
        self.surface.put(event)

    def _advance_assistant_message(self, event: AssistantMessageEvent) -> None:
        op = event.surface_op
        if op != "append" and isinstance(op, Replace):
            self.surface.put(event)
            return
        data = event.data
        if data.step != self.open_step or data.turn != self.open_turn:
            self._check_in_step(event, data.turn, data.step)
        calls = [
            block.call_id
            for block in data.message.content
            if type(block) not in _NOT_CALLS and isinstance(block, ToolCallBlock)
        ]
        if calls:
            requested: set[CallId] = set()
            for call_id in calls:
                if call_id in self._awaiting or call_id in requested:
                    _reject(
                        event,
                        f"tool call {call_id!r} is already awaiting a result in this step",
                        "data.message.content",
                    )
                requested.add(call_id)
        self.surface.put(event)  # the last check, and the first change
        for call_id in calls:
            self._awaiting[call_id] = False

    def _advance_tool_call(self, event: ToolCallEvent) -> None:
        data = event.data
        if data.step != self.open_step or data.turn != self.open_turn:
            self._check_in_step(event, data.turn, data.step)
        started = self._awaiting.get(data.call_id)
        if started is None:
            _reject(
                event,
                f"no assistant message of step {self.open_step} requested call "
                f"{data.call_id!r}, or it was already answered",
                "data.callId",
            )
        if started:
            _reject(event, f"call {data.call_id!r} was already started", "data.callId")
        self._awaiting[data.call_id] = True

    def _advance_tool_result(self, event: ToolResultEvent) -> None:
        op = event.surface_op
        if op != "append" and isinstance(op, Replace):  # a content rewrite
            self.surface.put(event)
            return
        data = event.data
        if data.step != self.open_step or data.turn != self.open_turn:
            self._check_in_step(event, data.turn, data.step)
        call_id = data.message.source.call_id
        if call_id not in self._awaiting:
            _reject(
                event,
                f"no assistant message of step {self.open_step} requested call {call_id!r}, "
                "or it was already answered",
                "data.message.source.callId",
            )
        self.surface.put(event)
        del self._awaiting[call_id]

    def _advance_inbox_spliced(self, event: InboxSplicedEvent) -> None:
        # Not on the surface, but its messages may hold attachments.
        self.surface.may_hold_attachments = True

    def _advance_request_header(self, event: RequestHeaderEvent) -> None:
        self.request_header = event.data.header

    def _check_in_turn(self, event: SessionEvent, turn: int) -> None:
        if self.open_turn is None:
            _reject(event, "no turn is open", "type")
        if turn != self.open_turn:
            _reject(event, f"turn {self.open_turn} is open, not turn {turn}", "data.turn")

    def _check_in_step(self, event: SessionEvent, turn: int, step: int) -> None:
        self._check_in_turn(event, turn)
        if self.open_step is None:
            _reject(event, f"no step of turn {self.open_turn} is open", "type")
        if step != self.open_step:
            _reject(event, f"step {self.open_step} is open, not step {step}", "data.step")


def _reject(event: SessionEvent, problem: str, field: str) -> NoReturn:
    raise SessionValidationError(
        f"{event.type} event {event.seq} is out of place: {problem}", seq=event.seq, field=field
    )


_NOT_CALLS = frozenset({TextBlock, ReasoningBlock, ImageBlock, FileBlock, ToolResultBlock})
"""Block classes that are not tool calls, exactly (a failed ``isinstance`` of a pydantic
class costs more than this look-up; any other class is asked with ``isinstance``)."""

# Dispatch on the exact event class: one dict lookup per event instead of a chain of
# isinstance checks (this is the hot loop of appending and of loading a long log).
# Types not listed (request context, compaction, retries, approvals, foreign types) may
# come anywhere and change nothing here.
_ADVANCES: dict[type[SessionEvent], Callable[[LogState, Any], None]] = {
    TurnStartEvent: LogState._advance_turn_start,
    TurnEndEvent: LogState._advance_turn_end,
    StepStartEvent: LogState._advance_step_start,
    StepEndEvent: LogState._advance_step_end,
    AssistantChunkEvent: LogState._advance_chunk,
    UserMessageEvent: LogState._advance_surface_only,
    AssistantMessageEvent: LogState._advance_assistant_message,
    ToolCallEvent: LogState._advance_tool_call,
    ToolResultEvent: LogState._advance_tool_result,
    RequestHeaderEvent: LogState._advance_request_header,
    InboxSplicedEvent: LogState._advance_inbox_spliced,
}


def rule_of(event_class: type[SessionEvent]) -> Callable[[LogState, Any], None] | None:
    """What :meth:`LogState.advance` runs for an event of ``event_class`` (``None``:
    nothing), for a caller that knows the class before it has the event:
    ``Session.append`` binds it once per type instead of looking it up per event."""
    return _ADVANCES.get(event_class)


__all__ = [
    "LogState",
    "rule_of",
]
