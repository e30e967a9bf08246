"""Driving an agent from sync code: ``run_sync`` and the ``SyncAgent`` chat driver.

The agent runs on an event loop of its own, in a private thread, so both work from a
plain script and from a thread that already runs a loop (a Jupyter cell), where
``asyncio.run`` would refuse. Nothing outlives its owner: ``run_sync`` joins its
thread and closes its loop before returning; ``SyncAgent.close()`` closes the agent,
and the last sync agent on a loop (an edit's branch shares it) closes the loop (async
generators and the default executor included) and joins the thread.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from concurrent.futures import Future
from functools import partial
from types import TracebackType
from typing import Any, Self, TypeAlias, TypeVar, Unpack, overload

from pydantic import BaseModel

from dsh_agent._agent import Agent
from dsh_agent._engine.run import ModelT, run_verb, run_with
from dsh_agent._run_options import OutputRunOptions, RunOptions, RunPrompt, user_prompt
from dsh_agent._run_result import RunResult
from dsh_agent.approvals._gate import PendingApproval
from dsh_agent.errors import AgentError
from dsh_agent.streaming._loop_thread import LoopThread
from dsh_agent.streaming._stream import DEFAULT_MAX_PENDING, UpdateStream
from dsh_agent.streaming._updates import AgentUpdate
from dsh_llm import CallId, ContentInput
from dsh_llm._ids import MessageId

T = TypeVar("T")

AgentFactory: TypeAlias = Callable[[], Agent | Awaitable[Agent]]
"""Builds the agent on the private loop (so its store and adapter live there too)."""


async def _build(factory: AgentFactory) -> Agent:
    built = factory()
    return await built if inspect.isawaitable(built) else built


def _in_private_thread(coroutine: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run ``coroutine()`` with ``asyncio.run`` in a new thread; wait and return."""
    outcome: Future[T] = Future()

    def main() -> None:
        try:
            outcome.set_result(asyncio.run(coroutine()))
        except BaseException as error:  # handed to the caller's thread
            outcome.set_exception(error)

    thread = threading.Thread(target=main, name="dsh-run-sync")
    thread.start()
    thread.join()
    return outcome.result()


@overload
def run_sync(
    agent: Agent | AgentFactory,
    message: RunPrompt,
    *,
    output_type: None = None,
    **options: Unpack[RunOptions],
) -> RunResult: ...


@overload
def run_sync(
    agent: Agent | AgentFactory,
    message: RunPrompt,
    *,
    output_type: type[ModelT],
    **options: Unpack[OutputRunOptions],
) -> RunResult[ModelT]: ...


def run_sync(
    agent: Agent | AgentFactory,
    message: RunPrompt,
    *,
    output_type: type[BaseModel] | None = None,
    **options: Unpack[OutputRunOptions],
) -> RunResult[Any]:
    """:func:`~dsh_agent.run` from sync code, with the same options and errors
    (``TurnFailed`` and ``OutputValidationError`` are raised in the caller's thread).
    With a factory, the agent is built, run once and closed on a private loop. With
    an agent, it must be idle and tied to no other loop (no turn running, no store
    bound to a loop); it is left open. For a conversation of several turns, use
    :class:`SyncAgent`."""
    message = user_prompt(message, "run_sync")  # refused before a factory builds anything
    if callable(agent):
        factory = agent

        async def owned() -> RunResult[Any]:
            built = await _build(factory)
            try:
                return await run_with(built, message, output_type, options)
            finally:
                await built.aclose()

        return _in_private_thread(owned)
    given = agent
    return _in_private_thread(lambda: run_with(given, message, output_type, options))


