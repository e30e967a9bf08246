"""The mailbox of a JSONL store: an append-only file per session, ``dsh-mailbox.jsonl``
in the session's folder (``<id>.jsonl.dsh-mailbox`` beside a flat log of earlier dsh).

Each line is one record, an entry ``{"put": ...}`` or an answer ``{"answer": key,
...}``; a put is appended and fsynced under an exclusive ``flock`` of the file, so the
key check and the append are atomic against other processes. A crash can leave a torn
last line: it never got its receipt, so readers skip it and the next writer cuts it
off before appending.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from dsh_session._header import SessionId
from dsh_session._mailbox._base import Mailbox
from dsh_session._mailbox._records import MailboxAnswer, MailboxEntry, StoredEntry

FILE_NAME = "dsh-mailbox.jsonl"
FLAT_SUFFIX = ".jsonl.dsh-mailbox"
"""Beside a flat log of earlier dsh: not ``*.jsonl``, which the store lists as logs."""


class JsonlMailbox(Mailbox):
    """Entries in one append-only file per session; ``path_of`` says where."""

    def __init__(self, root: Path, path_of: Callable[[SessionId], Path]) -> None:
        super().__init__()
        self.root = root
        self._path_of = path_of

    def __repr__(self) -> str:
        return f"JsonlMailbox({str(self.root)!r})"

    def _put(self, entry: MailboxEntry) -> tuple[StoredEntry, bool]:
        record = {"put": json.loads(entry.dump()), "session": entry.session_id}
        line = json.dumps(record, separators=(",", ":"))
        with _locked(self._path_of(entry.session_id)) as fd:
            stored = _parse(entry.session_id, _read_whole(fd))
            for found in stored:
                if found.entry.key == entry.key:
                    return found, False
            _append(fd, line)
        return StoredEntry(entry, len(stored)), True

    def _entries(self, session_id: SessionId) -> list[StoredEntry]:
        try:
            data = self._path_of(session_id).read_bytes()
        except FileNotFoundError:
            return []
        return _parse(session_id, data)

    def _answer(self, session_id: SessionId, key: str, answer: MailboxAnswer) -> None:
        record = {"answer": key, "outcome": answer.outcome, "detail": answer.detail}
        with _locked(self._path_of(session_id)) as fd:
            _append(fd, json.dumps(record, separators=(",", ":")))

    def _waiting(self) -> list[SessionId]:
        files = [*self.root.glob(f"*/*/{FILE_NAME}"), *self.root.glob(f"*{FLAT_SUFFIX}")]
        waiting = []
        for file in files:
            data = file.read_bytes()
            if b"\n" not in data:  # empty, or one torn line
                continue
            sid = SessionId(json.loads(data.split(b"\n", 1)[0])["session"])
            if any(e.answer is None for e in _parse(sid, data)):
                waiting.append(sid)
        return waiting


@contextmanager
def _locked(path: Path) -> Iterator[int]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield fd
    finally:
        os.close(fd)  # releases the lock


def _read_whole(fd: int) -> bytes:
    size = os.fstat(fd).st_size
    return os.pread(fd, size, 0) if size else b""


def _append(fd: int, line: str) -> None:
    """Cut a torn last line off (it was never acknowledged), append, fsync."""
    data = _read_whole(fd)
    if data and not data.endswith(b"\n"):
        os.ftruncate(fd, data.rfind(b"\n") + 1)
    os.write(fd, line.encode() + b"\n")
    os.fsync(fd)


def _parse(session_id: SessionId, data: bytes) -> list[StoredEntry]:
    """The entries in file order with their answers; a torn last line is skipped."""
    lines = data.split(b"\n")
    complete = lines[:-1]  # what follows the last newline is torn or empty
    entries: list[StoredEntry] = []
    answers: dict[str, MailboxAnswer] = {}
    for line in complete:
        record = json.loads(line)
        if "put" in record:
            entry = MailboxEntry.load(session_id, json.dumps(record["put"]))
            entries.append(StoredEntry(entry, len(entries)))
        else:
            answers.setdefault(record["answer"], MailboxAnswer.load(line))
    return [StoredEntry(e.entry, e.arrival, answers.get(e.entry.key)) for e in entries]


__all__ = ["FILE_NAME", "FLAT_SUFFIX", "JsonlMailbox"]
