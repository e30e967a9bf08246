"""A schema-17 database dsh indexed for search still loads and resumes in the real
TypeScript harness, and what the harness appends is found by dsh's next search.

The index lives beside the database (``<database>.dsh-search``), so the harness sees
exactly its schema; the turn the harness appends bumps the session's revision, which
makes dsh index it from the log before the next search. Runs only when the
DSH_BENCH_* variables name the harness (bench/README.md, "Harness peer").
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from _harness_peer import HarnessTools

from dsh_session import SearchHit, SqliteSessionStore

from .test_harness_loads_dsh_stores import (
    FORMS,
    private_folder,
    run_driver,
    write_session,
)


def search(database: Path, query: str) -> list[SearchHit]:
    async def run() -> list[SearchHit]:
        async with SqliteSessionStore(database) as store:
            return await store.search(query, limit=100)

    return asyncio.run(run())


def test_the_harness_resumes_an_indexed_database_and_dsh_finds_its_turn(
    tools: HarnessTools, tmp_path: Path
) -> None:
    form = next(form for form in FORMS if form.name == "sqlite")
    database = private_folder(tmp_path) / form.location
    written = write_session(SqliteSessionStore(database))
    index = database.with_name(f"{database.name}.dsh-search")
    assert index.exists()
    assert len(search(database, '"the answer is forty two"')) == 2  # one answer a turn

    summary = run_driver(tools, form, database, written.id)

    prompt = summary["prompt"]
    hits = search(database, f'"{prompt["text"]}"')
    assert [(hit.session_id, hit.message_id, hit.role) for hit in hits] == [
        (written.id, prompt["id"], "user")
    ]
