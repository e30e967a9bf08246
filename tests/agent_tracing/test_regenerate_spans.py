"""Issue 34 #12: tracing a regenerate turn. The regenerate logs an empty assistant
message that replaces the old answer on the surface before the model is called; the
chat span ended there and named that tombstone as its response, and the real model
call and answer got no span. The chat span must cover the real call and name the
real answer."""

from __future__ import annotations

from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from dsh_agent import AgentLoop, reconstruct_requests, run
from dsh_agent.tracing import trace_agent
from dsh_llm import create_user_message
from dsh_llm.testing import ScriptedAdapter
from dsh_session import AssistantMessageEvent, Replace, Session


def _attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


async def test_the_chat_span_of_a_regenerate_turn_covers_the_real_call_and_answer() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    session = Session.create()
    agent = AgentLoop(
        session=session,
        adapter=ScriptedAdapter(["first answer", "second answer"]),
        provider="scripted",
        model="scripted-1",
    )
    with trace_agent(agent, tracer_provider=provider, agent_name="helper"):
        await run(agent, create_user_message(content="a question", source={"kind": "user"}))
        exporter.clear()  # only the regenerate turn's spans from here
        agent.regenerate()
        await agent.when_idle()
    await agent.aclose()

    spans = exporter.get_finished_spans()
    chats = [s for s in spans if _attrs(s).get("gen_ai.operation.name") == "chat"]
    [turn] = [s for s in spans if _attrs(s).get("gen_ai.operation.name") == "invoke_agent"]
    events = session.events
    start = _attrs(turn)["dsh.event.seq"]
    answers = [e for e in events[start:] if isinstance(e, AssistantMessageEvent)]
    [tombstone, answer] = answers
    assert isinstance(tombstone.surface_op, Replace) and tombstone.data.message.content == ()
    assert answer.surface_op is None or not isinstance(answer.surface_op, Replace)

    [chat] = chats
    a = _attrs(chat)
    assert a["dsh.response.message_id"] == answer.data.message.id != tombstone.data.message.id
    assert a["dsh.event.end_seq"] == answer.seq
    assert events[a["dsh.event.seq"]].type == "step/start"
    assert tuple(a["gen_ai.response.finish_reasons"]) == ("stop",)
    assert chat.name == "chat scripted-1" and a["gen_ai.request.model"] == "scripted-1"
    # The request it names is the one the log rebuilds for the regenerate's model call.
    last_request = reconstruct_requests(events)[-1]
    assert tuple(a["dsh.request.message_ids"]) == tuple(m.id for m in last_request.messages)
    assert answer.data.usage is not None
    assert a["gen_ai.usage.output_tokens"] == answer.data.usage.output_tokens
