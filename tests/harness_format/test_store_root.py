"""Whole sessions read from a harness root: identity-checked, legacy-converted, and the
vocabulary checked as the harness checks it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dsh_session._harness_format import (
    check_vocabulary,
    find_session,
    list_session_folders,
    read_session,
)
from dsh_session.errors import HarnessLayoutError, SessionFormatError

from .fixtures import JSONL_FORMS, SCENARIOS, TS_LOGS, expected_session


@pytest.mark.parametrize("form", JSONL_FORMS)
def test_every_session_of_a_root_reads_as_the_harness_held_it(form: str) -> None:
    root = TS_LOGS / form
    for folder in list_session_folders(root):
        log = read_session(root, folder)
        assert log.events == expected_session(folder.session_id)["events"]


def test_the_legacy_session_reads_with_the_harness_ids() -> None:
    root = TS_LOGS / "crash" / "jsonl-plain"
    folder = find_session(root, "legacy-pre-identity")
    assert folder is not None
    ids = [
        e["data"].get("id") or e["data"].get("message", {}).get("id")
        for e in read_session(root, folder).events
    ]
    assert [i for i in ids if i] == [
        f"legacy-message:legacy-pre-identity:{seq}" for seq in (1, 3, 4)
    ]


def test_an_absent_session_is_not_found() -> None:
    assert find_session(TS_LOGS / "jsonl-zstd", "nope") is None


def test_a_log_moved_to_another_id_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "_no-cwd").mkdir()
    shutil.copytree(
        TS_LOGS / "jsonl-plain" / "_no-cwd" / "plain-text", tmp_path / "_no-cwd" / "other"
    )
    [folder] = list_session_folders(tmp_path)
    with pytest.raises(HarnessLayoutError) as caught:
        read_session(tmp_path, folder)
    assert caught.value.field == "id"


def test_a_log_without_cwd_in_a_project_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "--w--").mkdir()
    shutil.copytree(
        TS_LOGS / "jsonl-plain" / "_no-cwd" / "plain-text", tmp_path / "--w--" / "plain-text"
    )
    [folder] = list_session_folders(tmp_path)
    with pytest.raises(HarnessLayoutError):
        read_session(tmp_path, folder)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_harness_vocabulary_accepts_every_fixture(scenario: str) -> None:
    check_vocabulary(expected_session(scenario)["events"], scenario)


@pytest.mark.parametrize(
    "event",
    [
        {"type": "future/thing", "seq": 3, "time": 0, "data": {}},
        {"type": "mode/set", "seq": 3, "time": 0, "data": {}},
        {"type": "request/header", "seq": 3, "time": 0, "data": {"reason": "fallback"}},
    ],
)
def test_what_the_harness_refuses_to_read_is_a_format_error(event: dict[str, object]) -> None:
    with pytest.raises(SessionFormatError) as caught:
        check_vocabulary([event], "s")
    assert caught.value.seq == 3


def test_an_unknown_ignorable_event_is_kept() -> None:
    check_vocabulary(
        [{"type": "future/thing", "seq": 0, "time": 0, "data": {}, "ignorable": True}], "s"
    )
