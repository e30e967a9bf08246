"""store.search on every backend: the same query finds the same messages everywhere,
bad input is refused by name, and the index holds nothing the log does not."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from session_stores.scenarios import answer, open_turn
from session_stores.sqlite_files import layout_one

from dsh_session import SearchHit, SearchQueryError, Session, SessionNotFoundError
from dsh_session._harness_format import check_schema
from dsh_session._harness_format.sqlite_db import append_batch
from dsh_session.stores import (
    JsonlSessionStore,
    MemorySessionStore,
    PostgresSessionStore,
    SessionStore,
    SqliteSessionStore,
)
from dsh_session.stores._codec import dump_event

from .corpus import build_sessions, store_all

QUERIES = (
    "fox",
    "lazy dog",
    '"lazy dog"',
    "lazy NOT dog",
    "fox OR sqlite",
    "data*",
    "(tsvector OR fts5) AND index",
    "résumé",
    "forest",
    "three",
    "nothing-matches-this",
)

BACKENDS = ("memory", "sqlite", "sqlite-layout1", "jsonl", "postgres")


def make_store(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> SessionStore:
    if backend == "memory":
        return MemorySessionStore()
    if backend == "sqlite":
        return SqliteSessionStore(tmp_path / "harness.db")
    if backend == "sqlite-layout1":
        return SqliteSessionStore(layout_one(tmp_path / "one.db"))
    if backend == "jsonl":
        return JsonlSessionStore(tmp_path / "jsonl")
    return PostgresSessionStore(request.getfixturevalue("postgres_dsn"))


def found(hits: list[SearchHit]) -> set[tuple[str, int, str, str]]:
    return {(hit.session_id, hit.seq, hit.message_id, hit.role) for hit in hits}


def surface_count(sessions: list[Session]) -> int:
    kinds = ("user/message", "assistant/message", "tool/result")
    return sum(1 for s in sessions for e in s.events if e.type in kinds)


@pytest.fixture(params=BACKENDS)
def store_of(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], SessionStore]:
    return lambda: make_store(str(request.param), tmp_path, request)


async def test_every_backend_finds_the_same_messages(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    sessions = build_sessions()
    results: dict[str, dict[str, set[tuple[str, int, str, str]]]] = {}
    for backend in BACKENDS:
        async with make_store(backend, tmp_path, request) as store:
            await store_all(store, sessions)
            results[backend] = {q: found(await store.search(q, limit=100)) for q in QUERIES}
    reference = results["memory"]
    for backend, answers in results.items():
        assert answers == reference, backend
    fox_session, lazy_session = sessions[0].id, sessions[3].id
    assert {hit[0] for hit in reference["fox"]} == {fox_session}
    assert len(reference["fox"]) == 3  # the prompt, the tool result, the answer
    assert {hit[0] for hit in reference['"lazy dog"']} == {fox_session}
    assert {hit[0] for hit in reference["lazy NOT dog"]} == {lazy_session}
    assert reference["nothing-matches-this"] == set()


async def test_hits_name_the_message_and_mark_the_match(
    store_of: Callable[[], SessionStore],
) -> None:
    sessions = build_sessions()
    async with store_of() as store:
        await store_all(store, sessions)
        [hit] = await store.search("bulldogs")
    event = sessions[3].events[hit.seq]
    assert hit.session_id == sessions[3].id
    assert hit.message_id == event.data.message.id  # type: ignore[union-attr]
    assert hit.role == "assistant"
    assert hit.snippet == "[Bulldogs] and basset hounds are famously lazy."


async def test_scope_role_and_limit(store_of: Callable[[], SessionStore]) -> None:
    sessions = build_sessions()
    async with store_of() as store:
        await store_all(store, sessions)
        in_first = await store.search("fox", session_id=sessions[0].id, limit=100)
        answers = await store.search("fox OR lazy", role="assistant", limit=100)
        two = await store.search("fox OR lazy OR sqlite", limit=2)
        none = await store.search("fox", session_id=sessions[1].id)
    assert {hit.session_id for hit in in_first} == {sessions[0].id}
    assert {hit.role for hit in answers} == {"assistant"} and len(answers) == 2
    assert len(two) == 2
    assert none == []


@pytest.mark.parametrize(
    ("query", "problem"),
    [
        ("", "empty"),
        ('"unclosed', "quote"),
        ("(fox", "parenthesis"),
        ("fox OR", "ends"),
        ("NOT fox", "'NOT'"),
        ("!!!", "no letters"),
        ("fo*x", "'*'"),
    ],
)
async def test_a_query_that_cannot_be_parsed_is_refused_by_name(
    store_of: Callable[[], SessionStore], query: str, problem: str
) -> None:
    async with store_of() as store:
        await store_all(store, build_sessions()[:1])
        with pytest.raises(SearchQueryError) as refused:
            await store.search(query)
    assert refused.value.query == query
    assert repr(query) in str(refused.value) and problem in str(refused.value)


async def test_an_unknown_session_is_refused_by_name(
    store_of: Callable[[], SessionStore],
) -> None:
    async with store_of() as store:
        await store_all(store, build_sessions()[:1])
        with pytest.raises(SessionNotFoundError, match="no-such-session"):
            await store.search("fox", session_id="no-such-session")


async def test_a_deleted_session_is_no_longer_found(store_of: Callable[[], SessionStore]) -> None:
    sessions = build_sessions()
    async with store_of() as store:
        await store_all(store, sessions)
        await store.delete(sessions[0].id)
        assert await store.search("fox") == []
        assert len(await store.search("lazy", limit=100)) == 2


async def test_reindex_rebuilds_from_the_logs(store_of: Callable[[], SessionStore]) -> None:
    sessions = build_sessions()
    async with store_of() as store:
        await store_all(store, sessions)
        before = found(await store.search("fox OR lazy OR one", limit=100))
        indexed = await store.reindex()
        after = found(await store.search("fox OR lazy OR one", limit=100))
    assert indexed in (0, surface_count(sessions))  # 0: memory and JSONL search by scanning
    assert after == before


# --- SQLite: the index catches up with writes that did not go through it --------------


async def test_the_harness_database_keeps_exactly_its_schema(tmp_path: Path) -> None:
    database = tmp_path / "harness.db"
    async with SqliteSessionStore(database) as store:
        await store_all(store, build_sessions())
        assert await store.search("fox")
    connection = sqlite3.connect(database)
    try:
        check_schema(connection, where=str(database))  # what the harness checks on open
    finally:
        connection.close()
    assert (tmp_path / "harness.db.dsh-search").stat().st_mode & 0o777 == 0o600


async def test_appends_the_index_did_not_see_are_indexed_before_a_search(
    tmp_path: Path,
) -> None:
    """What the TypeScript harness appends, and what a crash between the database's
    and the index file's commits leaves behind, is indexed from the log."""
    database = tmp_path / "harness.db"
    sessions = build_sessions()
    async with SqliteSessionStore(database) as store:
        await store_all(store, sessions[:2])
    # another writer (the harness) appends a turn without knowing the index
    extra = Session.from_log(sessions[0].header, sessions[0].events)
    turn = open_turn(extra, "what about the zebra?")
    answer(extra, turn, 1, "zebras are striped")
    connection = sqlite3.connect(database, isolation_level=None)
    try:
        new = [json.loads(dump_event(e)) for e in extra.events[sessions[0].seq :]]
        append_batch(connection, {"id": extra.id}, new)
    finally:
        connection.close()
    async with SqliteSessionStore(database) as store:
        hits = await store.search("zebra*", limit=100)
        assert {hit.seq for hit in hits} == {sessions[0].seq + 2, extra.seq - 3}
        assert len(await store.search("fox", limit=100)) == 3


