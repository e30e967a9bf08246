"""derive_messages(): the model-visible history, holding the very message objects the
events hold, as an immutable sequence that never changes once returned."""

from __future__ import annotations

import pytest

from dsh_llm import TextBlock, ToolResultBlock, replace_content
from dsh_session import Replace, Session

from .support import assistant, finish_turn, start_turn, tool_turn, user


def test_derived_messages_are_the_objects_stored_in_the_events() -> None:
    session = Session.create()
    done = tool_turn(session)
    history = session.derive_messages()
    assert [message.id for message in history] == [
        done.prompt.data.id,
        done.request.data.message.id,
        done.result.data.message.id,
        done.answer.data.message.id,
    ]
    assert history[0] is done.prompt.data
    assert history[1] is done.request.data.message
    assert history[2] is done.result.data.message
    assert history[3] is done.answer.data.message


def test_append_stores_the_given_message_object_itself() -> None:
    session = Session.create()
    prompt = user("hello")
    event = session.append("user/message", prompt)
    assert event.data is prompt
    assert session.derive_messages()[0] is prompt


def test_a_message_inside_a_payload_mapping_is_stored_as_is() -> None:
    session = Session.create()
    turn, _ = start_turn(session)
    answer = assistant("hi")
    event = session.append("assistant/message", {"turn": turn, "step": 1, "message": answer})
    assert event.data.message is answer


def test_a_returned_history_never_changes_after_later_appends() -> None:
    session = Session.create()
    session.append("user/message", user("one"))
    before = session.derive_messages()
    first = before[0]
    session.append("user/message", user("two"))
    assert len(before) == 1
    assert before[0] is first
    assert list(before) == [first]
    assert len(session.derive_messages()) == 2


def test_a_returned_history_never_changes_after_a_replace() -> None:
    session = Session.create()
    done = tool_turn(session)
    before = session.derive_messages()
    snapshot = list(before)
    session.append(
        "user/message",
        user("summary"),
        surface_op=Replace(start=done.prompt.seq, end=done.answer.seq),
        source_event_seqs=[done.prompt.seq, done.request.seq, done.result.seq, done.answer.seq],
    )
    assert list(before) == snapshot
    assert all(a is b for a, b in zip(before, snapshot, strict=True))
    assert len(session.derive_messages()) == 1


def test_the_history_is_read_only() -> None:
    session = Session.create()
    session.append("user/message", user())
    history = session.derive_messages()
    with pytest.raises(TypeError):
        history[0] = user()  # type: ignore[index]
    assert not hasattr(history, "append")


def test_the_history_is_a_sequence_like_a_tuple() -> None:
    session = Session.create()
    first, second = user("one"), user("two")
    session.append("user/message", first)
    session.append("user/message", second)
    history = session.derive_messages()
    assert history == (first, second)
    assert history[-1] is second
    assert history[0:1] == (first,)
    assert list(reversed(history)) == [second, first]
    assert second in history
    with pytest.raises(IndexError):
        history[len(history)]


def test_an_assistant_message_with_empty_content_is_not_derived() -> None:
    session = Session.create()
    turn, prompt = start_turn(session)
    session.append("assistant/message", {"turn": turn, "step": 1, "message": assistant()})
    assert list(session.derive_messages()) == [prompt.data]


def test_an_empty_assistant_message_that_replaces_nodes_is_not_derived() -> None:
    """A replace may put an empty assistant message on the surface: it shadows what it
    replaces and shows nothing, live as after a fresh load."""
    session = Session.create()
    done = tool_turn(session)
    session.append(
        "assistant/message",
        {"turn": 1, "step": 2, "message": assistant()},
        surface_op=Replace(start=done.answer.seq, end=done.answer.seq),
        source_event_seqs=[done.answer.seq],
    )
    expected = [done.prompt.data, done.request.data.message, done.result.data.message]
    assert list(session.derive_messages()) == expected
    assert list(Session.from_log(session.header, session.events).derive_messages()) == expected


def test_events_view_is_immutable_and_never_changes_once_returned() -> None:
    session = Session.create()
    first = session.append("user/message", user())
    events = session.events
    session.append("user/message", user())
    assert list(events) == [first]
    assert len(session.events) == 2
    with pytest.raises(TypeError):
        events[0] = first  # type: ignore[index]


