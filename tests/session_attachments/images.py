"""Real image bytes built by hand (no imaging library): a PNG that decodes, and the
headers of a JPEG, a GIF and a WebP, each naming its intrinsic size."""

from __future__ import annotations

import os
import struct
import zlib


def _png_chunk(kind: bytes, body: bytes) -> bytes:
    crc = zlib.crc32(kind + body) & 0xFFFFFFFF
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)


def png(width: int, height: int, *, noise: bool = False) -> bytes:
    """A complete RGBA PNG; ``noise`` fills it with random pixels (incompressible, so
    a 512x512 one is about 1 MB, like a photo)."""
    row = 1 + 4 * width
    pixels = b"".join(
        b"\x00" + (os.urandom(row - 1) if noise else b"\x80" * (row - 1)) for _ in range(height)
    )
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", zlib.compress(pixels, 1))
        + _png_chunk(b"IEND", b"")
    )


def jpeg(width: int, height: int) -> bytes:
    """A JPEG's start: SOI, an APP0 segment, then a baseline frame header (SOF0)."""
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof0 = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + sof0 + b"\xff\xd9"


def gif(width: int, height: int) -> bytes:
    """A GIF89a's logical screen descriptor and trailer."""
    return b"GIF89a" + struct.pack("<HHBBB", width, height, 0, 0, 0) + b";"


def webp(width: int, height: int) -> bytes:
    """A WebP with an extended (VP8X) header giving the canvas size."""
    body = b"VP8X" + struct.pack("<I", 10) + b"\x00\x00\x00\x00"
    body += (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return b"RIFF" + struct.pack("<I", 4 + len(body)) + b"WEBP" + body
