"""``dsh schema --out DIR``: one JSON Schema file per wire type."""

from __future__ import annotations

import json

import pytest
from jsonschema import (
    Draft202012Validator,
    ValidationError,
)

from cli.runner import DemoRun, Dsh


def test_schema_writes_valid_json_schemas(dsh: Dsh, demo: DemoRun) -> None:
    result = dsh.run("schema", "--out", "schemas")
    assert result.returncode == 0, result.stderr
    written = {path.stem: path for path in (dsh.cwd / "schemas").glob("*.json")}
    assert {"Message", "ContentBlock", "StreamChunk", "SessionEvent"} <= set(written)
    schemas = {name: json.loads(path.read_text()) for name, path in written.items()}
    for schema in schemas.values():
        Draft202012Validator.check_schema(schema)
    events = Dsh(demo.directory).json("sessions", "show", demo.session_id)
    event_schema = Draft202012Validator(schemas["SessionEvent"])
    for event in events:
        event_schema.validate(event)
    with pytest.raises(ValidationError):
        event_schema.validate({**events[0], "seq": -1})
