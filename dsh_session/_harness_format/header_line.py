"""The JSONL header line: the session's immutable metadata, tagged ``type: "session"``.

Source: session-persistence-jsonl/src/format.ts (``HeaderLine``, ``isHeaderLine``,
``toHeaderLine``). Required: ``type``, ``version`` (0), ``id``, ``createdAt`` and
``delegationDepth`` (both non-negative safe integers). Optional: ``cwd``,
``parentSession``, ``seedLength``, ``origin`` (only ``"subagent"``), ``agentPreset``.
The harness ignores other keys; this codec keeps them, so nothing read is lost.
"""

from __future__ import annotations

import json
from typing import Any

from dsh_session._harness_format._json import dumps_js
from dsh_session.errors import HeaderLineError, SessionFormatError

Json = dict[str, Any]

HARNESS_FORMAT_VERSION = 0
"""The only ``version`` the harness reads (``SESSION_FORMAT_VERSION``)."""

HEADER_FIELD_ORDER = (
    "type",
    "version",
    "id",
    "createdAt",
    "cwd",
    "parentSession",
    "seedLength",
    "origin",
    "delegationDepth",
    "agentPreset",
)
"""Key order of the header line as the harness writes it."""

_RETIRED_FIELDS = ("sandboxMode", "approvalPolicy")
_MAX_SAFE = 2**53 - 1


def _non_negative_safe_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_SAFE


def validate_header(value: object) -> Json:
    """Check a parsed first record the way the harness does; return it unchanged."""
    if not isinstance(value, dict) or value.get("type") != "session":
        raise HeaderLineError("first record is not a session header", field="type")
    version = value.get("version")
    if isinstance(version, (int, float)) and not isinstance(version, bool):
        if version != HARNESS_FORMAT_VERSION:
            newer = ", written by a newer harness" if version > HARNESS_FORMAT_VERSION else ""
            raise SessionFormatError(
                f"session {value.get('id')!r} uses format version {version}{newer}; "
                f"this reader reads version {HARNESS_FORMAT_VERSION}"
            )
    else:
        raise HeaderLineError("header version must be a number", field="version")
    if not isinstance(value.get("id"), str) or not value["id"]:
        raise HeaderLineError("header id must be a non-empty string", field="id")
    for field in ("createdAt", "delegationDepth"):
        if not _non_negative_safe_int(value.get(field)):
            raise HeaderLineError(
                f"header {field} must be a non-negative safe integer", field=field
            )
    if "origin" in value and value["origin"] != "subagent":
        raise HeaderLineError('header origin must be "subagent" when present', field="origin")
    for field in ("cwd", "parentSession", "agentPreset"):
        if field in value and not isinstance(value[field], str):
            raise HeaderLineError(f"header {field} must be a string", field=field)
    if "seedLength" in value and not _non_negative_safe_int(value["seedLength"]):
        raise HeaderLineError(
            "header seedLength must be a non-negative integer", field="seedLength"
        )
    for field in _RETIRED_FIELDS:
        if field in value:
            raise HeaderLineError(f"header uses retired field {field}", field=field)
    return value


def parse_header_line(line: bytes) -> Json:
    """Parse and validate the header line (without its newline)."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError) as error:
        problem = "nests too deep" if isinstance(error, RecursionError) else "is not valid JSON"
        raise HeaderLineError(f"header line {problem}", field="type") from None
    return validate_header(value)


def header_line(header: Json) -> str:
    """The header line the harness writes, without newline: known fields in its order
    (``delegationDepth`` defaulting to 0), then any extra fields as given."""
    line: Json = {"type": "session"}
    for field in HEADER_FIELD_ORDER[1:]:
        if field in header:
            line[field] = header[field]
    line.setdefault("delegationDepth", 0)
    ordered: Json = {field: line[field] for field in HEADER_FIELD_ORDER if field in line}
    ordered.update({k: v for k, v in header.items() if k not in line})
    return dumps_js(validate_header(ordered))


def session_header(line: Json) -> Json:
    """The header the harness holds after load: the line without its ``type`` tag."""
    return {k: v for k, v in line.items() if k != "type"}


__all__ = [
    "HARNESS_FORMAT_VERSION",
    "HEADER_FIELD_ORDER",
    "Json",
    "header_line",
    "parse_header_line",
    "session_header",
    "validate_header",
]