class SyncAgent:
    """A chat driven from sync code: the agent lives on a private event loop thread.

    ``with SyncAgent(factory) as chat: chat.run(message)``; ``chat.stream(message)``
    yields the typed updates as they happen, ``chat.updates()`` those of whatever runs
    next. Leaving the ``with`` (or ``close()``)
    closes the agent and stops and joins the thread.
    """

    def __init__(self, factory: AgentFactory) -> None:
        self._thread = LoopThread()
        self._closed = False
        try:
            self._agent = self._call(_build(factory))
        except BaseException:
            self._thread.release()
            raise

    @classmethod
    def _beside(cls, thread: LoopThread, agent: Agent) -> SyncAgent:
        """A sync agent for ``agent``, already built on ``thread``'s loop."""
        made = cls.__new__(cls)
        thread.retain()
        made._thread, made._closed, made._agent = thread, False, agent
        return made

    def _call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return self._thread.call(coroutine)

    def _check_open(self) -> None:
        if self._closed:
            raise AgentError("this SyncAgent is closed")

    @property
    def agent(self) -> Agent:
        """The agent (touch it only through this object, or on its loop)."""
        return self._agent

    @overload
    def run(
        self,
        message: RunPrompt,
        *,
        output_type: None = None,
        **options: Unpack[RunOptions],
    ) -> RunResult: ...

    @overload
    def run(
        self,
        message: RunPrompt,
        *,
        output_type: type[ModelT],
        **options: Unpack[OutputRunOptions],
    ) -> RunResult[ModelT]: ...

    def run(
        self,
        message: RunPrompt,
        *,
        output_type: type[BaseModel] | None = None,
        **options: Unpack[OutputRunOptions],
    ) -> RunResult[Any]:
        """Send ``message`` and wait until the agent is idle; the options and errors
        are :func:`~dsh_agent.run`'s."""
        self._check_open()
        return self._call(run_with(self._agent, message, output_type, options))

    def stream(self, message: RunPrompt) -> Iterator[AgentUpdate]:
        """Send ``message`` (a ``UserMessage``, or text or content blocks, as for
        :meth:`run`) and yield its updates until idle, each as it happens. Leaving the
        loop early stops observing (the turn goes on)."""
        self._check_open()
        message = user_prompt(message, "stream")

        async def open_stream() -> UpdateStream:
            return self._agent.stream(message)

        return self._iterate(self._call(open_stream()))

    def updates(
        self,
        *,
        until_idle: bool = False,
        max_pending: int = DEFAULT_MAX_PENDING,
        merge_deltas: bool = True,
    ) -> Iterator[AgentUpdate]:
        """:meth:`~dsh_agent.AgentLoop.updates` from sync code: subscribed before it
        returns, so call it, then a verb (:meth:`regenerate`, :meth:`approve`, ...), and
        read the updates in another thread as they happen or, ``until_idle``, after the
        verb returns (they are buffered, up to ``max_pending``). Leaving the loop early
        stops observing."""
        self._check_open()

        async def open_updates() -> UpdateStream:
            return self._agent.updates(
                until_idle=until_idle, max_pending=max_pending, merge_deltas=merge_deltas
            )

        return self._iterate(self._call(open_updates()))

    def _iterate(self, updates: UpdateStream) -> Iterator[AgentUpdate]:
        """``updates`` read on the agent's loop, one update at a time."""
        try:
            while True:
                try:
                    yield self._call(updates.__anext__())
                except StopAsyncIteration:
                    return
        finally:
            if not self._thread.stopped:
                self._call(updates.aclose())

    # --- branching and approvals -----------------------------------------------------------

    def regenerate(self, *, raise_on_error: bool = True) -> RunResult:
        """Answer the last prompt again (:meth:`~dsh_agent.AgentLoop.regenerate`) and
        wait until the agent is idle; the interval as :func:`~dsh_agent.run` reports it."""
        self._check_open()
        agent = self._agent
        return self._call(run_verb(agent, agent.regenerate, raise_on_error=raise_on_error))

    def edit(self, message_id: MessageId | str, content: ContentInput) -> SyncAgent:
        """Send ``content`` in place of the prompt ``message_id`` on a fork of the
        session (:meth:`~dsh_agent.AgentLoop.edit`), wait until the branch is idle and
        return it as a sync agent on the same loop; this one is left as it is. Close
        both (the loop stops with the last)."""
        self._check_open()

        async def branch_off() -> Agent:
            branch = await self._agent.edit(message_id, content)
            await branch.when_idle()
            return branch

        return SyncAgent._beside(self._thread, self._call(branch_off()))

    @property
    def pending_approvals(self) -> tuple[PendingApproval, ...]:
        """The tool calls waiting for a person's decision, in model order."""
        self._check_open()

        async def pending() -> tuple[PendingApproval, ...]:
            return self._agent.pending_approvals

        return self._call(pending())

    def approve(self, call_id: CallId, *, raise_on_error: bool = True) -> RunResult:
        """Let the waiting call ``call_id`` run once and wait until the agent is idle
        again (the turn goes on); the interval as :func:`~dsh_agent.run` reports it."""
        self._check_open()
        agent = self._agent
        verb = partial(agent.approve, call_id)
        return self._call(run_verb(agent, verb, raise_on_error=raise_on_error))

    def deny(
        self, call_id: CallId, reason: str | None = None, *, raise_on_error: bool = True
    ) -> RunResult:
        """Refuse the waiting call ``call_id`` (the model gets ``reason``) and wait
        until the agent is idle again, as :meth:`approve` does."""
        self._check_open()
        agent = self._agent
        verb = partial(agent.deny, call_id, reason)
        return self._call(run_verb(agent, verb, raise_on_error=raise_on_error))

    def close(self) -> None:
        """Close the agent; the last sync agent on the loop also stops it and joins its
        thread. Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            self._call(self._agent.aclose())
        finally:
            self._thread.release()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


__all__ = [
    "AgentFactory",
    "SyncAgent",
    "run_sync",
]
