"""Crash repair: the events that close a turn a crash left open.

A process that dies mid-turn leaves a log whose last turn never ended, possibly with
tool calls the model requested but nobody answered. The next request must still be
valid for the provider (every call answered) and the model must learn what happened,
so repair *appends* (never rewrites) closing events after the last one, stamped with
its time:

- a call with no ``tool/call`` gets an error result ``TOOL_NOT_STARTED``;
- a call with a ``tool/call`` but no result gets ``TOOL_OUTCOME_UNKNOWN`` citing the
  call's seq (its side effects may or may not have happened);
- then ``step/end`` for an open step and ``turn/end {interrupted}``.

A turn *waiting on approval* (a call of its open step asked about with
``approval/asked`` and not decided, see :mod:`dsh_session._approvals`) is not a crash
to close: a person can still answer, and the calls not started yet may still run. Its
started calls without a result get ``TOOL_OUTCOME_UNKNOWN`` (they are never rerun),
and the step and turn stay open for the agent that resumes them.

Repair is deterministic: a synthetic result's id is
``interrupted-tool-result-<callId>-<seq of that result event>``, so repairing the same
log twice gives equal events. A store calls :func:`interrupted_turn_closers` on the
parsed events, appends what it returns, then builds the session with
``Session.from_log`` and appends ``session/end-seed``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dsh_llm._content import ToolCallBlock
from dsh_llm._create import freeze_message
from dsh_llm._ids import CallId
from dsh_llm._messages import ToolResultMessage
from dsh_session._approvals import undecided_call_ids
from dsh_session.events import (
    AssistantMessageEvent,
    InterruptedReason,
    LogEvent,
    SessionEvent,
    StepData,
    StepEndEvent,
    StepStartEvent,
    ToolCallEvent,
    ToolErrorInfo,
    ToolResultData,
    ToolResultEvent,
    TurnEndData,
    TurnEndEvent,
    TurnStartEvent,
)
from dsh_session.tool_failure_codes import TOOL_NOT_STARTED, TOOL_OUTCOME_UNKNOWN

OUTCOME_UNKNOWN_TEXT = (
    "The tool call was interrupted after it was recorded, but no result was durably "
    "recorded. Its outcome is unknown. Decide whether to retry from the tool semantics: "
    "retry only if the operation is read-only or idempotent; if it may have side effects, "
    "first verify external state or ask the user. Do not retry blindly."
)
NOT_STARTED_TEXT = (
    "The tool call was interrupted before the Harness recorded it as started. "
    "Retry it if it is still needed."
)
OUTCOME_UNKNOWN = ToolErrorInfo(name="ToolOutcomeUnknownError", code=TOOL_OUTCOME_UNKNOWN)
NOT_STARTED = ToolErrorInfo(name="ToolNotStartedError", code=TOOL_NOT_STARTED)


@dataclass
class _Call:
    """A requested call still awaiting its result."""

    step: int
    call_seq: int | None = None
    """The seq of its ``tool/call`` once it started."""


def interrupted_turn_closers(events: Sequence[SessionEvent]) -> list[LogEvent]:
    """The events that close the turn left open at the end of ``events`` (seq
    0, 1, 2, ... in order), or ``[]`` when no turn is open. For a turn waiting on
    approval, only the results of its started calls (the turn stays open)."""
    open_turn: int | None = None
    open_step: int | None = None
    awaiting: dict[CallId, _Call] = {}
    for index in range(_last_turn_start(events), len(events)):
        event = events[index]
        if isinstance(event, TurnStartEvent):
            open_turn, open_step = event.data.turn, None
            awaiting.clear()
        elif isinstance(event, TurnEndEvent):
            open_turn = open_step = None
            awaiting.clear()
        elif isinstance(event, StepStartEvent):
            open_step = event.data.step
        elif isinstance(event, StepEndEvent):
            open_step = None
            awaiting.clear()
        elif isinstance(event, AssistantMessageEvent):
            for block in event.data.message.content:
                if isinstance(block, ToolCallBlock):
                    awaiting[block.call_id] = _Call(step=event.data.step)
        elif isinstance(event, ToolCallEvent):
            call = awaiting.get(event.data.call_id)
            if call is not None:
                call.call_seq = event.seq
        elif isinstance(event, ToolResultEvent):
            awaiting.pop(event.data.message.source.call_id, None)
    if open_turn is None:
        return []
    turn = open_turn
    seq, time = events[-1].seq + 1, events[-1].time
    waiting = open_step is not None and not undecided_call_ids(events).isdisjoint(awaiting)
    closers: list[LogEvent] = []
    for call_id, call in awaiting.items():
        if waiting and call.call_seq is None:
            continue  # not started: it runs (or is denied) when the turn resumes
        closers.append(_interrupted_result(turn, call_id, call, seq, time))
        seq += 1
    if waiting:
        return closers
    if open_step is not None:
        closers.append(StepEndEvent(seq=seq, time=time, data=StepData(turn=turn, step=open_step)))
        seq += 1
    closers.append(
        TurnEndEvent(seq=seq, time=time, data=TurnEndData(turn=turn, reason=InterruptedReason()))
    )
    return closers


def _last_turn_start(events: Sequence[SessionEvent]) -> int:
    """Where the scan for an open turn starts: at the last ``turn/start`` (each one
    resets the state, so what comes before it cannot matter), scanned from the end so
    loading a long log does not walk all of it; ``len(events)`` when there is none."""
    for index in range(len(events) - 1, -1, -1):
        if isinstance(events[index], TurnStartEvent):
            return index
    return len(events)


def _interrupted_result(
    turn: int, call_id: CallId, call: _Call, seq: int, time: int
) -> ToolResultEvent:
    started = call.call_seq is not None
    message = freeze_message(
        {
            "id": f"interrupted-tool-result-{call_id}-{seq}",
            "role": "user",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": call_id,
                    "content": [
                        {
                            "type": "text",
                            "text": OUTCOME_UNKNOWN_TEXT if started else NOT_STARTED_TEXT,
                        }
                    ],
                    "isError": True,
                }
            ],
            "source": {"kind": "tool", "callId": call_id},
        }
    )
    assert isinstance(message, ToolResultMessage)
    return ToolResultEvent(
        seq=seq,
        time=time,
        data=ToolResultData(
            turn=turn,
            step=call.step,
            message=message,
            error=OUTCOME_UNKNOWN if started else NOT_STARTED,
        ),
        surface_op="append",
        source_event_seqs=(call.call_seq,) if call.call_seq is not None else None,
    )


__all__ = [
    "NOT_STARTED",
    "NOT_STARTED_TEXT",
    "OUTCOME_UNKNOWN",
    "OUTCOME_UNKNOWN_TEXT",
    "interrupted_turn_closers",
]
