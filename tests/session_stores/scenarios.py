"""Realistic session logs, built through the public Session API as the agent loop
would write them: turns with streamed chunks, tool calls and their results."""

from __future__ import annotations

from dsh_llm import (
    TextBlock,
    ToolCallBlock,
    create_assistant_message,
    create_tool_result_message,
    create_user_message,
)
from dsh_session._session import Session
from dsh_session.stores import SessionStore

MODEL = {"provider": "test", "model": "scripted"}


def open_turn(session: Session, prompt: str = "hello") -> int:
    """Append ``turn/start``, ``step/start`` and the prompt; return the turn number."""
    turn = session.last_turn + 1
    session.append("turn/start", {"turn": turn})
    session.append("step/start", {"turn": turn, "step": 1})
    session.append("user/message", create_user_message(content=prompt, source={"kind": "user"}))
    if session.request_header is None:
        session.append("request/header", {"header": {"config": MODEL}, "reason": "initial"})
    return turn


def request_tools(session: Session, turn: int, step: int, call_ids: list[str]) -> None:
    """Stream and append an assistant message asking for the given tool calls."""
    first = session.seq
    session.append(
        "assistant/chunk",
        {"turn": turn, "step": step, "chunk": {"type": "text-delta", "index": 0, "text": "ok"}},
    )
    blocks = [TextBlock(text="ok")] + [
        ToolCallBlock(call_id=call_id, name="lookup", arguments='{"q": 1}') for call_id in call_ids
    ]
    session.append(
        "assistant/message",
        {
            "turn": turn,
            "step": step,
            "message": create_assistant_message(content=blocks, source=MODEL),
        },
        source_event_seqs=[first],
    )


def start_tool(session: Session, turn: int, step: int, call_id: str) -> int:
    """Append the ``tool/call`` of a requested call; return its seq."""
    call = session.append(
        "tool/call",
        {"turn": turn, "step": step, "call_id": call_id, "name": "lookup", "arguments": '{"q": 1}'},
    )
    return call.seq


def finish_tool(
    session: Session, turn: int, step: int, call_id: str, call_seq: int, output: str = "42"
) -> None:
    """Append the ``tool/result`` of a started call."""
    result = create_tool_result_message(call_id=call_id, content=output)
    session.append(
        "tool/result",
        {"turn": turn, "step": step, "message": result},
        source_event_seqs=[call_seq],
    )


def run_tool(session: Session, turn: int, step: int, call_id: str, output: str = "42") -> None:
    """Append ``tool/call`` and its ``tool/result``."""
    finish_tool(session, turn, step, call_id, start_tool(session, turn, step, call_id), output)


def answer(session: Session, turn: int, step: int, text: str = "done") -> None:
    """Stream a final text answer in ``step`` and close the step and the turn."""
    first = session.seq
    for piece in text.split(" "):
        session.append(
            "assistant/chunk",
            {
                "turn": turn,
                "step": step,
                "chunk": {"type": "text-delta", "index": 0, "text": piece},
            },
        )
    session.append(
        "assistant/message",
        {
            "turn": turn,
            "step": step,
            "message": create_assistant_message(content=text, source=MODEL),
        },
        source_event_seqs=range(first, session.seq),
    )
    session.append("step/end", {"turn": turn, "step": step})
    session.append("turn/end", {"turn": turn, "reason": {"kind": "completed"}})


def complete_turn(session: Session, *, tool_output: str = "42") -> None:
    """One whole turn: a tool step with two calls, then a final text step."""
    turn = open_turn(session, f"question {session.last_turn + 1}")
    calls = [f"call-{turn}-a", f"call-{turn}-b"]
    request_tools(session, turn, 1, calls)
    for call_id in calls:
        run_tool(session, turn, 1, call_id, tool_output)
    session.append("step/end", {"turn": turn, "step": 1})
    session.append("step/start", {"turn": turn, "step": 2})
    answer(session, turn, 2, "the answer is forty two")


def interrupted_turn(session: Session) -> tuple[str, str]:
    """A turn cut by a crash: two calls requested, the first started, none answered.
    Returns the (started, not started) call ids."""
    turn = open_turn(session, "this turn will crash")
    started, unstarted = f"call-{turn}-started", f"call-{turn}-unstarted"
    request_tools(session, turn, 1, [started, unstarted])
    start_tool(session, turn, 1, started)
    return started, unstarted


async def store_completed_turn(store: SessionStore) -> Session:
    """A new session holding one completed turn, flushed to ``store`` and detached from
    it, so that the test can load it back."""
    session = Session.create()
    store.attach(session)
    complete_turn(session)
    await store.flush(session)
    store.detach(session)
    return session


async def loads_back(store: SessionStore, session: Session) -> Session:
    """Load ``session`` through ``store`` and check that the stored prefix is exactly
    the events it was given; return the loaded session."""
    loaded = await store.load(session.id)
    assert list(loaded.events[: session.seq]) == list(session.events)
    return loaded
