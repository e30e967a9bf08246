"""The form in which a JSONL store writes new sessions: the harness's, on its defaults.

A new session goes to ``<root>/<project>/<encoded id>/session.jsonl.zstd`` (or
``session.jsonl`` with ``compression="none"``), its header line carrying
``delegationDepth``, each durable batch one checksummed zstd frame, runs of chunk
events packed into rows unless ``pack_chunks=False`` (docs/harness-format.md §2-§6).
The harness refuses a root that holds both encodings, so a store that was not told a
compression follows the one its root already uses, and one that was told refuses to
start the other encoding in a root of the first.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, get_args

from dsh_session._harness_format import encode_log, header_line, list_session_folders, log_path
from dsh_session._header import SessionHeader
from dsh_session.errors import StoreError
from dsh_session.events import SessionEvent
from dsh_session.stores._wire_records import wire_records

Compression = Literal["zstd", "none"]
"""``zstd``: one checksummed frame per durable batch (the harness's default);
``none``: plain JSONL lines."""

COMPRESSIONS: tuple[Compression, ...] = get_args(Compression)


def check_compression(value: object) -> Compression | None:
    """``value`` as a :data:`Compression` (``None`` = follow the root), else ValueError."""
    if value is None or value in COMPRESSIONS:
        return value
    raise ValueError(f"compression must be one of {', '.join(COMPRESSIONS)}, not {value!r}")


def root_compression(root: Path, requested: Compression | None) -> bool:
    """Whether new sessions in ``root`` are zstd-compressed: as requested, or as the
    root's existing session folders are (zstd for an empty or mixed root). Refuses a
    request that would give the root a second encoding, which the harness rejects."""
    found = {folder.compressed for folder in list_session_folders(root)}
    if requested is None:
        return found != {False}
    compressed = requested == "zstd"
    if found and compressed not in found:
        held = "session.jsonl" if compressed else "session.jsonl.zstd"
        raise StoreError(
            f"{root} holds sessions as {held}, so a session with compression "
            f"{requested!r} there would make the TypeScript harness refuse the whole "
            "root; open the store without compression= (it then follows the root) or "
            "use another folder"
        )
    return compressed


def header_fields(header: SessionHeader) -> dict[str, Any]:
    """The header as plain JSON, unknown fields (``delegationDepth``, ...) kept."""
    fields: dict[str, Any] = json.loads(header.__pydantic_serializer__.to_json(header))
    return fields


def harness_header_line(header: SessionHeader) -> str:
    """The header line the harness writes for ``header`` (no newline)."""
    return header_line(header_fields(header))


def new_artifact(
    root: Path,
    header: SessionHeader,
    events: Sequence[SessionEvent],
    *,
    compressed: bool,
    pack_chunks: bool,
) -> tuple[Path, bytes]:
    """Where a new session's log goes under ``root`` and its first bytes: the header
    (its own frame when compressed) and the first batch."""
    path = log_path(root, header.cwd, header.id, compressed=compressed)
    content = encode_log(
        header_fields(header),
        [wire_records(events, pack_chunks=pack_chunks)],
        pack_chunks=pack_chunks,
        compress=compressed,
    )
    return path, content


__all__ = [
    "COMPRESSIONS",
    "Compression",
    "check_compression",
    "harness_header_line",
    "header_fields",
    "new_artifact",
    "root_compression",
]
