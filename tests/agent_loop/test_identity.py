"""One message, one identity (SPEC §0, §4.2): the caller's very object travels from the
delivery through the splice, the notifications, pre-step, the ``user/message`` event,
derived history and the model request. A rewrite keeps the id; new context gets one."""

from __future__ import annotations

from dsh_agent import Enter, MessageClaimed, MessageQueued, PreStep, Reject
from dsh_agent._agent import CallNext
from dsh_llm import TextBlock, UserMessage, create_user_message, replace_content
from dsh_llm.testing import ScriptedAdapter

from .support import AgentFactory, prompt


async def test_the_callers_object_is_the_one_everywhere(make_agent: AgentFactory) -> None:
    adapter = ScriptedAdapter(["answer"])
    agent = make_agent(adapter)
    seen_in_pre_step: list[UserMessage] = []

    async def observe(step: PreStep, call_next: CallNext) -> Enter | Reject:
        seen_in_pre_step.extend(step.messages)
        return await call_next()

    agent.on_pre_step(observe)
    notifications: list[object] = []
    agent.subscribe(notifications.append)
    message = prompt("what is the answer?")

    agent.followup(message)
    await agent.when_idle()

    events = agent.session.events
    spliced = next(e for e in events if e.type == "agent/inbox/spliced")
    entered = next(e for e in events if e.type == "user/message")
    inserted = next(n for n in notifications if isinstance(n, MessageQueued))
    claimed = next(n for n in notifications if isinstance(n, MessageClaimed))
    assert spliced.data.inserted[0] is message
    assert inserted.message is message
    assert claimed.message is message
    assert seen_in_pre_step[0] is message
    assert entered.data is message
    assert agent.session.derive_messages()[0] is message
    assert adapter.requests[0].messages[0] is message


async def test_a_pending_message_is_the_callers_object(make_agent: AgentFactory) -> None:
    agent = make_agent(ScriptedAdapter([]))
    message = prompt("later")

    agent.inject(message)

    assert agent.inbox.next_step[0] is message


async def test_a_pre_step_rewrite_keeps_the_id_and_added_context_has_its_own(
    make_agent: AgentFactory,
) -> None:
    adapter = ScriptedAdapter(["ok"])
    agent = make_agent(adapter)
    context = create_user_message(
        content="today is Tuesday", source={"kind": "plugin", "plugin": "clock"}
    )

    async def rewrite(step: PreStep, call_next: CallNext) -> Enter | Reject:
        rewritten = tuple(replace_content(m, "[redacted]") for m in step.messages)
        return Enter([*rewritten, context])

    agent.on_pre_step(rewrite)
    message = prompt("my password is hunter2")

    agent.followup(message)
    await agent.when_idle()

    entered = [e.data for e in agent.session.events if e.type == "user/message"]
    assert [m.id for m in entered] == [message.id, context.id]
    assert entered[0].content == (TextBlock(text="[redacted]"),)
    assert entered[0].source == message.source
    assert entered[1] is context
    assert context.id != message.id
    sent = adapter.requests[0].messages
    assert sent[0] is entered[0] and sent[1] is context


async def test_history_and_requests_hold_the_logged_objects_across_steps(
    make_agent: AgentFactory,
) -> None:
    adapter = ScriptedAdapter(["one", "two"])
    agent = make_agent(adapter)
    first, second = prompt("first"), prompt("second")

    agent.followup(first)
    agent.followup(second)
    await agent.when_idle()

    logged = [
        e.data if e.type == "user/message" else e.data.message
        for e in agent.session.events
        if e.type in ("user/message", "assistant/message")
    ]
    history = agent.session.derive_messages()
    assert all(a is b for a, b in zip(history, logged, strict=True))
    assert all(a is b for a, b in zip(adapter.requests[1].messages, logged[:3], strict=True))
