"""A session with attachments that dsh wrote loads and resumes in the real TypeScript
harness: its image blocks are the harness's own ``{type: "image", attachment:
ImageAttachmentRef}`` (loaded with their ids and references unchanged), and a JSONL
root keeps the bytes where the harness's attachment-local store looks for them when
that root is its home (``<root>/attachments/v1/objects/<2 hex>/<sha256>``), which its
session backend passes over when it lists the root.

Runs only when DSH_BENCH_HARNESS, DSH_BENCH_TSX and DSH_BENCH_NODE name the harness
(bench/README.md, "Harness peer"); skipped otherwise.
"""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

import pytest
from _harness_peer import HarnessTools
from harness_stores.roots import wire_events
from session_attachments.images import png

from dsh_llm import ImageBlock
from dsh_session import Attachment, Session, SessionStore, create_user_message_with_attachments

from .test_harness_loads_dsh_stores import (
    FORMS,
    StoreForm,
    load_session,
    private_folder,
    run_driver,
)

FORMS_CHECKED = [form for form in FORMS if form.name in ("sqlite", "jsonl-zstd")]
IMAGE = png(12, 9)
PDF = b"%PDF-1.4\n%%EOF\n"


def write_with_attachments(store: SessionStore) -> Session:
    """A session whose one prompt holds an image and a PDF, flushed, the store closed."""

    async def write() -> Session:
        async with store:
            session = Session.create()
            store.attach(session)
            message = await create_user_message_with_attachments(
                store,
                "Describe the chart and the report.",
                attachments=[
                    Attachment(IMAGE, "image/png", "chart.png"),
                    Attachment(PDF, "application/pdf", "report.pdf"),
                ],
            )
            session.append("user/message", message)
            await store.flush(session)
            return session

    return asyncio.run(write())


@pytest.mark.parametrize("form", FORMS_CHECKED, ids=[form.name for form in FORMS_CHECKED])
def test_the_harness_resumes_a_session_with_attachments(
    tools: HarnessTools, form: StoreForm, tmp_path: Path
) -> None:
    location = private_folder(tmp_path) / form.location
    written = write_with_attachments(form.open(location))
    dsh_events = wire_events(written)
    (prompt,) = written.derive_messages()
    image = prompt.content[1]
    assert isinstance(image, ImageBlock) and image.attachment is not None
    if form.name == "jsonl-zstd":
        digest = hashlib.sha256(IMAGE).hexdigest()
        stored = location / "attachments" / "v1" / "objects" / digest[:2] / digest
        assert stored.read_bytes() == IMAGE

    summary = run_driver(tools, form, location, written.id)

    assert summary["listed"] == [written.id]
    assert summary["loadedEvents"] == len(dsh_events)
    assert summary["loadedMessageIds"] == [prompt.id]
    loaded, _ = load_session(form.open(location), written.id)
    assert wire_events(loaded)[: len(dsh_events)] == dsh_events
    assert loaded.derive_messages()[0] == prompt
