"""The exported schemas compile in Ajv's strict draft 2020-12 mode (a validator from
outside Python) and Ajv and ``jsonschema`` give the same verdict on real documents.

Skipped only where ``node`` is absent; under CI (``CI=true``) a missing node fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from cli.runner import DemoRun, Dsh
from dsh_cli._main import all_wire_schemas
from dsh_llm import (
    FinishChunk,
    StopFinish,
    TextDeltaChunk,
    create_assistant_message,
    create_tool_result_message,
    create_user_message,
)

CHECKER = Path(__file__).resolve().parents[2] / ".ci" / "schema-check"
SCHEMAS = all_wire_schemas()


@dataclass(frozen=True)
class Case:
    """One document, the schema it is checked against and whether it must pass."""

    label: str
    schema: str
    document: Any
    valid: bool


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI") == "true":
            pytest.fail("node is required in CI to check the schemas with Ajv")
        pytest.skip("node is not installed: Ajv cannot run")
    if not (CHECKER / "node_modules" / "ajv").is_dir():
        pytest.fail(f"Ajv is not installed: run `npm ci --prefix {CHECKER}`")
    return node


def _ajv(cases: list[Case]) -> dict[str, Any]:
    """Ajv's compile errors by schema name and its verdict on each case."""
    payload = {
        "schemas": SCHEMAS,
        "cases": [{"schema": case.schema, "document": case.document} for case in cases],
    }
    result = subprocess.run(
        [_node(), str(CHECKER / "check.mjs")],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    verdicts: dict[str, Any] = json.loads(result.stdout)
    return verdicts


def _message_cases() -> list[Case]:
    user = create_user_message(content="hi", source={"kind": "user", "rpcId": 1})
    assistant = create_assistant_message(
        content=[
            {"type": "text", "text": "t"},
            {"type": "tool-call", "id": "c1", "name": "f", "arguments": "{}"},
        ],
        source={"provider": "p", "model": "m"},
    )
    result = create_tool_result_message(call_id="c1", content="ok")
    chunk = TextDeltaChunk(index=0, text="he").model_dump(mode="json")
    cases = [
        Case(f"message {m.role}", "Message", m.model_dump(mode="json"), True)
        for m in (user, assistant, result)
    ]
    wire = user.model_dump(mode="json")
    return [
        *cases,
        Case("unknown source kind", "Source", {"kind": "cron", "at": 5}, True),
        Case("text delta", "StreamChunk", chunk, True),
        Case("finish", "StreamChunk", FinishChunk(reason=StopFinish()).model_dump(), True),
        Case("role robot", "Message", {**wire, "role": "robot"}, False),
        Case("no id", "Message", {k: v for k, v in wire.items() if k != "id"}, False),
        Case("chunk type typo", "StreamChunk", {**chunk, "type": "text-deltas"}, False),
        Case("tool source without callId", "Source", {"kind": "tool"}, False),
    ]


def _event_cases(demo: DemoRun) -> list[Case]:
    events = Dsh(demo.directory).json("sessions", "show", demo.session_id)
    cases = [Case(f"event {e['seq']} {e['type']}", "SessionEvent", e, True) for e in events]
    first = events[0]
    return [
        *cases,
        Case("negative seq", "SessionEvent", {**first, "seq": -1}, False),
        Case("event without seq", "SessionEvent", {"type": first["type"]}, False),
    ]


def test_every_schema_compiles_in_ajv_strict_mode() -> None:
    assert _ajv([])["compileErrors"] == {}


def test_ajv_and_jsonschema_agree_on_valid_and_invalid_documents(demo: DemoRun) -> None:
    cases = _message_cases() + _event_cases(demo)

    verdicts = _ajv(cases)

    assert verdicts["compileErrors"] == {}
    for case, ajv_valid in zip(cases, verdicts["valid"], strict=True):
        python_valid = Draft202012Validator(SCHEMAS[case.schema]).is_valid(case.document)
        assert (ajv_valid, python_valid) == (case.valid, case.valid), case.label
