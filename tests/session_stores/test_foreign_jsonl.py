"""A JSONL log written by another program (camelCase wire shapes, as the TypeScript
harness writes them) loads, round-trips every line, and is extended without rewriting."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dsh_llm import ToolResultMessage
from dsh_session._session import Session
from dsh_session.stores import JsonlSessionStore

from .scenarios import complete_turn

HEADER = {
    "type": "session",
    "version": 0,
    "id": "ts-session",
    "createdAt": 1733000000000,
    "cwd": "/home/user/project",
    "origin": "subagent",
    "delegationDepth": 1,
}
PROMPT = {
    "id": "msg-u1",
    "role": "user",
    "content": [{"type": "text", "text": "What is 6*7?"}],
    "source": {"kind": "user", "rpcId": "r-1"},
}
ARGUMENTS = '{"expr": "6*7"}'
T = 1733000000100


def _event(seq: int, type: str, data: Any, **envelope: Any) -> dict[str, Any]:
    return {"type": type, "seq": seq, "time": T + seq, "data": data, **envelope}


def _chunk(seq: int, step: int, chunk: dict[str, Any]) -> dict[str, Any]:
    return _event(seq, "assistant/chunk", {"turn": 1, "step": step, "chunk": chunk})


EVENTS = [
    _event(0, "agent/inbox/spliced", {"target": "next-turn", "start": 0, "inserted": [PROMPT]}),
    _event(1, "turn/start", {"turn": 1}),
    _event(
        2,
        "agent/inbox/spliced",
        {"target": "next-turn", "start": 0, "removedCount": 1, "inserted": []},
    ),
    _event(3, "step/start", {"turn": 1, "step": 1}),
    _event(4, "user/message", PROMPT, surfaceOp="append"),
    _event(
        5,
        "request/header",
        {
            "header": {
                "config": {"provider": "deepseek", "model": "deepseek-chat", "maxTokens": 1024},
                "adapterDefaults": {"maxTokens": True},
                "system": "Be brief.",
                "tools": [
                    {
                        "name": "calc",
                        "description": "Evaluate arithmetic.",
                        "parameters": {
                            "type": "object",
                            "properties": {"expr": {"type": "string"}},
                        },
                    }
                ],
            },
            "reason": "initial",
        },
    ),
    _event(
        6,
        "request/context",
        {"provider": "deepseek", "model": "deepseek-chat", "contextWindow": 65536},
    ),
    _chunk(
        7,
        1,
        {
            "type": "tool-call-delta",
            "index": 0,
            "id": "call_1",
            "name": "calc",
            "argumentsDelta": ARGUMENTS,
        },
    ),
    _chunk(
        8,
        1,
        {"type": "usage", "usage": {"inputTokens": 10, "outputTokens": 5, "cacheReadTokens": 2}},
    ),
    _chunk(9, 1, {"type": "finish", "reason": {"kind": "tool-calls"}}),
    _event(
        10,
        "assistant/message",
        {
            "turn": 1,
            "step": 1,
            "message": {
                "id": "msg-a1",
                "role": "assistant",
                "content": [
                    {"type": "tool-call", "id": "call_1", "name": "calc", "arguments": ARGUMENTS}
                ],
                "source": {
                    "kind": "model",
                    "provider": "deepseek",
                    "model": "deepseek-chat",
                    "replayState": {"reasoningContent": "multiply", "n": [1, 2]},
                },
            },
            "usage": {"inputTokens": 10, "outputTokens": 5, "cacheReadTokens": 2},
        },
        sourceEventSeqs=[7, 8, 9],
        surfaceOp="append",
    ),
    _event(
        11,
        "tool/call",
        {"turn": 1, "step": 1, "callId": "call_1", "name": "calc", "arguments": ARGUMENTS},
    ),
    _event(
        12,
        "tool/result",
        {
            "turn": 1,
            "step": 1,
            "message": {
                "id": "msg-t1",
                "role": "user",
                "content": [
                    {
                        "type": "tool-result",
                        "toolCallId": "call_1",
                        "content": [{"type": "text", "text": "42"}],
                        "isError": False,
                    }
                ],
                "source": {"kind": "tool", "callId": "call_1"},
            },
            "meta": {"durationMs": 3, "display": {"title": "calc"}},
        },
        sourceEventSeqs=[11],
        surfaceOp="append",
    ),
    _event(13, "step/end", {"turn": 1, "step": 1}),
    _event(14, "step/start", {"turn": 1, "step": 2}),
    _chunk(15, 2, {"type": "text-delta", "index": 0, "text": "42"}),
    _event(
        16,
        "assistant/message",
        {
            "turn": 1,
            "step": 2,
            "message": {
                "id": "msg-a2",
                "role": "assistant",
                "content": [{"type": "text", "text": "42"}],
                "source": {"kind": "model", "provider": "deepseek", "model": "deepseek-chat"},
            },
        },
        sourceEventSeqs=[15],
        surfaceOp="append",
    ),
    _event(17, "step/end", {"turn": 1, "step": 2}),
    _event(18, "turn/end", {"turn": 1, "reason": {"kind": "completed"}}),
    _event(19, "compaction/note", {"free": "form"}, ignorable=True),
]


def _write_foreign_log(directory: Path) -> bytes:
    # Another writer's spacing and key order; only the shapes are shared.
    text = "".join(json.dumps(line, indent=None) + "\n" for line in [HEADER, *EVENTS])
    path = directory / "ts-session.jsonl"
    path.write_text(text, encoding="utf-8")
    return path.read_bytes()


async def test_a_log_written_by_another_program_loads_with_its_ids(tmp_path: Path) -> None:
    _write_foreign_log(tmp_path)
    store = JsonlSessionStore(tmp_path)

    session = await store.load("ts-session")

    assert [message.id for message in session.derive_messages()] == [
        "msg-u1",
        "msg-a1",
        "msg-t1",
        "msg-a2",
    ]
    result = session.derive_messages()[2]
    assert isinstance(result, ToolResultMessage)
    assert result.content[0].call_id == "call_1"
    assert session.header.model_extra == {"origin": "subagent", "delegationDepth": 1}
    assert session.request_header is not None
    assert session.request_header.config.max_tokens == 1024
    assert store.load_report(session).torn_tail is None
    assert [event.type for event in store.load_report(session).appended] == ["session/end-seed"]


async def test_every_foreign_line_dumps_back_to_the_same_json(tmp_path: Path) -> None:
    _write_foreign_log(tmp_path)

    session = await JsonlSessionStore(tmp_path).load("ts-session")

    dumped = [event.model_dump(mode="json") for event in session.events[: len(EVENTS)]]
    assert dumped == EVENTS
    assert {**session.header.model_dump(mode="json"), "type": "session"} == HEADER


async def test_extending_a_foreign_log_appends_without_rewriting_it(tmp_path: Path) -> None:
    original = _write_foreign_log(tmp_path)
    store = JsonlSessionStore(tmp_path)
    session = await store.load("ts-session")

    complete_turn(session)
    await store.close()

    written = (tmp_path / "ts-session.jsonl").read_bytes()
    assert written.startswith(original)
    new_lines = [json.loads(line) for line in written[len(original) :].splitlines()]
    assert [line["seq"] for line in new_lines] == list(range(len(EVENTS), session.seq))
    tool_result = next(line for line in new_lines if line["type"] == "tool/result")
    assert set(tool_result) == {"type", "seq", "time", "data", "sourceEventSeqs", "surfaceOp"}
    assert tool_result["data"]["message"]["content"][0]["toolCallId"] == "call-2-a"
    reloaded = await JsonlSessionStore(tmp_path).load("ts-session")
    assert list(reloaded.events[: session.seq]) == list(session.events)


async def test_a_session_written_here_has_the_documented_file_layout(tmp_path: Path) -> None:
    """Plain and unpacked, a new session is the harness's ``session.jsonl``: its header
    line (``delegationDepth`` included), then one event per line."""
    store = JsonlSessionStore(tmp_path, compression="none", pack_chunks=False)
    session = Session.create("layout")
    store.attach(session)
    complete_turn(session)
    await store.close()

    log = tmp_path / "_no-cwd" / "layout" / "session.jsonl"
    lines = [json.loads(line) for line in log.read_text().splitlines()]

    assert lines[0] == {
        "type": "session",
        "version": 0,
        "id": "layout",
        "createdAt": session.header.created_at,
        "delegationDepth": 0,
    }
    assert lines[1:] == [event.model_dump(mode="json") for event in session.events]
