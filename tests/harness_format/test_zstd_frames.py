"""zstd framing of session.jsonl.zstd, checked against the harness's own files."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_session._harness_format import decode_frame, encode_frame, read_zstd_log, scan_frames
from dsh_session.errors import ZstdFrameError

from .fixtures import SCENARIOS, artifact

ZSTD_FILES = [artifact("jsonl-zstd", s) for s in SCENARIOS] + [
    artifact("crash/jsonl-zstd", "crash-tool-call")
]


@pytest.mark.parametrize("path", ZSTD_FILES, ids=lambda p: p.parent.name)
def test_frames_decode_to_the_plain_file_the_harness_wrote(path: Path) -> None:
    data = path.read_bytes()
    scan = scan_frames(data)
    plaintext = b"".join(decode_frame(data[f.start : f.end], start=f.start) for f in scan.frames)
    plain = path.parents[3] / path.parents[2].name.replace("zstd", "plain")
    assert scan.torn_start is None
    assert plaintext == (plain / "_no-cwd" / path.parent.name / "session.jsonl").read_bytes()


@pytest.mark.parametrize("path", ZSTD_FILES, ids=lambda p: p.parent.name)
def test_the_header_has_its_own_frame_and_each_batch_one_more(path: Path) -> None:
    data = path.read_bytes()
    frames = scan_frames(data).frames
    header = decode_frame(data[frames[0].start : frames[0].end])
    assert header.count(b"\n") == 1 and header.startswith(b'{"type":"session"')
    assert all(decode_frame(data[f.start : f.end]).endswith(b"\n") for f in frames[1:])


@pytest.mark.parametrize("path", ZSTD_FILES, ids=lambda p: p.parent.name)
def test_encoding_a_batch_gives_the_harness_frame_byte_for_byte(path: Path) -> None:
    data = path.read_bytes()
    for frame in scan_frames(data).frames:
        original = data[frame.start : frame.end]
        assert encode_frame(decode_frame(original)) == original


def test_frames_carry_a_checksum_and_no_content_size() -> None:
    frame = encode_frame(b'{"type":"turn/start"}\n')
    descriptor = frame[4]
    assert frame[:4] == b"\x28\xb5\x2f\xfd"
    assert descriptor & 0x04, "checksum flag"
    assert descriptor >> 6 == 0 and not descriptor & 0x20, "no content size, windowed"


def test_a_torn_final_frame_is_reported_with_its_offset_and_bytes() -> None:
    data = artifact("jsonl-zstd", "two-tools").read_bytes()
    frames = scan_frames(data).frames
    cut = frames[-1].start + (frames[-1].end - frames[-1].start) // 2
    log = read_zstd_log(data[:cut])
    assert log.torn is not None
    assert log.torn.offset == frames[-1].start
    assert log.torn.data == data[frames[-1].start : cut]
    assert len(log.events) == log.torn.recovered + len(
        read_zstd_log(data[: frames[-1].start]).events
    )


def test_complete_records_inside_a_torn_frame_are_recovered_in_order() -> None:
    data = artifact("jsonl-zstd", "plain-text").read_bytes()
    whole = read_zstd_log(data).events
    frames = scan_frames(data).frames
    log = read_zstd_log(data[: frames[-1].end - 4])  # only the checksum is missing
    assert log.torn is not None and log.torn.recovered > 0
    assert log.events == whole[: len(log.events)]


def test_a_checksum_mismatch_in_a_complete_frame_is_refused_with_its_offset() -> None:
    data = bytearray(artifact("jsonl-zstd", "plain-text").read_bytes())
    last = scan_frames(bytes(data)).frames[-1]
    data[last.end - 1] ^= 0xFF
    with pytest.raises(ZstdFrameError) as caught:
        read_zstd_log(bytes(data))
    assert caught.value.offset == last.start


def test_bytes_that_are_not_a_frame_are_refused_not_treated_as_torn() -> None:
    data = artifact("jsonl-zstd", "plain-text").read_bytes()
    with pytest.raises(ZstdFrameError) as caught:
        scan_frames(data + b"garbage!")
    assert caught.value.offset == len(data)
