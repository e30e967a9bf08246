"""From a stored log to a live session: crash repair, validation and what load reports.

A store reads a log (setting a torn JSONL tail aside: load moves its bytes to a sidecar
file before the log is shortened, read only reports it), then :func:`restore_session` closes
any turn the crash left open with the core's interrupted-turn closers, validates the
whole result and appends ``session/end-seed``. The store makes everything appended
here durable before ``load`` returns, so loading the same log again finds it balanced
and the synthetic results keep their ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from dsh_llm._attachment_ref import AttachmentRef
from dsh_llm._messages import Message
from dsh_session._header import SessionHeader
from dsh_session._repair import interrupted_turn_closers
from dsh_session._session import Session
from dsh_session.events import LogEvent, SessionEvent
from dsh_session.stores._attachments import message_attachments


@dataclass(frozen=True)
class TornTail:
    """The incomplete end of a JSONL log: what a crash in the middle of an append
    leaves behind. Nothing in it was ever reported durable by a flush, yet its bytes
    are never destroyed: load moves them to :attr:`sidecar` before it shortens the
    log; an inspecting read leaves the file alone and only reports them."""

    line: int
    """1-based line number (the header is line 1) where the torn tail starts."""
    offset: int
    """Byte offset at which the torn tail starts (where load shortens the file)."""
    dropped_bytes: int
    """How many bytes the torn tail holds."""
    reason: str
    """Why the tail is considered torn, e.g. ``the last line is incomplete``."""
    sidecar: str | None = None
    """The file load moved the torn bytes to, next to the log; ``None`` when the log
    was only read (nothing was moved)."""

    def describe(self) -> str:
        """One line for a log message."""
        where = (
            f"moved to {self.sidecar}"
            if self.sidecar
            else "left in the file (loading moves it to a sidecar)"
        )
        return (
            f"a torn tail of {self.dropped_bytes} byte(s) from line {self.line} "
            f"(offset {self.offset}), {where}: {self.reason}"
        )


@dataclass(frozen=True)
class StoredLog:
    """A log as read from storage, before repair."""

    header: SessionHeader
    events: list[LogEvent]
    """The complete, validated-as-rows events, seq 0, 1, 2, ..."""
    torn_tail: TornTail | None = None
    torn_bytes: bytes = field(default=b"", repr=False)
    """The torn tail's bytes as read, for the sidecar load writes."""
    session: Session | None = field(default=None, repr=False)
    """The session :attr:`events` make, checked by the log rules while they were read
    (:func:`~dsh_session._parse.parse_log`); ``None`` when the store did not build it
    or a rule failed: :func:`restore_session` then checks the events itself."""

    def attachments(self) -> list[tuple[Message, AttachmentRef]]:
        """Every attachment the log's messages hold, with its message: none without a
        look when the checked :attr:`session` saw no message that may hold one (its
        events are exact validated classes, each seen by the log rules)."""
        if self.session is not None and not self.session._state.surface.may_hold_attachments:
            return []
        return list(message_attachments(self.events))


@dataclass(frozen=True)
class LoadReport:
    """What :meth:`SessionStore.load` found and wrote: the torn tail it set aside (JSONL
    only) and the events it appended (interrupted-turn closers, ``session/end-seed``)."""

    torn_tail: TornTail | None
    appended: tuple[LogEvent, ...]

    @property
    def repaired(self) -> bool:
        """True when a crash had left a turn open and load closed it."""
        return any(event.type != "session/end-seed" for event in self.appended)


def restore_session(
    header: SessionHeader,
    events: Sequence[SessionEvent],
    *,
    resuming: bool = True,
    close_open_turn: bool = True,
    built: Session | None = None,
) -> Session:
    """Build the session a stored log describes: close a turn left open by a crash,
    validate the whole log, and, when ``resuming``, append ``session/end-seed`` unless
    it already ends with one (a reader that only inspects the log leaves that marker
    out: it would be stamped with the time of the read). Everything past
    ``len(events)`` in the result is new and not durable. Without ``close_open_turn``
    a turn left open stays open, for a caller that finishes its interrupted step
    itself (``dsh_agent.temporal``'s activities). ``built`` is the session ``events``
    make, already checked (:attr:`StoredLog.session`): used as it is unless a turn
    must be closed."""
    open_at_end = close_open_turn and _ends_inside_a_turn(events)
    closers = interrupted_turn_closers(events) if open_at_end else []
    if built is not None and not closers and built.seq == len(events):
        session = built
    else:
        session = Session.from_log(header, [*events, *closers])
    if resuming and (not session.seq or session.events[-1].type != "session/end-seed"):
        session.append("session/end-seed", {})
    return session


def _ends_inside_a_turn(events: Sequence[SessionEvent]) -> bool:
    """Whether the last turn never ended: found from the end, so a balanced log (the
    common case) costs one short backward scan instead of a pass over every event."""
    for event in reversed(events):
        if event.type == "turn/end":
            return False
        if event.type == "turn/start":
            return True
    return False


__all__ = [
    "LoadReport",
    "StoredLog",
    "TornTail",
    "restore_session",
]
