"""The model-visible surface of a log and the message history derived from it.

The surface is an ordered list of the seqs of surface events. ``append`` pushes the
event's seq; ``replace {start, end}`` swaps the inclusive range of surface positions
holding ``start`` .. ``end`` for the new event's seq. The raw log is never edited.

Derivation is incremental: a node's projection is kept beside it when it enters the
surface (so loading a long log projects nothing twice), derivation copies the new ones
into a list that only grows, and callers get an immutable :class:`MessageView` of it; a
replace bumps a generation counter so the next derivation builds a new list (old views
keep theirs).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from dsh_llm._content import ReasoningBlock, TextBlock, ToolCallBlock, ToolResultBlock
from dsh_llm._ids import CallId
from dsh_llm._messages import Message
from dsh_session._surface_view import SurfaceView, message_of
from dsh_session._views import MessageView
from dsh_session.errors import SessionValidationError
from dsh_session.events import (
    AssistantMessageEvent,
    Replace,
    SessionEvent,
    ToolResultEvent,
    UserMessageEvent,
)

Span = tuple[int, int]
"""Inclusive surface positions a replace shadows."""


def project(event: SessionEvent) -> Message | None:
    """What a surface node contributes to derived history: its message, except that an
    assistant message with empty content contributes nothing."""
    message = message_of(event)
    return None if message is None else _projection(event, message)


def _projection(event: SessionEvent, message: Message) -> Message | None:
    """What the surface event holding ``message`` shows (see :func:`project`)."""
    if not message.content and isinstance(event, AssistantMessageEvent):
        return None
    return message


class Surface:
    """The surface nodes of one log and the derivation cache over them."""

    __slots__ = (
        "_derived_generation",
        "_events",
        "_generation",
        "_ids",
        "_messages",
        "_nodes",
        "_positions",
        "_projected",
        "_shown",
        "_surface_view",
        "_view",
        "may_hold_attachments",
    )

    def __init__(self, events: Sequence[SessionEvent]) -> None:
        self._events = events  # the log, indexed by seq; the owner appends to it
        self._nodes: list[int] = []
        self._shown: list[Message | None] = []
        """What each node shows in derived history (:func:`project`), in node order."""
        self._positions: dict[int, int] = {}
        """Seq -> its position in ``_nodes``: a replace finds its span in O(1)."""
        self._ids: dict[str, int] = {}
        """Message id -> seq of the surface node holding it: one id is on the surface once."""
        self._generation = 0
        self._messages: list[Message] = []
        self._derived_generation = 0
        self._projected = 0
        self._view: MessageView = MessageView(self._messages, 0)
        self._surface_view = SurfaceView(self._nodes, 0, events, 0)
        self.may_hold_attachments = False
        """Whether a message put here (or an ``inbox/spliced`` event, which the log state
        reports) may hold an attachment: while not, a load skips its attachment scan."""

    def view(self) -> SurfaceView:
        """The current surface as an immutable view (O(1))."""
        view = self._surface_view
        if view.generation != self._generation or len(view) != len(self._nodes):
            view = SurfaceView(self._nodes, len(self._nodes), self._events, self._generation)
            self._surface_view = view
        return view

    def nodes(self) -> tuple[int, ...]:
        """The seqs of the surface nodes, in surface order."""
        return tuple(self._nodes)

    def seq_of(self, message_id: str) -> int | None:
        """The seq of the surface node holding ``message_id``, if it is on the surface."""
        return self._ids.get(message_id)

    # --- validation -------------------------------------------------------------------

    def put(self, event: SessionEvent) -> None:
        """Validate a surface event against the current surface and apply it; raise
        :class:`SessionValidationError` and change nothing when it may not come.

        Every surface event of a load passes here, so an append (nearly all of them)
        takes each check's passing case inline; a check's own function runs only to
        find and word a problem."""
        seq = event.seq
        sources = event.source_event_seqs
        if sources is not None and not (
            sources
            and max(sources) < seq
            and (len(sources) == 1 or len(set(sources)) == len(sources))
        ):
            _check_sources(event)  # raises, unless an assistant message cites nothing
        cls = type(event)
        if cls is UserMessageEvent:
            message: Message = event.data
        elif cls is AssistantMessageEvent or cls is ToolResultEvent:
            message = event.data.message
        else:
            message = self._message_at(event)
        if not self.may_hold_attachments and content_may_hold_attachments(message.content):
            self.may_hold_attachments = True
        op = event.surface_op
        if op != "append" and isinstance(op, Replace):
            self._replace(event, message, self._check_replace(event, op, message))
        else:
            if message.id in self._ids:
                self._check_id_is_new(event, message, shadowed=())
            self._positions[seq] = len(self._nodes)
            self._nodes.append(seq)
            self._shown.append(message if message.content else _projection(event, message))
        self._ids[message.id] = seq

    def _check_replace(self, event: SessionEvent, op: Replace, message: Message) -> Span:
        """The span a replace shadows, once every rule of a replace holds."""
        span = self._span(event, op)
        shadowed = self._nodes[span[0] : span[1] + 1]
        cited = set(event.source_event_seqs or ())
        missing = [seq for seq in shadowed if seq not in cited]
        if missing:
            raise SessionValidationError(
                f"event {event.seq} replaces surface nodes {op.start}..{op.end} but its "
                f"sourceEventSeqs do not cite shadowed event(s) {missing}",
                seq=event.seq,
                field="sourceEventSeqs",
            )
        if isinstance(event, ToolResultEvent):
            self._check_content_rewrite(event, shadowed)
        else:
            self._check_identity(event, message, shadowed)
            self._check_pairing(event, span)
        self._check_id_is_new(event, message, shadowed=shadowed)
        return span

    def _check_id_is_new(
        self, event: SessionEvent, message: Message, *, shadowed: Sequence[int]
    ) -> None:
        """Derived history never holds one ``MessageId`` twice: a surface event's message
        id may only be one that the event itself shadows (a representation change)."""
        holder = self._ids.get(message.id)
        if holder is None or holder in shadowed:
            return
        raise SessionValidationError(
            f"event {event.seq} puts message {message.id!r} on the surface, but event "
            f"{holder} already holds it there; one id appears once in derived history "
            "(send a new message, or replace that one)",
            seq=event.seq,
            field="data.id" if isinstance(event, UserMessageEvent) else "data.message.id",
        )

    def _span(self, event: SessionEvent, op: Replace) -> Span:
        positions = []
        ends = (
            (("start", op.start),) if op.start == op.end else (("start", op.start), ("end", op.end))
        )
        for name, seq in ends:
            position = self._positions.get(seq)
            if position is None:
                raise SessionValidationError(
                    f"event {event.seq} replaces from {op.start} to {op.end}, but event "
                    f"{seq} is not on the surface",
                    seq=event.seq,
                    field=f"surfaceOp.{name}",
                )
            positions.append(position)
        start, end = positions[0], positions[-1]
        if start > end:
            raise SessionValidationError(
                f"event {event.seq} replaces from {op.start} to {op.end}, but event "
                f"{op.start} comes after event {op.end} on the surface",
                seq=event.seq,
                field="surfaceOp",
            )
        return start, end

    def _check_content_rewrite(self, event: ToolResultEvent, shadowed: list[int]) -> None:
        """A tool/result replace may only rewrite the inner content of one tool result."""
        original = self._events[shadowed[0]] if len(shadowed) == 1 else None
        if not isinstance(original, ToolResultEvent):
            raise SessionValidationError(
                f"tool/result event {event.seq} replaces events {shadowed}: a tool/result "
                "replace must rewrite exactly one tool/result",
                seq=event.seq,
                field="surfaceOp",
            )
        new, old = event.data, original.data
        kept = (
            ("data.message.id", new.message.id, old.message.id),
            ("data.message.source", new.message.source, old.message.source),
            (
                "data.message.content.isError",
                new.message.content[0].is_error,
                old.message.content[0].is_error,
            ),
            ("data.turn", new.turn, old.turn),
            ("data.step", new.step, old.step),
            ("data.error", new.error, old.error),
            ("data.meta", new.meta, old.meta),
        )
        for field, value, original_value in kept:
            if value != original_value:
                raise SessionValidationError(
                    f"tool/result event {event.seq} rewrites event {original.seq} but changes "
                    f"{field} ({original_value!r} -> {value!r}); a content rewrite keeps "
                    "everything except the result content",
                    seq=event.seq,
                    field=field,
                )

    def _check_identity(self, event: SessionEvent, message: Message, shadowed: list[int]) -> None:
        """A message keeping a shadowed message's id is a representation change: it
        must replace exactly that one node, with the same role and source."""
        if all(self._message_at(self._events[seq]).id != message.id for seq in shadowed):
            return  # a new semantic message (e.g. a summary checkpoint)
        original = self._events[shadowed[0]]
        old = self._message_at(original)
        if len(shadowed) != 1 or type(old) is not type(message) or old.source != message.source:
            raise SessionValidationError(
                f"event {event.seq} keeps the id {message.id!r} of a shadowed message, so it "
                "must replace exactly that one message with the same role and source (a new "
                "semantic message needs a new id)",
                seq=event.seq,
                field="data.id" if isinstance(event, UserMessageEvent) else "data.message.id",
            )
        if (
            isinstance(event, AssistantMessageEvent)
            and isinstance(original, AssistantMessageEvent)
            and (event.data.turn, event.data.step) != (original.data.turn, original.data.step)
        ):
            raise SessionValidationError(
                f"assistant/message event {event.seq} rewrites event {original.seq} and must "
                f"keep its turn {original.data.turn} and step {original.data.step}",
                seq=event.seq,
                field="data.turn",
            )

    @staticmethod
    def _message_at(event: SessionEvent) -> Message:
        message = message_of(event)
        assert message is not None, "only surface events are on the surface"
        return message

    def _check_pairing(self, event: SessionEvent, span: Span) -> None:
        """A replace may not cut a tool call from its result: every call/result pair on
        the surface lies wholly inside or wholly outside the shadowed span. Nodes before
        the span matter only when a result inside it answers a call before it, so the
        scan starts at the span (a regenerate's span is the tail: O(span), not
        O(history)) and goes back to the top only for such a result."""
        if not self._scan_pairs(event, span, start=span[0]):
            self._scan_pairs(event, span, start=0)

    def _scan_pairs(self, event: SessionEvent, span: Span, *, start: int) -> bool:
        """Pair results with their calls from surface position ``start`` on, raising at
        a cut pair. Returns False, with no verdict, when a scan starting after the top
        meets a result inside the span whose call it has not seen."""
        first, last = span
        nodes, events = self._nodes, self._events
        requests: dict[CallId, int] = {}
        for position in range(start, len(nodes)):
            node = events[nodes[position]]
            if isinstance(node, AssistantMessageEvent):
                for block in node.data.message.content:
                    if isinstance(block, ToolCallBlock):
                        requests[block.call_id] = position
            elif isinstance(node, ToolResultEvent):
                call_id = node.data.message.source.call_id
                request = requests.pop(call_id, None)
                inside = first <= position <= last
                if request is None:
                    if start and inside:
                        return False
                elif (first <= request <= last) != inside:
                    raise SessionValidationError(
                        f"event {event.seq} replaces surface nodes {nodes[first]}.."
                        f"{nodes[last]}, which would cut tool call {call_id!r} (event "
                        f"{nodes[request]}) from its result (event {nodes[position]})",
                        seq=event.seq,
                        field="surfaceOp",
                    )
        return True

    # --- commit and derivation --------------------------------------------------------

    def _replace(self, event: SessionEvent, message: Message, span: Span) -> None:
        """Swap the checked span of nodes for the replacing event's node."""
        first, last = span
        nodes, positions, shown = self._nodes, self._positions, self._shown
        for seq in nodes[first : last + 1]:
            del positions[seq]
            del self._ids[self._message_at(self._events[seq]).id]
        # New lists, so views taken before keep theirs (they only see appends).
        self._nodes = [*nodes[:first], event.seq, *nodes[last + 1 :]]
        self._shown = [*shown[:first], _projection(event, message), *shown[last + 1 :]]
        positions[event.seq] = first
        if last > first:  # the nodes after the span moved up
            for position in range(first + 1, len(self._nodes)):
                positions[self._nodes[position]] = position
        self._generation += 1

    def messages(self) -> MessageView:
        """The derived history: projected surface nodes, as an immutable view. Only
        nodes appended since the last call are projected, unless a replace happened."""
        if self._derived_generation != self._generation:
            self._messages = []
            self._view = MessageView(self._messages, 0)
            self._projected = 0
            self._derived_generation = self._generation
        shown = self._shown
        if self._projected < len(shown):
            new = shown[self._projected :]
            self._messages.extend([message for message in new if message is not None])
            self._projected = len(shown)
        if len(self._view) != len(self._messages):
            self._view = MessageView(self._messages, len(self._messages))
        return self._view


