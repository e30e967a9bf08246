"""Property: however appends, rewrites and summaries interleave with derive_messages()
calls, the incremental history equals the history of the same log loaded afresh, and
every history returned along the way stays exactly as it was returned."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_llm import Message, TextBlock, ToolCallBlock, ToolResultBlock, replace_content
from dsh_session import (
    AssistantMessageEvent,
    Replace,
    Session,
    SessionValidationError,
    ToolResultEvent,
    UserMessageEvent,
)

from .support import finish_turn, start_turn, tool_turn, user

Operation = tuple[str, int, int]
operations = st.lists(
    st.tuples(
        st.sampled_from(["chat", "tools", "summary", "rewrite", "derive"]),
        st.integers(0, 40),
        st.integers(0, 40),
    ),
    max_size=25,
)


def surface_seqs(session: Session) -> list[int]:
    """The surface, folded from the log by the rule of SPEC 3.3 (the test's oracle)."""
    nodes: list[int] = []
    for event in session.events:
        if isinstance(event, (UserMessageEvent, AssistantMessageEvent, ToolResultEvent)):
            op = event.surface_op
            if isinstance(op, Replace):
                nodes[nodes.index(op.start) : nodes.index(op.end) + 1] = [event.seq]
            else:
                nodes.append(event.seq)
    return nodes


def message_at(session: Session, seq: int) -> Message:
    event = session.events[seq]
    if isinstance(event, UserMessageEvent):
        return event.data
    assert isinstance(event, AssistantMessageEvent | ToolResultEvent)
    return event.data.message


def call_result_positions(session: Session, nodes: list[int]) -> list[tuple[int, int]]:
    """Surface positions of each tool call and its result (call ids are unique here)."""
    calls: dict[str, int] = {}
    pairs: list[tuple[int, int]] = []
    for position, seq in enumerate(nodes):
        event = session.events[seq]
        if isinstance(event, AssistantMessageEvent):
            for block in event.data.message.content:
                if isinstance(block, ToolCallBlock):
                    calls[block.call_id] = position
        elif isinstance(event, ToolResultEvent):
            pairs.append((calls[event.data.message.source.call_id], position))
    return pairs


def apply(session: Session, operation: Operation) -> None:
    kind, a, b = operation
    if kind == "chat":
        turn, _ = start_turn(session)
        finish_turn(session, turn, 1)
    elif kind == "tools":
        tool_turn(session, f"call-{session.seq}")
    elif kind == "summary":
        nodes = surface_seqs(session)
        if nodes:
            first, last = sorted((a % len(nodes), b % len(nodes)))
            start, end = nodes[first], nodes[last]
            cited = nodes[first : last + 1]
            # Refused exactly when the range would cut a call from its result.
            cuts = any(
                (first <= call <= last) != (first <= answered <= last)
                for call, answered in call_result_positions(session, nodes)
            )
            try:
                session.append(
                    "user/message",
                    user("summary"),
                    surface_op=Replace(start=start, end=end),
                    source_event_seqs=cited,
                )
            except SessionValidationError:
                assert cuts
            else:
                assert not cuts
    elif kind == "rewrite":
        results = [
            seq for seq in surface_seqs(session) if isinstance(session.events[seq], ToolResultEvent)
        ]
        if results:
            original = session.events[results[a % len(results)]]
            assert isinstance(original, ToolResultEvent)
            message = original.data.message
            pruned = replace_content(
                message,
                [
                    ToolResultBlock(
                        call_id=message.source.call_id,
                        content=(TextBlock(text=f"pruned {a}"),),
                    )
                ],
            )
            session.append(
                "tool/result",
                {"turn": original.data.turn, "step": original.data.step, "message": pruned},
                surface_op=Replace(start=original.seq, end=original.seq),
                source_event_seqs=[original.seq],
            )


@settings(max_examples=60, deadline=None)
@given(operations)
def test_incremental_history_matches_a_fresh_load_and_never_changes(
    ops: list[Operation],
) -> None:
    session = Session.create()
    returned: list[tuple[Sequence[Message], list[Message]]] = []
    for operation in ops:
        apply(session, operation)
        if operation[0] == "derive":
            history = session.derive_messages()
            returned.append((history, list(history)))

    expected = [message_at(session, seq) for seq in surface_seqs(session)]
    assert all(a is b for a, b in zip(session.derive_messages(), expected, strict=True))

    fresh = Session.from_log(session.header, session.events).derive_messages()
    assert len(fresh) == len(session.derive_messages())
    assert all(a is b for a, b in zip(fresh, session.derive_messages(), strict=True))
    for history, as_returned in returned:
        assert len(history) == len(as_returned)
        assert all(a is b for a, b in zip(history, as_returned, strict=True))
