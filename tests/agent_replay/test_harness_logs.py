"""The TypeScript harness's own logs (tests/fixtures/ts-logs) replay against a dsh agent
built like the harness's: the same system prompt, tools and model, as the recorded
header names them. A log the harness compacted fails where dsh, not compacting, sends
the history the harness had replaced."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import pytest

from dsh_agent import AgentLoop, ModelSettings, Tool
from dsh_agent.testing import replay
from dsh_llm import ModelAdapter
from dsh_session import Replace, RequestHeaderEvent, Session, SqliteSessionStore, UserMessageEvent

TS_DB = Path(__file__).resolve().parents[1] / "fixtures" / "ts-logs" / "sqlite" / "ts.db"
GREEN = ("plain-text", "two-tools", "reasoning-replay", "steer-streaming")


async def unused(arguments: dict[str, Any]) -> str:
    raise AssertionError("tools answer from the recording")


def harness_like(recorded: Session) -> Any:
    """A factory for an agent configured as the recorded header says."""
    header = next(e for e in recorded.events if isinstance(e, RequestHeaderEvent)).data.header
    config = header.config

    def build(session: Session, adapter: ModelAdapter) -> AgentLoop:
        return AgentLoop(
            session=session,
            adapter=adapter,
            provider=config.provider,
            model=config.model,
            system=header.system,
            model_settings=ModelSettings(
                max_tokens=config.max_tokens,
                temperature=config.temperature,
                top_p=config.top_p,
                stop=config.stop,
                reasoning_effort=config.reasoning_effort,
            ),
            tools=[
                Tool(
                    name=t.name,
                    description=t.description,
                    parameters=cast(Mapping[str, Any], t.parameters),
                    handler=unused,
                )
                for t in header.tools or ()
            ],
        )

    return build


@pytest.fixture
def database(tmp_path: Path) -> Path:
    copy = tmp_path / "ts.db"
    shutil.copy(TS_DB, copy)
    return copy


async def read(database: Path, scenario: str) -> Session:
    async with SqliteSessionStore(database, mode="read") as store:
        session, _ = await store.read(scenario)
    return session


@pytest.mark.parametrize("scenario", GREEN)
async def test_a_harness_log_replays_green(database: Path, scenario: str) -> None:
    recorded = await read(database, scenario)
    result = await replay((database, scenario), harness_like(recorded))
    assert result.ok, str(result)
    assert result.requests == result.recorded_requests >= 1


async def test_a_log_the_harness_compacted_fails_where_the_checkpoint_was(
    database: Path,
) -> None:
    recorded = await read(database, "compaction")
    result = await replay(recorded, harness_like(recorded))
    difference = result.first_difference
    assert difference is not None
    [checkpoint] = [
        e
        for e in recorded.events
        if isinstance(e, UserMessageEvent) and isinstance(e.surface_op, Replace)
    ]
    assert difference.recorded_seq is not None and difference.recorded_seq > checkpoint.seq
    assert checkpoint.data.id in [c.recorded_id for c in difference.messages if c.kind == "removed"]
