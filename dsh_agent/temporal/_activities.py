"""The activities a worker registers for one :class:`TemporalAgent`.

Each opens the store its input names, does one piece of work (:mod:`._steps`) and closes
the store, heartbeating meanwhile so that a worker that dies is noticed within the
heartbeat timeout and the activity runs again elsewhere. A piece that does not fit the
log (:class:`~dsh_agent.errors.DurableStepError`) fails without retry; anything else
(a worker gone, a store unreachable, a session still owned) is retried by Temporal.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection
from datetime import timedelta
from typing import Any, TypeVar

from temporalio import activity
from temporalio.exceptions import ApplicationError

from dsh_agent._config import AgentConfig
from dsh_agent.errors import DurableStepError
from dsh_agent.temporal import _abort, _inputs, _steps
from dsh_agent.temporal._payloads import (
    AbortInput,
    DecisionInput,
    DeliverInput,
    ModelStepInput,
    StepReport,
    ToolStepInput,
)
from dsh_session.stores import SessionStore, open_store

_T = TypeVar("_T")
_DEFAULT_BEAT = timedelta(seconds=1)


async def _heartbeating(work: Awaitable[_T]) -> _T:
    """Await ``work``, heartbeating three times per heartbeat timeout meanwhile."""
    timeout = activity.info().heartbeat_timeout or _DEFAULT_BEAT * 3
    interval = max(timeout.total_seconds() / 3, 0.05)
    task = asyncio.ensure_future(work)
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=interval)
            if done:
                return task.result()
            activity.heartbeat()
    finally:
        if not task.done():
            task.cancel()


async def _in_store(store_url: str, piece: Callable[[SessionStore], Awaitable[_T]]) -> _T:
    store = open_store(store_url)
    try:
        return await _heartbeating(piece(store))
    except DurableStepError as error:
        raise ApplicationError(str(error), type="DurableStepError", non_retryable=True) from error
    finally:
        await store.close()


def build_activities(
    name: str, config: Callable[[], AgentConfig[Any]], idempotent_tools: Collection[str]
) -> list[Callable[..., Any]]:
    """The five activities of the agent ``name``, named ``<name>.<piece>``."""

    @activity.defn(name=f"{name}.deliver")
    async def deliver(given: DeliverInput) -> StepReport:
        return await _in_store(
            given.store_url,
            lambda store: _inputs.deliver(
                store, config(), given.session_id, given.message_id, given.text, given.lane
            ),
        )

    @activity.defn(name=f"{name}.model_step")
    async def model_step(given: ModelStepInput) -> StepReport:
        return await _in_store(
            given.store_url,
            lambda store: _steps.model_step(
                store, config(), given.session_id, given.from_seq, given.message_ids
            ),
        )

    @activity.defn(name=f"{name}.tool_call")
    async def tool_call(given: ToolStepInput) -> StepReport:
        return await _in_store(
            given.store_url,
            lambda store: _steps.tool_call(
                store, config(), given.session_id, given.from_seq, given.call_id, idempotent_tools
            ),
        )

    @activity.defn(name=f"{name}.decide")
    async def decide(given: DecisionInput) -> StepReport:
        return await _in_store(
            given.store_url,
            lambda store: _inputs.decide(
                store,
                config(),
                given.session_id,
                given.from_seq,
                given.call_id,
                given.approved,
                given.reason,
            ),
        )

    @activity.defn(name=f"{name}.abort")
    async def abort(given: AbortInput) -> StepReport:
        return await _in_store(
            given.store_url,
            lambda store: _abort.abort(store, config(), given.session_id, given.from_seq),
        )

    return [deliver, model_step, tool_call, decide, abort]


__all__ = [
    "build_activities",
]
