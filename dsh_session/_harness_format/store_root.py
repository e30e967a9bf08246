"""Reading the sessions of a harness JSONL store root, as its backend reads them.

Source: session-persistence-jsonl/src/index.ts (``findLog``, ``readPrefix``,
``assertStoredIdentity``) and the coordinator's load path (legacy view, vocabulary
check). A session is read from its folder, its header must name that folder (id and
cwd), then legacy records are converted.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from dsh_session._harness_format.event_types import check_vocabulary
from dsh_session._harness_format.jsonl_log import HarnessLog, read_log
from dsh_session._harness_format.layout import SessionFolder, log_path
from dsh_session._harness_format.legacy import migrate_legacy_events
from dsh_session.errors import HarnessLayoutError


def read_session(root: Path, folder: SessionFolder, data: bytes | None = None) -> HarnessLog:
    """One session as the harness holds it after load: the artifact decoded (``data``,
    the artifact's bytes when the caller has read them), its header checked against
    the folder it was found in, legacy records converted and the vocabulary checked. A
    torn tail is reported on the result, never dropped."""
    if data is None:
        data = folder.path.read_bytes()
    log = read_log(data, compressed=folder.compressed)
    check_placement(root, folder, log.header)
    events = migrate_legacy_events(log.events, log.header["id"])
    check_vocabulary(events, log.header["id"])
    return replace(log, events=events)


def check_placement(root: Path, folder: SessionFolder, header: dict[str, Any]) -> None:
    """Refuse a header line that does not name the folder it was found in (its id and
    cwd), as the harness's ``assertStoredIdentity`` does."""
    header_id = header["id"]
    expected = log_path(root, header.get("cwd"), header_id, compressed=folder.compressed)
    if header_id != folder.session_id or expected != folder.path:
        raise HarnessLayoutError(
            f"{folder.path} holds the header of session {header_id!r}, which belongs at {expected}",
            field="id",
        )


__all__ = [
    "check_placement",
    "read_session",
]
