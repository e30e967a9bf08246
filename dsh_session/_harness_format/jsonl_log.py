"""Read and write one harness ``session.jsonl`` / ``session.jsonl.zstd`` artifact.

Reading follows the harness's committed-prefix rule (session-persistence-jsonl/src/
format.ts ``SessionLogScanner``, index.ts ``readZstdPrefix``): records are kept while
they parse and their seqs stay contiguous; the first bad record starts the torn tail,
unless a later record holds a ``turn/end`` — then the damage is committed and reading
refuses. Unlike the harness, which truncates the tail on repair, the tail's bytes are
returned in :class:`TornArtifactTail`, never dropped.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from dsh_session._harness_format._json import dumps_js
from dsh_session._harness_format.chunk_rows import expand_record, pack_chunk_runs
from dsh_session._harness_format.header_line import header_line, parse_header_line
from dsh_session._harness_format.zstd_frames import (
    FrameScan,
    decode_frame,
    decode_torn_prefix,
    encode_frame,
    scan_frames,
)
from dsh_session.errors import HarnessCorruptError, HeaderLineError, ZstdFrameError

Json = dict[str, Any]


@dataclass(frozen=True)
class TornArtifactTail:
    """The end of an artifact that is not part of its committed prefix."""

    offset: int
    """Byte offset in the file where the tail starts (where the harness truncates)."""
    data: bytes
    """The tail's raw file bytes, kept so nothing durable is lost."""
    reason: str
    recovered: int = 0
    """How many complete events were decoded out of a torn zstd frame; they are part of
    :attr:`HarnessLog.events` (the harness re-appends them after truncating)."""


@dataclass(frozen=True)
class HarnessLog:
    """One decoded artifact: its header line, plain events and any torn tail."""

    header: Json
    events: list[Any] = field(default_factory=list)
    torn: TornArtifactTail | None = None


class _RecordScanner:
    """Feeds plaintext event records and keeps the harness's contiguous prefix."""

    def __init__(self) -> None:
        self.events: list[Any] = []
        self.committed = 0
        """Plaintext bytes (after the header) covered by the committed prefix."""
        self._consumed = 0
        self._pending = b""
        self._issue: HarnessCorruptError | None = None
        self._line = 0

    def write(self, chunk: bytes) -> None:
        data = self._pending + chunk
        start = 0
        while (newline := data.find(b"\n", start)) != -1:
            self._consume(data[start:newline], self._consumed + newline + 1)
            start = newline + 1
        self._consumed += start
        self._pending = data[start:]

    @property
    def complete(self) -> bool:
        """No partial record is pending and every record so far was committed."""
        return not self._pending and self._issue is None

    @property
    def issue(self) -> str | None:
        return None if self._issue is None else str(self._issue)

    def _consume(self, line: bytes, end: int) -> None:
        self._line += 1
        try:
            decoded = expand_record(_loads(line))
        except RecursionError:
            raise HarnessCorruptError(
                f"event record at line {self._line + 1} nests too deep to read",
                offset=self.committed,
            ) from None
        except (ValueError, HarnessCorruptError) as error:
            if self._issue is None:
                self._issue = HarnessCorruptError(
                    f"unparsable event record at line {self._line + 1}: {error}",
                    offset=self.committed,
                )
            return
        if self._issue is None and len(decoded) == 1:  # one plain event: most records
            event = decoded[0]
            seq = event.get("seq") if type(event) is dict else None
            if type(seq) is int and seq == len(self.events):
                self.events.append(event)
                self.committed = end
                return
        ends_turn = any(isinstance(e, dict) and e.get("type") == "turn/end" for e in decoded)
        if self._issue is not None:
            if ends_turn:
                raise self._issue
            return
        for index, event in enumerate(decoded):
            seq = event.get("seq") if isinstance(event, dict) else None
            if seq != len(self.events) + index or isinstance(seq, bool):
                self._issue = HarnessCorruptError(
                    f"seq gap at line {self._line + 1}: expected {len(self.events) + index}, "
                    f"got {seq!r}",
                    offset=self.committed,
                    seq=len(self.events) + index,
                )
                if ends_turn:
                    raise self._issue
                return
        self.events.extend(decoded)
        self.committed = end


_decode_text = json.JSONDecoder().decode


def _loads(line: bytes) -> Any:
    """``json.loads(line)``. A line that opens a JSON object in UTF-8 (json.loads would
    detect UTF-8 for it) is decoded directly, without json.loads's per-call encoding
    detection: a measurable share of reading a 100k-record log."""
    if line[:1] == b"{" and line[1:2] != b"\x00":
        return _decode_text(line.decode("utf-8", "surrogatepass"))
    return json.loads(line)


def _split_header(plaintext: bytes) -> tuple[Json, int]:
    end = plaintext.find(b"\n")
    if end == -1:
        raise HeaderLineError("empty or header-less session log", offset=0, field="type")
    return parse_header_line(plaintext[:end]), end + 1


