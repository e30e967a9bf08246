"""Load repairs a log cut by a crash, durably and deterministically."""

from __future__ import annotations

from dsh_llm import TextBlock, ToolResultBlock
from dsh_session import InterruptedReason, ToolResultEvent, TurnEndEvent
from dsh_session._session import Session

from .conftest import StoreFactory
from .scenarios import complete_turn, interrupted_turn, store_completed_turn

OUTCOME_UNKNOWN_TEXT = (
    "The tool call was interrupted after it was recorded, but no result was durably "
    "recorded. Its outcome is unknown. Decide whether to retry from the tool semantics: "
    "retry only if the operation is read-only or idempotent; if it may have side effects, "
    "first verify external state or ask the user. Do not retry blindly."
)
NOT_STARTED_TEXT = (
    "The tool call was interrupted before the Harness recorded it as started. "
    "Retry it if it is still needed."
)


async def _crashed_session(open_store: StoreFactory) -> tuple[Session, str, str]:
    """A session whose process died mid-turn after its last flush."""
    store = open_store()
    session = Session.create()
    store.attach(session)
    complete_turn(session)
    started, unstarted = interrupted_turn(session)
    await store.flush(session)
    store.detach(session)
    return session, started, unstarted


async def test_load_closes_the_interrupted_turn_like_the_reference(
    open_store: StoreFactory,
) -> None:
    crashed, started, unstarted = await _crashed_session(open_store)
    call_seq = crashed.seq - 1
    store = open_store()

    loaded = await store.load(crashed.id)

    repair = loaded.events[crashed.seq :]
    assert [event.type for event in repair] == [
        "tool/result",
        "tool/result",
        "step/end",
        "turn/end",
        "session/end-seed",
    ]
    outcome_unknown, not_started = repair[0], repair[1]
    assert isinstance(outcome_unknown, ToolResultEvent)
    assert isinstance(not_started, ToolResultEvent)
    assert outcome_unknown.data.message.id == f"interrupted-tool-result-{started}-{crashed.seq}"
    assert outcome_unknown.data.error is not None
    assert outcome_unknown.data.error.code == "TOOL_OUTCOME_UNKNOWN"
    assert outcome_unknown.source_event_seqs == (call_seq,)
    assert outcome_unknown.data.message.content == (
        ToolResultBlock(
            call_id=started, content=(TextBlock(text=OUTCOME_UNKNOWN_TEXT),), is_error=True
        ),
    )
    assert not_started.data.message.id == f"interrupted-tool-result-{unstarted}-{crashed.seq + 1}"
    assert not_started.data.error is not None
    assert not_started.data.error.code == "TOOL_NOT_STARTED"
    assert not_started.source_event_seqs is None
    assert not_started.data.message.content[0].content == (TextBlock(text=NOT_STARTED_TEXT),)
    turn_end = repair[3]
    assert isinstance(turn_end, TurnEndEvent)
    assert turn_end.data.reason == InterruptedReason()
    assert {event.time for event in repair[:4]} == {crashed.events[-1].time}
    assert loaded.open_turn is None
    assert store.load_report(loaded).repaired


async def test_the_repair_is_durable_before_load_returns(open_store: StoreFactory) -> None:
    crashed, _, _ = await _crashed_session(open_store)
    first_store = open_store()
    first = await first_store.load(crashed.id)
    first_store.detach(first)  # no flush: the repair must already be durable

    second_store = open_store()
    second = await second_store.load(crashed.id)

    assert list(second.events) == list(first.events)
    assert [message.id for message in second.derive_messages()] == [
        message.id for message in first.derive_messages()
    ]
    assert second_store.load_report(second).appended == ()


async def test_a_repaired_session_continues_with_the_next_turn(open_store: StoreFactory) -> None:
    crashed, _, _ = await _crashed_session(open_store)
    store = open_store()
    loaded = await store.load(crashed.id)

    complete_turn(loaded)
    await store.flush(loaded)
    store.detach(loaded)
    again = await open_store().load(crashed.id)

    assert again.last_turn == 3
    assert list(again.events[: loaded.seq]) == list(loaded.events)


async def test_a_balanced_log_is_not_repaired(open_store: StoreFactory) -> None:
    store = open_store()
    session = await store_completed_turn(store)

    loaded = await store.load(session.id)

    report = store.load_report(loaded)
    assert not report.repaired
    assert report.torn_tail is None
    assert [event.type for event in report.appended] == ["session/end-seed"]


async def test_load_can_keep_the_open_turn_for_a_caller_that_finishes_the_step(
    open_store: StoreFactory,
) -> None:
    crashed, _, _ = await _crashed_session(open_store)
    store = open_store()

    loaded = await store.load(crashed.id, close_open_turn=False)
    await store.flush(loaded)
    store.detach(loaded)
    again = await open_store().load(crashed.id, close_open_turn=False)

    assert [event.type for event in loaded.events[crashed.seq :]] == ["session/end-seed"]
    assert loaded.open_turn == crashed.open_turn
    assert loaded.open_step == crashed.open_step
    assert again.open_turn == crashed.open_turn
