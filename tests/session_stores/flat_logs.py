"""Flat ``<id>.jsonl`` logs as dsh wrote them before it wrote the harness's layout.

The store still reads and appends to such files; tests of that path build them here
(header line without ``delegationDepth``, then one event per line).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from dsh_session import SessionEvent
from dsh_session._header import SessionHeader
from dsh_session._session import Session
from dsh_session.stores._codec import dump_event


def flat_header_line(header: SessionHeader) -> bytes:
    """The header as the first line of a flat log, tagged ``"type": "session"``."""
    body = header.__pydantic_serializer__.to_json(header)
    return b'{"type":"session",' + body[1:] + b"\n"


def flat_lines(events: Sequence[SessionEvent]) -> bytes:
    return b"".join(dump_event(event) + b"\n" for event in events)


def flat_log(session: Session) -> bytes:
    """The whole flat file of a session."""
    return flat_header_line(session.header) + flat_lines(session.events)


def write_flat(directory: Path, session: Session) -> Path:
    """Put a session's flat file into ``directory``; return its path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{session.id}.jsonl"
    path.write_bytes(flat_log(session))
    return path
