"""What a client or a worker reads from a session's durable log: whether a message id
is already there (logged or pending in the inbox), and whether the session is idle.

A store's ``read`` closes, in memory, a turn the log leaves open (as a load after a
crash would); a running owner's log is open mid-turn, so the checks look at the events
as stored: the read session without the closers the read appended.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from dsh_agent.inbox import Inbox
from dsh_llm._messages import UserMessage
from dsh_session._approvals import undecided_call_ids
from dsh_session._session import Session
from dsh_session.events import (
    InboxSplicedEvent,
    SessionEvent,
    TurnEndEvent,
    TurnStartEvent,
    UserMessageEvent,
)
from dsh_session.stores import LoadReport


@dataclass(frozen=True)
class StoredState:
    """A session as its store holds it."""

    session: Session
    """Read and validated (with any open turn closed in memory)."""
    events: Sequence[SessionEvent]
    """The events as stored (a running turn still open)."""

    @classmethod
    def of(cls, session: Session, report: LoadReport) -> StoredState:
        return cls(session, session.events[: session.seq - len(report.appended)])

    def logged_message(self, message_id: str) -> UserMessage | None:
        """The user message with ``message_id`` in the log (entered, or spliced into
        the inbox), or ``None``."""
        return logged_message(self.events, message_id)

    def turn_running(self) -> bool:
        """A turn is open and not just waiting for a person's approval."""
        open_turn = next(
            (e for e in reversed(self.events) if isinstance(e, TurnStartEvent | TurnEndEvent)),
            None,
        )
        return isinstance(open_turn, TurnStartEvent) and not undecided_call_ids(self.events)

    def has_pending_input(self) -> bool:
        """The durable inbox holds a followup no turn has claimed yet (injected input
        waits for a turn it does not start; a steer stays unanswered until it enters)."""
        return bool(Inbox(self.session, lambda _: None).next_turn)


def logged_message(events: Sequence[SessionEvent], message_id: str) -> UserMessage | None:
    """The user message with ``message_id`` in ``events`` (entered, or spliced into the
    inbox), or ``None``."""
    for event in events:
        if isinstance(event, UserMessageEvent) and event.data.id == message_id:
            return event.data
        if isinstance(event, InboxSplicedEvent):
            for inserted in event.data.inserted:
                if inserted.id == message_id:
                    return inserted
    return None


InboxFate = Literal["pending", "claimed", "canceled"]
"""Where a spliced message went: still pending, claimed by a turn, discarded."""


def inbox_fate(events: Sequence[SessionEvent], message_id: str) -> tuple[InboxFate, int] | None:
    """What the inbox splices in ``events`` did last with ``message_id``, and the seq
    of that splice (``None``: it was never spliced in). Replays the two lists as the
    inbox does."""
    lists: dict[str, list[str]] = {"next-turn": [], "next-step": []}
    fate: tuple[InboxFate, int] | None = None
    for event in events:
        if not isinstance(event, InboxSplicedEvent):
            continue
        data = event.data
        items = lists[data.target]
        end = data.start + (data.removed_count or 0)
        if message_id in items[data.start : end]:
            fate = ("canceled" if data.outcome == "canceled" else "claimed", event.seq)
        inserted = [m.id for m in data.inserted]
        if message_id in inserted:
            fate = ("pending", event.seq)
        items[data.start : end] = inserted
    return fate


__all__ = ["InboxFate", "StoredState", "inbox_fate", "logged_message"]