async def test_a_missing_index_file_is_rebuilt_and_a_read_only_store_scans(
    tmp_path: Path,
) -> None:
    database = tmp_path / "harness.db"
    sessions = build_sessions()
    async with SqliteSessionStore(database) as store:
        await store_all(store, sessions)
        expected = found(await store.search("lazy OR fox", limit=100))
    (tmp_path / "harness.db.dsh-search").unlink()
    async with SqliteSessionStore(database, mode="read") as reader:
        assert found(await reader.search("lazy OR fox", limit=100)) == expected
    assert not (tmp_path / "harness.db.dsh-search").exists()  # read creates nothing
    async with SqliteSessionStore(database) as store:
        assert found(await store.search("lazy OR fox", limit=100)) == expected
        assert await store.reindex() == surface_count(sessions)


async def test_an_index_entry_no_log_holds_is_dropped(tmp_path: Path) -> None:
    database = tmp_path / "harness.db"
    sessions = build_sessions()
    async with SqliteSessionStore(database) as store:
        await store_all(store, sessions[:1])
    index = sqlite3.connect(tmp_path / "harness.db.dsh-search", isolation_level=None)
    try:  # what a crash could never leave, forced: a session only the index holds
        index.execute(
            "INSERT INTO dsh_search_docs (rowid, session_id, seq, message_id, role, body) "
            "VALUES (1000, 'ghost', 2, 'm-ghost', 'user', 'fox ghost')"
        )
        index.execute("INSERT INTO dsh_search_fts (rowid, terms) VALUES (1000, 'fox ghost')")
        index.execute("INSERT INTO dsh_search_state VALUES ('ghost', 'x:1')")
    finally:
        index.close()
    async with SqliteSessionStore(database) as store:
        assert "ghost" not in {hit.session_id for hit in await store.search("fox", limit=100)}
        assert await store.search("ghost") == []


