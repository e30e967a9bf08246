"""SQLite database files for the store tests: which layout a file holds, and a new file
in dsh's layout 1 made the way ``SqliteSessionStore(path)`` made one before new
databases took the harness's schema 17."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from dsh_session.stores._sqlite_layout_one import create_layout_one


def layout_one(path: Path) -> Path:
    """A new, empty layout-1 database at ``path`` (its folder created too); ``path``."""
    return create_layout_one(path)


def layout_of(path: Path) -> str:
    """``"schema 17"`` or ``"layout 1"``, read through a connection that changes
    nothing (``immutable`` when no write-ahead log is beside the file)."""
    immutable = "" if Path(f"{path}-wal").exists() else "&immutable=1"
    db = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro{immutable}", uri=True)
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
    finally:
        db.close()
    if version == 17 and {"sessions", "events", "persistence_state"} <= tables:
        return "schema 17"
    if version == 1 and {"dsh_sessions", "dsh_events"} <= tables:
        return "layout 1"
    return f"user_version {version}, tables {sorted(tables)}"
