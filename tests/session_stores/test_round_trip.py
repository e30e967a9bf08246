"""Round trips through every backend: what is flushed is what loads, ids and values kept."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from dsh_llm import create_user_message, freeze_message
from dsh_session._session import Session
from dsh_session.errors import SessionNotFoundError, SessionValidationError, StoreError
from dsh_session.stores import JsonlSessionStore, SqliteSessionStore

from .conftest import DurableStoreClass, StoreFactory
from .scenarios import complete_turn, loads_back, store_completed_turn


def _message_ids(session: Session) -> list[str]:
    return [message.id for message in session.derive_messages()]


async def test_loaded_session_has_the_flushed_events_and_message_ids(
    open_store: StoreFactory,
) -> None:
    store = open_store()
    session = Session.create()
    store.attach(session)
    complete_turn(session)
    complete_turn(session)
    await store.flush(session)
    store.detach(session)

    loaded = await open_store().load(session.id)

    assert loaded is not session
    assert loaded.header == session.header
    assert list(loaded.events[: session.seq]) == list(session.events)
    assert _message_ids(loaded) == _message_ids(session)
    assert [event.type for event in loaded.events[session.seq :]] == ["session/end-seed"]


async def test_values_survive_the_wire_form(open_store: StoreFactory) -> None:
    store = open_store()
    session = Session.create()
    store.attach(session)
    prompt = freeze_message(
        {
            "id": "imported-prompt-1",
            "role": "user",
            "content": [{"type": "text", "text": 'naïve café — 你好 \u2028 "quoted"'}],
            "source": {"kind": "user", "rpcId": 7, "nested": {"list": [1, 2.5, None]}},
        }
    )
    session.append("turn/start", {"turn": 1})
    session.append("step/start", {"turn": 1, "step": 1})
    session.append("user/message", prompt)
    await store.flush(session)
    store.detach(session)

    loaded = await open_store().load(session.id)

    stored_prompt = loaded.events[2].data
    assert stored_prompt == prompt
    assert stored_prompt.id == "imported-prompt-1"
    assert stored_prompt.source.model_extra == {"rpcId": 7, "nested": {"list": (1, 2.5, None)}}


async def test_load_appends_end_seed_only_when_the_log_does_not_end_with_one(
    open_store: StoreFactory,
) -> None:
    store = open_store()
    session = await store_completed_turn(store)

    first = await store.load(session.id)
    store.detach(first)
    second = await store.load(session.id)

    assert [event.type for event in store.load_report(second).appended] == []
    assert list(second.events) == list(first.events)
    assert [event.type for event in first.events].count("session/end-seed") == 1


async def test_events_appended_after_a_load_are_flushed_after_the_stored_ones(
    open_store: StoreFactory,
) -> None:
    store = open_store()
    session = await store_completed_turn(store)

    loaded = await store.load(session.id)
    complete_turn(loaded)
    await store.flush(loaded)
    store.detach(loaded)
    again = await open_store().load(session.id)

    assert list(again.events[: loaded.seq]) == list(loaded.events)
    assert again.last_turn == 2


async def test_attach_counts_events_appended_before_it(open_store: StoreFactory) -> None:
    session = Session.create()
    complete_turn(session)
    store = open_store()
    store.attach(session)
    await store.flush(session)
    store.detach(session)

    await loads_back(open_store(), session)


async def test_flush_writes_each_event_once_and_nothing_when_nothing_is_pending(
    open_store: StoreFactory,
) -> None:
    store = open_store()
    session = Session.create()
    store.attach(session)
    complete_turn(session)
    await store.flush(session)
    written = store.stats.events_written
    batches = store.stats.batches_written
    fsyncs = store.stats.fsyncs

    await store.flush(session)
    await store.flush(session)

    assert store.stats.events_written == written == session.seq
    assert store.stats.batches_written == batches
    assert store.stats.fsyncs == fsyncs
    assert store.stats.flushes == 3


async def test_an_empty_session_exists_once_flushed(open_store: StoreFactory) -> None:
    store = open_store()
    session = Session.create()
    store.attach(session)
    assert session.id not in [header.id for header in await store.list_sessions()]

    await store.flush(session)

    assert [header.id for header in await store.list_sessions()] == [session.id]
    store.detach(session)
    loaded = await store.load(session.id)
    assert [event.type for event in loaded.events] == ["session/end-seed"]


async def test_list_sessions_gives_headers_oldest_first(open_store: StoreFactory) -> None:
    store = open_store()
    sessions = [Session.create(f"s-{n}") for n in range(3)]
    for session in reversed(sessions):
        store.attach(session)
        await store.flush(session)

    headers = await store.list_sessions()

    assert headers == sorted(
        (session.header for session in sessions), key=lambda h: (h.created_at, h.id)
    )


async def test_loading_an_attached_id_is_refused(open_store: StoreFactory) -> None:
    store = open_store()
    session = Session.create()
    store.attach(session)
    await store.flush(session)

    with pytest.raises(StoreError, match="attached"):
        await store.load(session.id)


async def test_detach_refuses_to_drop_events_that_are_not_durable(
    open_store: StoreFactory,
) -> None:
    store = open_store()
    session = Session.create()
    store.attach(session)
    complete_turn(session)

    with pytest.raises(StoreError, match="not yet durable"):
        store.detach(session)
    await store.flush(session)
    store.detach(session)


async def test_an_empty_session_detached_unflushed_is_never_stored(
    durable_store: StoreFactory,
) -> None:
    store = durable_store()
    session = Session.create()
    store.attach(session)

    store.detach(session)
    await store.close()

    async with durable_store() as reopened:
        assert await reopened.list_sessions() == []


async def test_a_second_object_with_an_attached_id_is_refused(open_store: StoreFactory) -> None:
    store = open_store()
    store.attach(Session.create("same"))

    with pytest.raises(StoreError, match="already attached"):
        store.attach(Session.create("same"))


async def test_a_new_session_reusing_a_stored_id_is_refused_and_stays_queued(
    open_store: StoreFactory,
) -> None:
    store = open_store()
    original = Session.create("taken")
    store.attach(original)
    complete_turn(original)
    await store.flush(original)
    store.detach(original)
    impostor = Session.create("taken")
    store.attach(impostor)
    complete_turn(impostor)

    with pytest.raises(StoreError, match="already exists"):
        await store.flush(impostor)
    with pytest.raises(StoreError, match="not yet durable"):
        store.detach(impostor)
    reopened = open_store()
    if reopened is not store:
        stored, _ = await reopened.read("taken")  # the impostor still owns the id
        assert list(stored.events[: original.seq]) == list(original.events)


async def test_loading_an_unknown_id_raises_not_found(open_store: StoreFactory) -> None:
    with pytest.raises(SessionNotFoundError, match="no session 'nobody'"):
        await open_store().load("nobody")


async def test_loading_an_id_that_cannot_name_a_file_is_refused(open_store: StoreFactory) -> None:
    with pytest.raises(SessionValidationError):
        await open_store().load("../etc/passwd")


async def test_close_flushes_pending_events(durable_store: StoreFactory) -> None:
    session = Session.create()
    async with durable_store() as store:
        store.attach(session)
        complete_turn(session)

    with pytest.raises(StoreError, match="closed"):
        await store.flush(session)
    await loads_back(durable_store(), session)


def _queue_prompts(session: Session, count: int) -> None:
    """Append ``count`` inbox splices (events that need no open turn)."""
    for n in range(count):
        prompt = create_user_message(content=f"queued {n}", source={"kind": "user"})
        session.append(
            "agent/inbox/spliced", {"target": "next-turn", "start": n, "inserted": [prompt]}
        )


async def test_small_batches_are_written_inline_and_large_ones_on_a_thread(
    durable_store_class: DurableStoreClass, tmp_path: Path
) -> None:
    store = durable_store_class(tmp_path / "store", inline_batch_limit=4)
    session = Session.create()
    store.attach(session)
    _queue_prompts(session, 4)
    await store.flush(session)
    assert store.stats.threaded_writes == 0

    _queue_prompts(session, 5)
    await store.flush(session)
    await store.close()

    assert store.stats.threaded_writes == 1
    await loads_back(durable_store_class(tmp_path / "store"), session)


async def test_concurrent_flushes_write_every_event_exactly_once(
    durable_store_class: DurableStoreClass, tmp_path: Path
) -> None:
    store = durable_store_class(tmp_path / "store", inline_batch_limit=2)
    session = Session.create()
    store.attach(session)

    async def append_and_flush(rounds: int) -> None:
        for _ in range(rounds):
            _queue_prompts(session, 3)
            await store.flush(session)

    await asyncio.gather(*(append_and_flush(5) for _ in range(4)))
    await store.close()

    assert store.stats.events_written == session.seq == 60
    await loads_back(durable_store_class(tmp_path / "store"), session)


async def test_a_cancelled_flush_does_not_write_its_batch_twice(
    durable_store_class: DurableStoreClass, tmp_path: Path
) -> None:
    store = durable_store_class(tmp_path / "store", inline_batch_limit=0)
    session = Session.create()
    store.attach(session)
    _queue_prompts(session, 50)
    flushing = asyncio.create_task(store.flush(session))
    await asyncio.sleep(0)  # the write is now running on its thread
    flushing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await flushing

    _queue_prompts(session, 3)
    await store.flush(session)
    await store.close()

    assert store.stats.events_written == session.seq
    await loads_back(durable_store_class(tmp_path / "store"), session)


async def test_listing_skips_files_that_are_not_readable_sessions(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = JsonlSessionStore(tmp_path)
    session = Session.create("good")
    store.attach(session)
    await store.flush(session)
    (tmp_path / "torn.jsonl").write_bytes(b'{"type":"session","vers')
    (tmp_path / "folder.jsonl").mkdir()
    (tmp_path / "renamed.jsonl").write_bytes(store.path_of(session.id).read_bytes())

    with caplog.at_level("WARNING", logger="dsh_session.stores"):
        headers = await store.list_sessions()

    assert [header.id for header in headers] == ["good"]
    assert caplog.text.count("not listed") == 3


async def test_a_fork_keeps_its_parent_and_seed_length_through_the_store(
    open_store: StoreFactory,
) -> None:
    parent = Session.create()
    complete_turn(parent)
    fork = parent.fork()
    complete_turn(fork)
    store = open_store()
    store.attach(fork)
    await store.flush(fork)
    store.detach(fork)

    loaded = await open_store().load(fork.id)

    assert loaded.header.parent_session == parent.id
    assert loaded.header.seed_length == parent.seq
    assert [m.id for m in loaded.derive_messages()] == [m.id for m in fork.derive_messages()]


async def test_read_validates_and_repairs_in_memory_without_writing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.db"
    async with SqliteSessionStore(path) as writer:
        session = Session.create()
        writer.attach(session)
        session.append("turn/start", {"turn": 1})
        await writer.flush(session)
        stored_seq = session.seq
        writer.detach(session)
    before = path.read_bytes()
    async with SqliteSessionStore(path) as reader:
        read, report = await reader.read(session.id)
        again, _ = await reader.read(session.id)
    assert [event.type for event in report.appended] == ["turn/end"]
    assert report.repaired
    assert read.events[stored_seq - 1] == session.events[-1]
    assert again.seq == read.seq  # nothing was written: the second read repairs the same way
    assert path.read_bytes() == before
