"""Packed chunk rows: runs of ``assistant/chunk`` deltas stored as one record.

The harness writes each run of at least three consecutive same-block delta chunks as a
``text-chunks``, ``reasoning-chunks`` or ``tool-call-chunks`` row and expands rows back
on read (source: core/session/src/chunk-rows.ts; the SQLite copy with row bounds is
session-persistence-sqlite/src/codec.ts). Only exact, whitelisted shapes pack; anything
else stays one event per record, so packing never loses a field.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TypeGuard

from dsh_session._harness_format._json import dumps_js
from dsh_session.errors import ChunkRowError

Json = dict[str, Any]

CHUNK_ROW_TYPES = frozenset({"text-chunks", "reasoning-chunks", "tool-call-chunks"})
"""Record tags of packed rows (slash-less, so they never collide with event types)."""

MIN_RUN = 3
"""Fewest members a run needs before it packs (a format constant in both backends)."""

_MAX_SAFE = 2**53 - 1
_ROW_OF_DELTA = {
    "text-delta": "text-chunks",
    "reasoning-delta": "reasoning-chunks",
    "tool-call-delta": "tool-call-chunks",
}
_DELTA_OF_ROW = {row: delta for delta, row in _ROW_OF_DELTA.items()}


@dataclass(frozen=True)
class RowBounds:
    """Per-row limits. JSONL rows are unbounded; SQLite schema 17 bounds them."""

    max_members: int | None = None
    max_data_bytes: int | None = None
    min_members: int = 1
    """Fewest members a *decoded* row may have (JSONL accepts 1, SQLite 3)."""


JSONL_BOUNDS = RowBounds()
SQLITE_BOUNDS = RowBounds(max_members=1024, max_data_bytes=1_048_576, min_members=MIN_RUN)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_safe_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) <= _MAX_SAFE


_EVENT_KEYS = frozenset({"type", "seq", "time", "data"})
_DATA_KEYS = frozenset({"turn", "step", "chunk"})
_TEXT_KEYS = frozenset({"type", "index", "text"})
_TOOL_KEYS = frozenset({"type", "index", "id", "argumentsDelta"})
_NAMED_TOOL_KEYS = _TOOL_KEYS | {"name"}
"""Key sets compared with ``dict.keys()``, which builds no set per event."""


def _delta_kind(event: Json) -> str | None:
    """The delta kind of an event whose whole shape may pack, else ``None``."""
    if event.get("type") != "assistant/chunk" or event.keys() != _EVENT_KEYS:
        return None
    seq, time, data = event["seq"], event["time"], event["data"]
    if not _is_safe_int(seq) or seq < 0 or not _is_safe_int(time):
        return None
    if not isinstance(data, dict) or data.keys() != _DATA_KEYS:
        return None
    if not _is_number(data["turn"]) or not _is_number(data["step"]):
        return None
    chunk = data["chunk"]
    if not isinstance(chunk, dict) or not _is_number(chunk.get("index")):
        return None
    kind = chunk.get("type")
    if kind in ("text-delta", "reasoning-delta"):
        ok = chunk.keys() == _TEXT_KEYS and isinstance(chunk["text"], str)
        return str(kind) if ok else None
    if kind == "tool-call-delta":
        keys = chunk.keys()
        shape = keys == _TOOL_KEYS or (keys == _NAMED_TOOL_KEYS and isinstance(chunk["name"], str))
        ok = shape and isinstance(chunk["id"], str) and isinstance(chunk["argumentsDelta"], str)
        return "tool-call-delta" if ok else None
    return None


def _continues(previous: Json, following: Json, kind: str) -> bool:
    if following["seq"] != previous["seq"] + 1:
        return False
    if not _is_safe_int(following["time"] - previous["time"]):
        return False
    a, b = previous["data"], following["data"]
    if a["turn"] != b["turn"] or a["step"] != b["step"]:
        return False
    if a["chunk"]["index"] != b["chunk"]["index"]:
        return False
    if kind != "tool-call-delta":
        return True
    ca, cb = a["chunk"], b["chunk"]
    return (
        ca["id"] == cb["id"]
        and ("name" in ca) == ("name" in cb)
        and ca.get("name") == cb.get("name")
    )


def _build_row(kind: str, run: list[Json]) -> Json:
    first = run[0]
    chunk = first["data"]["chunk"]
    data: Json = {
        "turn": first["data"]["turn"],
        "step": first["data"]["step"],
        "index": chunk["index"],
        "dt": [run[k]["time"] - run[k - 1]["time"] for k in range(1, len(run))],
    }
    if kind == "tool-call-delta":
        data["id"] = chunk["id"]
        if "name" in chunk:
            data["name"] = chunk["name"]
        data["args"] = [member["data"]["chunk"]["argumentsDelta"] for member in run]
    else:
        data["texts"] = [member["data"]["chunk"]["text"] for member in run]
    return {"type": _ROW_OF_DELTA[kind], "seq0": first["seq"], "time0": first["time"], "data": data}


def _data_bytes(row: Json) -> int:
    return len(dumps_js(row["data"]).encode())


def _fits(row: Json, bounds: RowBounds) -> bool:
    return bounds.max_data_bytes is None or _data_bytes(row) <= bounds.max_data_bytes


def _emit_run(out: list[Json], kind: str, run: list[Json], bounds: RowBounds) -> None:
    """Pack one maximal run into rows within ``bounds``; the remainder stays verbatim."""
    offset = 0
    while len(run) - offset >= MIN_RUN:
        high = len(run) - offset
        if bounds.max_members is not None:
            high = min(high, bounds.max_members)
        largest = _build_row(kind, run[offset : offset + high])
        if _fits(largest, bounds):
            out.append(largest)
            offset += high
            continue
        low, high, accepted = MIN_RUN, high - 1, None
        while low <= high:
            middle = (low + high) // 2
            candidate = _build_row(kind, run[offset : offset + middle])
            if _fits(candidate, bounds):
                accepted, low = (middle, candidate), middle + 1
            else:
                high = middle - 1
        if accepted is None:
            out.append(run[offset])
            offset += 1
            continue
        out.append(accepted[1])
        offset += accepted[0]
    out.extend(run[offset:])


def pack_chunk_runs(events: Iterable[Any], bounds: RowBounds = JSONL_BOUNDS) -> list[Any]:
    """The storage records the harness writes for one batch of plain events, in order.

    Runs never cross the batch given: the harness packs per durable batch, so the same
    events flushed in other batches give other rows (both decode to the same events).
    Items that are not dicts (a record a writer serialized already) never pack.
    """
    out: list[Any] = []
    kind: str | None = None
    run: list[Json] = []
    for event in events:
        event_kind = _delta_kind(event) if isinstance(event, dict) else None
        if event_kind is not None and event_kind == kind and _continues(run[-1], event, kind):
            run.append(event)
            continue
        if kind is not None:
            _emit_run(out, kind, run, bounds)
        if event_kind is None:
            kind, run = None, []
            out.append(event)
        else:
            kind, run = event_kind, [event]
    if kind is not None:
        _emit_run(out, kind, run, bounds)
    return out


def _malformed(tag: str, seq0: object, why: str, field: str) -> ChunkRowError:
    seq = seq0 if _is_safe_int(seq0) else None
    return ChunkRowError(f"malformed {tag} storage row: {why}", seq=seq, field=field)


def _validated_members(row: Json, tag: str, bounds: RowBounds, data_bytes: int | None) -> list[str]:
    seq0 = row.get("seq0")
    if set(row) != {"type", "seq0", "time0", "data"}:
        raise _malformed(tag, seq0, "envelope must be exactly {type, seq0, time0, data}", "type")
    if not _is_safe_int(seq0) or seq0 < 0:
        raise _malformed(tag, seq0, "seq0 must be a non-negative safe integer", "seq0")
    if not _is_safe_int(row["time0"]):
        raise _malformed(tag, seq0, "time0 must be a safe integer", "time0")
    data = row["data"]
    if not isinstance(data, dict):
        raise _malformed(tag, seq0, "data must be an object", "data")
    if tag == "tool-call-chunks":
        base = {"turn", "step", "index", "id", "dt", "args"}
        if set(data) not in (base, base | {"name"}):
            raise _malformed(
                tag, seq0, "data must be {turn, step, index, id, name?, dt, args}", "data"
            )
        if not isinstance(data["id"], str) or not isinstance(data.get("name", ""), str):
            raise _malformed(tag, seq0, "id (and name when present) must be strings", "data.id")
        key = "args"
    else:
        if set(data) != {"turn", "step", "index", "dt", "texts"}:
            raise _malformed(
                tag, seq0, "data must be exactly {turn, step, index, dt, texts}", "data"
            )
        key = "texts"
    if not all(_is_number(data[name]) for name in ("turn", "step", "index")):
        raise _malformed(tag, seq0, "turn/step/index must be numbers", "data.turn")
    members = data[key]
    too_many = (
        bounds.max_members is not None
        and isinstance(members, list)
        and (len(members) > bounds.max_members)
    )
    if (
        not isinstance(members, list)
        or len(members) < bounds.min_members
        or too_many
        or not all(isinstance(member, str) for member in members)
    ):
        raise _malformed(tag, seq0, f"{key} must be a non-empty string array within bounds", key)
    gaps = data["dt"]
    if not isinstance(gaps, list) or not all(_is_safe_int(gap) for gap in gaps):
        raise _malformed(tag, seq0, "dt must be an array of safe integers", "data.dt")
    if len(gaps) != len(members) - 1:
        raise _malformed(
            tag, seq0, f"dt has {len(gaps)} gaps for {len(members)} members", "data.dt"
        )
    if bounds.max_data_bytes is not None:
        size = data_bytes if data_bytes is not None else len(dumps_js(data).encode())
        if size > bounds.max_data_bytes:
            raise _malformed(tag, seq0, f"data exceeds {bounds.max_data_bytes} bytes", "data")
    if not _is_safe_int(seq0 + len(members) - 1):
        raise _malformed(tag, seq0, "member seqs leave the safe-integer range", "seq0")
    time = row["time0"]
    for gap in gaps:
        time += gap
        if not _is_safe_int(time):
            raise _malformed(tag, seq0, "member times leave the safe-integer range", "data.dt")
    return members


def expand_record(
    record: Any, bounds: RowBounds = JSONL_BOUNDS, *, data_bytes: int | None = None
) -> list[Any]:
    """The plain events one stored record holds: a packed row expands (after
    validation), any other value is one event, passed through untouched.

    ``data_bytes`` is the stored size of the row's ``data`` when the caller has it
    (SQLite checks the bound on the stored text, before parsing).
    """
    if not isinstance(record, dict) or record.get("type") not in CHUNK_ROW_TYPES:
        return [record]
    tag = record["type"]
    members = _validated_members(record, tag, bounds, data_bytes)
    data = record["data"]
    delta = _DELTA_OF_ROW[tag]
    events: list[Any] = []
    time = record["time0"]
    for k, member in enumerate(members):
        if k:
            time += data["dt"][k - 1]
        chunk: Json = {"type": delta, "index": data["index"]}
        if tag == "tool-call-chunks":
            chunk["id"] = data["id"]
            if "name" in data:
                chunk["name"] = data["name"]
            chunk["argumentsDelta"] = member
        else:
            chunk["text"] = member
        events.append(
            {
                "type": "assistant/chunk",
                "seq": record["seq0"] + k,
                "time": time,
                "data": {"turn": data["turn"], "step": data["step"], "chunk": chunk},
            }
        )
    return events


__all__ = [
    "CHUNK_ROW_TYPES",
    "JSONL_BOUNDS",
    "MIN_RUN",
    "SQLITE_BOUNDS",
    "Json",
    "RowBounds",
    "expand_record",
    "pack_chunk_runs",
]
