"""The session stream in the Vercel AI SDK UI message stream form (``?form=vercel-ai``),
in-process through ASGI: every part fits the protocol's strict part schema and the
order its client expects (text deltas inside an open text part, tool outputs inside
the message that asked), every message id is the log's, deltas stream live and join
to the committed text, and a failed attempt is dropped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dsh_agent.streaming import VERCEL_UI_STREAM_HEADERS, VercelUiEncoder

from . import live_agents
from .sse import Sse, asgi_stream
from .test_live_stream import committed, new_session, running_app, send

_PART_KEYS: dict[str, tuple[set[str], set[str]]] = {
    # type: (required keys, optional keys), as the protocol's strict schema has them
    "start": (set(), {"messageId", "messageMetadata"}),
    "finish": (set(), {"finishReason", "messageMetadata"}),
    "start-step": (set(), set()),
    "finish-step": (set(), set()),
    "text-start": ({"id"}, {"providerMetadata"}),
    "text-delta": ({"id", "delta"}, {"providerMetadata"}),
    "text-end": ({"id"}, {"providerMetadata"}),
    "reasoning-start": ({"id"}, {"providerMetadata"}),
    "reasoning-delta": ({"id", "delta"}, {"providerMetadata"}),
    "reasoning-end": ({"id"}, {"providerMetadata"}),
    "error": ({"errorText"}, set()),
    "tool-input-available": ({"toolCallId", "toolName", "input"}, {"providerExecuted"}),
    "tool-approval-request": ({"approvalId", "toolCallId"}, set()),
    "tool-output-available": ({"toolCallId", "output"}, {"providerExecuted", "preliminary"}),
    "tool-output-error": ({"toolCallId", "errorText"}, {"providerExecuted"}),
}
_FINISH_REASONS = {"stop", "length", "content-filter", "tool-calls", "error", "other"}


def check_parts(parts: list[dict[str, Any]]) -> None:
    """Each part fits the strict schema; parts come in the order a client reads them."""
    message: str | None = None
    text_open: set[str] = set()
    reasoning_open: set[str] = set()
    calls: set[str] = set()
    for part in parts:
        kind = part["type"]
        keys = set(part) - {"type"}
        if kind.startswith("data-"):
            assert keys <= {"id", "data", "transient"} and "data" in keys, part
            continue
        required, optional = _PART_KEYS[kind]
        assert required <= keys <= required | optional, part
        if kind == "start":
            assert message is None, f"{part} inside message {message}"
            message, calls = part["messageId"], set()
        elif kind == "finish":
            assert message is not None and not text_open and not reasoning_open, part
            assert part.get("finishReason", "stop") in _FINISH_REASONS
            message = None
        elif kind in ("text-start", "reasoning-start"):
            assert message is not None, part
            (text_open if kind == "text-start" else reasoning_open).add(part["id"])
        elif kind in ("text-delta", "text-end"):
            assert part["id"] in text_open, part
            if kind == "text-end":
                text_open.discard(part["id"])
        elif kind in ("reasoning-delta", "reasoning-end"):
            assert part["id"] in reasoning_open, part
            if kind == "reasoning-end":
                reasoning_open.discard(part["id"])
        elif kind == "tool-input-available":
            assert message is not None, part
            calls.add(part["toolCallId"])
        elif kind.startswith("tool-"):
            assert part["toolCallId"] in calls, part


def texts(events: list[Sse]) -> dict[str, str]:
    """Per part id, the text deltas joined (a ``text-start`` restarts the text)."""
    joined: dict[str, str] = {}
    for event in events:
        part = event.data
        if part["type"] == "text-start":
            joined[part["id"]] = ""
        elif part["type"] == "text-delta":
            joined[part["id"]] += part["delta"]
    return joined


def turn_ended(events: list[Sse]) -> bool:
    return any(e.data["type"] == "data-dsh-turn-end" for e in events if e.comment is None)


async def test_a_streamed_reply_in_the_vercel_form(tmp_path: Path) -> None:
    async with running_app(tmp_path, live_agents.tool_then_answer) as (app, client, _):
        sid = await new_session(client)
        path = f"/api/sessions/{sid}/events?form=vercel-ai"
        async with asgi_stream(app, path) as stream:
            await send(client, sid, "u-1", "look it up")
            events = await stream.until(turn_ended)
        log = await committed(client, sid)
    assert stream.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert VERCEL_UI_STREAM_HEADERS == {"x-vercel-ai-ui-message-stream": "v1"}
    events = [e for e in events if e.comment is None]
    parts = [e.data for e in events]
    check_parts(parts)
    started = [p["messageId"] for p in parts if p["type"] == "start"]
    assert started == list(log)  # one UI message per assistant message, the log's ids
    text_ids = {p["id"] for p in parts if p["type"].startswith("text-")}
    assert text_ids == set(log)
    [user] = [p for p in parts if p["type"] == "data-dsh-user-message"]
    assert (user["id"], user["data"]["text"], user["transient"]) == ("u-1", "look it up", True)
    assert texts(events) == log
    second = list(log)[1]
    live = [e for e in events if e.live and e.data["type"] == "text-delta"]
    assert len([e for e in live if e.data["id"] == second]) >= 2  # streamed before the commit
    call = next(p for p in parts if p["type"] == "tool-input-available")
    assert (call["toolName"], call["input"]) == ("lookup", {"key": "k"})
    output = next(p for p in parts if p["type"] == "tool-output-available")
    assert output == {"type": "tool-output-available", "toolCallId": call["toolCallId"],
                      "output": "value of k"}  # fmt: skip
    assert [e.id for e in events if e.id is not None] == sorted({e.id for e in events if e.id})


async def test_a_failed_attempt_in_the_vercel_form(tmp_path: Path) -> None:
    async with running_app(tmp_path, live_agents.fails_then_answers) as (app, client, _):
        sid = await new_session(client)
        path = f"/api/sessions/{sid}/events?form=vercel-ai"
        async with asgi_stream(app, path) as stream:
            await send(client, sid, "u-1", "hi")
            events = await stream.until(turn_ended)
        log = await committed(client, sid)
    events = [e for e in events if e.comment is None]
    parts = [e.data for e in events]
    check_parts(parts)
    failed_id, answer_id = [p["messageId"] for p in parts if p["type"] == "start"]
    assert list(log) == [answer_id]
    failed = next(p for p in parts if p["type"] == "data-dsh-message-failed")
    assert (failed["id"], failed["data"]["code"]) == (failed_id, "SERVER")
    finish = parts[parts.index(failed) - 1]
    assert finish == {"type": "finish", "finishReason": "error"}
    assert texts(events) == {failed_id: live_agents.FAILED_TEXT, answer_id: log[answer_id]}


async def test_a_reconnect_mid_reply_restarts_the_text_once(tmp_path: Path) -> None:
    async with running_app(tmp_path, live_agents.streaming) as (app, client, _):
        sid = await new_session(client)
        path = f"/api/sessions/{sid}/events?form=vercel-ai"
        async with asgi_stream(app, path) as first:
            await send(client, sid, "u-1", "hi")
            before = list(await first.until(lambda es: sum(e.live for e in es) >= 5))
        last = max(e.id for e in before if e.id is not None)
        async with asgi_stream(app, path, {"Last-Event-ID": str(last)}) as second:
            after = [e for e in await second.until(turn_ended) if e.comment is None]
        log = await committed(client, sid)
    [(answer_id, text)] = log.items()
    assert all(e.id > last for e in after if e.id is not None)
    check_parts([e.data for e in after])
    assert texts(after) == {answer_id: text}
    assert texts([e for e in before if e.comment is None] + after) == {answer_id: text}


def test_the_encoder_restarts_a_part_the_commit_contradicts() -> None:
    from dsh_agent.streaming import AssistantCommitted, TextDelta
    from dsh_llm import create_assistant_message

    message = create_assistant_message(
        content="the real text", source={"provider": "test", "model": "scripted"}
    )
    encoder = VercelUiEncoder()
    parts = encoder.encode(TextDelta(message.id, 0, "something else", 3))
    parts += encoder.encode(AssistantCommitted(message, 1, 1, 9, False))
    check_parts(parts)
    deltas = [p["type"] for p in parts]
    assert deltas.count("text-start") == 2  # restarted: replace what the deltas drew
    assert parts[-5:] == [
        {"type": "text-start", "id": message.id},
        {"type": "text-delta", "id": message.id, "delta": "the real text"},
        {"type": "text-end", "id": message.id},
        {"type": "finish-step"},
        {"type": "finish", "finishReason": "stop"},
    ]


async def test_reasoning_then_text_in_the_vercel_form(tmp_path: Path) -> None:
    async with running_app(tmp_path, live_agents.reasons) as (app, client, _):
        sid = await new_session(client)
        path = f"/api/sessions/{sid}/events?form=vercel-ai"
        async with asgi_stream(app, path) as stream:
            await send(client, sid, "u-1", "hi")
            events = [e for e in await stream.until(turn_ended) if e.comment is None]
        [(answer_id, text)] = (await committed(client, sid)).items()
    parts = [e.data for e in events]
    check_parts(parts)
    reasoning = "".join(p["delta"] for p in parts if p["type"] == "reasoning-delta")
    assert reasoning == live_agents.REASONING
    assert {p["id"] for p in parts if p["type"].startswith("reasoning-")} == {answer_id}
    kinds = [p["type"] for p in parts if p["type"].startswith(("reasoning-", "text-"))]
    assert kinds.index("reasoning-end") < kinds.index("text-start")
    assert texts(events) == {answer_id: text}
