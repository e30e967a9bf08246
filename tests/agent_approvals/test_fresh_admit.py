"""The gate's fresh-calls path (a message just committed: the log is not read when no
call needs approval) answers and writes exactly what the full path does."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pytest

from dsh_agent.approvals._gate import ApprovalGate
from dsh_agent.approvals._policy import ApprovalPolicy
from dsh_llm import ToolCallBlock, create_assistant_message
from dsh_session import AssistantMessageData, Session, StepData, TurnStartData

from .support import Workshop

TOOLS = {tool.name: tool for tool in Workshop().tools}
CALLS = [
    ToolCallBlock(call_id="a", name="look", arguments='{"path":"x"}'),
    ToolCallBlock(call_id="b", name="delete", arguments='{"path":"x"}'),
    ToolCallBlock(call_id="c", name="nowhere", arguments="{}"),
    ToolCallBlock(call_id="e", name="deploy", arguments='{"version":"1"}'),
    ToolCallBlock(call_id="d", name="look", arguments="not json"),
]


def ask_about(names: set[str]) -> ApprovalPolicy:
    def policy(call: ToolCallBlock) -> bool | str:
        if call.name == "explode":
            raise RuntimeError("boom")
        return "policy says so" if call.name in names else False

    return policy


POLICIES: list[ApprovalPolicy | None] = [
    None,
    ask_about(set()),
    ask_about({"look"}),
    lambda call: call.call_id == "d",
    lambda call: (_ for _ in ()).throw(RuntimeError("the policy failed")),
]
MESSAGES: list[tuple[ToolCallBlock, ...]] = [
    combination for size in (1, 2, 3) for combination in itertools.permutations(CALLS, size)
]


def open_step_with(calls: Sequence[ToolCallBlock]) -> Session:
    session = Session.create()
    session.append("turn/start", TurnStartData(turn=1))
    session.append("step/start", StepData(turn=1, step=1))
    message = create_assistant_message(content=list(calls), source={"provider": "p", "model": "m"})
    session.append("assistant/message", AssistantMessageData(turn=1, step=1, message=message))
    return session


def admitted(policy: ApprovalPolicy | None, calls: Sequence[ToolCallBlock], fresh: bool) -> object:
    session = open_step_with(calls)
    seen: list[str] = []

    def recording(call: ToolCallBlock) -> bool | str:
        seen.append(call.call_id)
        assert policy is not None
        return policy(call)

    gate = ApprovalGate(session, TOOLS, None if policy is None else recording)
    runnable, waiting = gate.admit(1, 1, calls, fresh=fresh)
    written = [  # new ids and times aside
        event.model_dump(exclude={"time": True, "data": {"id"}}) for event in session.events[3:]
    ]
    return [call.call_id for call in runnable], waiting, written, seen, gate.blocked


@pytest.mark.parametrize("policy", POLICIES)
def test_fresh_admission_is_the_full_admission(policy: ApprovalPolicy | None) -> None:
    for calls in MESSAGES:
        assert admitted(policy, calls, fresh=True) == admitted(policy, calls, fresh=False)
