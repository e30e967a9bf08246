"""Attachments suite: bytes on disk of a conversation with images, the images stored as
attachments (bytes once per hash in the store, a reference in the event) against the
same images inline as base64 in the messages.

A 50-turn conversation played by the agent loop with a store (an instant scripted
model answering each prompt in text), ten of whose prompts carry a 1 MB image (random
pixels, so incompressible, like a photo): ten different images, and then one image
attached to ten prompts. Bytes of every file the store leaves (SQLite: the database,
its write-ahead log and the attachments companion; JSONL: the store root, zstd frames
by default). Inline, each image's base64 is in its ``user/message`` event and in the
``agent/inbox/spliced`` event that delivered it. Target: attachments at most 0.1x
inline.
"""

from __future__ import annotations

import asyncio
import base64
import os
import tempfile
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from _harness import Case, Options, Target

from dsh_agent import AgentLoop
from dsh_agent import run as run_agent
from dsh_llm import (
    BlockEndChunk,
    FinishChunk,
    GenerateRequest,
    ImageBlock,
    StopFinish,
    StreamChunk,
    TextBlock,
    UserMessage,
    create_user_message,
)
from dsh_session import Attachment, Session, create_user_message_with_attachments
from dsh_session.stores import JsonlSessionStore, SessionStore, SqliteSessionStore

SUITE = "attachments"
TURNS = 50
IMAGES = 10
IMAGE_SIDE = 512
"""A 512x512 RGBA PNG of random pixels: 1 MiB of pixels, about 1 MB encoded."""
TARGET = 0.1
ATTACHED, INLINE = "dsh attachments", "dsh inline base64"


class InstantModel:
    """Answers every prompt at once with one short text."""

    provider, model = "bench", "instant"

    async def stream(self, request: GenerateRequest) -> AsyncIterator[StreamChunk]:
        yield BlockEndChunk(index=0, block=TextBlock(text="Noted: a picture."))
        yield FinishChunk(reason=StopFinish())


def noise_png(side: int) -> bytes:
    """A PNG of random pixels (the bench's stand-in for a photo)."""
    import struct
    import zlib

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    rows = b"".join(b"\x00" + os.urandom(4 * side) for _ in range(side))
    header = struct.pack(">IIBBBBB", side, side, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, 1))
        + chunk(b"IEND", b"")
    )


async def _prompt(store: SessionStore, turn: int, image: bytes | None, inline: bool) -> UserMessage:
    text = f"Turn {turn}: what do you see?"
    if image is None:
        return create_user_message(text)
    if inline:
        encoded = base64.b64encode(image).decode("ascii")
        return create_user_message(
            [TextBlock(text=text), ImageBlock(media_type="image/png", data=encoded)]
        )
    return await create_user_message_with_attachments(
        store, text, attachments=[Attachment(image, "image/png", f"photo-{turn}.png")]
    )


async def _conversation(store: SessionStore, images: list[bytes], *, inline: bool) -> None:
    every = TURNS // len(images)
    async with store:
        agent = AgentLoop(session=Session.create(), adapter=InstantModel(), store=store)
        for turn in range(TURNS):
            image = images[turn // every] if turn % every == 0 else None
            await run_agent(agent, await _prompt(store, turn, image, inline))


def _bytes_on_disk(root: Path) -> int:
    return sum(path.stat().st_size for path in root.rglob("*") if path.is_file())


def _measure(open_store: Callable[[Path], SessionStore], images: list[bytes], inline: bool) -> int:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        asyncio.run(_conversation(open_store(root), images, inline=inline))
        return _bytes_on_disk(root)


def _case(name: str, open_store: Callable[[Path], SessionStore], images: list[bytes]) -> Case:
    values = {
        ATTACHED: float(_measure(open_store, images, inline=False)),
        INLINE: float(_measure(open_store, images, inline=True)),
    }
    return Case(
        suite=SUITE,
        name=name,
        unit="bytes",
        values=values,
        targets=(Target(peer=INLINE, subject=ATTACHED, max_ratio=TARGET),),
        notes=f"{TURNS} turns, {sum(map(len, images)):,} image bytes",
    )


BACKENDS: dict[str, Callable[[Path], SessionStore]] = {
    "SQLite": lambda root: SqliteSessionStore(root / "sessions.db"),
    "JSONL (zstd)": lambda root: JsonlSessionStore(root / "sessions"),
}


def run(options: Options) -> list[Case]:
    distinct = [noise_png(IMAGE_SIDE) for _ in range(IMAGES)]
    repeated = [distinct[0]] * IMAGES
    cases = []
    for backend, open_store in BACKENDS.items():
        cases.append(_case(f"{backend}: ten different 1 MB images", open_store, distinct))
        if not options.quick:
            cases.append(_case(f"{backend}: one 1 MB image in ten prompts", open_store, repeated))
    return cases
