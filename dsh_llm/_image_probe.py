"""The format and intrinsic size of a PNG, JPEG, WebP or GIF, read from its header.

An image attachment's reference records its media type, width and height (the harness
checks them against the stored bytes when it reads them), so they must come from the
bytes, not from the caller. Only the header is parsed: dsh does not decode pixels.
"""

from __future__ import annotations

import struct
from typing import NamedTuple


class ImageFacts(NamedTuple):
    """What the header says."""

    media_type: str
    width: int
    height: int


_JPEG_FRAME_MARKERS = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
"""Start-of-frame markers (SOF0..SOF15 without DHT, JPG and DAC)."""


def probe_image(data: bytes) -> ImageFacts | None:
    """The image's format and size, or ``None`` when the bytes are not a PNG, JPEG,
    WebP or GIF whose header can be read."""
    try:
        if data.startswith(b"\x89PNG\r\n\x1a\n") and data[12:16] == b"IHDR":
            width, height = struct.unpack(">II", data[16:24])
            return _facts("image/png", width, height)
        if data[:6] in (b"GIF87a", b"GIF89a"):
            width, height = struct.unpack("<HH", data[6:10])
            return _facts("image/gif", width, height)
        if data.startswith(b"\xff\xd8"):
            return _jpeg(data)
        if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
            return _webp(data)
    except (struct.error, IndexError):  # a header cut short
        return None
    return None


def _facts(media_type: str, width: int, height: int) -> ImageFacts | None:
    return ImageFacts(media_type, width, height) if width > 0 and height > 0 else None


def _jpeg(data: bytes) -> ImageFacts | None:
    at = 2
    while at + 4 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):  # markers without a length
            at += 2
            continue
        (length,) = struct.unpack(">H", data[at + 2 : at + 4])
        if marker in _JPEG_FRAME_MARKERS:
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return _facts("image/jpeg", width, height)
        at += 2 + length
    return None


def _webp(data: bytes) -> ImageFacts | None:
    chunk = data[12:16]
    if chunk == b"VP8 " and data[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", data[26:30])
        return _facts("image/webp", width & 0x3FFF, height & 0x3FFF)
    if chunk == b"VP8L" and data[20] == 0x2F:
        (bits,) = struct.unpack("<I", data[21:25])
        return _facts("image/webp", (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
    if chunk == b"VP8X":
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return _facts("image/webp", width, height)
    return None


__all__ = ["ImageFacts", "probe_image"]
