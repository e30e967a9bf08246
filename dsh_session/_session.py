"""The session: a header plus an append-only, validated event log.

``append`` validates the whole event (payload shape, surface op, ``sourceEventSeqs``,
turn/step enclosure, tool call/result pairing) *before* anything changes, then commits
it and only then notifies observers: a rejected append leaves the log, its seq and its
observers untouched. Messages inside events are stored as the very objects given (they
are already deep-frozen), and ``derive_messages()`` hands those same objects back.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from pydantic import ValidationError

from dsh_llm._messages import Message
from dsh_session._header import SessionHeader, SessionId, new_session_id, now_ms
from dsh_session._log_state import LogState, rule_of
from dsh_session._surface_view import SurfaceView
from dsh_session._views import PrefixView
from dsh_session.errors import SessionCorruptError, SessionValidationError
from dsh_session.events import (
    EVENT_CLASSES,
    SURFACE_TYPES,
    LogEvent,
    RequestHeader,
    SessionEvent,
    SurfaceOp,
)

if TYPE_CHECKING:
    from dsh_session._typed_append import TypedAppend

logger = logging.getLogger("dsh_session")

_APPENDS: dict[str, tuple[Callable[[Any], Any], Callable[[LogState, Any], None] | None]] = {
    type: (event_class.__pydantic_validator__.validate_python, rule_of(event_class))
    for type, event_class in EVENT_CLASSES.items()
}
"""Per type, its concrete validator and its log rule, bound once: the same validation
as ``model_validate`` and the same check as ``LogState.advance``, without their
wrappers and look-ups per append (the validator builds exactly the type's class)."""
Observer = Callable[[LogEvent], None]
"""Called synchronously with each committed event (typed as :attr:`Session.events`
items are, so it narrows on ``event.type``)."""


class Session:
    """One conversation's durable log. Build it with :meth:`create`, :meth:`from_log`
    or :meth:`fork`; change it only through :meth:`append`."""

    __slots__ = ("_events", "_header", "_notifying", "_observers", "_state", "_view")

    def __init__(self, header: SessionHeader) -> None:
        """An empty session with ``header``; prefer :meth:`create`."""
        self._header = header
        self._events: list[SessionEvent] = []
        self._state = LogState(self._events)
        self._observers: dict[object, Observer] = {}
        self._notifying = False
        self._view: PrefixView[SessionEvent] = PrefixView(self._events, 0)

    # --- construction -----------------------------------------------------------------

    @classmethod
    def create(
        cls,
        id: str | None = None,
        *,
        seed: Iterable[SessionEvent] | None = None,
        header: SessionHeader | None = None,
    ) -> Session:
        """A new session. ``id`` defaults to a fresh UUIDv7 (or ``header.id``).

        ``seed`` is a log prefix to start from (e.g. events of another session): it is
        validated like a whole log, may not end inside an open turn, and is followed by
        ``session/end-seed``; ``header.seed_length`` records its length.
        """
        header = _new_header(id, header)
        if seed is None:
            return cls(header)
        events = list(seed)
        header = _with_fields(header, seed_length=len(events))
        session = cls._over(header, events, SessionValidationError)
        if session.open_turn is not None:
            raise SessionValidationError(
                f"the seed ends inside turn {session.open_turn}; seed a prefix that ends "
                "between turns",
                seq=len(events) - 1,
            )
        session.append("session/end-seed", {})
        return session

    @classmethod
    def from_log(cls, header: SessionHeader, events: Iterable[SessionEvent]) -> Session:
        """A session over a complete stored log (already repaired, see
        :mod:`dsh_session._repair`). The whole log is validated; a break of any rule
        raises :class:`SessionCorruptError` naming the seq. Nothing is appended."""
        return cls._over(header, events, SessionCorruptError)

    @classmethod
    def _over(
        cls,
        header: SessionHeader,
        events: Iterable[SessionEvent],
        error: type[SessionValidationError] | type[SessionCorruptError],
    ) -> Session:
        session = cls(header)
        log = session._events
        # The rules look earlier events up by seq, so each enters the log before it is
        # checked; a session that fails is never handed out.
        try:
            end = session._state.advance_in_order(events, log)
        except SessionValidationError as rejection:
            raise error(str(rejection), seq=rejection.seq, field=rejection.field) from None
        if end < len(log):
            raise error(_envelope_problem(log[end], end), seq=end)
        return session

    def _take_checked(self, events: Iterator[SessionEvent]) -> bool:
        """Append a stored log's ``events`` to this empty session, each checked by the
        log rules as it comes: ``events`` validates stored rows lazily, so the checks
        read each event while it is still in the CPU's caches (a second pass over a
        100k-event log reads every event back from memory: a fifth of a load). Returns
        whether every rule held; when one did not, the rest are appended unchecked and
        this session must be dropped (``from_log`` on its events names the problem).
        An exception ``events`` raises propagates, :attr:`seq` telling how many came."""
        log = self._events
        try:
            end = self._state.advance_in_order(events, log)
        except SessionValidationError:
            end = -1
        log.extend(events)
        return end == len(log)

    # --- reading ----------------------------------------------------------------------

    @property
    def header(self) -> SessionHeader:
        return self._header

    @property
    def id(self) -> SessionId:
        return self._header.id

    @property
    def seq(self) -> int:
        """The seq the next event will get (= the number of events)."""
        return len(self._events)

    @property
    def events(self) -> Sequence[LogEvent]:
        """All events so far, as an immutable view that never changes once returned.
        Items are typed as the union of event classes, so they narrow on
        ``event.type == "tool/result"`` (or ``isinstance``) under a type checker."""
        if len(self._view) != len(self._events):
            self._view = PrefixView(self._events, len(self._events))
        return cast("Sequence[LogEvent]", self._view)

    @property
    def open_turn(self) -> int | None:
        """The number of the open turn, or ``None`` between turns."""
        return self._state.open_turn

    @property
    def open_step(self) -> int | None:
        """The number of the open step of the open turn, or ``None``."""
        return self._state.open_step

    @property
    def last_turn(self) -> int:
        """The highest turn number started so far (0 if none); the next turn is +1."""
        return self._state.last_turn

    @property
    def request_header(self) -> RequestHeader | None:
        """The latest ``request/header`` snapshot (kept as events are appended)."""
        return self._state.request_header

    def derive_messages(self) -> Sequence[Message]:
        """The model-visible history in surface order, as an immutable sequence that
        never changes once returned. Its elements are the very message objects stored
        in the events. Only events appended since the last call are projected."""
        return self._state.surface.messages()

    @property
    def surface(self) -> SurfaceView:
        """The current surface: each position and the event holding it, as an immutable
        view (O(1)); what a caller needs to write its own ``Replace``."""
        return self._state.surface.view()

    def surface_seq_of(self, message_id: str) -> int | None:
        """The seq of the surface event holding ``message_id`` in derived history, or
        ``None``: a message id is on the surface at most once, so a caller can refuse
        to send it again before writing anything."""
        return self._state.surface.seq_of(message_id)

    def surface_seqs(self) -> tuple[int, ...]:
        """The seqs of the surface events, in surface order: the nodes derived history
        is projected from (an empty assistant message is a node that projects nothing),
        so a caller can write a replace that cites exactly what it shadows."""
        return self._state.surface.nodes()

    # --- appending --------------------------------------------------------------------

    def _append(
        self,
        type: str,
        data: Any,
        *,
        surface_op: SurfaceOp | Mapping[str, Any] | None = None,
        source_event_seqs: Iterable[int] | None = None,
    ) -> SessionEvent:
        """Validate, commit and announce one event; return it.

        ``data`` is the payload model (for ``user/message``, the message) or an
        equivalent mapping, which may hold message objects; those are stored as they
        are. ``surface_op`` defaults to ``"append"`` for surface events and may be a
        :class:`Replace` or its wire mapping. Raises :class:`SessionValidationError`
        (naming the seq and field) and changes nothing when the event is not valid here.

        One function on purpose: this runs for every event of every turn (a streamed
        reply logs a chunk per delta), and each call saved is a few percent of it.
        """
        events = self._events
        seq = len(events)
        if self._notifying:
            raise SessionValidationError(
                f"cannot append {type} from inside an observer of session {self.id!r}: "
                "observers see committed events, they do not extend the log",
                seq=seq,
            )
        steps = _APPENDS.get(type)
        if steps is None:
            raise SessionValidationError(
                f"unknown event type {type!r} for event {seq}; known types: "
                f"{', '.join(sorted(EVENT_CLASSES))}",
                seq=seq,
                field="type",
            )
        validate, rule = steps
        if surface_op is None and type in SURFACE_TYPES:
            surface_op = "append"
        # Event times never go backwards, whatever the clock does.
        time = now_ms()
        if seq and (last := events[-1].time) > time:
            time = last
        # ``type`` is given because a foreign event class stands for several types.
        fields: dict[str, Any] = {"type": type, "seq": seq, "time": time, "data": data}
        if surface_op is not None:
            fields["surfaceOp"] = surface_op
        if source_event_seqs is not None:
            fields["sourceEventSeqs"] = tuple(source_event_seqs)
        try:
            event: SessionEvent = validate(fields)
        except ValidationError as error:
            first = error.errors()[0]
            field = ".".join(str(part) for part in first["loc"])
            raise SessionValidationError(
                f"invalid {type} event {seq}: {field}: {first['msg']}", seq=seq, field=field
            ) from error
        if rule is not None:
            rule(self._state, event)
        events.append(event)
        if self._observers:
            self._announce(event)
        return event

    if TYPE_CHECKING:

        @property
        def append(self) -> TypedAppend:
            """Per-type signatures of :meth:`_append` (see :mod:`dsh_session._typed_append`)."""
            ...

    else:
        append = _append

    # --- observers --------------------------------------------------------------------

    def subscribe(self, observer: Observer) -> Callable[[], None]:
        """Call ``observer`` with every event committed from now on; returns a function
        that unsubscribes it. An observer that raises is logged and does not undo the
        commit or stop the other observers."""
        token = object()
        self._observers[token] = observer

        def unsubscribe() -> None:
            self._observers.pop(token, None)

        return unsubscribe

    def _announce(self, event: SessionEvent) -> None:
        self._notifying = True
        try:
            for observer in tuple(self._observers.values()):
                try:
                    observer(cast("LogEvent", event))
                except Exception:
                    logger.exception(
                        "observer %r of session %r failed on event %d (%s)",
                        observer,
                        self.id,
                        event.seq,
                        event.type,
                    )
        finally:
            self._notifying = False

    # --- fork -------------------------------------------------------------------------

    def fork(self, boundary_seq: int | None = None) -> Session:
        """A new session seeded with the events up to and including ``boundary_seq``,
        the seq of the last event to keep, followed by ``session/end-seed``. The whole
        log is ``fork()`` (or ``fork(session.seq - 1)``): :attr:`seq` is the seq the
        *next* event will get, so ``fork(session.seq)`` is refused. The boundary may not
        fall inside an open turn. The fork's events and messages are the parent's very
        objects; its header names the parent and the seed length."""
        last = len(self._events) - 1
        boundary = last if boundary_seq is None else boundary_seq
        if boundary_seq is not None and not 0 <= boundary_seq <= last:
            hint = (
                "; session.seq is the seq of the next event: fork() keeps the whole log"
                if boundary_seq == len(self._events)
                else ""
            )
            raise SessionValidationError(
                f"fork boundary {boundary_seq} is not an event of session {self.id!r} "
                f"(seqs 0..{last}){hint}",
                seq=boundary_seq,
                field="boundary_seq",
            )
        turn = self._state.turn_open_at(boundary) if boundary >= 0 else None
        if turn is not None:
            raise SessionValidationError(
                f"fork boundary {boundary} falls inside turn {turn} of session {self.id!r}; "
                "fork at an event between turns",
                seq=boundary,
                field="boundary_seq",
            )
        header = SessionHeader(
            id=new_session_id(),
            created_at=now_ms(),
            cwd=self._header.cwd,
            parent_session=self.id,
            seed_length=boundary + 1,
        )
        child = Session._over(header, self._events[: boundary + 1], SessionValidationError)
        child.append("session/end-seed", {})
        return child

    def __repr__(self) -> str:
        return f"Session(id={self.id!r}, events={len(self._events)})"


def _envelope_problem(event: object, expected_seq: int) -> str:
    if not isinstance(event, SessionEvent):
        return (
            f"event {expected_seq} is a {type(event).__name__}, not a session event "
            "(validate raw events with parse_events or SessionEventAdapter)"
        )
    return f"expected the event with seq {expected_seq}, found seq {event.seq}: a gap"


def _new_header(id: str | None, header: SessionHeader | None) -> SessionHeader:
    if header is None:
        try:
            return SessionHeader(id=new_session_id() if id is None else id, created_at=now_ms())
        except ValidationError as error:
            raise SessionValidationError(
                f"invalid session id {id!r}: {error.errors()[0]['msg']}", field="id"
            ) from error
    if id is not None and id != header.id:
        raise SessionValidationError(
            f"Session.create() got id {id!r} and a header for session {header.id!r}",
            field="id",
        )
    return header


def _with_fields(header: SessionHeader, **changes: Any) -> SessionHeader:
    """A validated copy of ``header`` with some fields changed."""
    return SessionHeader.model_validate({**header.model_dump(by_alias=False), **changes})


__all__ = [
    "Observer",
    "Session",
]
