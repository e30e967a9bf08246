"""The mailbox of a :class:`~dsh_session.MemorySessionStore`: entries in this process
only (tests and one-process applications)."""

from __future__ import annotations

from dsh_session._header import SessionId
from dsh_session._mailbox._base import Mailbox
from dsh_session._mailbox._records import MailboxAnswer, MailboxEntry, StoredEntry


class MemoryMailbox(Mailbox):
    _blocking_io = False

    def __init__(self) -> None:
        super().__init__()
        self._queues: dict[SessionId, list[StoredEntry]] = {}

    def _put(self, entry: MailboxEntry) -> tuple[StoredEntry, bool]:
        queue = self._queues.setdefault(entry.session_id, [])
        for stored in queue:
            if stored.entry.key == entry.key:
                return stored, False
        stored = StoredEntry(entry, len(queue))
        queue.append(stored)
        return stored, True

    def _entries(self, session_id: SessionId, from_arrival: int = 0) -> list[StoredEntry]:
        return self._queues.get(session_id, [])[from_arrival:]

    def _answer(self, session_id: SessionId, key: str, answer: MailboxAnswer) -> None:
        queue = self._queues.get(session_id, [])
        for index, stored in enumerate(queue):
            if stored.entry.key == key and stored.answer is None:
                queue[index] = StoredEntry(stored.entry, stored.arrival, answer)

    def _waiting(self) -> list[SessionId]:
        return [sid for sid, queue in self._queues.items() if any(e.answer is None for e in queue)]


__all__ = ["MemoryMailbox"]
