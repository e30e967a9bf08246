"""Pruning content, balanced cuts, and the public surface view."""

from __future__ import annotations

import pytest

from dsh_agent.compaction import PRUNE_MARKER, PruneConfig, balanced_cuts, plan_summary
from dsh_agent.compaction._prune import prune_content
from dsh_llm import (
    ContentBlock,
    ImageBlock,
    TextBlock,
    create_assistant_message,
    create_tool_result_message,
    create_user_message,
    replace_content,
)
from dsh_session import (
    AssistantMessageData,
    Replace,
    Session,
    StepData,
    ToolResultData,
    TurnStartData,
)

SMALL = PruneConfig(threshold_chars=60, head_chars=10, tail_chars=5)


def test_the_middle_is_cut_across_blocks_and_other_blocks_stay_in_place() -> None:
    image = ImageBlock(media_type="image/png", url="http://x/y.png")
    blocks: list[ContentBlock] = [TextBlock(text="a" * 30), image, TextBlock(text="b" * 40)]
    pruned = prune_content(blocks, SMALL)
    assert pruned == [TextBlock(text="a" * 10 + PRUNE_MARKER), image, TextBlock(text="b" * 5)]
    assert prune_content([TextBlock(text="c" * 60)], SMALL) is None


def test_budgets_must_leave_room_for_the_marker() -> None:
    with pytest.raises(ValueError, match="at most threshold_chars"):
        PruneConfig(threshold_chars=20, head_chars=10, tail_chars=5)


def conversation() -> Session:
    """u, a(call c1, c2), r1, r2, a(text), u"""
    session = Session.create()
    session.append("turn/start", TurnStartData(turn=1))
    session.append("step/start", StepData(turn=1, step=1))
    session.append("user/message", create_user_message(content="go", source={"kind": "user"}))
    calls = [
        {"type": "tool-call", "id": "c1", "name": "t", "arguments": "{}"},
        {"type": "tool-call", "id": "c2", "name": "t", "arguments": "{}"},
    ]
    ask = create_assistant_message(content=calls, source={"provider": "p", "model": "m"})
    session.append("assistant/message", AssistantMessageData(turn=1, step=1, message=ask))
    for call in ("c1", "c2"):
        result = create_tool_result_message(call_id=call, content="out " * 10)
        session.append("tool/result", ToolResultData(turn=1, step=1, message=result))
    session.append("step/end", StepData(turn=1, step=1))
    session.append("step/start", StepData(turn=1, step=2))
    done = create_assistant_message(content="done", source={"provider": "p", "model": "m"})
    session.append("assistant/message", AssistantMessageData(turn=1, step=2, message=done))
    session.append("step/end", StepData(turn=1, step=2))
    session.append("user/message", create_user_message(content="next", source={"kind": "user"}))
    return session


def test_a_cut_between_a_call_and_its_result_is_unbalanced() -> None:
    view = conversation().surface
    assert balanced_cuts(view) == [True, True, False, False, True, True, True]
    # Keeping only the last two results' worth would cut the calls: the plan backs off.
    assert plan_summary(view, lambda seq: 10, retain_tokens=35) == 1
    assert plan_summary(view, lambda seq: 10, retain_tokens=15) == 4
    assert plan_summary(view, lambda seq: 10, retain_tokens=1000) is None


def test_the_surface_view_is_immutable_and_names_the_holding_events() -> None:
    session = conversation()
    before = session.surface
    result_node = before[2]
    assert result_node.event.type == "tool/result" and result_node.position == 2
    pruned = replace_content(result_node.message, "short")  # type: ignore[type-var]
    data = ToolResultData(turn=1, step=1, message=pruned)
    session.append(
        "tool/result",
        data,
        surface_op=Replace(start=result_node.seq, end=result_node.seq),
        source_event_seqs=(result_node.seq,),
    )
    after = session.surface
    assert before[2].seq == result_node.seq and before.generation == 0
    assert after[2].seq == session.seq - 1 and after.generation == 1
    assert after[2].message.id == result_node.message.id
    assert after.position_of(result_node.seq) is None and before.position_of(result_node.seq) == 2
    assert len(after) == len(before) and after.seqs != before.seqs
