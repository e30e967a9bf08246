"""``TemporalAgent``: a dsh agent whose model steps and tool calls are Temporal
activities: run from workflow code (:mod:`._scheduler`), registered by a worker
(:mod:`._activities`), or driven by its ready workflow per session
(:mod:`._session_workflow`)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection
from datetime import timedelta
from typing import Any, Literal

from temporalio import workflow
from temporalio.client import Client, WorkflowHandle

with workflow.unsafe.imports_passed_through():
    from dsh_agent._config import AgentConfig
    from dsh_agent.temporal._payloads import SessionInput, TurnOutcome
    from dsh_agent.temporal._scheduler import (
        AgentRef,
        Decide,
        StepScheduler,
        TurnControl,
        session_workflow_id,
    )
    from dsh_agent.temporal._session_workflow import SessionWorkflow, SessionWorkflowInput


class TemporalAgent:
    """A dsh agent run durably on Temporal: ``await agent.run(session_id, text)`` from
    a workflow; ``agent.activities()`` for the worker.

    ``store_url`` names the store of the sessions (workflow code needs it; every
    activity opens it). ``config`` builds the agent's options on the worker (called
    once, on first use; its ``store`` is ignored). Tools named in
    ``idempotent_tools`` run again, with the same ``ToolContext.idempotency_key``,
    when a worker died while running them; any other tool cut off that way is
    answered ``TOOL_OUTCOME_UNKNOWN``.

    Retries: a failed model request is retried inside its activity by dsh's logged
    retry (``config().retry``), with the waits in the log; Temporal retries only an
    activity that did not complete (its worker died, the store was unreachable), with
    its own durable timers. One failure is never waited for by both.
    """

    def __init__(
        self,
        name: str,
        *,
        store_url: str | None = None,
        config: Callable[[], AgentConfig[Any]] | None = None,
        idempotent_tools: Collection[str] = (),
        start_to_close: timedelta = timedelta(minutes=10),
        heartbeat: timedelta = timedelta(seconds=10),
    ) -> None:
        self._name = name
        self._store_url = store_url
        self._start_to_close = start_to_close
        self._heartbeat = heartbeat
        self._config = config
        self._built: AgentConfig[Any] | None = None
        self._idempotent_tools = frozenset(idempotent_tools)

    @property
    def name(self) -> str:
        return self._name

    @property
    def ref(self) -> AgentRef:
        """What workflow code schedules this agent's activities with."""
        if self._store_url is None:
            raise ValueError(
                f"TemporalAgent {self._name!r} was built without store_url=: workflow code "
                "needs it (a worker's agent, which only registers activities, does not)"
            )
        return AgentRef(
            name=self._name,
            store_url=self._store_url,
            start_to_close_seconds=self._start_to_close.total_seconds(),
            heartbeat_seconds=self._heartbeat.total_seconds(),
        )

    def activities(self) -> list[Callable[..., Any]]:
        """The activities a worker registers (``Worker(..., activities=...)``)."""
        if self._config is None:
            raise ValueError(
                f"TemporalAgent {self.name!r} was built without config=: only a worker's "
                "agent needs it, and activities() is what a worker registers"
            )
        from dsh_agent.temporal._activities import build_activities

        return build_activities(self.name, self._agent_config, self._idempotent_tools)

    async def send(
        self,
        client: Client,
        session_id: str,
        text: str,
        *,
        task_queue: str,
        kind: Literal["followup", "steer"] = "followup",
        message_id: str | None = None,
        continue_after_turns: int = 50,
    ) -> WorkflowHandle[SessionWorkflow, None]:
        """Client code: signal ``text`` to the session's ready workflow
        (:class:`SessionWorkflow`, id ``dsh-session-<session_id>``), starting it when it
        is not running (signal-with-start). ``kind="followup"`` queues it for a turn of
        its own; ``kind="steer"`` puts it into the running turn's next step (the next
        turn's first step when idle). ``message_id`` (a new UUID when not given) makes
        sending again safe: the same id is stored once. The handle takes
        ``approve``/``deny``/``cancel`` signals and answers the ``status`` query."""
        given = SessionWorkflowInput(self.ref, session_id, continue_after_turns)
        message = SessionInput(message_id or str(uuid.uuid4()), text)
        return await client.start_workflow(
            SessionWorkflow.run,
            given,
            id=session_workflow_id(session_id),
            task_queue=task_queue,
            start_signal=kind,
            start_signal_args=[message],
        )

    @staticmethod
    async def cancel(client: Client, session_id: str) -> None:
        """Client code: abort the running turn of the session's ready workflow: the
        activity in flight finishes, nothing more of the turn is scheduled, and the
        log ends the turn ``aborted`` (nothing happens when the agent is idle)."""
        handle = client.get_workflow_handle(session_workflow_id(session_id))
        await handle.signal(SessionWorkflow.cancel)

    def _agent_config(self) -> AgentConfig[Any]:
        if self._built is None:
            assert self._config is not None
            self._built = self._config()
        return self._built

    async def run(
        self,
        session_id: str,
        message: str,
        *,
        decide: Decide | None = None,
        control: TurnControl | None = None,
    ) -> TurnOutcome:
        """Workflow code: deliver ``message`` to the session and run its turn to the end.
        A call that needs approval is put to ``decide``; without it such a call fails
        the run with an ``ApplicationError``. ``control`` (filled by the workflow's own
        signal handlers) steers the turn or cancels it between activities."""
        return await StepScheduler(self.ref).run(session_id, message, decide, control)


__all__ = [
    "TemporalAgent",
]
