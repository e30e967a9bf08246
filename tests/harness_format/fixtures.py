"""The TypeScript harness's own logs (tests/fixtures/ts-logs) and what it held after load."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TS_LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "ts-logs"
SCENARIOS = (
    "plain-text",
    "reasoning-replay",
    "two-tools",
    "steer-streaming",
    "cancel-stream",
    "compaction",
)
JSONL_FORMS = ("jsonl-zstd", "jsonl-plain", "jsonl-unpacked")


def expected_session(scenario: str) -> dict[str, Any]:
    """The session as the harness held it after load: ``header`` and ``events``."""
    document = json.loads((TS_LOGS / "expected" / f"{scenario}.json").read_text())
    [session] = document["sessions"]
    return dict(session)


def artifact(form: str, session_id: str) -> Path:
    """The artifact the harness wrote for a session in one form."""
    name = "session.jsonl.zstd" if form.endswith("zstd") else "session.jsonl"
    return TS_LOGS / form / "_no-cwd" / session_id / name


def lines(path: Path) -> list[Any]:
    """The JSON records of a plain artifact, header first."""
    return [json.loads(line) for line in path.read_bytes().splitlines()]
