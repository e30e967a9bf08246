"""Publishing a new session file durably, never over an existing one.

The harness's JSONL backend materializes a session the same way (``materializePosix``
in session-persistence-jsonl/src/index.ts): missing folders are created with mode 0700
and their parents fsynced (existing ones' too: a retry after a failed fsync finds
them), the content goes to a temporary file (mode 0600) beside the
final path, is fsynced, and is hard-linked into place. ``link`` fails rather than
overwrite when the final name exists, so two writers creating one id cannot clobber each
other. Then the folder is fsynced, so the new entry survives a power loss.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path


class _FileExistsAlreadyError(Exception):
    """The final path already names a file; nothing was written there."""


def publish_new_file(
    root: Path, final_path: Path, content: bytes, *, on_fsync: Callable[[], None]
) -> None:
    """Create ``final_path`` (somewhere under ``root``) holding exactly ``content``.

    Raises :class:`_FileExistsAlreadyError` if it exists. If the last folder fsync fails
    the file is removed again, so a retry can create it; ``on_fsync`` counts barriers.
    """
    _make_folders(root, final_path.parent, on_fsync)
    staging = final_path.with_name(f"{final_path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        try:
            write_at(fd, content, 0)
            os.fsync(fd)
            on_fsync()
        finally:
            os.close(fd)
        try:
            os.link(staging, final_path)
        except FileExistsError:
            raise _FileExistsAlreadyError(str(final_path)) from None
    finally:
        os.unlink(staging)
    try:
        sync_folder(final_path.parent, on_fsync)
    except OSError:
        final_path.unlink()  # not durably created: let the retry create it again
        raise


def _make_folders(root: Path, folder: Path, on_fsync: Callable[[], None]) -> None:
    """Create the missing folders from ``root`` down to ``folder`` (mode 0700), syncing
    each one's parent so the entry is durable before a file is published in it.

    The parents of folders that already exist below ``root`` are synced too: a folder
    found here may have been made by an earlier call whose parent fsync failed (or by
    another writer still about to sync it), and nothing on disk tells which."""
    chain = []
    current = folder
    while current != root and root in current.parents:
        chain.append(current)
        current = current.parent
    if not root.is_dir():
        chain.append(root)
    for path in reversed(chain):
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            if not path.is_dir():
                raise
        sync_folder(path.parent, on_fsync)


def sync_folder(folder: Path, on_fsync: Callable[[], None]) -> None:
    """fsync a folder, so entries created in it are durable."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
        on_fsync()
    finally:
        os.close(fd)


def write_at(fd: int, data: bytes, offset: int) -> None:
    """Write all of ``data`` at ``offset`` (``pwrite`` may write less than asked)."""
    view = memoryview(data)
    while view:
        written = os.pwrite(fd, view, offset)
        view = view[written:]
        offset += written


__all__ = [
    "publish_new_file",
    "sync_folder",
    "write_at",
]
