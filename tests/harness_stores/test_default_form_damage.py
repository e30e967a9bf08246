"""A log in the new default form (zstd frames) cut anywhere in its last frame.

A crash during a flush leaves part of the last frame. Load must keep every event of
the complete frames (and the complete records the torn frame still yields, as the
harness does), set the torn bytes aside, and append its repair as a new frame after
the committed prefix, so the file is again one the harness reads whole.
"""

from __future__ import annotations

import random
from pathlib import Path

from session_stores.scenarios import complete_turn

from dsh_session._harness_format import read_log, scan_frames
from dsh_session._session import Session
from dsh_session.stores import JsonlSessionStore


async def _two_batches(root: Path) -> tuple[Session, bytes, int]:
    store = JsonlSessionStore(root)
    session = Session.create("torn")
    store.attach(session)
    complete_turn(session)
    await store.flush(session)
    complete_turn(session, tool_output="x" * 300)
    await store.close()
    data = store.path_of(session.id).read_bytes()
    return session, data, scan_frames(data).frames[-1].start


async def test_a_cut_anywhere_in_the_last_frame_keeps_the_prefix_and_repairs(
    tmp_path: Path,
) -> None:
    session, data, last_frame = await _two_batches(tmp_path / "original")
    first_turn = read_log(data[:last_frame], compressed=True).events
    cuts = sorted(
        {last_frame, last_frame + 1, len(data) - 1}
        | set(random.Random(3).sample(range(last_frame, len(data)), 12))
    )
    for cut in cuts:
        root = tmp_path / f"cut-{cut}"
        log = root / "_no-cwd" / "torn" / "session.jsonl.zstd"
        log.parent.mkdir(parents=True)
        log.write_bytes(data[:cut])

        store = JsonlSessionStore(root)
        loaded = await store.load("torn")
        report = store.load_report(loaded)
        await store.close()

        kept = len(first_turn)
        assert [e.model_dump(mode="json") for e in loaded.events[:kept]] == first_turn
        assert list(loaded.events[:kept]) == list(session.events[:kept])
        assert loaded.open_turn is None
        if cut == last_frame:  # a cut between frames leaves nothing torn
            assert report.torn_tail is None
        else:
            assert report.torn_tail is not None and report.torn_tail.offset == last_frame
            assert report.torn_tail.sidecar is not None
            assert Path(report.torn_tail.sidecar).read_bytes() == data[last_frame:cut]
        repaired = log.read_bytes()
        assert repaired.startswith(data[:last_frame])
        whole = read_log(repaired, compressed=True)  # every frame complete again
        assert whole.torn is None
        assert len(whole.events) == loaded.seq
