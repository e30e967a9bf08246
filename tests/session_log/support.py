"""Building blocks for session tests: messages and turns appended through the public
Session API the way the agent loop appends them."""

from __future__ import annotations

from dataclasses import dataclass

from dsh_llm import (
    AssistantMessage,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
    create_assistant_message,
    create_tool_result_message,
    create_user_message,
)
from dsh_session import Session, SessionEvent

MODEL = {"provider": "test", "model": "test-model"}


def user(text: str = "hello") -> UserMessage:
    return create_user_message(content=text, source={"kind": "user"})


def assistant(text: str | None = None, *, calls: tuple[str, ...] = ()) -> AssistantMessage:
    blocks: list[TextBlock | ToolCallBlock] = [TextBlock(text=text)] if text else []
    blocks += [ToolCallBlock(call_id=call, name="lookup", arguments="{}") for call in calls]
    return create_assistant_message(content=blocks, source=MODEL)


def result(call_id: str, text: str = "42") -> ToolResultMessage:
    return create_tool_result_message(call_id=call_id, content=text)


def start_turn(session: Session, prompt: UserMessage | None = None) -> tuple[int, SessionEvent]:
    """Open the next turn and its step 1 with a prompt; return the turn and the prompt event."""
    turn = session.last_turn + 1
    session.append("turn/start", {"turn": turn})
    session.append("step/start", {"turn": turn, "step": 1})
    return turn, session.append("user/message", prompt or user(f"question {turn}"))


def request_calls(session: Session, turn: int, step: int, *call_ids: str) -> SessionEvent:
    return session.append(
        "assistant/message",
        {"turn": turn, "step": step, "message": assistant(calls=call_ids)},
        source_event_seqs=[],
    )


def run_call(
    session: Session, turn: int, step: int, call_id: str, text: str = "42"
) -> SessionEvent:
    call = session.append(
        "tool/call",
        {"turn": turn, "step": step, "callId": call_id, "name": "lookup", "arguments": "{}"},
    )
    return session.append(
        "tool/result",
        {"turn": turn, "step": step, "message": result(call_id, text)},
        source_event_seqs=[call.seq],
    )


def finish_turn(session: Session, turn: int, step: int, text: str = "done") -> SessionEvent:
    answer = session.append(
        "assistant/message", {"turn": turn, "step": step, "message": assistant(text)}
    )
    session.append("step/end", {"turn": turn, "step": step})
    session.append("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
    return answer


@dataclass(frozen=True)
class ToolTurn:
    """The seqs of one complete turn: prompt, a call requested and answered, a final answer."""

    turn: int
    prompt: SessionEvent
    request: SessionEvent
    result: SessionEvent
    answer: SessionEvent


def tool_turn(session: Session, call_id: str = "call-1") -> ToolTurn:
    turn, prompt = start_turn(session)
    request = request_calls(session, turn, 1, call_id)
    tool_result = run_call(session, turn, 1, call_id)
    session.append("step/end", {"turn": turn, "step": 1})
    session.append("step/start", {"turn": turn, "step": 2})
    answer = finish_turn(session, turn, 2)
    return ToolTurn(turn, prompt, request, tool_result, answer)


class Recorder:
    """A session observer that remembers what it saw."""

    def __init__(self) -> None:
        self.events: list[SessionEvent] = []

    def __call__(self, event: SessionEvent) -> None:
        self.events.append(event)