async def test_a_layout_one_file_written_before_search_gains_the_index(
    tmp_path: Path,
) -> None:
    database = layout_one(tmp_path / "one.db")
    sessions = build_sessions()
    async with SqliteSessionStore(database) as store:
        await store_all(store, sessions)
    db = sqlite3.connect(database, isolation_level=None)
    try:  # as earlier dsh left it: no index tables
        for table in ("dsh_search_fts", "dsh_search_docs", "dsh_search_state"):
            db.execute(f"DROP TABLE {table}")
    finally:
        db.close()
    async with SqliteSessionStore(database) as store:
        assert len(await store.search("fox", limit=100)) == 3


async def test_a_postgres_database_written_before_search_gains_the_index(
    postgres_dsn: str,
) -> None:
    psycopg = pytest.importorskip("psycopg")
    sessions = build_sessions()
    async with PostgresSessionStore(postgres_dsn) as store:
        await store_all(store, sessions)
    with psycopg.connect(postgres_dsn, autocommit=True) as connection:
        connection.execute("DROP TABLE dsh_search_docs, dsh_search_state")
    async with PostgresSessionStore(postgres_dsn, mode="read") as reader:
        assert len(await reader.search("fox", limit=100)) == 3  # by scanning
    async with PostgresSessionStore(postgres_dsn, mode="open") as store:
        assert len(await store.search("fox", limit=100)) == 3
        assert await store.reindex() == surface_count(sessions)


def _indexed_sessions(database: Path) -> set[str]:
    db = sqlite3.connect(f"{database.absolute().as_uri()}?mode=ro", uri=True)
    try:
        return {sid for (sid,) in db.execute("SELECT session_id FROM dsh_search_state")}
    finally:
        db.close()


async def test_a_layout_one_flush_writes_the_log_alone_and_a_search_catches_up(
    tmp_path: Path,
) -> None:
    """Layout 1 leaves the index to the next search (its flush writes what the
    serializing floor writes); a search scoped to one session catches up that one
    only, and a read-only store reads the index for a session it covers."""
    database = layout_one(tmp_path / "one.db")
    sessions = build_sessions()
    async with SqliteSessionStore(database) as store:
        await store_all(store, sessions)
    assert _indexed_sessions(database) == set()
    async with SqliteSessionStore(database) as store:
        assert len(await store.search("fox", session_id=sessions[0].id, limit=100)) == 3
    assert _indexed_sessions(database) == {sessions[0].id}
    async with SqliteSessionStore(database, mode="read") as reader:
        assert len(await reader.search("fox", session_id=sessions[0].id, limit=100)) == 3
        assert len(await reader.search("lazy", limit=100)) == 3  # others behind: a scan
    async with SqliteSessionStore(database) as store:
        assert len(await store.search("lazy", limit=100)) == 3
    assert _indexed_sessions(database) == {session.id for session in sessions}


async def test_a_layout_one_stamp_the_log_does_not_reach_is_indexed_again_whole(
    tmp_path: Path,
) -> None:
    """A stamp past the log's end (a log an older dsh deleted and wrote again without
    knowing the index) or not of this layout: the session is indexed again from its
    log, not read on from the stamp."""
    database = layout_one(tmp_path / "one.db")
    sessions = build_sessions()
    async with SqliteSessionStore(database) as store:
        await store_all(store, sessions)
        assert len(await store.search("fox", limit=100)) == 3
    for stamp in ("9999", "x:1"):
        db = sqlite3.connect(database, isolation_level=None)
        try:
            db.execute("UPDATE dsh_search_state SET stamp = ?", (stamp,))
        finally:
            db.close()
        async with SqliteSessionStore(database) as store:
            assert len(await store.search("fox", limit=100)) == 3
            assert len(await store.search("lazy", limit=100)) == 3
