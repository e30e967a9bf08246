"""Whole JSONL artifacts: every form decodes to the events the harness held after load,
and re-encoding gives the harness's bytes."""

from __future__ import annotations

import json

import pytest

from dsh_session._harness_format import (
    HarnessLog,
    decode_frame,
    encode_frame,
    encode_log,
    expand_record,
    read_log,
    read_plain_log,
    scan_frames,
    session_header,
)
from dsh_session.errors import HarnessCorruptError

from .fixtures import JSONL_FORMS, SCENARIOS, artifact, expected_session


def _read(form: str, scenario: str) -> HarnessLog:
    path = artifact(form, scenario)
    return read_log(path.read_bytes(), compressed=form.endswith("zstd"))


def _batches(scenario: str) -> list[list[object]]:
    data = artifact("jsonl-zstd", scenario).read_bytes()
    texts = [decode_frame(data[f.start : f.end]) for f in scan_frames(data).frames[1:]]
    return [[e for line in t.splitlines() for e in expand_record(json.loads(line))] for t in texts]


@pytest.mark.parametrize("form", JSONL_FORMS)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_form_decodes_to_the_events_the_harness_held(form: str, scenario: str) -> None:
    log = _read(form, scenario)
    assert log.torn is None
    assert log.events == expected_session(scenario)["events"]
    assert log.events == _read("jsonl-unpacked", scenario).events


@pytest.mark.parametrize("form", JSONL_FORMS)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_header_is_kept_whole(form: str, scenario: str) -> None:
    header = session_header(_read(form, scenario).header)
    assert header.pop("delegationDepth") == 0
    assert header == expected_session(scenario)["header"]


@pytest.mark.parametrize("form", JSONL_FORMS)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_re_encoding_with_the_harness_batches_gives_its_bytes(form: str, scenario: str) -> None:
    log = _read(form, scenario)
    data = encode_log(
        log.header,
        _batches(scenario),
        pack_chunks=form != "jsonl-unpacked",
        compress=form.endswith("zstd"),
    )
    assert data == artifact(form, scenario).read_bytes()


def test_a_final_record_without_newline_is_a_torn_tail_with_its_bytes() -> None:
    data = artifact("jsonl-plain", "two-tools").read_bytes()
    cut = data.rfind(b"\n", 0, len(data) - 1) + 10
    log = read_plain_log(data[:cut])
    assert log.torn is not None
    assert log.torn.offset == cut - 9
    assert log.torn.data == data[cut - 9 : cut]
    assert log.events == _read("jsonl-plain", "two-tools").events[:-1]


def test_a_bad_record_after_the_last_turn_end_starts_the_torn_tail() -> None:
    data = artifact("jsonl-plain", "plain-text").read_bytes()
    log = read_plain_log(data + b"{oops}\n" + b'{"type":"x","seq":24}\n')
    assert log.torn is not None and log.torn.offset == len(data)
    assert log.torn.data == b'{oops}\n{"type":"x","seq":24}\n'


def test_a_bad_record_before_a_turn_end_is_committed_corruption() -> None:
    lines = artifact("jsonl-plain", "plain-text").read_bytes().splitlines(keepends=True)
    lines[3] = b"{oops}\n"
    with pytest.raises(HarnessCorruptError):
        read_plain_log(b"".join(lines))


def test_a_seq_gap_before_a_turn_end_is_committed_corruption() -> None:
    lines = artifact("jsonl-unpacked", "plain-text").read_bytes().splitlines(keepends=True)
    del lines[3]
    with pytest.raises(HarnessCorruptError) as caught:
        read_plain_log(b"".join(lines))
    assert caught.value.seq == 2


def test_a_complete_frame_ending_inside_a_record_is_refused() -> None:
    data = artifact("jsonl-zstd", "plain-text").read_bytes()
    frames = scan_frames(data).frames
    broken = data[: frames[1].start] + encode_frame(decode_frame(data[frames[1].start :])[:-5])
    with pytest.raises(HarnessCorruptError) as caught:
        read_log(broken, compressed=True)
    assert caught.value.offset == frames[1].start
