"""Spans of real agent turns, exported in memory, checked against the log they trace."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from dsh_agent import AgentLoop, ModelSettings, reconstruct_requests, run, tool
from dsh_agent.tracing import trace_agent
from dsh_llm import LlmFailure, create_user_message
from dsh_llm.testing import ScriptedAdapter, reply
from dsh_session import (
    AssistantMessageEvent,
    Session,
    ToolResultEvent,
    UserMessageEvent,
)


@tool
async def weather(city: str) -> str:
    """The weather in ``city``."""
    return f"sunny in {city}"


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    memory = InMemorySpanExporter()
    yield memory
    memory.clear()


def _provider(exporter: InMemorySpanExporter) -> TracerProvider:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


def _agent(session: Session, adapter: ScriptedAdapter) -> AgentLoop:
    return AgentLoop(
        session=session,
        adapter=adapter,
        provider="scripted",
        model="scripted-1",
        system="Be brief.",
        tools=[weather],
        model_settings=ModelSettings(max_tokens=256),
    )


def _prompt(text: str) -> Any:
    return create_user_message(content=text, source={"kind": "user"})


def _attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def _by_operation(spans: tuple[ReadableSpan, ...], operation: str) -> list[ReadableSpan]:
    found = [s for s in spans if _attrs(s).get("gen_ai.operation.name") == operation]
    return sorted(found, key=lambda s: s.start_time or 0)


async def test_a_tool_using_turn_gives_a_span_tree_whose_ids_and_seqs_match_the_log(
    exporter: InMemorySpanExporter,
) -> None:
    session = Session.create()
    adapter = ScriptedAdapter(
        [
            reply(tool_calls=[{"name": "weather", "arguments": {"city": "Oslo"}}]),
            reply(text="It is sunny."),
        ]
    )
    agent = _agent(session, adapter)
    with trace_agent(agent, tracer_provider=_provider(exporter), agent_name="helper"):
        prompt = _prompt("Weather in Oslo?")
        await run(agent, prompt)
    await agent.aclose()

    spans = exporter.get_finished_spans()
    events = session.events
    (turn,) = _by_operation(spans, "invoke_agent")
    chats = _by_operation(spans, "chat")
    (tool_span,) = _by_operation(spans, "execute_tool")
    assert len(spans) == 4 and len(chats) == 2

    # The tree: every chat and tool span is a child of the turn's span, in one trace.
    assert turn.name == "invoke_agent helper" and turn.parent is None
    for child in (*chats, tool_span):
        assert child.parent is not None and child.parent.span_id == turn.context.span_id
        assert child.context.trace_id == turn.context.trace_id
    assert [c.name for c in chats] == ["chat scripted-1", "chat scripted-1"]
    assert all(c.kind is SpanKind.CLIENT for c in chats)

    # The turn links to its first and last events and names the prompt that entered.
    t = _attrs(turn)
    assert t["dsh.session.id"] == session.id == t["gen_ai.conversation.id"]
    assert events[t["dsh.event.seq"]].type == "turn/start"
    assert events[t["dsh.event.end_seq"]].type == "turn/end"
    assert tuple(t["dsh.turn.input_message_ids"]) == (prompt.id,)
    assert t["dsh.turn.end_reason"] == "completed"

    # Each chat span carries exactly the ids of the request the log rebuilds, and the id
    # of the assistant message that request produced.
    rebuilt = reconstruct_requests(events)
    answers = [e for e in events if isinstance(e, AssistantMessageEvent)]
    assert len(rebuilt) == 2 and len(answers) == 2
    for chat, request, answer in zip(chats, rebuilt, answers, strict=True):
        a = _attrs(chat)
        assert tuple(a["dsh.request.message_ids"]) == tuple(m.id for m in request.messages)
        assert a["dsh.response.message_id"] == answer.data.message.id
        assert a["dsh.event.end_seq"] == answer.seq
        assert events[a["dsh.event.seq"]].type == "step/start"
        assert a["gen_ai.provider.name"] == "scripted"
        assert a["gen_ai.request.model"] == "scripted-1"
        assert a["gen_ai.request.max_tokens"] == 256
        assert answer.data.usage is not None
        assert a["gen_ai.usage.input_tokens"] == answer.data.usage.input_tokens
        assert "gen_ai.input.messages" not in a  # content only on opt-in
    assert tuple(_attrs(chats[0])["gen_ai.response.finish_reasons"]) == ("tool-calls",)
    assert tuple(_attrs(chats[1])["gen_ai.response.finish_reasons"]) == ("stop",)

    # The tool span names the call and the result message committed for it.
    (result,) = [e for e in events if isinstance(e, ToolResultEvent)]
    s = _attrs(tool_span)
    call_id = result.data.message.source.call_id
    assert tool_span.name == "execute_tool weather"
    assert s["gen_ai.tool.call.id"] == call_id
    assert s["dsh.tool_result.message_id"] == result.data.message.id
    assert s["dsh.event.end_seq"] == result.seq
    assert events[s["dsh.event.seq"]].type == "tool/call"
    assert tool_span.status.status_code is StatusCode.UNSET


async def test_a_failed_model_call_marks_its_chat_and_turn_spans_as_errors(
    exporter: InMemorySpanExporter,
) -> None:
    session = Session.create()
    failure = LlmFailure(message="bad credentials", code="INVALID_CREDENTIAL")
    agent = _agent(session, ScriptedAdapter([failure]))
    with trace_agent(agent, tracer_provider=_provider(exporter)):
        await run(agent, _prompt("hello"), raise_on_error=False)
    await agent.aclose()

    spans = exporter.get_finished_spans()
    (turn,) = _by_operation(spans, "invoke_agent")
    (chat,) = _by_operation(spans, "chat")
    for span in (turn, chat):
        assert span.status.status_code is StatusCode.ERROR
        assert _attrs(span)["error.type"] == "INVALID_CREDENTIAL"
    assert _attrs(turn)["dsh.turn.end_reason"] == "error"
    assert "dsh.response.message_id" not in _attrs(chat)


async def test_content_is_recorded_only_when_asked_for(exporter: InMemorySpanExporter) -> None:
    session = Session.create()
    adapter = ScriptedAdapter(
        [
            reply(tool_calls=[{"name": "weather", "arguments": {"city": "Rome"}}]),
            reply(text="Sunny."),
        ]
    )
    agent = _agent(session, adapter)
    with trace_agent(agent, tracer_provider=_provider(exporter), include_content=True):
        await run(agent, _prompt("Weather in Rome?"))
    await agent.aclose()

    spans = exporter.get_finished_spans()
    first_chat = _attrs(_by_operation(spans, "chat")[0])
    assert "Weather in Rome?" in first_chat["gen_ai.input.messages"]
    assert first_chat["gen_ai.system_instructions"] == "Be brief."
    assert "Rome" in first_chat["gen_ai.output.messages"]
    (tool_span,) = _by_operation(spans, "execute_tool")
    assert "Rome" in _attrs(tool_span)["gen_ai.tool.call.arguments"]
    assert "sunny in Rome" in _attrs(tool_span)["gen_ai.tool.call.result"]


async def test_closing_the_tracing_stops_new_spans_and_ends_open_ones(
    exporter: InMemorySpanExporter,
) -> None:
    session = Session.create()
    agent = _agent(session, ScriptedAdapter([reply(text="one"), reply(text="two")]))
    tracing = trace_agent(agent, tracer_provider=_provider(exporter))
    await run(agent, _prompt("first"))
    tracing.close()
    tracing.close()  # idempotent
    await run(agent, _prompt("second"))
    await agent.aclose()
    assert len(_by_operation(exporter.get_finished_spans(), "invoke_agent")) == 1
    assert sum(isinstance(e, UserMessageEvent) for e in session.events) == 2
