"""Sessions a JSONL store finds in the TypeScript harness's folder layout.

A harness store root keeps each session in ``<root>/<project>/<encoded id>/`` as
``session.jsonl`` or ``session.jsonl.zstd`` (docs/harness-format.md). This module
turns such an artifact into the :class:`StoredLog` every store restores from, and
encodes later batches in the artifact's own form (one zstd frame per batch for
``.zstd``, packed chunk rows when the artifact packs them), so the harness can resume
a session dsh loaded. The codecs themselves live in :mod:`dsh_session._harness_format`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dsh_session._harness_format import (
    CHUNK_ROW_TYPES,
    SessionFolder,
    check_placement,
    decode_frame,
    encode_batch,
    intact_records,
    list_session_folders,
    log_path,
    pack_chunk_runs,
    parse_header_line,
    read_session,
    scan_frames,
)
from dsh_session._header import SessionHeader, parse_header
from dsh_session._parse import collector_paused, parse_events
from dsh_session.errors import HarnessLayoutError, HeaderLineError, SessionError
from dsh_session.events import LogEvent, SessionEvent
from dsh_session.stores._current_records import checked_current_events
from dsh_session.stores._recovery import StoredLog, TornTail
from dsh_session.stores._wire_records import wire_records

Json = dict[str, Any]


@dataclass
class HarnessArtifact:
    """How later batches of a harness session are appended to its artifact."""

    compressed: bool
    pack_chunks: bool | Callable[[], bool]
    """Whether batches pack chunk rows, or how to find out from the artifact: decided
    at the first append, so a session that is only read never pays for it."""
    valid_end: int
    """Byte length of the artifact's committed prefix (where the next batch goes)."""
    carry: list[Json] = field(default_factory=list)
    """Events decoded out of a torn final zstd frame: load cuts that frame, so the next
    append writes them again ahead of its own events (as the harness does)."""

    def encode(self, events: Sequence[SessionEvent]) -> bytes:
        """The bytes of one durable batch in the artifact's form."""
        if not isinstance(self.pack_chunks, bool):
            self.pack_chunks = self.pack_chunks()
        records = [*self.carry, *wire_records(events, pack_chunks=self.pack_chunks)]
        return encode_batch(records, pack_chunks=self.pack_chunks, compress=self.compressed)


def harness_folders(root: Path) -> list[SessionFolder]:
    """Every harness session artifact under ``root`` (none when it holds only flat
    ``<id>.jsonl`` files). Raises :class:`HarnessLayoutError` on a layout the harness
    refuses, such as one id in two project folders."""
    return list_session_folders(root)


def read_harness_header(root: Path, folder: SessionFolder) -> SessionHeader:
    """The header of a harness session, unknown fields (``delegationDepth``,
    ``origin``, ``agentPreset``, ...) kept; only the header line (or frame) is decoded,
    and it must name the folder it was found in."""
    data = folder.path.read_bytes()
    if folder.compressed:
        first = scan_frames(data).frames[:1]
        text = decode_frame(data[first[0].start : first[0].end]) if first else b""
    else:
        text = data[: data.find(b"\n") + 1]
    if not text.endswith(b"\n"):
        raise HeaderLineError(f"{folder.path}: the header line is incomplete", field="type")
    line = parse_header_line(text[:-1])
    expected = log_path(root, line.get("cwd"), line["id"], compressed=folder.compressed)
    if line["id"] != folder.session_id or expected != folder.path:
        raise HarnessLayoutError(
            f"{folder.path} holds the header of session {line['id']!r}, which belongs at "
            f"{expected}",
            field="id",
        )
    return dsh_header(line)


def dsh_header(line: Json) -> SessionHeader:
    """The dsh header of a header line (or of a schema-17 ``sessions`` row). The line
    always carries ``delegationDepth``; 0 stands for a top-level session, which the
    harness's own sessions hold without the field (its SQLite store keeps NULL), so it
    is dropped: a header written by dsh reads back equal, and writing it again gives
    the same line."""
    if line.get("delegationDepth") == 0:
        line = {key: value for key, value in line.items() if key != "delegationDepth"}
    return parse_header(line)


def read_harness_log(
    root: Path, folder: SessionFolder, *, pack_by_default: bool = True
) -> tuple[StoredLog, HarnessArtifact]:
    """A harness session as dsh restores it, and how to append to it. A torn tail is
    reported with its file bytes (load sets them aside before cutting the file).
    ``pack_by_default`` decides for a plain log that does not show whether its writer
    packed chunk rows."""
    data = folder.path.read_bytes()
    current = read_current(root, folder, data, pack_by_default)
    return current or read_decoded(root, folder, data, pack_by_default)


