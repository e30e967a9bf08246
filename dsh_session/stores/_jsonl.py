"""JSONL store: sessions in the TypeScript harness's store-root layout.

New sessions are written as the harness writes them on its defaults
(``jsonl_form.py``): ``<root>/_no-cwd/<id>/session.jsonl.zstd`` (cwd-keyed folders for a
header with ``cwd``), a header line with ``delegationDepth``, one checksummed zstd frame
per durable batch and packed chunk rows; ``compression="none"`` and
``pack_chunks=False`` give plain lines. Sessions dsh wrote earlier as flat
``<root>/<id>.jsonl`` files are read and appended to in that form. A file is created
whole: the header and the first batch go to a temporary file, fsynced and hard-linked
into place (which fails rather than overwrites if the session exists), then the folder
is fsynced. Later batches are written at the known end of the valid log and fsynced,
so the retry of a failed write overwrites whatever part of it reached the file: no
partial record is ever left in the middle of the log.

One writer per session: a store holds ``<root>/<session-id>.jsonl.lock`` locked
(``flock``) from attach or load until detach or close, so a second writer is refused
with :class:`SessionConflictError` before it reads or writes anything
(``ownership.py``); the harness ignores files at the top of its root. Readers take no
lock.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import stat
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path

from dsh_session._harness_format import SessionFolder, find_session
from dsh_session._header import SessionHeader, SessionId, parse_header
from dsh_session.errors import (
    NotARegularFileError,
    SessionCorruptError,
    SessionError,
    SessionNotFoundError,
    StoreError,
    StoreNotFoundError,
)
from dsh_session.stores._base import INLINE_BATCH_LIMIT, Batch, SessionStore, StoreMode
from dsh_session.stores._blob_files import BlobFiles
from dsh_session.stores._codec import dump_event
from dsh_session.stores._harness_jsonl import (
    HarnessArtifact,
    harness_folders,
    read_harness_header,
    read_harness_log,
)
from dsh_session.stores._jsonl_form import (
    Compression,
    check_compression,
    new_artifact,
    root_compression,
)
from dsh_session.stores._jsonl_scan import scan_jsonl
from dsh_session.stores._ownership import SessionLocks
from dsh_session.stores._publish import (
    _FileExistsAlreadyError,
    publish_new_file,
    write_at,
)
from dsh_session.stores._recovery import StoredLog, TornTail
from dsh_session.stores._regular_file import open_regular
from dsh_session.stores._removal import remove_flat_log, remove_session_folder
from dsh_session.stores._torn_sidecar import set_aside

logger = logging.getLogger(__name__)

_SUFFIX = ".jsonl"


@dataclass
class _FileEnd:
    """A session's file and where its valid log ends."""

    path: str
    size: int
    torn_tail: bool
    """Bytes past ``size`` are a torn tail that load found; the next write cuts them."""
    harness: HarnessArtifact | None = None
    """Set for a session kept in the harness's folder layout: how to append to it."""
    fd: int | None = None
    """The file, held open for appends from the first one until the session is
    forgotten: opening and closing it per flush cost about a tenth of a 100-event
    flush."""

    def close(self) -> None:
        if self.fd is not None:
            fd, self.fd = self.fd, None
            os.close(fd)


