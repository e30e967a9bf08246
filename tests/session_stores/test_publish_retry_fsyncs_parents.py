"""Issue 34 #2: creating a JSONL session makes its folders (``_no-cwd``, then the
session's own) and fsyncs each new folder's parent. When one of those directory
fsyncs fails the flush raises; the retry finds the folders already there and must
still fsync their parents before it reports the batch durable, or a power cut can drop
the whole session."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from dsh_session import Session
from dsh_session.errors import StoreError
from dsh_session.stores import JsonlSessionStore

from .scenarios import complete_turn, loads_back


class _DirectoryFsyncs:
    """``os.fsync`` that records the directories it syncs and fails the
    ``fail_at``-th directory fsync once (EIO), before syncing anything."""

    def __init__(self, fail_at: int) -> None:
        self.real = os.fsync
        self.fail_at = fail_at
        self.seen = 0
        self.synced: list[Path] = []

    def __call__(self, fd: int) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            self.seen += 1
            if self.seen == self.fail_at:
                raise OSError(errno.EIO, "simulated I/O error")
            self.real(fd)
            self.synced.append(Path(os.readlink(f"/proc/self/fd/{fd}")))
            return
        self.real(fd)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="names fds through /proc")
@pytest.mark.parametrize(
    "fail_at", [1, 2], ids=["root-after-mkdir-no-cwd", "no-cwd-after-mkdir-id"]
)
async def test_a_retried_creation_fsyncs_the_new_folders_parents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail_at: int
) -> None:
    root = tmp_path.resolve()
    store = JsonlSessionStore(root)
    session = Session.create()
    store.attach(session)
    complete_turn(session)
    fsyncs = _DirectoryFsyncs(fail_at)
    monkeypatch.setattr(os, "fsync", fsyncs)

    with pytest.raises(StoreError):
        await store.flush(session)
    no_cwd = root / "_no-cwd"
    assert no_cwd.is_dir()  # made before the failure: a retry finds it there

    await store.flush(session)  # the retry reports the batch durable ...
    [session_file] = [path for path in no_cwd.rglob("*") if path.is_file()]
    session_folder = session_file.parent
    assert session_folder.parent == no_cwd

    # ... only once every new folder's parent, and the session's folder, were synced
    # (each after its folder was made: the folders are made top-down, in the failed
    # call or the retry, and a failed fsync records nothing).
    assert {root, no_cwd, session_folder} <= set(fsyncs.synced)
    await store.close()
    loaded = await loads_back(JsonlSessionStore(root), session)
    assert [event.type for event in loaded.events[session.seq :]] == ["session/end-seed"]
