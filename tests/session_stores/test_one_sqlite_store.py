"""One SQLite store class: ``SqliteSessionStore(path)`` and ``open_store("sqlite:///...")``
are the same store. A new file is the harness's schema 17 (mode 0600); an existing one
keeps its layout (schema 17, or dsh's earlier layout 1, which still loads and takes
appends in layout 1); a file that is neither is refused, naming it, and left as it was."""

from __future__ import annotations

import asyncio
import functools
import os
import shutil
import sqlite3
import stat
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from dsh_session._harness_format import APPLICATION_ID, read_database
from dsh_session._session import Session
from dsh_session.errors import SessionError, StoreError
from dsh_session.stores import SessionStore, SqliteSessionStore, StoreMode, open_store

from .scenarios import complete_turn, loads_back, store_completed_turn
from .sqlite_files import layout_of, layout_one

EARLIER_LAYOUT_ONE = Path(__file__).resolve().parents[1] / "fixtures/dsh-earlier/dsh-layout1.db"
MODES: tuple[StoreMode, ...] = ("create", "open", "read")


def _tree(root: Path) -> dict[str, tuple[int, bytes | None]]:
    """Every path under ``root``: its permission bits and bytes (None for a folder)."""
    return {
        str(path.relative_to(root)): (
            stat.S_IMODE(path.lstat().st_mode),
            None if not path.is_file() else path.read_bytes(),
        )
        for path in sorted(root.rglob("*"))
    }


def _url(path: Path) -> str:
    return f"sqlite:///{path}"


async def test_a_new_file_is_schema_17_with_mode_0600_and_open_store_loads_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "new" / "agent.db"
    async with SqliteSessionStore(path) as store:
        session = await store_completed_turn(store)

    assert layout_of(path) == "schema 17"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [stored.header["id"] for stored in read_database(path)] == [session.id]
    reopened = open_store(_url(path))
    assert isinstance(reopened, SqliteSessionStore)
    await loads_back(reopened, session)
    assert layout_of(path) == "schema 17"


async def test_a_database_open_store_made_loads_in_the_class(tmp_path: Path) -> None:
    path = tmp_path / "by-url.db"
    async with open_store(_url(path)) as store:
        session = await store_completed_turn(store)

    assert layout_of(path) == "schema 17"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    await loads_back(SqliteSessionStore(path), session)


