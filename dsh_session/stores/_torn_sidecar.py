"""Keeping a torn JSONL tail: its bytes go to a sidecar file next to the log.

Load shortens a log whose end a crash left incomplete, but a byte a person may want
back is never destroyed: the tail is first written to ``<log name>.torn-<offset>-<UTC
time>`` (``-2``, ``-3``, ... when that name is taken, so an earlier sidecar is never
overwritten), made durable, and only then may the caller cut the log. A crash at any
point leaves the bytes in the log, in the sidecar, or in both.
"""

from __future__ import annotations

import itertools
import os
import time
from pathlib import Path


def set_aside(log: Path, offset: int, data: bytes) -> Path:
    """Durably store ``data``, the bytes of ``log`` from ``offset`` on, in a new sidecar
    file next to it; return the sidecar's path."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    name = f"{log.name}.torn-{offset}-{stamp}"
    staging = log.with_name(f".{name}.{os.getpid()}.tmp")
    fd = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        sidecar = _link_under_a_free_name(staging, log.with_name(name))
    finally:
        staging.unlink()
    sync_directory(log.parent)
    return sidecar


def _link_under_a_free_name(staging: Path, wanted: Path) -> Path:
    """Hard-link ``staging`` to ``wanted``, or to ``wanted-2``, ``wanted-3``, ...: a
    link never replaces an existing file."""
    target = wanted
    for attempt in itertools.count(2):
        try:
            os.link(staging, target)
        except FileExistsError:
            target = wanted.with_name(f"{wanted.name}-{attempt}")
            continue
        break
    return target


def sync_directory(directory: Path) -> None:
    """Make the entries of ``directory`` (a new name, a rename, a removal) durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


__all__ = [
    "set_aside",
    "sync_directory",
]