def read_decoded(
    root: Path, folder: SessionFolder, data: bytes, pack_by_default: bool
) -> tuple[StoredLog, HarnessArtifact]:
    """The full path of :func:`read_harness_log` over the artifact's bytes: every record
    decoded, expanded, migrated and checked as the harness does, then validated."""
    # Decoding builds a dict per record before validation: acyclic too, so the cyclic
    # collector is paused for it as parse_events pauses it for the events (a 100k-event
    # plain log read about 1.5x slower with it running).
    with collector_paused():
        log = read_session(root, folder, data)
    header = dsh_header(log.header)
    events = parse_events(log.events)
    torn: TornTail | None = None
    torn_bytes = b""
    carry: list[Json] = []
    if log.torn is not None:
        recovered = log.torn.recovered
        carry = list(log.events[len(log.events) - recovered :]) if recovered else []
        reason = log.torn.reason
        if recovered:
            reason += f"; its {recovered} complete event(s) are kept and written again"
        torn = TornTail(
            line=_line_at(data, log.torn.offset, folder.compressed, len(events) - recovered),
            offset=log.torn.offset,
            dropped_bytes=len(log.torn.data),
            reason=reason,
        )
        torn_bytes = log.torn.data
    decoded = log.events
    artifact = HarnessArtifact(
        compressed=folder.compressed,
        pack_chunks=_packs(data, lambda: decoded, pack_by_default, compressed=folder.compressed),
        valid_end=len(data) if log.torn is None else log.torn.offset,
        carry=carry,
    )
    return StoredLog(header, events, torn, torn_bytes), artifact


def read_current(
    root: Path, folder: SessionFolder, data: bytes, pack_by_default: bool
) -> tuple[StoredLog, HarnessArtifact] | None:
    """What :func:`read_decoded` gives, straight from the record lines, when the
    artifact is intact and every record a current event or packed row
    (``current_records.py``); else ``None``."""
    intact = intact_records(data, compressed=folder.compressed)
    if intact is None:
        return None
    line, records = intact
    try:
        header: SessionHeader | None = dsh_header(line)
    except SessionError:
        header = None  # raised below as before, once the placement is checked
    events, session = checked_current_events(header, records)
    if events is None:
        return None
    check_placement(root, folder, line)
    # A plain log's records are decoded for the pack decision at the first append
    # (only chunk events' lines, the only ones that can pack): the events do not show
    # the optional fields a record spelled out as null.
    packs = functools.partial(_packs_at_first_append, data, events, pack_by_default)
    artifact = HarnessArtifact(
        compressed=folder.compressed,
        pack_chunks=True if folder.compressed else packs,
        valid_end=len(data),
    )
    stored = StoredLog(dsh_header(line) if header is None else header, events, session=session)
    return stored, artifact


def _chunk_records(data: bytes, events: list[LogEvent]) -> list[Any]:
    """The records of an intact plain log without packed rows (one event per line after
    the header): each chunk event's decoded, any other event as itself (never packs)."""
    lines = data.split(b"\n")[1:-1]
    return [
        json.loads(line) if event.type == "assistant/chunk" else event
        for line, event in zip(lines, events, strict=True)
    ]


def _line_at(data: bytes, offset: int, compressed: bool, committed_events: int) -> int:
    """The 1-based line where a torn tail starts: counted in a plain file; for zstd
    (no lines on disk) the line its first event would have had unpacked."""
    return committed_events + 2 if compressed else data.count(b"\n", 0, offset) + 1


def _packs(
    data: bytes, records: Callable[[], list[Any]], default: bool, *, compressed: bool
) -> bool | Callable[[], bool]:
    """Whether the writer of an artifact packed chunk rows: a zstd one always did (the
    harness packs by default and dsh writes zstd only so); a plain one did when a
    packed row is in the file, and did not when a run it would have packed is stored
    unpacked (checked at the first append, over the decoded ``records``). A log with
    no such run gets ``default``."""
    if compressed or any(f'"type":"{tag}"'.encode() in data for tag in CHUNK_ROW_TYPES):
        return True
    if not default:
        return False
    return functools.partial(_no_run_left_unpacked, records)


def _packs_at_first_append(data: bytes, events: list[LogEvent], default: bool) -> bool:
    """:func:`_packs` of an intact plain log read straight into ``events``, taken when
    its first batch is encoded: scanning the file at load cost ~4% of loading it."""
    records = functools.partial(_chunk_records, data, events)
    decided = _packs(data, records, default, compressed=False)
    return decided if isinstance(decided, bool) else decided()


def _no_run_left_unpacked(records: Callable[[], list[Any]]) -> bool:
    decoded = records()
    return pack_chunk_runs(decoded) == decoded


__all__ = [
    "HarnessArtifact",
    "Json",
    "dsh_header",
    "harness_folders",
    "read_current",
    "read_decoded",
    "read_harness_header",
    "read_harness_log",
]
