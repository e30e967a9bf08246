"""The lock file protocol: a claimant that locks a file its owner just removed must not
believe it owns the session; only the file at the path counts."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import Any

import pytest

from dsh_session._header import SessionId
from dsh_session.errors import SessionConflictError
from dsh_session.stores._ownership import SessionLocks


def test_a_lock_on_a_removed_file_is_retried_on_the_file_at_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.lock"
    locks = SessionLocks(lambda _: path, "test")
    real_flock = fcntl.flock
    calls: list[int] = []

    def owner_lets_go_first(fd: int, operation: int) -> Any:
        if not calls:
            path.unlink()  # what a releasing owner does between our open and our lock
        calls.append(fd)
        return real_flock(fd, operation)

    monkeypatch.setattr(fcntl, "flock", owner_lets_go_first)
    locks.acquire(SessionId("s"))

    assert len(calls) == 2
    monkeypatch.setattr(fcntl, "flock", real_flock)
    with pytest.raises(SessionConflictError, match=f"pid {os.getpid()}"):
        SessionLocks(lambda _: path, "other").acquire(SessionId("s"))
    locks.release_all()
    assert not path.exists()
