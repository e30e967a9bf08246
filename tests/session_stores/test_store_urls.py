"""open_store(url) picks the backend and location from one configuration string."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_session.errors import StoreError
from dsh_session.stores import (
    JsonlSessionStore,
    MemorySessionStore,
    SessionStore,
    SqliteSessionStore,
    open_store,
)

from .scenarios import loads_back, store_completed_turn
from .sqlite_files import layout_of, layout_one


async def _round_trip(store: SessionStore, reopened: SessionStore) -> None:
    session = await store_completed_turn(store)
    await loads_back(reopened, session)


async def test_sqlite_url_with_a_relative_path_is_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    store = open_store("sqlite:///data/new folder/sessions.db")

    assert isinstance(store, SqliteSessionStore)
    assert layout_of(tmp_path / "data" / "new folder" / "sessions.db") == "schema 17"
    assert store.path == Path("data/new folder/sessions.db")
    reopened = SqliteSessionStore(tmp_path / "data" / "new folder" / "sessions.db")
    await _round_trip(store, reopened)


async def test_sqlite_url_with_four_slashes_is_absolute(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path}/nested/s.db")

    assert isinstance(store, SqliteSessionStore)
    assert layout_of(tmp_path / "nested" / "s.db") == "schema 17"
    assert store.path == tmp_path / "nested" / "s.db"
    await _round_trip(store, SqliteSessionStore(tmp_path / "nested" / "s.db"))


async def test_a_sqlite_url_naming_a_database_of_dsh_layout_opens_it(tmp_path: Path) -> None:
    path = layout_one(tmp_path / "dsh.db")
    store = open_store(f"sqlite:///{path}")

    assert isinstance(store, SqliteSessionStore)
    await _round_trip(store, SqliteSessionStore(path))
    assert layout_of(path) == "layout 1"


async def test_jsonl_urls_name_a_directory_created_if_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    relative = open_store("jsonl:///logs/a")
    absolute = open_store(f"jsonl:///{tmp_path}/logs/b%20c")

    assert isinstance(relative, JsonlSessionStore)
    assert isinstance(absolute, JsonlSessionStore)
    assert relative.directory == Path("logs/a")
    assert absolute.directory == tmp_path / "logs" / "b c"
    assert (tmp_path / "logs" / "a").is_dir()
    assert (tmp_path / "logs" / "b c").is_dir()
    await _round_trip(relative, JsonlSessionStore(tmp_path / "logs" / "a"))


async def test_memory_url_gives_a_fresh_memory_store() -> None:
    store = open_store("memory://")

    assert isinstance(store, MemorySessionStore)
    assert open_store("memory://") is not store
    await _round_trip(store, store)


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("sessions.db", "no scheme"),
        ("mysql:///db", "unknown scheme 'mysql'"),
        ("sqlite://host/db", "names a host"),
        ("sqlite:///", "no path"),
        ("jsonl:///dir?sync=off", "queries"),
        ("memory://somewhere", "takes no path"),
    ],
)
def test_malformed_urls_are_refused_with_the_reason(url: str, problem: str) -> None:
    with pytest.raises(StoreError, match=problem):
        open_store(url)
