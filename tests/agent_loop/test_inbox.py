"""The durable inbox (SPEC §4.2, reference-behaviour §2): splices recorded before each
change, id uniqueness across the pending lists, caller edits, claim rules, and the
rebuild from the log on resume."""

from __future__ import annotations

import pytest

from dsh_agent import AgentLoop, InboxError, LiveUpdate, MessageQueued
from dsh_llm import create_tool_result_message, replace_content
from dsh_llm.testing import ScriptedAdapter
from dsh_session import InboxSplicedData, Session

from .support import AgentFactory, Recorder, fixed


async def test_a_duplicate_pending_id_is_refused_without_writing_or_waking(
    make_agent: AgentFactory,
) -> None:
    agent = make_agent(ScriptedAdapter([]))
    message = fixed("m1", "hello")
    agent.inject(message)
    recorder = Recorder(agent)
    seq = agent.session.seq

    with pytest.raises(InboxError, match="'m1' is already pending") as refused:
        agent.followup(message)

    assert refused.value.message_id == "m1"
    assert agent.session.seq == seq
    assert recorder.take() == []
    assert agent.status == "idle"
    assert agent.inbox.next_turn == () and agent.inbox.next_step == (message,)


async def test_an_id_already_in_history_is_refused_and_writes_nothing(
    make_agent: AgentFactory,
) -> None:
    agent = make_agent(ScriptedAdapter(["first", "second"]))
    message = fixed("m1", "again")
    agent.followup(message)
    await agent.when_idle()
    seq = agent.session.seq

    for send in (agent.followup, agent.steer):
        with pytest.raises(InboxError, match="already in the history") as refused:
            send(message)
        assert (refused.value.message_id, agent.session.seq) == ("m1", seq)

    ids = [str(m.id) for m in agent.session.derive_messages()]
    assert ids.count("m1") == 1
    assert agent.inbox.next_turn == () and agent.inbox.next_step == ()


async def test_two_followups_run_as_two_turns_without_going_idle_between(
    make_agent: AgentFactory,
) -> None:
    agent = make_agent(ScriptedAdapter(["one", "two"]))
    recorder = Recorder(agent)

    agent.followup(fixed("a", "first"))
    agent.followup(fixed("b", "second"))
    await agent.when_idle()

    timeline = recorder.take()
    turns = [entry for entry in timeline if entry[0] in ("user/message", "turn/start")]
    assert turns == [
        ("turn/start", 1),
        ("user/message", "a"),
        ("turn/start", 2),
        ("user/message", "b"),
    ]
    statuses = [entry for entry in timeline if entry[0] == "live:status"]
    assert statuses == [("live:status", "running"), ("live:status", "idle")]


async def test_replace_discards_the_old_message_and_inserts_the_new_one(
    make_agent: AgentFactory,
) -> None:
    agent = make_agent(ScriptedAdapter([]))
    old = fixed("m1", "draft")
    agent.inject(old)
    recorder = Recorder(agent)
    edited = replace_content(old, "final wording")

    assert agent.inbox.replace(old.id, edited) is True

    assert recorder.take() == [
        ("spliced", "next-step", 0, 1, ("m1",), "canceled"),
        ("live:discarded", "m1"),
        ("live:inserted", "m1"),
    ]
    assert agent.inbox.next_step[0] is edited


async def test_replace_and_remove_of_an_id_not_pending_write_nothing(
    make_agent: AgentFactory,
) -> None:
    agent = make_agent(ScriptedAdapter([]))
    seq = agent.session.seq

    assert agent.inbox.replace("absent", fixed("x", "x")) is False  # type: ignore[arg-type]
    assert agent.inbox.remove("absent") is False  # type: ignore[arg-type]
    assert agent.session.seq == seq


async def test_remove_discards_one_pending_message(make_agent: AgentFactory) -> None:
    agent = make_agent(ScriptedAdapter([]))
    keep, drop = fixed("keep", "k"), fixed("drop", "d")
    agent.inbox.append("next-turn", keep)
    agent.inbox.append("next-turn", drop)
    recorder = Recorder(agent)

    assert agent.inbox.remove(drop.id) is True

    assert recorder.take() == [
        ("spliced", "next-turn", 1, 1, (), "canceled"),
        ("live:discarded", "drop"),
    ]
    assert agent.inbox.next_turn == (keep,)


async def test_clear_discards_next_step_then_next_turn(make_agent: AgentFactory) -> None:
    agent = make_agent(ScriptedAdapter([]))
    agent.inbox.append("next-turn", fixed("t1", "t"))
    agent.inbox.append("next-step", fixed("s1", "s"))
    recorder = Recorder(agent)

    discarded = agent.inbox.clear()

    assert [m.id for m in discarded] == ["s1", "t1"]
    assert recorder.take() == [
        ("spliced", "next-step", 0, 1, (), "canceled"),
        ("live:discarded", "s1"),
        ("spliced", "next-turn", 0, 1, (), "canceled"),
        ("live:discarded", "t1"),
    ]
    assert agent.inbox.clear() == ()  # nothing pending: nothing written


