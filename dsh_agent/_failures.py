"""Failed turns as exceptions: what ``run()`` raises when the turn it waited for
ended ``error`` (``blocked`` and ``aborted`` are outcomes, not errors)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dsh_agent.errors import AgentError
from dsh_llm._stream import LlmFailure

if TYPE_CHECKING:
    from dsh_agent._run_result import RunResult


class TurnFailed(AgentError):
    """The last turn of a run ended ``error``. ``failure`` says why (its code, e.g.
    ``TRANSPORT``, and the provider's or the exception's text); ``result`` is what the
    run observed, events included. ``str()`` is one line fit for a user."""

    def __init__(self, failure: LlmFailure, result: RunResult) -> None:
        super().__init__(describe_failure(failure))
        self.failure = failure
        self.result = result


def describe_failure(failure: LlmFailure) -> str:
    """One line naming the failure: ``the model call failed (SERVER): HTTP 503: ...``
    (the adapters' messages name the HTTP status when there was one)."""
    return f"the model call failed ({failure.code}): {failure.message}"
