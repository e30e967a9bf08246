"""Deleting a session's files so that a crash never leaves half a session that loads.

The log is first renamed, in its own directory, to a hidden name that no listing or
load takes for a session (``.<name>.deleted-<pid>``), and the directory is fsynced:
from that instant the session is gone as a whole. Only then are the renamed log, its
torn-tail sidecars and (harness layout) its folder removed. A crash between the two
steps leaves the hidden file behind, which no store reads and which can be removed by
hand; it never leaves a shorter log under the session's name.
"""

from __future__ import annotations

import glob
import os
import shutil
from pathlib import Path

from dsh_session.stores._torn_sidecar import sync_directory


def remove_flat_log(log: Path) -> None:
    """Delete a flat ``<id>.jsonl`` log and the torn-tail sidecars kept beside it."""
    hidden = _hide(log)
    for sidecar in log.parent.glob(f"{glob.escape(log.name)}.torn-*"):
        sidecar.unlink(missing_ok=True)
    hidden.unlink()
    sync_directory(log.parent)


def remove_session_folder(log: Path) -> None:
    """Delete a harness session folder (``log``'s parent, with everything in it), and
    its project folder when no other session is left in it."""
    _hide(log)  # a folder without session.jsonl[.zstd] holds no session
    folder = log.parent
    project = folder.parent
    shutil.rmtree(folder)
    sync_directory(project)
    try:
        project.rmdir()
    except OSError:
        return  # other sessions live there
    sync_directory(project.parent)


def _hide(log: Path) -> Path:
    hidden = log.with_name(f".{log.name}.deleted-{os.getpid()}")
    os.rename(log, hidden)
    sync_directory(log.parent)
    return hidden


__all__ = [
    "remove_flat_log",
    "remove_session_folder",
]
