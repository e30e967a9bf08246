"""The pre-step waterfall: handlers that decide what enters each step.

Handlers compose like middleware: the first registered is the outermost, each may
call ``call_next`` (optionally with a modified :class:`PreStep`) and returns the
decision. The innermost default enters the batch it is given unchanged.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeAlias

from dsh_llm._messages import UserMessage

if TYPE_CHECKING:
    from dsh_agent._agent import Agent


@dataclass(frozen=True, slots=True)
class PreStep:
    """What a pre-step handler sees: the claimed batch of a proposed step."""

    agent: Agent
    """The agent whose step this is."""
    messages: tuple[UserMessage, ...]
    """The claimed messages, next-step items first: the caller's very objects."""
    turn: int
    step: int


@dataclass(frozen=True, slots=True)
class Enter:
    """Open the step with ``messages`` as its complete batch, in order. Rewrite a
    message with ``replace_content`` (same id); add context as a newly created
    ``UserMessage`` (new id)."""

    messages: Sequence[UserMessage] = ()

    def __post_init__(self) -> None:
        messages = tuple(self.messages)
        for index, message in enumerate(messages):
            if not isinstance(message, UserMessage):
                raise TypeError(
                    f"Enter.messages[{index}] must be a UserMessage, not {type(message).__name__}"
                )
        object.__setattr__(self, "messages", messages)


@dataclass(frozen=True, slots=True)
class Reject:
    """Open no step: the turn ends ``blocked`` and the claimed batch is dropped."""


PreStepDecision: TypeAlias = Enter | Reject


class CallNext(Protocol):
    """Runs the rest of the waterfall, with ``step`` or the current one."""

    def __call__(self, step: PreStep | None = None, /) -> Awaitable[PreStepDecision]: ...


PreStepHandler: TypeAlias = Callable[[PreStep, CallNext], Awaitable[PreStepDecision]]
"""``async def handler(step, call_next) -> Enter | Reject``."""


async def run_pre_step(handlers: Sequence[PreStepHandler], step: PreStep) -> PreStepDecision:
    """Run ``handlers`` (outermost first) over ``step`` and return the decision."""

    async def call(index: int, current: PreStep) -> PreStepDecision:
        if index == len(handlers):
            return Enter(current.messages)

        def call_next(next_step: PreStep | None = None, /) -> Awaitable[PreStepDecision]:
            return call(index + 1, current if next_step is None else next_step)

        decision = await handlers[index](current, call_next)
        if not isinstance(decision, Enter | Reject):
            raise TypeError(
                f"pre-step handler {index} returned {type(decision).__name__}, "
                "expected Enter or Reject"
            )
        return decision

    return await call(0, step)
