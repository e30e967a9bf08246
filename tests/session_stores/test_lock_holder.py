"""The name a lock file gives its holder: exactly the current owner's, whatever an
earlier (crashed) writer left in the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_session._header import SessionId
from dsh_session.errors import SessionConflictError
from dsh_session.stores._ownership import SessionLocks, this_writer


def test_a_new_owner_replaces_a_longer_leftover_name_exactly(tmp_path: Path) -> None:
    path = tmp_path / "store.lock"
    path.write_bytes(b"pid 999999 on a-host-with-a-much-longer-name-than-this-one " * 3)
    owner = SessionLocks(lambda _: path, "store A")
    owner.acquire(SessionId("s"))
    try:
        assert path.read_bytes() == this_writer().encode()
        with pytest.raises(SessionConflictError) as refused:
            SessionLocks(lambda _: path, "store B").acquire(SessionId("s"))
        assert refused.value.holder == this_writer()
    finally:
        owner.release(SessionId("s"))
    assert not path.exists()
