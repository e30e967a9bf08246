"""The durable inbox: the two pending lists of an agent.

Every change is one ``agent/inbox/spliced`` event appended *before* the list changes
(a synchronous session observer still sees the old lists), so the pending lists can be
rebuilt from the log. A message id may be pending at most once across both lists.
The lists hold the caller's very message objects.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Literal

from dsh_agent._live_updates import InboxTarget, LiveUpdate, MessageDiscarded, MessageQueued
from dsh_agent.errors import AgentClosedError, InboxError
from dsh_llm._create import freeze_message
from dsh_llm._ids import MessageId
from dsh_llm._messages import UserMessage
from dsh_session._session import Session
from dsh_session.events import InboxSplicedData

_TARGETS: tuple[InboxTarget, InboxTarget] = ("next-turn", "next-step")
_CLEAR_ORDER: tuple[InboxTarget, InboxTarget] = ("next-step", "next-turn")


def _admit(message: UserMessage) -> UserMessage:
    """Import ``message`` (keeping its id, and the object itself when it already is a
    dsh value); only user messages may be pending."""
    frozen = freeze_message(message)
    if type(frozen) is not UserMessage:
        raise TypeError(
            f"the inbox holds UserMessage values, not {type(frozen).__name__} "
            f"(message {frozen.id!r})"
        )
    return frozen


def check_target(target: str) -> InboxTarget:
    """Return ``target`` if it names a pending list, else raise ``ValueError``."""
    if target not in _TARGETS:
        raise ValueError(f"inbox target must be 'next-turn' or 'next-step', not {target!r}")
    return target


class Inbox:
    """Pending input of one agent: ``next_turn`` (one item per turn, oldest first) and
    ``next_step`` (all items enter the next step)."""

    __slots__ = ("_closed", "_lists", "_notify", "_session")

    def __init__(self, session: Session, notify: Callable[[LiveUpdate], None]) -> None:
        """Rebuild the pending lists by replaying the splices logged after the seeded
        prefix (so a fork starts empty), then give back what a crash took from them;
        restored items wake nobody."""
        self._session = session
        self._notify = notify
        self._lists: dict[InboxTarget, list[UserMessage]] = {"next-turn": [], "next-step": []}
        self._closed = False
        lost = self._replay()
        for target, messages in lost:
            self._change(target, 0, 0, messages)

    def close(self) -> None:
        """Refuse every later change (its agent loop was closed): the pending lists
        stay in the log for the next loop over the session."""
        self._closed = True

    @property
    def next_turn(self) -> tuple[UserMessage, ...]:
        """Pending followups, oldest first; a turn takes at most one."""
        return tuple(self._lists["next-turn"])

    @property
    def next_step(self) -> tuple[UserMessage, ...]:
        """Pending steers and injections; the next step boundary takes them all."""
        return tuple(self._lists["next-step"])

    @property
    def has_pending(self) -> bool:
        return bool(self._lists["next-turn"] or self._lists["next-step"])

    # --- caller changes (outcome "canceled" for removals) ---------------------------

    def append(self, target: InboxTarget, message: UserMessage) -> None:
        """Add ``message`` at the end of ``target``. Does not wake the agent."""
        target = check_target(target)
        self._change(target, len(self._lists[target]), 0, (_admit(message),))

    def prepend(self, target: InboxTarget, message: UserMessage) -> None:
        """Add ``message`` at the front of ``target``. Does not wake the agent."""
        self._change(check_target(target), 0, 0, (_admit(message),))

    def splice(
        self,
        target: InboxTarget,
        start: int,
        delete_count: int = 0,
        inserted: Iterable[UserMessage] = (),
    ) -> tuple[UserMessage, ...]:
        """Remove ``delete_count`` items at ``start`` of ``target`` and insert ``inserted``
        there, like ``Array.prototype.splice``: a negative ``start`` counts from the end
        and both are clamped to the list. Returns the removed (discarded) messages."""
        target = check_target(target)
        items = self._lists[target]
        start = max(len(items) + start, 0) if start < 0 else min(start, len(items))
        delete_count = min(max(delete_count, 0), len(items) - start)
        return self._change(target, start, delete_count, tuple(map(_admit, inserted)))

    def replace(self, message_id: MessageId, new: UserMessage) -> bool:
        """Replace the pending message ``message_id`` with ``new`` (which may keep or
        change the id). Returns ``False``, writing nothing, when it is not pending."""
        found = self._find(message_id)
        if found is None:
            return False
        self._change(*found, 1, (_admit(new),))
        return True

    def remove(self, message_id: MessageId) -> bool:
        """Discard the pending message ``message_id``; ``False`` when it is not pending."""
        found = self._find(message_id)
        if found is None:
            return False
        self._change(*found, 1, ())
        return True

    def clear(self) -> tuple[UserMessage, ...]:
        """Discard everything pending (next-step first); returns what was discarded."""
        removed: list[UserMessage] = []
        for target in _CLEAR_ORDER:
            removed.extend(self._change(target, 0, len(self._lists[target]), ()))
        return tuple(removed)

    # --- claims (used by the loop; plain deletions, no outcome, no live update) ------

    def claim_first_step(self) -> tuple[UserMessage, ...]:
        """Claim for a turn's first step: all next-step items plus the oldest next-turn
        item, so two followups are never merged into one turn."""
        claimed = self.claim_next_step()
        if self._lists["next-turn"]:
            return (*claimed, *self._change("next-turn", 0, 1, (), outcome=None))
        return claimed

    def claim_next_step(self) -> tuple[UserMessage, ...]:
        """Claim for a later step boundary: all next-step items."""
        pending = self._lists["next-step"]
        if not pending:
            return ()
        return self._change("next-step", 0, len(pending), (), outcome=None)

    # --- the one mutation path --------------------------------------------------------

    def _find(self, message_id: MessageId) -> tuple[InboxTarget, int] | None:
        for target in _TARGETS:
            for index, message in enumerate(self._lists[target]):
                if message.id == message_id:
                    return target, index
        return None

    def _change(
        self,
        target: InboxTarget,
        start: int,
        delete_count: int,
        inserted: tuple[UserMessage, ...],
        *,
        outcome: Literal["canceled"] | None = "canceled",
    ) -> tuple[UserMessage, ...]:
        """Record the splice durably, then apply it, then notify. A splice that changes
        nothing writes nothing; one that would make an id pending twice raises."""
        if self._closed:
            session_id = self._session.id
            raise AgentClosedError(
                f"the inbox of session {session_id!r} belongs to a closed agent loop",
                session_id=session_id,
            )
        if not delete_count and not inserted:
            return ()
        items = self._lists[target]
        duplicate = self._duplicate_id(target, start, delete_count, inserted)
        if duplicate is not None:
            raise InboxError(
                f"message {duplicate!r} is already pending in the inbox", message_id=duplicate
            )
        self._refuse_delivered(inserted)
        self._session.append(
            "agent/inbox/spliced",
            InboxSplicedData(
                target=target,
                start=start,
                removed_count=delete_count or None,
                inserted=inserted,
                outcome=outcome if delete_count else None,
            ),
        )
        removed = tuple(items[start : start + delete_count])
        items[start : start + delete_count] = inserted
        if outcome is not None:
            for message in removed:
                self._notify(MessageDiscarded(message))
            for message in inserted:
                self._notify(MessageQueued(message))
        return removed

    def _duplicate_id(
        self,
        target: InboxTarget,
        start: int,
        delete_count: int,
        inserted: Sequence[UserMessage],
    ) -> MessageId | None:
        """The first inserted id that would be pending twice after the splice, if any."""
        if not inserted:
            return None
        items = self._lists[target]
        other = self._lists["next-step" if target == "next-turn" else "next-turn"]
        kept = (*items[:start], *items[start + delete_count :], *other)
        pending = {message.id for message in kept}
        for message in inserted:
            if message.id in pending:
                return message.id
            pending.add(message.id)
        return None

    def _refuse_delivered(self, inserted: tuple[UserMessage, ...]) -> None:
        """One id appears once in derived history: a message already delivered cannot
        be sent again (a retry or regenerate needs a new message, or a replace)."""
        for message in inserted:
            seq = self._session.surface_seq_of(message.id)
            if seq is not None:
                raise InboxError(
                    f"message {message.id!r} is already in the history of session "
                    f"{self._session.id!r} (event {seq}); create a new message "
                    "(create_user_message) to send the same text again",
                    message_id=message.id,
                    seq=seq,
                )

    def _replay(self) -> list[tuple[InboxTarget, tuple[UserMessage, ...]]]:
        """Replay the splices; return the input a crash took: messages a turn claimed
        whose step never started (no pre-step decided about them) and which the
        repair then closed ``interrupted``, none of them ever delivered. A turn claims,
        flushes, then runs its pre-step, so the claim can be durable without them."""
        first = self._session.header.seed_length or 0
        events = self._session.events
        claimed: list[tuple[InboxTarget, tuple[UserMessage, ...]]] = []
        lost: list[tuple[InboxTarget, tuple[UserMessage, ...]]] = []
        delivered: set[MessageId] = set()
        for seq in range(first, len(events)):
            event = events[seq]
            if event.type == "user/message":
                delivered.add(event.data.id)
            elif event.type in ("step/start", "turn/start"):
                claimed = []  # a step started: its pre-step decided about its claims
            elif event.type == "turn/end":
                if event.data.reason.kind == "interrupted":
                    lost.extend(claimed)
                claimed = []
            if event.type != "agent/inbox/spliced":
                continue
            data: InboxSplicedData = event.data
            items = self._lists[data.target]
            removed = data.removed_count or 0
            if data.start + removed > len(items):
                raise InboxError(
                    f"invalid persisted inbox splice at seq {seq}: start {data.start} and "
                    f"removedCount {removed} do not fit the {data.target} list of "
                    f"{len(items)} item(s)",
                    seq=seq,
                )
            duplicate = self._duplicate_id(data.target, data.start, removed, data.inserted)
            if duplicate is not None:
                raise InboxError(
                    f"invalid persisted inbox splice at seq {seq}: message {duplicate!r} "
                    "would be pending twice",
                    message_id=duplicate,
                    seq=seq,
                )
            if data.outcome is None and removed and not data.inserted:  # a turn's claim
                claimed.append((data.target, tuple(items[data.start : data.start + removed])))
            items[data.start : data.start + removed] = data.inserted
        return [
            (target, kept)
            for target, messages in lost
            if (kept := tuple(m for m in messages if m.id not in delivered))
        ]


__all__ = [
    "Inbox",
    "check_target",
]
