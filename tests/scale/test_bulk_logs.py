"""The scale suites' fast builder (``bench/_bulk_logs.py``) makes logs a real run could
have written: each copy of a played session has its own session id and fresh message
ids, references kept (an id the template repeats is repeated in the copy), and it is
stored, loaded and verified like the played session."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

import pytest
from _bulk_logs import Reminter

from dsh_session import Session
from dsh_session.stores import SqliteSessionStore

from .support import play_turns

COPIES = 3
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@pytest.fixture(scope="module")
def played() -> Session:
    session = Session.create()
    asyncio.run(play_turns(session, 4))
    return session


def _wire(session: Session) -> list[str]:
    return [event.model_dump_json() for event in session.events]


def _message_ids(session: Session) -> list[str]:
    return [message.id for message in session.derive_messages()]


def _ids_mapped_back(copy: Session, template: Session) -> list[str]:
    """``copy``'s log with each of its message ids replaced by the template's id at the
    same place; one copy id for each template id, else a renamed id repeats."""
    renamed = dict(
        zip(
            _UUID.findall("".join(_wire(copy))),
            _UUID.findall("".join(_wire(template))),
            strict=True,
        )
    )
    assert len(set(renamed.values())) == len(renamed)
    return [_UUID.sub(lambda found: renamed[found[0]], line) for line in _wire(copy)]


def test_copies_have_fresh_ids_and_the_same_references(played: Session) -> None:
    copies = [Reminter(played).copy() for _ in range(COPIES)]

    assert len({played.id, *(copy.id for copy in copies)}) == COPIES + 1
    every_id = _message_ids(played) + [i for copy in copies for i in _message_ids(copy)]
    assert len(set(every_id)) == len(every_id) == (COPIES + 1) * len(_message_ids(played))
    for copy in copies:
        assert _ids_mapped_back(copy, played) == _wire(played)


async def test_copies_store_load_and_verify(played: Session, tmp_path: Path) -> None:
    reminter = Reminter(played)
    store = SqliteSessionStore(tmp_path / "sessions.db")
    copies = [reminter.copy() for _ in range(COPIES)]
    for copy in copies:
        store.attach(copy)
        await store.flush(copy)
        store.detach(copy)
    for copy in copies:
        loaded = await store.load(copy.id)
        assert _wire(loaded)[: copy.seq] == _wire(copy)
        assert _message_ids(loaded) == _message_ids(copy)
        store.detach(loaded)
    await store.close()

    url = f"sqlite:///{tmp_path / 'sessions.db'}"
    for copy in copies:
        verify = [sys.executable, "-m", "dsh_cli", "sessions", "verify", "--store", url, copy.id]
        done = subprocess.run(verify, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