class JsonlSessionStore(SessionStore):
    """Sessions as JSONL logs under one root directory. With ``mode="create"`` (the
    default) the directory is created if missing; with ``"open"`` or ``"read"`` it must
    exist (else :class:`StoreNotFoundError`) and nothing is created.

    ``compression`` (``"zstd"`` or ``"none"``) and ``pack_chunks`` choose the form of
    new sessions; without ``compression`` the store follows the encoding of the
    sessions already in the root (zstd for an empty root). Loaded sessions keep the
    form they were written in."""

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        mode: StoreMode = "create",
        inline_batch_limit: int = INLINE_BATCH_LIMIT,
        compression: Compression | None = None,
        pack_chunks: bool = True,
    ) -> None:
        super().__init__(inline_batch_limit=inline_batch_limit)
        self.directory = Path(directory)
        """The directory holding the session files."""
        self.compression = check_compression(compression)
        """The encoding asked for new sessions (``None``: follow the root)."""
        self.pack_chunks = pack_chunks
        """Whether new sessions pack runs of chunk events into rows."""
        self._compressed: bool | None = None
        self.read_only = mode == "read"
        if mode == "create":
            self.directory.mkdir(parents=True, exist_ok=True)
        elif not self.directory.is_dir():
            problem = "not a directory" if self.directory.exists() else "no such directory"
            raise StoreNotFoundError(str(self.directory), problem)
        self._ends: dict[SessionId, _FileEnd] = {}
        self._looked_at: dict[SessionId, str] = {}
        """The files the idle followers' last shared look found (``_read_log_versions``)."""
        self._locks = SessionLocks(self.lock_path_of, repr(self))
        self._blobs = BlobFiles(
            self.directory / "attachments" / "v1",
            boundary=self.directory,
            on_fsync=self._count_fsync,
        )
        """Attachment bytes, in the harness's layout under the root."""

    def __repr__(self) -> str:
        return f"JsonlSessionStore({str(self.directory)!r})"

    def path_of(self, session_id: SessionId) -> Path:
        """The file that holds a session: its log in the harness layout or a flat
        ``<id>.jsonl`` written by earlier dsh versions. For a session not stored yet,
        the flat name (which no new session takes)."""
        end = self._ends.get(session_id)
        if end is not None:
            return Path(end.path)
        folder = find_session(self.directory, session_id)
        return self._flat_path(session_id) if folder is None else folder.path

    def _flat_path(self, session_id: SessionId) -> Path:
        return self.directory / f"{session_id}{_SUFFIX}"

    def _log_version(self, session_id: SessionId) -> Hashable | None:
        """The log file's identity, size and modification time: every append changes
        them, and so does a file replaced by another."""
        return _file_version(self.path_of(session_id))

    def _read_log_versions(
        self, session_ids: Sequence[SessionId]
    ) -> dict[SessionId, Hashable | None]:
        """The versions the idle followers' shared look reads, each from the file the
        last look found (finding a session's folder costs a scan of the projects and
        several stats, a version one stat); a file that has gone is found again."""
        known, self._looked_at = self._looked_at, {}
        versions: dict[SessionId, Hashable | None] = {}
        for session_id in session_ids:
            path = known.get(session_id)
            version = None if path is None else _file_version(path)
            if version is None:
                path = os.fspath(self.path_of(session_id))
                version = _file_version(path)
            if version is not None and path is not None:
                self._looked_at[session_id] = path
            versions[session_id] = version
        return versions

    def lock_path_of(self, session_id: SessionId) -> Path:
        """The lock file a writer of the session holds (it exists only while held, or
        after a writer crashed)."""
        return self.directory / f"{session_id}{_SUFFIX}.lock"

    # --- ownership --------------------------------------------------------------------

    def _claim(self, session_id: SessionId, *, stored: bool) -> None:
        self._locks.acquire(session_id)

    def _disclaim(self, session_id: SessionId) -> None:
        self._locks.release(session_id)

    # --- writing ----------------------------------------------------------------------

    def _write_batch(self, batch: Batch) -> None:
        sid = batch.session_id
        if batch.header is not None:
            self._create(batch)
            return
        harness = self._ends[sid].harness
        if harness is None:
            self._append(sid, b"".join([dump_event(event) + b"\n" for event in batch.events]))
            return
        self._append(sid, harness.encode(batch.events))
        harness.carry = []

    def _create(self, batch: Batch) -> None:
        header, session_id = batch.header, batch.session_id
        assert header is not None
        existing = find_session(self.directory, session_id)
        flat = self._flat_path(session_id)
        where = existing.path if existing is not None else flat if flat.exists() else None
        if where is not None:
            raise StoreError(
                f"session {session_id!r} already exists in {self} (at {where}); "
                "load it instead of attaching a new session with the same id"
            )
        if self._compressed is None:
            self._compressed = root_compression(self.directory, self.compression)
        path, content = new_artifact(
            self.directory,
            header,
            batch.events,
            compressed=self._compressed,
            pack_chunks=self.pack_chunks,
        )
        try:
            publish_new_file(self.directory, path, content, on_fsync=self._count_fsync)
        except _FileExistsAlreadyError:
            raise StoreError(
                f"session {session_id!r} already exists in {self}; load it instead of "
                "attaching a new session with the same id"
            ) from None
        artifact = HarnessArtifact(
            compressed=self._compressed, pack_chunks=self.pack_chunks, valid_end=len(content)
        )
        self._track_end(
            session_id, _FileEnd(str(path), size=len(content), torn_tail=False, harness=artifact)
        )

    def _count_fsync(self) -> None:
        self.stats.fsyncs += 1

    def _append(self, session_id: SessionId, lines: bytes) -> None:
        end = self._ends[session_id]
        if end.fd is None:
            end.fd = os.open(end.path, os.O_WRONLY)
        try:
            if end.torn_tail:
                os.ftruncate(end.fd, end.size)
            # At the end of the valid log, not at the end of the file: a retry after a
            # failed write overwrites whatever part of the batch reached the file.
            write_at(end.fd, lines, end.size)
            os.fsync(end.fd)
        except BaseException:
            end.close()  # the retry starts from a freshly opened file
            raise
        self.stats.fsyncs += 1
        end.size += len(lines)
        end.torn_tail = False

    def _track_end(self, session_id: SessionId, end: _FileEnd) -> None:
        self._forget(session_id)  # a read of an attached session replaces its entry
        self._ends[session_id] = end

    def _delete_log(self, session_id: SessionId) -> None:
        """Rename the log out of the session's name first, then remove what is left
        (``_removal.py``); the flat file or the harness folder, whichever holds it."""
        flat = self._flat_path(session_id)
        folder = find_session(self.directory, session_id)
        try:
            mode: int | None = os.lstat(flat).st_mode
        except FileNotFoundError:
            mode = None
        if folder is not None and mode is not None:
            raise SessionCorruptError(
                f"{self}: session {session_id!r} is stored twice, in {flat} and in "
                f"{folder.path}; move one of them away",
                field="id",
            )
        if folder is not None:
            remove_session_folder(folder.path)
        elif mode is None:
            raise SessionNotFoundError(session_id, repr(self))
        elif not stat.S_ISREG(mode):
            raise NotARegularFileError(flat, mode)
        else:
            remove_flat_log(flat)

    # --- reading ----------------------------------------------------------------------

    def _read_log(self, session_id: SessionId) -> StoredLog:
        path = self._flat_path(session_id)
        folder = find_session(self.directory, session_id)
        if folder is not None:
            return self._read_harness_log(session_id, folder, path)
        try:
            with open_regular(path) as file:
                data = file.read()
        except FileNotFoundError:
            raise SessionNotFoundError(session_id, repr(self)) from None
        except NotARegularFileError as error:
            raise StoreError(
                f"could not read session {session_id!r} from {self}: {error}"
            ) from None
        scanned = scan_jsonl(data, session_id, str(path))
        self._track_end(
            session_id,
            _FileEnd(
                str(path), size=scanned.valid_end, torn_tail=scanned.log.torn_tail is not None
            ),
        )
        return scanned.log

    def _read_harness_log(
        self, session_id: SessionId, folder: SessionFolder, flat: Path
    ) -> StoredLog:
        if flat.exists():
            raise SessionCorruptError(
                f"{self}: session {session_id!r} is stored twice, in {flat} and in "
                f"{folder.path}; move one of them away",
                field="id",
            )
        stored, artifact = read_harness_log(
            self.directory, folder, pack_by_default=self.pack_chunks
        )
        self._track_end(
            session_id,
            _FileEnd(
                str(folder.path),
                size=artifact.valid_end,
                torn_tail=stored.torn_tail is not None,
                harness=artifact,
            ),
        )
        return stored

    def _read_headers(self) -> list[SessionHeader]:
        headers = self._read_flat_headers()
        flat_ids = {header.id for header in headers}
        for folder in harness_folders(self.directory):
            if folder.session_id in flat_ids:
                raise SessionCorruptError(
                    f"{self}: session {folder.session_id!r} is stored twice, in "
                    f"{self._flat_path(SessionId(folder.session_id))} and in {folder.path}",
                    field="id",
                )
            try:
                headers.append(read_harness_header(self.directory, folder))
            except (OSError, SessionError) as error:
                logger.warning("%s: not listed: %s", folder.path, error)
        return headers

    def _read_flat_headers(self) -> list[SessionHeader]:
        headers = []
        for path in self.directory.glob(f"*{_SUFFIX}"):
            try:
                with open_regular(path) as file:
                    first_line = file.readline()
                if not first_line.endswith(b"\n"):
                    raise StoreError("the header line is incomplete")
                header = parse_header(first_line)
            except (OSError, SessionError) as error:
                logger.warning("%s: not listed: %s", path, error)
                continue
            if path.name != f"{header.id}{_SUFFIX}":
                logger.warning("%s: not listed: its header names %r", path, header.id)
                continue
            headers.append(header)
        return headers

    def _set_aside_torn_tail(self, session_id: SessionId, stored: StoredLog) -> TornTail:
        torn = stored.torn_tail
        assert torn is not None
        try:
            log = Path(self._ends[session_id].path)
            sidecar = set_aside(log, torn.offset, stored.torn_bytes)
        except OSError as error:
            raise StoreError(
                f"{self}: could not keep the torn tail of session {session_id!r} in a "
                f"sidecar file, so the log was left as it is: {error}"
            ) from error
        return dataclasses.replace(torn, sidecar=str(sidecar))

    def _put_blob(self, sha256: str, data: bytes) -> None:
        self._blobs.put(sha256, data)

    def _get_blob(self, sha256: str) -> bytes | None:
        return self._blobs.get(sha256)

    def _has_blob(self, sha256: str) -> bool:
        return self._blobs.has(sha256)

    def _forget(self, session_id: SessionId) -> None:
        end = self._ends.pop(session_id, None)
        if end is not None:
            end.close()

    def _release(self) -> None:
        for session_id in list(self._ends):
            self._forget(session_id)
        self._locks.release_all()


def _file_version(path: str | os.PathLike[str]) -> Hashable | None:
    """A file's identity, size and modification time, or ``None`` when it cannot be
    read (the read that follows says what is wrong)."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_ino, found.st_size, found.st_mtime_ns)


__all__ = [
    "JsonlSessionStore",
]
