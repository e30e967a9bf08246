"""A log with dsh's compaction checkpoints, whose sources list the ids they replaced
(``shadowedMessageIds``, a dsh extra), loads and resumes in the real harness, which
keeps the field as it is. Runs only when the DSH_BENCH_* variables name the harness."""

from __future__ import annotations

import asyncio
from pathlib import Path

from _harness_peer import HarnessTools
from agent_compaction.test_harness_readable import compacted_session

from dsh_agent.compaction import SHADOWED_IDS_FIELD
from dsh_session import Replace, Session, SqliteSessionStore, UserMessageEvent

from .test_harness_loads_dsh_stores import FORMS, private_folder, run_driver


def store(session: Session, database: Path) -> None:
    async def run() -> None:
        async with SqliteSessionStore(database) as writer:
            writer.attach(session)
            await writer.flush(session)

    asyncio.run(run())


def test_the_harness_resumes_a_log_with_dsh_checkpoints(
    tools: HarnessTools, tmp_path: Path
) -> None:
    session = asyncio.run(compacted_session())
    listed = [
        e.data.source.model_dump(by_alias=True)[SHADOWED_IDS_FIELD]
        for e in session.events
        if isinstance(e, UserMessageEvent) and isinstance(e.surface_op, Replace)
    ]
    assert listed and all(listed)
    form = next(form for form in FORMS if form.name == "sqlite")
    database = private_folder(tmp_path) / form.location
    store(session, database)

    summary = run_driver(tools, form, database, session.id)

    assert summary["loadedEvents"] == session.seq
    assert summary["loadedMessageIds"] == [m.id for m in session.derive_messages()]
    assert [e["type"] for e in summary["appended"]][-1] == "turn/end"
