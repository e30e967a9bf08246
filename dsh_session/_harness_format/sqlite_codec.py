"""Schema-17 column codecs: one physical ``events`` row <-> plain events.

Source: session-persistence-sqlite/src/compression.ts and codec.ts. A scalar row holds
one event: ``data`` is the JSON of ``event.data`` (TEXT, or a zstd BLOB when the JSON is
at least 4 KiB and compression shrinks it), ``source_event_seqs`` a varint/ZigZag BLOB,
``surface_op`` JSON text, ``ignorable`` 1 or NULL. A packed row has ``ignorable = 0``
(the sentinel), the chunk tag as ``type``, ``seq0``/``time0`` as ``seq``/``time`` and the
row's ``data`` object in ``data``; its surface columns are NULL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dsh_session._harness_format._json import dumps_js, loads_record
from dsh_session._harness_format._zstd_binding import zstd
from dsh_session._harness_format.chunk_rows import CHUNK_ROW_TYPES, SQLITE_BOUNDS, expand_record
from dsh_session.errors import ChunkRowError, HarnessCorruptError, SourceSeqsError

Json = dict[str, Any]

ZSTD_DATA_THRESHOLD_BYTES = 4096
"""``data`` JSON at least this long is stored as a zstd BLOB (when that is smaller)."""
ZSTD_DATA_LEVEL = 3
PACKED_ROW_SENTINEL = 0
_MAX_SAFE = 2**53 - 1


@dataclass(frozen=True)
class EventRow:
    """The columns of one ``events`` row, in table order (``session_id`` aside)."""

    seq: int
    type: str
    time: int
    data: str | bytes
    source_event_seqs: bytes | None
    surface_op: str | None
    ignorable: int | None


def encode_source_event_seqs(values: list[int]) -> bytes:
    """The first seq as a LEB128 varint, each later one as the ZigZag varint of its
    difference from the previous (``2d`` for ``d >= 0``, ``-2d - 1`` below)."""
    out = bytearray()
    previous = 0
    for index, value in enumerate(values):
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= _MAX_SAFE:
            raise SourceSeqsError(f"source seq {value!r} is not a non-negative safe integer")
        delta = value - previous
        encoded = value if index == 0 else (2 * delta if delta >= 0 else -2 * delta - 1)
        while encoded >= 0x80:
            out.append((encoded & 0x7F) | 0x80)
            encoded >>= 7
        out.append(encoded)
        previous = value
    return bytes(out)


def _read_varint(data: bytes, offset: int, limit: int) -> tuple[int, int]:
    value = shift = 0
    while offset < len(data):
        byte = data[offset]
        offset += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            if shift and not byte & 0x7F:
                raise SourceSeqsError("non-canonical varint in source_event_seqs", offset=offset)
            if value > limit:
                raise SourceSeqsError("varint out of range in source_event_seqs", offset=offset)
            return value, offset
        shift += 7
        if shift > 56:
            raise SourceSeqsError("varint out of range in source_event_seqs", offset=offset)
    raise SourceSeqsError("truncated varint in source_event_seqs", offset=offset)


def decode_source_event_seqs(data: bytes) -> list[int]:
    """Inverse of :func:`encode_source_event_seqs`, refusing what the harness refuses."""
    values: list[int] = []
    offset = 0
    previous = 0
    while offset < len(data):
        first = not values
        raw, offset = _read_varint(data, offset, _MAX_SAFE if first else 2 * _MAX_SAFE)
        delta = raw if first else (raw // 2 if raw % 2 == 0 else -((raw + 1) // 2))
        value = delta if first else previous + delta
        if not 0 <= value <= _MAX_SAFE:
            raise SourceSeqsError("decoded source seq out of range", offset=offset)
        values.append(value)
        previous = value
    return values


def encode_data(serialized: str) -> str | bytes:
    """The ``data`` column for JSON text: TEXT below 4 KiB, else zstd level 3 when smaller."""
    raw = serialized.encode()
    if len(raw) < ZSTD_DATA_THRESHOLD_BYTES:
        return serialized
    compressed = zstd.compress(raw, level=ZSTD_DATA_LEVEL)
    return compressed if len(compressed) < len(raw) else serialized


def decode_data(value: str | bytes, *, seq: int, max_bytes: int | None = None) -> str:
    """JSON text of a ``data`` column (decompressing a BLOB, refusing bad UTF-8)."""
    if isinstance(value, str):
        return value
    try:
        decompressor = zstd.ZstdDecompressor()
        text = decompressor.decompress(value, max_length=-1 if max_bytes is None else max_bytes + 1)
        if not decompressor.eof or (max_bytes is not None and len(text) > max_bytes):
            raise HarnessCorruptError("compressed data is truncated or too large", seq=seq)
        return text.decode("utf-8")
    except (zstd.ZstdError, UnicodeDecodeError) as error:
        raise HarnessCorruptError(
            f"bad data BLOB at seq {seq}: {error}", seq=seq, field="data"
        ) from error


def decode_row(row: EventRow) -> list[Any]:
    """The plain events one physical row holds."""
    if row.ignorable == PACKED_ROW_SENTINEL:
        if row.type not in CHUNK_ROW_TYPES:
            raise ChunkRowError(f"packed row at seq {row.seq} has tag {row.type!r}", seq=row.seq)
        if row.source_event_seqs is not None or row.surface_op is not None:
            raise ChunkRowError(f"packed row at seq {row.seq} has surface columns", seq=row.seq)
        max_bytes = SQLITE_BOUNDS.max_data_bytes
        text = decode_data(row.data, seq=row.seq, max_bytes=max_bytes)
        data = loads_record(text, what=f"packed row at seq {row.seq}", seq=row.seq)
        record = {"type": row.type, "seq0": row.seq, "time0": row.time, "data": data}
        return expand_record(record, SQLITE_BOUNDS, data_bytes=len(text.encode()))
    event: Json = {
        "type": row.type,
        "seq": row.seq,
        "time": row.time,
        "data": loads_record(
            decode_data(row.data, seq=row.seq), what=f"data of seq {row.seq}", seq=row.seq
        ),
    }
    if row.source_event_seqs is not None:
        event["sourceEventSeqs"] = decode_source_event_seqs(row.source_event_seqs)
    if row.surface_op is not None:
        event["surfaceOp"] = loads_record(
            row.surface_op, what=f"surface_op of seq {row.seq}", seq=row.seq
        )
    if row.ignorable == 1:
        event["ignorable"] = True
    return [event]


def encode_record(record: Json) -> EventRow:
    """The physical row for one storage record (a plain event or a packed chunk row)."""
    if record.get("type") in CHUNK_ROW_TYPES and "seq0" in record and "seq" not in record:
        return EventRow(
            seq=record["seq0"],
            type=record["type"],
            time=record["time0"],
            data=encode_data(dumps_js(record["data"])),
            source_event_seqs=None,
            surface_op=None,
            ignorable=PACKED_ROW_SENTINEL,
        )
    seqs = record.get("sourceEventSeqs")
    op = record.get("surfaceOp")
    return EventRow(
        seq=record["seq"],
        type=record["type"],
        time=record["time"],
        data=encode_data(dumps_js(record["data"])),
        source_event_seqs=None if seqs is None else encode_source_event_seqs(seqs),
        surface_op=None if op is None else dumps_js(op),
        ignorable=1 if record.get("ignorable") is True else None,
    )


__all__ = [
    "PACKED_ROW_SENTINEL",
    "ZSTD_DATA_LEVEL",
    "ZSTD_DATA_THRESHOLD_BYTES",
    "EventRow",
    "Json",
    "decode_data",
    "decode_row",
    "decode_source_event_seqs",
    "encode_data",
    "encode_record",
    "encode_source_event_seqs",
]