def read_plain_log(data: bytes) -> HarnessLog:
    """Decode a plain ``session.jsonl``."""
    header, body_start = _split_header(data)
    scanner = _RecordScanner()
    scanner.write(data[body_start:])
    offset = body_start + scanner.committed
    if offset == len(data):
        return HarnessLog(header=header, events=scanner.events)
    reason = scanner.issue or "final record has no newline"
    torn = TornArtifactTail(offset=offset, data=data[offset:], reason=reason)
    return HarnessLog(header=header, events=scanner.events, torn=torn)


def _zstd_header(data: bytes, scan: FrameScan) -> Json:
    if not scan.frames:
        raise HeaderLineError("empty or header-less zstd session log", offset=0, field="type")
    first = scan.frames[0]
    header_text = decode_frame(data[first.start : first.end], start=first.start)
    if not header_text.endswith(b"\n") or header_text.count(b"\n") != 1:
        raise HeaderLineError(
            "first zstd frame is not exactly one header line", offset=0, field="type"
        )
    return _split_header(header_text)[0]


def read_zstd_log(data: bytes) -> HarnessLog:
    """Decode a ``session.jsonl.zstd``: a header frame, then one frame per batch."""
    scan = scan_frames(data)
    header = _zstd_header(data, scan)
    scanner = _RecordScanner()
    for frame in scan.frames[1:]:
        scanner.write(decode_frame(data[frame.start : frame.end], start=frame.start))
        if not scanner.complete:
            raise HarnessCorruptError(
                f"complete zstd frame at byte {frame.start} holds a torn or bad record"
                f" ({scanner.issue or 'no final newline'})",
                offset=frame.start,
            )
    if scan.torn_start is None:
        return HarnessLog(header=header, events=scanner.events)
    before = len(scanner.events)
    scanner.write(decode_torn_prefix(data[scan.torn_start :]))
    torn = TornArtifactTail(
        offset=scan.torn_start,
        data=data[scan.torn_start :],
        reason="final zstd frame is incomplete",
        recovered=len(scanner.events) - before,
    )
    return HarnessLog(header=header, events=scanner.events, torn=torn)


def intact_records(data: bytes, *, compressed: bool) -> tuple[Json, list[bytes]] | None:
    """The header and the undecoded record lines of an artifact that ends exactly on a
    record (and, for zstd, every frame does), or ``None`` when it may not (a torn or
    damaged tail: :func:`read_log` tells which). For a reader that validates the lines
    itself. A damaged header raises as :func:`read_log` does."""
    if compressed:
        scan = scan_frames(data)
        header = _zstd_header(data, scan)
        if scan.torn_start is not None:
            return None
        texts = []
        for frame in scan.frames[1:]:
            try:
                text = decode_frame(data[frame.start : frame.end], start=frame.start)
            except ZstdFrameError:
                return None  # read_log may find an earlier damaged record first
            if not text.endswith(b"\n"):
                return None
            texts.append(text)
        lines = b"".join(texts).split(b"\n")
    else:
        header, body_start = _split_header(data)
        if len(data) > body_start and not data.endswith(b"\n"):
            return None
        lines = data.split(b"\n")  # no copy of the body: the header line is piece 0
        del lines[0]
    lines.pop()  # the empty piece after the final newline
    return header, lines


def read_log(data: bytes, *, compressed: bool) -> HarnessLog:
    """Decode one artifact's bytes; ``compressed`` is true for ``session.jsonl.zstd``."""
    return read_zstd_log(data) if compressed else read_plain_log(data)


def batch_text(events: Iterable[Any], *, pack_chunks: bool = True) -> bytes:
    """One durable batch as JSONL (newline-terminated), packed as the harness packs.

    A ``bytes`` item is a record already serialized as ``dumps_js`` would (a writer
    that has its events' JSON passes it so); it is written as it is and never packs."""
    events = list(events)
    records = pack_chunk_runs(events) if pack_chunks else events
    lines = [r if isinstance(r, bytes) else dumps_js(r).encode() for r in records]
    lines.append(b"")
    return b"\n".join(lines)


def encode_batch(
    events: Iterable[Any], *, pack_chunks: bool = True, compress: bool = True
) -> bytes:
    """The bytes the harness appends for one durable batch (one frame when compressed)."""
    text = batch_text(events, pack_chunks=pack_chunks)
    return encode_frame(text) if compress else text


def encode_log(
    header: Json,
    batches: Iterable[Iterable[Any]],
    *,
    pack_chunks: bool = True,
    compress: bool = True,
) -> bytes:
    """A whole artifact as the harness writes it: the header (its own frame when
    compressed), then each batch. The first batch is written with the header."""
    head = (header_line(header) + "\n").encode()
    parts = [encode_frame(head) if compress else head]
    parts.extend(encode_batch(b, pack_chunks=pack_chunks, compress=compress) for b in batches)
    return b"".join(parts)


__all__ = [
    "HarnessLog",
    "Json",
    "TornArtifactTail",
    "batch_text",
    "encode_batch",
    "encode_log",
    "intact_records",
    "read_log",
    "read_plain_log",
    "read_zstd_log",
]
