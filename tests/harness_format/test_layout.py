"""The store-root layout: folders listed as the harness lays them out, ids and cwds
mapped to and from paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_session._harness_format import (
    decode_segment,
    encode_segment,
    find_session,
    list_session_folders,
    log_path,
    project_key,
)
from dsh_session.errors import HarnessLayoutError

from .fixtures import JSONL_FORMS, SCENARIOS, TS_LOGS


@pytest.mark.parametrize("form", JSONL_FORMS)
def test_a_harness_root_lists_every_session(form: str) -> None:
    folders = list_session_folders(TS_LOGS / form)
    assert sorted(f.session_id for f in folders) == sorted(SCENARIOS)
    assert all(f.compressed == (form == "jsonl-zstd") for f in folders)
    for folder in folders:
        assert folder.path == log_path(
            TS_LOGS / form, None, folder.session_id, compressed=folder.compressed
        )


def test_a_missing_root_has_no_sessions(tmp_path: Path) -> None:
    assert list_session_folders(tmp_path / "absent") == []


@pytest.mark.parametrize(
    ("raw", "segment"),
    [
        ("plain-text", "plain-text"),
        ("a/b", "a~002Fb"),
        ("~", "~007E"),
        (".", "~002E"),
        ("..", "~002E~002E"),
        ("../x", "..~002Fx"),
        ("é", "~00E9"),
        ("😀", "~D83D~DE00"),
        ("a b", "a~0020b"),
    ],
)
def test_ids_encode_to_one_safe_segment_and_back(raw: str, segment: str) -> None:
    assert encode_segment(raw) == segment
    assert decode_segment(segment) == raw


@pytest.mark.parametrize("segment", ["a b", "~zz12", "~00e9", "~0061"])
def test_a_folder_name_the_harness_never_writes_is_refused(segment: str) -> None:
    with pytest.raises(HarnessLayoutError):
        decode_segment(segment)


@pytest.mark.parametrize(
    ("cwd", "key"),
    [
        ("/home/me/proj", "--home-me-proj--"),
        ("C:\\Users\\me", "--C-Users-me--"),
        ("/", "--root--"),
        ("/a//b/", "--a-b---"),
        ("/x y", "--x~0020y--"),
    ],
)
def test_a_cwd_maps_to_its_readable_project_folder(cwd: str, key: str) -> None:
    assert project_key(cwd) == key


def test_long_cwds_are_bounded() -> None:
    assert len(project_key("/" + "a" * 400)) == 2 + 251 + 2


def test_a_session_with_a_cwd_lives_in_its_project_folder(tmp_path: Path) -> None:
    path = log_path(tmp_path, "/w/p", "s/1", compressed=True)
    assert path == tmp_path / "--w-p--" / "s~002F1" / "session.jsonl.zstd"


def test_a_flat_file_layout_is_refused(tmp_path: Path) -> None:
    (tmp_path / "_no-cwd").mkdir()
    (tmp_path / "_no-cwd" / "s.jsonl").write_text("{}\n")
    with pytest.raises(HarnessLayoutError):
        list_session_folders(tmp_path)


def test_a_folder_with_both_encodings_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "_no-cwd" / "s"
    folder.mkdir(parents=True)
    (folder / "session.jsonl").write_text("{}\n")
    (folder / "session.jsonl.zstd").write_bytes(b"")
    with pytest.raises(HarnessLayoutError):
        list_session_folders(tmp_path)


def test_one_id_in_two_project_folders_is_refused(tmp_path: Path) -> None:
    for project in ("_no-cwd", "--w--"):
        folder = tmp_path / project / "s"
        folder.mkdir(parents=True)
        (folder / "session.jsonl").write_text("{}\n")
    with pytest.raises(HarnessLayoutError) as caught:
        list_session_folders(tmp_path)
    assert caught.value.field == "id"


def test_one_session_is_found_where_its_folder_would_be(tmp_path: Path) -> None:
    for project in ("_no-cwd", "--w--"):
        (tmp_path / project / encode_segment("other")).mkdir(parents=True)
        (tmp_path / project / encode_segment("other") / "session.jsonl").write_text("{}\n")
    (tmp_path / "_no-cwd" / encode_segment("a/b")).mkdir()
    (tmp_path / "_no-cwd" / encode_segment("a/b") / "session.jsonl").write_text("{}\n")
    found = find_session(tmp_path, "a/b")
    assert found is not None and found.session_id == "a/b" and not found.compressed
    assert find_session(tmp_path, "absent") is None
    with pytest.raises(HarnessLayoutError) as caught:  # as listing the root refuses it
        find_session(tmp_path, "other")
    assert caught.value.field == "id"
