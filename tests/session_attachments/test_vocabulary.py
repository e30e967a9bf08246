"""The attachment vocabulary: the harness's reference shape, the image and file blocks,
their JSON Schemas, and the header probe that gives an image its size."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from dsh_llm import (
    AttachmentRef,
    FileBlock,
    ImageBlock,
    MessageAdapter,
    attachment_ref,
    create_user_message,
)
from dsh_llm._image_probe import probe_image
from dsh_llm._schema import wire_schemas

from .images import gif, jpeg, png, webp

HARNESS_REF: dict[str, Any] = {
    "attachmentId": "sha256:" + "a" * 64,
    "mediaType": "image/png",
    "bytes": 1234,
    "width": 640,
    "height": 480,
    "name": "cat.png",
}
HARNESS_IMAGE_BLOCK: dict[str, Any] = {"type": "image", "attachment": HARNESS_REF}
"""An image block exactly as the harness's ``ImageBlock`` writes it."""


def test_a_harness_image_block_round_trips_byte_for_byte() -> None:
    wire = {"id": "m", "role": "user", "source": {"kind": "user"}, "content": [HARNESS_IMAGE_BLOCK]}
    message = MessageAdapter.validate_python(wire)
    assert message.model_dump(mode="json") == wire
    block = message.content[0]
    assert isinstance(block, ImageBlock) and block.attachment is not None
    assert (block.attachment.size, block.attachment.sha256) == (1234, "a" * 64)


def test_attachment_ref_hashes_sizes_and_measures_the_bytes() -> None:
    data = png(7, 3)
    ref = attachment_ref(data, media_type="image/png", name="C:\\Users\\me\\shot\x07.png")
    assert ref.attachment_id == "sha256:" + hashlib.sha256(data).hexdigest()
    assert (ref.size, ref.width, ref.height, ref.name) == (len(data), 7, 3, "shot.png")
    assert ref.matches(data) and not ref.matches(data + b"x")
    pdf = attachment_ref(b"%PDF-1.7", media_type="application/pdf", name="/tmp/a/b.pdf")
    assert (pdf.width, pdf.height, pdf.name) == (None, None, "b.pdf")


@pytest.mark.parametrize(
    ("data", "media_type"),
    [
        (png(31, 17), "image/png"),
        (jpeg(31, 17), "image/jpeg"),
        (gif(31, 17), "image/gif"),
        (webp(31, 17), "image/webp"),
    ],
)
def test_the_probe_reads_each_format_s_size(data: bytes, media_type: str) -> None:
    facts = probe_image(data)
    assert facts is not None and tuple(facts) == (media_type, 31, 17)


@pytest.mark.parametrize(
    "data", [b"", b"\x89PNG\r\n\x1a\n", b"GIF8", b"\xff\xd8\xff", b"RIFF0000WEBPVP8 ", b"hello"]
)
def test_the_probe_refuses_what_it_cannot_read(data: bytes) -> None:
    assert probe_image(data) is None


@pytest.mark.parametrize(
    ("block", "problem"),
    [
        ({"type": "image", "mediaType": "image/png"}, "exactly one of"),
        (
            {"type": "image", "mediaType": "image/png", "data": "AA", **HARNESS_IMAGE_BLOCK},
            "exactly one of",
        ),
        ({**HARNESS_IMAGE_BLOCK, "mediaType": "image/png"}, "takes its media type"),
        ({"type": "image", "data": "AA"}, "needs 'mediaType'"),
        (
            {"type": "image", "attachment": {**HARNESS_REF, "width": None}},
            "width",
        ),
        (
            {
                "type": "image",
                "attachment": {**HARNESS_REF, "mediaType": "application/pdf"},
            },
            "use a file block",
        ),
        (
            {"type": "file", "attachment": HARNESS_REF},
            "belongs in an image block",
        ),
        (
            {
                "type": "file",
                "attachment": {**HARNESS_REF, "attachmentId": "sha1:00"},
            },
            "attachmentId",
        ),
    ],
)
def test_malformed_attachment_blocks_are_refused(block: dict[str, object], problem: str) -> None:
    with pytest.raises(ValidationError, match=problem):
        create_user_message([block])


def test_the_exported_schemas_accept_attachment_blocks_and_refuse_bad_ids() -> None:
    schemas = wire_schemas()
    pdf = attachment_ref(b"%PDF-1.7", media_type="application/pdf", name="a.pdf")
    message = create_user_message(
        [ImageBlock.model_validate(HARNESS_IMAGE_BLOCK), FileBlock(attachment=pdf)]
    )
    wire = message.model_dump(mode="json")
    Draft202012Validator(schemas["Message"]).validate(wire)
    for block in wire["content"]:
        Draft202012Validator(schemas["ContentBlock"]).validate(block)
    ref_schema = Draft202012Validator(schemas["AttachmentRef"])
    ref_schema.validate(pdf.model_dump(mode="json"))
    bad = {**pdf.model_dump(mode="json"), "attachmentId": "sha256:XYZ"}
    assert list(ref_schema.iter_errors(bad))
    assert AttachmentRef.model_validate(pdf.model_dump(mode="json")) == pdf