async def test_what_one_writes_the_other_appends_to(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    async with SqliteSessionStore(path) as writer:
        session = await store_completed_turn(writer)
    async with open_store(_url(path)) as appender:
        loaded = await appender.load(session.id)
        complete_turn(loaded)
    async with SqliteSessionStore(path, mode="read") as reader:
        again, report = await reader.read(session.id)
    assert not report.appended
    assert list(again.events) == list(loaded.events)


async def test_a_layout_one_file_loads_and_appends_and_stays_layout_one(tmp_path: Path) -> None:
    path = layout_one(tmp_path / "earlier.db")
    assert stat.S_IMODE(path.stat().st_mode) == 0o644 & ~_umask()
    async with SqliteSessionStore(path) as writer:
        session = await store_completed_turn(writer)
    before = _tables(path)

    async with SqliteSessionStore(path) as store:
        loaded = await store.load(session.id)
        complete_turn(loaded)
    async with open_store(_url(path), mode="read") as reader:
        again, _ = await reader.read(session.id)

    assert list(again.events) == list(loaded.events)
    assert layout_of(path) == "layout 1"
    assert _tables(path) == before  # no schema-17 table was added
    rows = sqlite3.connect(path).execute("SELECT count(*) FROM dsh_events").fetchone()
    assert rows == (loaded.seq,)


async def test_the_committed_layout_one_database_takes_appends_through_the_class(
    tmp_path: Path,
) -> None:
    path = tmp_path / "dsh-layout1.db"
    shutil.copyfile(EARLIER_LAYOUT_ONE, path)
    async with SqliteSessionStore(path) as store:
        loaded = await store.load("second")
        complete_turn(loaded)
    async with SqliteSessionStore(path, mode="read") as reader:
        again, _ = await reader.read("second")
    assert list(again.events) == list(loaded.events)
    assert layout_of(path) == "layout 1"


def _tables(path: Path) -> set[str]:
    db = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)
    try:
        return {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
    finally:
        db.close()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# --- open_store and the class agree in every mode ------------------------------------


def _schema_17(path: Path) -> None:
    asyncio.run(SqliteSessionStore(path).close())


def _layout_one(path: Path) -> None:
    layout_one(path)


def _nothing(path: Path) -> None:
    pass


STARTS: dict[str, Callable[[Path], None]] = {
    "missing": _nothing,
    "schema 17": _schema_17,
    "layout 1": _layout_one,
}


def _files(folder: Path) -> dict[str, int]:
    """The names and permission bits under ``folder`` (a schema-17 file's bytes differ
    between two databases: each holds its own random store id)."""
    return {name: mode for name, (mode, _) in _tree(folder).items()}


def _outcome(
    open_: Callable[[], SessionStore], folder: Path, path: Path
) -> tuple[str, object, object]:
    """What opening gave: the store's class, read-only flag and layout, or the error's
    class and message (with the folder's name normalized); then the folder's files."""
    try:
        store = open_()
    except SessionError as error:
        return type(error).__name__, str(error).replace(str(folder), "<folder>"), _files(folder)
    try:
        found = (type(store).__name__, store.read_only, layout_of(path))
    finally:
        asyncio.run(store.close())
    return found[0], found[1:], _files(folder)


@pytest.mark.parametrize("start", STARTS)
@pytest.mark.parametrize("mode", MODES)
def test_open_store_and_the_class_agree(tmp_path: Path, start: str, mode: StoreMode) -> None:
    outcomes = []
    for how in ("class", "url"):
        folder = tmp_path / how
        folder.mkdir()
        path = folder / "s.db"
        STARTS[start](path)
        by: Callable[[], SessionStore] = (
            functools.partial(SqliteSessionStore, path, mode=mode)
            if how == "class"
            else functools.partial(open_store, _url(path), mode=mode)
        )
        outcomes.append(_outcome(by, folder, path))

    by_class, by_url = outcomes
    assert by_class == by_url
    if start == "missing" and mode != "create":
        assert by_class[0] == "StoreNotFoundError"
        assert by_class[2] == {}  # nothing created
    else:
        expected = "schema 17" if start in ("missing", "schema 17") else "layout 1"
        assert by_class[:2] == ("SqliteSessionStore", (mode == "read", expected))


# --- neither layout: refused, named, untouched ---------------------------------------


def _write(content: bytes) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        path.write_bytes(content)

    return write


def _database(*pragmas: str, table: str | None = None) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        db = sqlite3.connect(path, isolation_level=None)
        if table is not None:
            db.execute(f"CREATE TABLE {table} (x)")
        for pragma in pragmas:
            db.execute(f"PRAGMA {pragma}")
        db.close()

    return make


UNKNOWN: dict[str, tuple[Callable[[Path], None], str]] = {
    "text": (_write(b"these are my notes, not a database\n" * 50), "not a database"),
    "short": (_write(b"SQLite format 3\x00"), "not a database"),
    "folder": (lambda path: path.mkdir(), "a directory"),
    "older harness schema": (
        _database(f"application_id = {APPLICATION_ID}", "user_version = 16", table="t"),
        "schema version 16",
    ),
    "newer harness schema": (
        _database(f"application_id = {APPLICATION_ID}", "user_version = 18", table="t"),
        "schema version 18",
    ),
    "user_version 17, other app": (
        _database("application_id = 7", "user_version = 17", table="t"),
        "application id 0x7",
    ),
    "another app's versioned database": (
        _database("user_version = 5", table="accounts"),
        "user_version 5 without dsh's tables",
    ),
}


@pytest.mark.parametrize("kind", UNKNOWN)
@pytest.mark.parametrize("mode", MODES)
def test_a_file_of_neither_layout_is_refused_by_name_and_left_as_it_was(
    tmp_path: Path, kind: str, mode: StoreMode
) -> None:
    make, found = UNKNOWN[kind]
    path = tmp_path / "s.db"
    make(path)
    before = _tree(tmp_path)

    openers: list[Callable[[], SessionStore]] = [
        functools.partial(SqliteSessionStore, path, mode=mode),
        functools.partial(open_store, _url(path), mode=mode),
    ]
    for open_ in openers:
        with pytest.raises(StoreError) as raised:
            open_()
        assert str(path) in str(raised.value)
        assert found in str(raised.value)
        assert _tree(tmp_path) == before


def test_many_openers_of_one_new_file_all_get_schema_17(tmp_path: Path) -> None:
    """Threads racing to create the same database: one creates it, the others wait
    for it and open it; none adds layout 1's tables to it."""
    path = tmp_path / "raced.db"
    start = threading.Barrier(6)
    errors: list[BaseException] = []

    def open_and_close() -> None:
        start.wait()
        try:
            asyncio.run(SqliteSessionStore(path).close())
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=open_and_close) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert layout_of(path) == "schema 17"
    assert not {"dsh_sessions", "dsh_events"} & _tables(path)


async def test_a_new_session_in_a_new_file_is_what_the_harness_reads(tmp_path: Path) -> None:
    """The rows the class writes for a new file are the harness's: read back by the
    schema-17 reader as the same events (what the harness itself loads)."""
    path = tmp_path / "for-the-harness.db"
    session = Session.create()
    complete_turn(session)
    async with SqliteSessionStore(path) as store:
        store.attach(session)
    [stored] = read_database(path)
    assert stored.header["id"] == session.id
    assert stored.header["delegationDepth"] == 0
    assert stored.events == [event.model_dump(mode="json") for event in session.events]


def test_an_empty_file_is_new_and_gets_schema_17_with_mode_0600(tmp_path: Path) -> None:
    path = tmp_path / "touched.db"
    path.touch(mode=0o644)
    modes: tuple[StoreMode, ...] = ("open", "read")
    for mode in modes:
        with pytest.raises(StoreError, match="not a SQLite database"):
            SqliteSessionStore(path, mode=mode)
    assert path.read_bytes() == b""

    asyncio.run(SqliteSessionStore(path).close())

    assert layout_of(path) == "schema 17"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