def test_session_seq_is_the_number_of_events() -> None:
    session = Session.create()
    assert session.seq == 0
    assert session.append("user/message", user()).seq == 0
    assert session.seq == 1


# --- compaction ----------------------------------------------------------------------


def test_a_content_rewrite_keeps_the_tool_result_id_and_call_id() -> None:
    session = Session.create()
    done = tool_turn(session)
    original = done.result.data.message
    pruned = replace_content(
        original,
        [ToolResultBlock(call_id=original.source.call_id, content=(TextBlock(text="[pruned]"),))],
    )
    rewrite = session.append(
        "tool/result",
        {"turn": done.turn, "step": 1, "message": pruned},
        surface_op=Replace(start=done.result.seq, end=done.result.seq),
        source_event_seqs=[done.result.seq],
    )
    history = session.derive_messages()
    assert history[2] is pruned
    assert history[2].id == original.id
    assert history[2].source.call_id == original.source.call_id
    assert rewrite.data.turn == done.turn and rewrite.data.step == 1
    assert session.events[done.result.seq] is done.result, "the raw log is never edited"


def test_a_content_rewrite_may_come_between_turns() -> None:
    session = Session.create()
    done = tool_turn(session)
    assert session.open_turn is None
    original = done.result.data.message
    pruned = replace_content(
        original, [ToolResultBlock(call_id=original.source.call_id, content=())]
    )
    session.append(
        "tool/result",
        {"turn": done.turn, "step": 1, "message": pruned},
        surface_op=Replace(start=done.result.seq, end=done.result.seq),
        source_event_seqs=[done.result.seq],
    )
    assert session.derive_messages()[2] is pruned


def test_a_summary_checkpoint_is_a_new_message_replacing_a_whole_turn() -> None:
    session = Session.create()
    done = tool_turn(session)
    later = tool_turn(session, "call-2")
    summary = user("summary of turn 1")
    session.append(
        "user/message",
        summary,
        surface_op=Replace(start=done.prompt.seq, end=done.answer.seq),
        source_event_seqs=[done.prompt.seq, done.request.seq, done.result.seq, done.answer.seq],
    )
    history = session.derive_messages()
    assert history[0] is summary
    assert summary.id not in {m.id for m in (done.prompt.data, done.answer.data.message)}
    assert history[1] is later.prompt.data
    assert len(history) == 5


def test_a_summary_may_cover_a_call_together_with_its_result() -> None:
    session = Session.create()
    done = tool_turn(session)
    session.append(
        "user/message",
        user("the lookup said 42"),
        surface_op=Replace(start=done.request.seq, end=done.result.seq),
        source_event_seqs=[done.request.seq, done.result.seq],
    )
    assert session.derive_messages()[0].id == done.prompt.data.id
    assert len(session.derive_messages()) == 3


def test_a_representation_change_of_a_user_message_keeps_its_id() -> None:
    session = Session.create()
    original = user("long prompt")
    event = session.append("user/message", original)
    shorter = replace_content(original, "short prompt")
    session.append(
        "user/message",
        shorter,
        surface_op=Replace(start=event.seq, end=event.seq),
        source_event_seqs=[event.seq],
    )
    assert session.derive_messages() == (shorter,)


def test_replaces_can_follow_each_other() -> None:
    session = Session.create()
    done = tool_turn(session)
    first_summary = session.append(
        "user/message",
        user("summary 1"),
        surface_op=Replace(start=done.prompt.seq, end=done.result.seq),
        source_event_seqs=[done.prompt.seq, done.request.seq, done.result.seq],
    )
    second = user("summary 2")
    session.append(
        "user/message",
        second,
        surface_op=Replace(start=first_summary.seq, end=done.answer.seq),
        source_event_seqs=[first_summary.seq, done.answer.seq],
    )
    assert session.derive_messages() == (second,)


def test_a_new_turn_after_compaction_derives_incrementally() -> None:
    session = Session.create()
    done = tool_turn(session)
    session.append(
        "user/message",
        user("summary"),
        surface_op=Replace(start=done.prompt.seq, end=done.answer.seq),
        source_event_seqs=[done.prompt.seq, done.request.seq, done.result.seq, done.answer.seq],
    )
    compacted = session.derive_messages()
    turn, prompt = start_turn(session)
    answer = finish_turn(session, turn, 1)
    history = session.derive_messages()
    assert list(history) == [compacted[0], prompt.data, answer.data.message]
    assert len(compacted) == 1
