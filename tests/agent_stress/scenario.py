"""One randomized, tool-using conversation cancelled at a chosen point.

A run is fully determined by its seed: the model's answers, the tools' durations and
behaviour under cancellation, the slow pre-step handler, and where the cancel lands
(pre-step, mid-stream, mid-tool, at a random moment, or not at all). The adapter
records each request that produced at least one chunk, so the log's reconstruction can
be compared with what the model really received.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from dsh_agent import AgentLoop, CallNext, PreStep, PreStepDecision, Tool, ToolContext, tool
from dsh_llm import (
    GenerateRequest,
    LlmFailure,
    StreamChunk,
    ToolResultMessage,
    UserMessage,
    create_user_message,
)
from dsh_llm.testing import FunctionAdapter, Reply, reply
from dsh_session import Session, SessionEvent

CancelPoint = Literal["pre-step", "stream", "tool", "timer", "none"]
CANCEL_POINTS: tuple[CancelPoint, ...] = ("pre-step", "stream", "tool", "timer", "none")

CHUNK_DELAY = 0.0002
"""Seconds the model waits before each chunk: enough for a cancel to land mid-stream."""


class RecordingAdapter:
    """Wraps a FunctionAdapter and keeps each request whose stream yielded a chunk:
    exactly the requests the log must be able to rebuild."""

    def __init__(self, inner: FunctionAdapter) -> None:
        self.inner = inner
        self.sent: list[GenerateRequest] = []

    async def stream(self, request: GenerateRequest) -> AsyncIterator[StreamChunk]:
        first = True
        async for chunk in self.inner.stream(request):
            if first:
                self.sent.append(request)
                first = False
            yield chunk


@dataclass
class Run:
    """The state of one seeded run; :meth:`play` drives it to quiescence."""

    seed: int
    check_requests: bool = False
    rng: random.Random = field(init=False)
    point: CancelPoint = field(init=False)
    session: Session = field(init=False)
    adapter: RecordingAdapter = field(init=False)
    agent: AgentLoop = field(init=False)
    phase: str = field(init=False, default="idle")
    """What the agent is doing: ``pre-step``, ``stream``, ``tool`` or ``other``."""
    landed: str | None = field(init=False, default=None)
    """The phase the cancel landed in (``None``: it never fired)."""
    _armed: bool = field(init=False, default=True)
    _timer: asyncio.TimerHandle | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.point = self.rng.choice(CANCEL_POINTS)
        self.session = Session.create()
        self.adapter = RecordingAdapter(FunctionAdapter(self._respond, delay=CHUNK_DELAY))
        self.agent = AgentLoop(
            session=self.session,
            adapter=self.adapter,
            provider="stress",
            model="stress-1",
            system="You are tested.",
            tools=self._tools(),
            check_requests=self.check_requests,
            retry=None,  # a scripted failure ends its turn (retries: tests/agent_retry)
        )
        if self.rng.random() < 0.5:
            self.agent.on_pre_step(self._slow_pre_step)

    # --- the model -------------------------------------------------------------------

    def _respond(self, request: GenerateRequest) -> Reply | LlmFailure | str:
        """Call tools for a few rounds after each prompt, then answer in text."""
        rounds = 0
        for message in reversed(request.messages):
            if isinstance(message, ToolResultMessage):
                rounds += 1
            elif isinstance(message, UserMessage):
                break
        roll = self.rng.random()
        if roll < 0.03:
            return LlmFailure(message="the model is overloaded", code="RATE_LIMIT")
        if rounds >= 3 or roll < 0.25:
            return reply(text=self._words(), reasoning=self._words() if roll < 0.15 else None)
        calls = [self._call() for _ in range(self.rng.randint(1, 3))]
        return reply(text=self._words() if roll < 0.6 else None, tool_calls=calls)

    def _words(self) -> str:
        return " ".join(self.rng.choice(("alpha", "beta", "gamma", "delta")) for _ in range(6))

    def _call(self) -> dict[str, Any]:
        roll = self.rng.random()
        if roll < 0.05:
            return {"name": "missing", "arguments": {}}
        if roll < 0.1:
            return {"name": "wait", "arguments": '{"ms": '}
        name = self.rng.choice(("wait", "stubborn", "quitter"))
        return {"name": name, "arguments": {"ms": self.rng.randint(0, 3)}}

    # --- tools and pre-step ----------------------------------------------------------

    def _tools(self) -> list[Tool]:
        started = self._tool_started

        @tool
        async def wait(ms: int, ctx: ToolContext) -> str:
            """Wait ``ms`` milliseconds; stop early when the turn is cancelled."""
            started()
            try:
                await asyncio.wait_for(ctx.cancelled.wait(), ms / 1000)
            except TimeoutError:
                return "waited"
            finally:
                self.phase = "other"
            return "stopped early"

        @tool
        async def stubborn(ms: int) -> str:
            """Wait ``ms`` milliseconds whatever happens."""
            started()
            await asyncio.sleep(ms / 1000)
            self.phase = "other"
            return "done anyway"

        @tool
        async def quitter(ms: int, ctx: ToolContext) -> str:
            """Wait ``ms`` milliseconds; give up by raising when cancelled."""
            started()
            await asyncio.sleep(ms / 1000)
            self.phase = "other"
            if ctx.cancelled.is_set():
                raise asyncio.CancelledError
            return "finished"

        return [wait, stubborn, quitter]

    async def _slow_pre_step(self, step: PreStep, call_next: CallNext) -> PreStepDecision:
        self.phase = "pre-step"
        if self.point == "pre-step":
            self._fire_soon(self.rng.uniform(0, 0.002))
        try:
            await asyncio.sleep(self.rng.uniform(0, 0.002))
        finally:
            self.phase = "other"
        return await call_next()

    def _tool_started(self) -> None:
        self.phase = "tool"
        if self.point == "tool":
            self._fire_soon(self.rng.uniform(0, 0.002))

    def _on_event(self, event: SessionEvent) -> None:
        if event.type != "assistant/chunk":
            if event.type in ("assistant/message", "step/end", "turn/end"):
                self.phase = "other"
            return
        self.phase = "stream"
        if self.point == "stream" and self.rng.random() < 0.2:
            self._fire_soon(0)

    # --- cancelling ------------------------------------------------------------------

    def _fire_soon(self, delay: float) -> None:
        """Cancel once, ``delay`` seconds from now (never from inside a callback that
        is itself appending to the log)."""
        if self._armed:
            self._armed = False
            self._timer = asyncio.get_running_loop().call_later(delay, self._cancel)

    def _cancel(self) -> None:
        self.landed = self.phase if self.agent.status == "running" else "idle"
        self.agent.cancel("user", keep_inbox=self.rng.random() < 0.3)
        if self.rng.random() < 0.5:  # a prompt that arrives while the turn aborts
            self.agent.followup(self._prompt())

    def _prompt(self) -> UserMessage:
        return create_user_message(content=self._words(), source={"kind": "user"})

    async def play(self) -> None:
        """Send one to three prompts (the later ones while the first runs), arm the
        cancel, and wait until the agent is idle."""
        unsubscribe = self.session.subscribe(self._on_event)
        try:
            self.agent.followup(self._prompt())
            if self.point == "timer":
                self._fire_soon(self.rng.uniform(0, 0.03))
            for _ in range(self.rng.randint(0, 2)):
                await asyncio.sleep(self.rng.uniform(0, 0.005))
                deliver: Callable[[UserMessage], None] = self.rng.choice(
                    (self.agent.followup, self.agent.steer, self.agent.inject)
                )
                deliver(self._prompt())
            await self.agent.when_idle()
        finally:
            # A cancel still pending once the agent is idle must not fire later: it would
            # wake a new turn after play() returned (wait_for resumes its caller one loop
            # iteration after play ends, so the gap is real) and the log would be checked
            # with that turn open.
            if self._timer is not None:
                self._timer.cancel()
            unsubscribe()
