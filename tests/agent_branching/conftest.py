"""Real stores for branching tests: every scenario that stores runs on SQLite and JSONL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from dsh_session.stores import JsonlSessionStore, SessionStore, SqliteSessionStore


@pytest.fixture(params=["sqlite", "jsonl"])
def store_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def open_kind(kind: str, where: Path) -> SessionStore:
    return SqliteSessionStore(where / "s.db") if kind == "sqlite" else JsonlSessionStore(where)


@pytest.fixture
async def store(store_kind: str, tmp_path: Path) -> AsyncIterator[SessionStore]:
    async with open_kind(store_kind, tmp_path) as opened:
        yield opened
