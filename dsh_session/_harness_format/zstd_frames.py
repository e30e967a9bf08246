"""The harness's zstd container: concatenated, independently decodable frames.

``session.jsonl.zstd`` holds one frame for the header line, then one checksummed frame
per durable batch (source: session-persistence-jsonl/src/zstd.ts, index.ts). A frame is
located structurally first (magic, frame header, block headers, checksum) without
decompressing, so a crash that cut the final frame is told apart from corruption: an
incomplete final frame is *torn*, any malformed complete frame is an error.
"""

from __future__ import annotations

from dataclasses import dataclass

from dsh_session._harness_format._zstd_binding import zstd
from dsh_session.errors import ZstdFrameError

ZSTD_MAGIC = 0xFD2FB528
"""Little-endian magic number opening every zstd frame."""

_CHECKSUM_OPTIONS: dict[int, int] = {zstd.CompressionParameter.checksum_flag: 1}


@dataclass(frozen=True)
class FrameRange:
    """Byte range ``[start, end)`` of one structurally complete frame."""

    start: int
    end: int


@dataclass(frozen=True)
class FrameScan:
    """Complete frames in file order, and where an incomplete final frame starts."""

    frames: tuple[FrameRange, ...]
    torn_start: int | None
    """Offset of a final frame cut by end of file, or ``None`` when the file ends on a
    frame boundary."""


def _frame_end(buffer: bytes, start: int) -> int | None:
    """End offset of the frame at ``start``; ``None`` when end of file cuts it."""
    size = len(buffer)
    offset = start
    if size - offset < 4:
        return None
    if int.from_bytes(buffer[offset : offset + 4], "little") != ZSTD_MAGIC:
        raise ZstdFrameError(f"invalid zstd frame magic at byte {offset}", offset=offset)
    offset += 4
    if offset == size:
        return None
    descriptor = buffer[offset]
    if descriptor & 0x18:
        raise ZstdFrameError(f"reserved zstd frame-header bit at byte {offset}", offset=start)
    offset += 1
    content_size_flag = descriptor >> 6
    single_segment = bool(descriptor & 0x20)
    has_checksum = bool(descriptor & 0x04)
    dictionary_bytes = (0, 1, 2, 4)[descriptor & 0x03]
    if content_size_flag == 0:
        content_size_bytes = 1 if single_segment else 0
    else:
        content_size_bytes = 1 << content_size_flag
    offset += (0 if single_segment else 1) + dictionary_bytes + content_size_bytes
    if offset > size:
        return None
    while True:
        if size - offset < 3:
            return None
        block_header = int.from_bytes(buffer[offset : offset + 3], "little")
        block_type = (block_header >> 1) & 0x03
        if block_type == 0x03:
            raise ZstdFrameError(f"reserved zstd block type at byte {offset}", offset=start)
        offset += 3
        offset += 1 if block_type == 0x01 else block_header >> 3
        if offset > size:
            return None
        if block_header & 1:
            break
    if has_checksum:
        offset += 4
        if offset > size:
            return None
    return offset


def scan_frames(buffer: bytes) -> FrameScan:
    """Locate every complete frame without decompressing; report a torn final frame."""
    frames: list[FrameRange] = []
    offset = 0
    while offset < len(buffer):
        end = _frame_end(buffer, offset)
        if end is None:
            return FrameScan(frames=tuple(frames), torn_start=offset)
        frames.append(FrameRange(start=offset, end=end))
        offset = end
    return FrameScan(frames=tuple(frames), torn_start=None)


def decode_frame(frame: bytes, *, start: int = 0) -> bytes:
    """Decompress one complete frame and verify its checksum (``start`` names it in errors)."""
    decompressor = zstd.ZstdDecompressor()
    try:
        plaintext = decompressor.decompress(frame)
    except zstd.ZstdError as error:
        raise ZstdFrameError(
            f"zstd frame at byte {start} failed to decode: {error}", offset=start
        ) from error
    if not decompressor.eof or decompressor.unused_data:
        raise ZstdFrameError(f"zstd frame at byte {start} has a bad length", offset=start)
    return plaintext


def decode_torn_prefix(fragment: bytes) -> bytes:
    """Whatever plaintext an incomplete final frame yields (its checksum cannot be
    verified). Garbage that does not decode yields nothing, as in the harness."""
    try:
        return zstd.ZstdDecompressor().decompress(fragment)
    except zstd.ZstdError:
        return b""


def encode_frame(plaintext: bytes) -> bytes:
    """One checksummed frame exactly as the harness's ``zstdCompress`` writes it: level 3,
    streaming (no content size in the header), 32-bit XXH64 checksum."""
    compressor = zstd.ZstdCompressor(options=_CHECKSUM_OPTIONS)
    return compressor.compress(plaintext, zstd.ZstdCompressor.CONTINUE) + compressor.flush(
        zstd.ZstdCompressor.FLUSH_FRAME
    )


__all__ = [
    "ZSTD_MAGIC",
    "FrameRange",
    "FrameScan",
    "decode_frame",
    "decode_torn_prefix",
    "encode_frame",
    "scan_frames",
]
