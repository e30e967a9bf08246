"""Harness store roots copied out of the fixtures, and what the harness held after load."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from harness_format.fixtures import JSONL_FORMS, SCENARIOS, TS_LOGS, expected_session

from dsh_session._session import Session
from dsh_session.stores._codec import dump_event, dump_header

__all__ = [
    "CRASH_FORMS",
    "JSONL_FORMS",
    "SCENARIOS",
    "TS_LOGS",
    "artifact",
    "copy_root",
    "expected_session",
    "tree",
    "wire_events",
    "wire_header",
]

CRASH_FORMS = ("crash/jsonl-zstd", "crash/jsonl-plain", "crash/jsonl-unpacked")


def copy_root(form: str, destination: Path) -> Path:
    """A writable copy of one fixture root."""
    root = destination / form.replace("/", "-")
    shutil.copytree(TS_LOGS / form, root)
    return root


def artifact(root: Path, session_id: str) -> Path:
    """The artifact of a ``_no-cwd`` session in a root."""
    folder = root / "_no-cwd" / session_id
    packed = folder / "session.jsonl.zstd"
    return packed if packed.exists() else folder / "session.jsonl"


def wire_events(session: Session) -> list[Any]:
    return [json.loads(dump_event(event)) for event in session.events]


def wire_header(session: Session) -> dict[str, Any]:
    return dict(json.loads(dump_header(session.header)))


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes, to show nothing was changed or added."""
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }
