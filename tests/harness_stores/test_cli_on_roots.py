"""Every ``dsh sessions`` inspection command works on a harness store root as it is
(the real console script, in a subprocess)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from cli.runner import Dsh

from dsh_cli._commands.rebuild import id_list_digest

from .roots import JSONL_FORMS, SCENARIOS, TS_LOGS, copy_root, expected_session, tree

# The compaction scenario's expected requests also hold the summarizer's own call, whose
# prompt is not in the log (tests/harness_vocab compares it step by step).
_STEPS_ONLY = [s for s in SCENARIOS if s != "compaction"]


def _rebuilt_lists(report: dict[str, Any]) -> list[list[str]]:
    """Every request's message ids, rebuilt from ``verify --json``'s splices (each at a
    position of the previous list; applied from the last so positions stay valid)."""
    lists: list[list[str]] = []
    ids: list[str] = []
    for request in report["requests"]:
        ids = list(ids)
        for splice in reversed(request["splices"]):
            ids[splice["at"] : splice["at"] + splice["removed"]] = splice["added"]
        assert request["messageDigest"] == id_list_digest(ids)
        lists.append(ids)
    return lists


def _requests(scenario: str) -> list[list[str]]:
    document = json.loads((TS_LOGS / "expected" / f"{scenario}.json").read_text())
    return [[message["id"] for message in r["messages"]] for r in document["requests"]]


@pytest.fixture(params=JSONL_FORMS)
def root(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return copy_root(request.param, tmp_path)


def _store(root: Path) -> list[str]:
    return ["--store", f"jsonl:///{root}"]


def test_list_show_verify_and_export_read_a_harness_root(root: Path) -> None:
    dsh = Dsh(root.parent)
    before = tree(root)
    listed = dsh.json("sessions", "list", *_store(root))
    assert sorted(summary["id"] for summary in listed) == sorted(SCENARIOS)
    for scenario in SCENARIOS:
        expected = expected_session(scenario)
        assert dsh.json("sessions", "show", scenario, *_store(root)) == expected["events"]
        report: dict[str, Any] = dsh.json("sessions", "verify", scenario, *_store(root))
        assert report["valid"] is True
        if scenario in _STEPS_ONLY:
            assert _rebuilt_lists(report) == _requests(scenario)
        exported = dsh.ok("sessions", "export", scenario, "--format", "jsonl", *_store(root))
        header, *lines = exported.splitlines()
        assert json.loads(header)["delegationDepth"] == 0
        assert [json.loads(line) for line in lines] == expected["events"]
    assert tree(root) == before


def test_verify_of_a_crash_cut_reports_the_repair(tmp_path: Path) -> None:
    root = copy_root("crash/jsonl-zstd", tmp_path)
    before = tree(root)
    output = Dsh(tmp_path).ok("sessions", "verify", "crash-tool-call", *_store(root))
    assert "repaired on load: a crash had left a turn open" in output
    assert tree(root) == before


def test_list_show_and_verify_read_a_harness_database(tmp_path: Path) -> None:
    shutil.copy(TS_LOGS / "sqlite" / "ts.db", tmp_path / "ts.db")
    before = tree(tmp_path)
    dsh = Dsh(tmp_path)
    store = ["--store", "sqlite:///ts.db"]
    listed = dsh.json("sessions", "list", *store)
    assert sorted(summary["id"] for summary in listed) == sorted(SCENARIOS)
    for scenario in SCENARIOS:
        assert (
            dsh.json("sessions", "show", scenario, *store) == expected_session(scenario)["events"]
        )
        report: dict[str, Any] = dsh.json("sessions", "verify", scenario, *store)
        assert report["valid"] is True
        if scenario in _STEPS_ONLY:
            assert _rebuilt_lists(report) == _requests(scenario)
    assert tree(tmp_path) == before
