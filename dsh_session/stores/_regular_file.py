"""Opening a stored file for reading only when it is a regular file.

A FIFO, socket or device with a log's name must never be opened for reading: a FIFO
blocks the reader until someone writes, a device may do anything. The kind is checked
before opening, and again on the open descriptor (opened non-blocking, so even a FIFO
swapped in between the two checks cannot hang the reader).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from dsh_session.errors import NotARegularFileError


def open_regular(path: Path) -> BinaryIO:
    """``path`` opened for binary reading. Raises :class:`FileNotFoundError` when it is
    missing and :class:`NotARegularFileError` when it is not a regular file."""
    _require_regular(path, os.stat(path).st_mode)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        _require_regular(path, os.fstat(fd).st_mode)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _require_regular(path: Path, mode: int) -> None:
    if not stat.S_ISREG(mode):
        raise NotARegularFileError(path, mode)


__all__ = [
    "open_regular",
]