async def test_splice_counts_a_negative_start_from_the_end_and_clamps(
    make_agent: AgentFactory,
) -> None:
    agent = make_agent(ScriptedAdapter([]))
    for name in ("a", "b", "c"):
        agent.inbox.append("next-step", fixed(name, name))

    removed = agent.inbox.splice("next-step", -2, 99, [fixed("z", "z")])

    assert [m.id for m in removed] == ["b", "c"]
    assert [m.id for m in agent.inbox.next_step] == ["a", "z"]
    last = agent.session.events[-1]
    assert last.data == InboxSplicedData(
        target="next-step",
        start=1,
        removed_count=2,
        inserted=(agent.inbox.next_step[1],),
        outcome="canceled",
    )


async def test_prepend_puts_a_message_first(make_agent: AgentFactory) -> None:
    agent = make_agent(ScriptedAdapter([]))
    agent.inbox.append("next-turn", fixed("later", "l"))
    agent.inbox.prepend("next-turn", fixed("first", "f"))

    assert [m.id for m in agent.inbox.next_turn] == ["first", "later"]


async def test_a_splice_is_logged_before_the_list_changes(make_agent: AgentFactory) -> None:
    agent = make_agent(ScriptedAdapter([]))
    seen_pending: list[int] = []
    agent.session.subscribe(lambda event: seen_pending.append(len(agent.inbox.next_step)))

    agent.inject(fixed("i1", "context"))

    assert seen_pending == [0]
    assert len(agent.inbox.next_step) == 1


async def test_only_user_messages_may_be_pending(make_agent: AgentFactory) -> None:
    agent = make_agent(ScriptedAdapter([]))
    result = create_tool_result_message(call_id="c1", content="x")

    with pytest.raises(TypeError, match="UserMessage"):
        agent.followup(result)  # type: ignore[arg-type]
    assert agent.session.seq == 0


def test_a_waking_send_outside_an_event_loop_writes_nothing(session: Session) -> None:
    agent = AgentLoop(session=session, adapter=ScriptedAdapter([]), provider="p", model="m")

    with pytest.raises(RuntimeError):
        agent.followup(fixed("m1", "hi"))
    assert session.seq == 0


async def test_pending_input_is_rebuilt_from_the_log(make_agent: AgentFactory) -> None:
    agent = make_agent(ScriptedAdapter([]))
    turn_item, step_item = fixed("t1", "later"), fixed("s1", "context")
    agent.inbox.append("next-turn", turn_item)
    agent.inbox.append("next-turn", fixed("gone", "removed"))
    agent.inject(step_item)
    agent.inbox.remove("gone")  # type: ignore[arg-type]

    reloaded = Session.from_log(agent.session.header, agent.session.events)
    restored = AgentLoop(session=reloaded, adapter=ScriptedAdapter([]), provider="p", model="m")

    assert restored.inbox.next_turn == (turn_item,)
    assert restored.inbox.next_step == (step_item,)
    assert restored.status == "idle"  # restored items wake nobody


async def test_a_fork_does_not_inherit_pending_input(make_agent: AgentFactory) -> None:
    agent = make_agent(ScriptedAdapter([]))
    agent.inject(fixed("s1", "context"))

    child = AgentLoop(
        session=agent.session.fork(), adapter=ScriptedAdapter([]), provider="p", model="m"
    )

    assert child.inbox.next_step == () and child.inbox.next_turn == ()


def test_a_stored_splice_that_does_not_fit_is_reported_with_its_seq() -> None:
    source = Session.create()
    source.append(
        "agent/inbox/spliced", InboxSplicedData(target="next-step", start=0, removed_count=1)
    )
    broken = Session.from_log(source.header, source.events)

    with pytest.raises(InboxError, match="seq 0") as refused:
        AgentLoop(session=broken, adapter=ScriptedAdapter([]), provider="p", model="m")
    assert refused.value.seq == 0


async def test_a_waking_send_removed_by_a_listener_still_opens_a_turn(
    make_agent: AgentFactory,
) -> None:
    adapter = ScriptedAdapter(["never"])
    agent = make_agent(adapter)

    def withdraw(notification: LiveUpdate) -> None:
        if isinstance(notification, MessageQueued):
            agent.inbox.remove(notification.message.id)

    agent.subscribe(withdraw)

    agent.followup(fixed("m1", "withdrawn at once"))
    await agent.when_idle()

    types = [e.type for e in agent.session.events]
    assert types == ["agent/inbox/spliced", "agent/inbox/spliced", "turn/start", "turn/end"]
    end = agent.session.events[-1]
    assert end.type == "turn/end" and end.data.reason.kind == "completed"
    assert adapter.requests == []