BLOCKS_WITHOUT_ATTACHMENTS = frozenset({TextBlock, ReasoningBlock, ToolCallBlock})
"""Block classes that never hold an attachment (exact classes: a subclass may)."""


def content_may_hold_attachments(content: Iterable[object]) -> bool:
    """False when every block is of a class :data:`BLOCKS_WITHOUT_ATTACHMENTS` names, or
    a tool result holding only such blocks, at every depth."""
    for block in content:
        cls = type(block)
        if cls in BLOCKS_WITHOUT_ATTACHMENTS:
            continue
        if cls is ToolResultBlock and not content_may_hold_attachments(block.content):  # type: ignore[attr-defined]
            continue
        return True
    return False


def _check_sources(event: SessionEvent) -> None:
    """``sourceEventSeqs``: earlier events only, no duplicates, and non-empty except
    on ``assistant/message`` (a message streamed from no chunks cites nothing)."""
    seqs = event.source_event_seqs
    if seqs is None:
        return
    if not seqs and not isinstance(event, AssistantMessageEvent):
        raise SessionValidationError(
            f"{event.type} event {event.seq} has empty sourceEventSeqs; omit the field "
            "or cite the events it was made from",
            seq=event.seq,
            field="sourceEventSeqs",
        )
    seen: set[int] = set()
    for seq in seqs:
        if seq >= event.seq:
            raise SessionValidationError(
                f"event {event.seq} cites event {seq} in sourceEventSeqs, which is not "
                "an earlier event",
                seq=event.seq,
                field="sourceEventSeqs",
            )
        if seq in seen:
            raise SessionValidationError(
                f"event {event.seq} cites event {seq} twice in sourceEventSeqs",
                seq=event.seq,
                field="sourceEventSeqs",
            )
        seen.add(seq)


__all__ = [
    "BLOCKS_WITHOUT_ATTACHMENTS",
    "Span",
    "Surface",
    "content_may_hold_attachments",
    "project",
]
