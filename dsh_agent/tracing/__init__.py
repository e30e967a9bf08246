"""OpenTelemetry traces of an agent, tied to its log: ``trace_agent(agent)``.

Needs the ``otel`` extra (``opentelemetry-api``); nothing here is imported by
``dsh_agent`` itself, so an agent that is not traced pays nothing. Spans follow the
GenAI semantic conventions — ``invoke_agent`` per turn, ``chat {model}`` per model
request (one per attempt when a request is retried), ``execute_tool {name}`` per tool
call — and carry ``dsh.session.id``, the seqs of the events they cover and the
``MessageId`` of every message entering and leaving each request. Message content is
recorded only with ``include_content=True``.
"""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType
from typing import Self

try:
    from opentelemetry import trace
except ImportError as missing:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "dsh_agent.tracing needs OpenTelemetry: pip install 'dsh-sdk[otel]'"
    ) from missing

from dsh_agent._agent import Agent
from dsh_agent.tracing._spans import SpanRecorder

INSTRUMENTATION_NAME = "dsh_agent"

__all__ = ["INSTRUMENTATION_NAME", "AgentTracing", "trace_agent"]


class AgentTracing:
    """The tracing of one agent; :meth:`close` (or leaving the ``with`` block) stops it
    and ends any span still open."""

    def __init__(self, recorder: SpanRecorder, unsubscribe: Callable[[], None]) -> None:
        self._recorder = recorder
        self._unsubscribe: Callable[[], None] | None = unsubscribe

    def close(self) -> None:
        """Stop observing the agent's session; ends open spans. Idempotent."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
            self._recorder.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def trace_agent(
    agent: Agent,
    *,
    tracer_provider: trace.TracerProvider | None = None,
    agent_name: str = "dsh",
    include_content: bool = False,
) -> AgentTracing:
    """Trace every turn ``agent`` runs from now on (a turn already running is picked
    up at the next one). ``tracer_provider`` defaults to the global one."""
    tracer = trace.get_tracer(INSTRUMENTATION_NAME, tracer_provider=tracer_provider)
    recorder = SpanRecorder(
        agent.session, tracer, agent_name=agent_name, include_content=include_content
    )
    return AgentTracing(recorder, agent.session.subscribe(recorder.observe))
