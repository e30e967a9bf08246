"""The tool calls of the step a turn is in, read back from the log: what a resumed
tool phase goes on with, and which calls already have their result."""

from __future__ import annotations

from dataclasses import dataclass

from dsh_llm import CallId
from dsh_llm._content import ToolCallBlock
from dsh_session._session import Session
from dsh_session.events import AssistantMessageEvent, StepStartEvent, ToolResultEvent


@dataclass(frozen=True, slots=True)
class OpenStep:
    """The open step of the open turn."""

    turn: int
    step: int
    calls: tuple[ToolCallBlock, ...]
    """The calls its assistant message requested, in model order."""
    answered: frozenset[CallId]
    """The ids of the calls that have a ``tool/result``."""
    start: int
    """The index of its ``step/start`` in the log."""

    @property
    def unanswered(self) -> tuple[ToolCallBlock, ...]:
        return tuple(call for call in self.calls if call.call_id not in self.answered)


def open_step(session: Session) -> OpenStep | None:
    """The open step, found from the end of the log, or ``None`` outside a step."""
    turn, step = session.open_turn, session.open_step
    if turn is None or step is None:
        return None
    calls: list[ToolCallBlock] = []
    answered: set[CallId] = set()
    events = session.events
    start = 0
    for index, event in zip(range(len(events) - 1, -1, -1), reversed(events), strict=True):
        if isinstance(event, StepStartEvent):
            start = index
            break
        if isinstance(event, AssistantMessageEvent) and event.surface_op == "append":
            blocks = event.data.message.content
            calls[:0] = [block for block in blocks if isinstance(block, ToolCallBlock)]
        elif isinstance(event, ToolResultEvent) and event.surface_op == "append":
            answered.add(event.data.message.source.call_id)
    return OpenStep(
        turn=turn, step=step, calls=tuple(calls), answered=frozenset(answered), start=start
    )


__all__ = [
    "OpenStep",
    "open_step",
]
