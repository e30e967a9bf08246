"""The JSONL store keeps an attached session's log open between flushes and closes it
whenever the session is let go, so no descriptor outlives its session."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from session_stores.scenarios import complete_turn

from dsh_session._session import Session
from dsh_session.stores import JsonlSessionStore
from dsh_session.stores._jsonl_form import Compression

_FDS = Path("/proc/self/fd")
pytestmark = pytest.mark.skipif(not _FDS.is_dir(), reason="needs /proc/self/fd")


def _open_logs(root: Path) -> int:
    """Descriptors this process holds on session logs under ``root``."""
    targets = []
    for name in os.listdir(_FDS):
        try:
            targets.append(os.readlink(_FDS / name))
        except OSError:
            continue  # closed meanwhile (the listing's own descriptor)
    return sum(t.startswith(str(root)) and "session.jsonl" in t for t in targets)


@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_no_descriptor_outlives_its_session(compression: Compression, tmp_path: Path) -> None:
    async def lifecycle() -> None:
        async with JsonlSessionStore(tmp_path, compression=compression) as store:
            session = Session.create("s")
            complete_turn(session)
            store.attach(session)
            await store.flush(session)
            complete_turn(session)
            await store.flush(session)
            assert _open_logs(tmp_path) == 1  # kept open between flushes
            await store.read("s")  # reading an attached session replaces its entry
            complete_turn(session)
            await store.flush(session)
            store.detach(session)
            loaded = await store.load("s")
            complete_turn(loaded)
            await store.flush(loaded)
            assert _open_logs(tmp_path) == 1
        async with JsonlSessionStore(tmp_path) as store:
            await store.delete("s")

    asyncio.run(lifecycle())
    assert _open_logs(tmp_path) == 0
