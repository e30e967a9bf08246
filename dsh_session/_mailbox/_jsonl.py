"""The mailbox of a JSONL store: an append-only file per session, ``dsh-mailbox.jsonl``
in the session's folder (``<id>.jsonl.dsh-mailbox`` beside a flat log of earlier dsh).

Each line is one record, an entry ``{"put": ...}`` or an answer ``{"answer": key,
...}``; a put is appended and fsynced under an exclusive ``flock`` of the file, so the
key check and the append are atomic against other processes. A crash can leave a torn
last line: it never got its receipt, so readers skip it and the next writer cuts it
off before appending.

What waits is marked: an empty file ``<encoded id>.waiting`` in ``.dsh-mailbox-waiting``
under the root for each session with unanswered entries, so a worker's scan (many a
second) lists what waits instead of reading every session's mailbox. A put makes the
marker durable before it appends its entry, under the same lock, so no entry ever waits
unmarked; the answer that leaves nothing waiting removes it, and a scan drops a marker
whose entries are all answered (a crash between the two steps). Until a scan has read
every mailbox of the root once and marked what waits (a root written before markers
existed, or a new one), the folder lacks ``complete``: the next scan does that first.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from dsh_session._harness_format import decode_segment, encode_segment
from dsh_session._header import SessionId
from dsh_session._mailbox._base import Mailbox
from dsh_session._mailbox._records import MailboxAnswer, MailboxEntry, StoredEntry
from dsh_session.stores._publish import sync_folder

FILE_NAME = "dsh-mailbox.jsonl"
FLAT_SUFFIX = ".jsonl.dsh-mailbox"
"""Beside a flat log of earlier dsh: not ``*.jsonl``, which the store lists as logs."""
WAITING_FOLDER = ".dsh-mailbox-waiting"
MARK_SUFFIX = ".waiting"
COMPLETE = "complete"
"""In the marker folder once every waiting session of the root is marked."""
"""Not ``.jsonl``: the harness refuses ``*.jsonl`` files in a folder of the root."""


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
            records = _Records(entry.session_id, _read_whole(fd))
            found = records.find(entry.key)
            if found is not None:
                if found.answer is None:  # a retried put after a crash: still marked
                    self._mark(entry.session_id)
                return found, False
            self._mark(entry.session_id)
            _append(fd, line)
        return StoredEntry(entry, len(records.puts)), True

    def _records(self, session_id: SessionId) -> _Records:
        try:
            data = self._path_of(session_id).read_bytes()
        except FileNotFoundError:
            data = b""
        return _Records(session_id, data)

    def _entries(self, session_id: SessionId, from_arrival: int = 0) -> list[StoredEntry]:
        return self._records(session_id).all(from_arrival)

    def _pending(self, session_id: SessionId) -> list[StoredEntry]:
        return self._records(session_id).pending()

    def _find(self, session_id: SessionId, key: str) -> StoredEntry | None:
        return self._records(session_id).find(key)

    def _answer(self, session_id: SessionId, key: str, answer: MailboxAnswer) -> None:
        record = {"answer": key, "outcome": answer.outcome, "detail": answer.detail}
        with _locked(self._path_of(session_id)) as fd:
            _append(fd, json.dumps(record, separators=(",", ":")))
            if not _Records(session_id, _read_whole(fd)).waiting():
                self._unmark(session_id)

    def _waiting(self) -> list[SessionId]:
        marks = self.root / WAITING_FOLDER
        if not (marks / COMPLETE).is_file():
            self._mark_all()
        waiting = []
        for mark in sorted(marks.glob(f"*{MARK_SUFFIX}")):
            sid = SessionId(decode_segment(mark.name.removesuffix(MARK_SUFFIX)))
            if self._records(sid).waiting():
                waiting.append(sid)
                continue
            with _locked(self._path_of(sid)) as fd:  # a put may be marking it right now
                if not _Records(sid, _read_whole(fd)).waiting():
                    self._unmark(sid)
        return waiting

    def _mark(self, session_id: SessionId) -> None:
        """Mark the session as waiting, durably (call under its lock). Without the
        folder there is nothing to mark: the first scan reads every mailbox."""
        marks = self.root / WAITING_FOLDER
        if not marks.is_dir():
            return
        try:
            os.close(os.open(self._mark_path(session_id), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return
        sync_folder(marks, _uncounted)

    def _unmark(self, session_id: SessionId) -> None:
        """Nothing of the session waits any more (call under its lock); a removal lost to
        a crash leaves a marker the next scan drops."""
        with contextlib.suppress(FileNotFoundError):
            self._mark_path(session_id).unlink()

    def _mark_path(self, session_id: SessionId) -> Path:
        return self.root / WAITING_FOLDER / f"{encode_segment(session_id)}{MARK_SUFFIX}"

    def _mark_all(self) -> None:
        """Read every mailbox of the root once and mark what waits. The folder comes
        first, so a put meanwhile marks its own session; ``complete`` comes last, so a
        scan cut short is done again."""
        marks = self.root / WAITING_FOLDER
        marks.mkdir(parents=True, exist_ok=True)
        sync_folder(self.root, _uncounted)
        files = [*self.root.glob(f"*/*/{FILE_NAME}"), *self.root.glob(f"*{FLAT_SUFFIX}")]
        for file in files:
            data = file.read_bytes()
            if b"\n" not in data:  # empty, or one torn line
                continue
            sid = SessionId(json.loads(data.split(b"\n", 1)[0])["session"])
            with _locked(self._path_of(sid)) as fd:
                if _Records(sid, _read_whole(fd)).waiting():
                    self._mark(sid)
        os.close(os.open(marks / COMPLETE, os.O_CREAT | os.O_WRONLY))
        sync_folder(marks, _uncounted)


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


def _uncounted() -> None:
    """The mailbox keeps no fsync count (the store's ``stats`` count the log's)."""


_PUT_KEY = b'{"put":{"key":'
_ANSWER_KEY = b'{"answer":'
_DECODER = json.JSONDecoder()


class _Records:
    """A mailbox file's complete lines, indexed by key without decoding the entries: a
    long-lived session's file holds every delivery ever made, and a drain or a scan
    needs only the unanswered ones (a torn last line is skipped)."""

    def __init__(self, session_id: SessionId, data: bytes) -> None:
        self.session_id = session_id
        self.puts: list[tuple[str, bytes]] = []
        self.answers: dict[str, bytes] = {}
        for line in data.split(b"\n")[:-1]:  # what follows the last newline is torn
            if line.startswith(_ANSWER_KEY):
                self.answers.setdefault(_key_at(line, len(_ANSWER_KEY)), line)
            elif line.startswith(_PUT_KEY):
                self.puts.append((_key_at(line, len(_PUT_KEY)), line))
            else:  # written in another key order: decode it whole
                record = json.loads(line)
                if "put" in record:
                    self.puts.append((record["put"]["key"], line))
                else:
                    self.answers.setdefault(record["answer"], line)

    def waiting(self) -> bool:
        return any(key not in self.answers for key, _ in self.puts)

    def stored(self, arrival: int) -> StoredEntry:
        key, line = self.puts[arrival]
        entry = MailboxEntry.load(self.session_id, json.dumps(json.loads(line)["put"]))
        answer = self.answers.get(key)
        return StoredEntry(entry, arrival, None if answer is None else MailboxAnswer.load(answer))

    def all(self, from_arrival: int = 0) -> list[StoredEntry]:
        return [self.stored(arrival) for arrival in range(from_arrival, len(self.puts))]

    def pending(self) -> list[StoredEntry]:
        return [
            self.stored(arrival)
            for arrival, (key, _) in enumerate(self.puts)
            if key not in self.answers
        ]

    def find(self, key: str) -> StoredEntry | None:
        arrival = next((n for n, (k, _) in enumerate(self.puts) if k == key), None)
        return None if arrival is None else self.stored(arrival)


def _key_at(line: bytes, position: int) -> str:
    text = line.decode()
    while text[position : position + 1] in (" ", "\t"):  # json.dumps's default separators
        position += 1
    key, _ = _DECODER.raw_decode(text, position)
    if not isinstance(key, str):
        raise ValueError(f"a mailbox record's key is not a string: {line[:80]!r}")
    return key


__all__ = ["FILE_NAME", "FLAT_SUFFIX", "WAITING_FOLDER", "JsonlMailbox"]
