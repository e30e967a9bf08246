"""Attachment bytes as files, in the harness's attachment-local layout:
``<root>/objects/<first two hex digits>/<sha256 hex>``.

Each object is published like a new session file (``_publish.py``): staged with mode
0600, fsynced, hard-linked into place, its folder fsynced, so a reference is never
written to a log before its bytes survive a power cut. An object that exists already
is kept when its bytes hash right (another writer stored the same content) and
replaced when they do not.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path

from dsh_session.stores._publish import _FileExistsAlreadyError, publish_new_file, sync_folder


class BlobFiles:
    """Content-addressed files under ``root`` (a store's ``attachments/v1`` folder);
    folders missing below ``boundary`` (an existing, durable folder) are created."""

    def __init__(self, root: Path, *, boundary: Path, on_fsync: Callable[[], None]) -> None:
        self.root = root
        self._boundary = boundary
        self._on_fsync = on_fsync

    def path_of(self, sha256: str) -> Path:
        """Where the object with this hex digest lives."""
        return self.root / "objects" / sha256[:2] / sha256

    def put(self, sha256: str, data: bytes) -> None:
        """Make ``data`` durable under its digest (once: an intact object is kept)."""
        path = self.path_of(sha256)
        try:
            publish_new_file(self._boundary, path, data, on_fsync=self._on_fsync)
        except _FileExistsAlreadyError:
            if self.get(sha256) == data:
                # Another writer's link may not be synced yet: sync it before any log
                # cites it.
                sync_folder(path.parent, self._on_fsync)
                return
            self._replace(path, data)

    def _replace(self, path: Path, data: bytes) -> None:
        staging = path.with_name(f"{path.name}.{secrets.token_hex(6)}.tmp")
        fd = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(staging, path)
        sync_folder(path.parent, self._on_fsync)

    def get(self, sha256: str) -> bytes | None:
        """The object's bytes, or ``None`` when there is none."""
        try:
            return self.path_of(sha256).read_bytes()
        except FileNotFoundError:
            return None

    def has(self, sha256: str) -> bool:
        """Whether an object with this digest exists (its bytes are not checked)."""
        return self.path_of(sha256).is_file()


__all__ = ["BlobFiles"]
