"""The two wire forms of a session stream (``?form=``): what one update becomes on
the wire, and how a stream that cannot go on ends (docs/web-stream.md)."""

from __future__ import annotations

from typing import Any, Final, Literal, Protocol, TypeAlias

from dsh_agent.streaming._ag_ui import AgUiEncoder, sse_line
from dsh_agent.streaming._updates import AgentUpdate, TurnEnded, TurnStarted
from dsh_agent.streaming._vercel_ui import VERCEL_UI_DONE, VERCEL_UI_STREAM_HEADERS, VercelUiEncoder
from dsh_llm._failure import describe_exception
from dsh_session._header import SessionId

FormName: TypeAlias = Literal["ag-ui", "vercel-ai"]
FORMS: Final = ("ag-ui", "vercel-ai")
"""The values of ``?form=``; the first is the default."""


class WireForm(Protocol):
    headers: dict[str, str]
    """Response headers the form adds."""

    def encode(self, update: AgentUpdate) -> list[dict[str, Any]]:
        """The wire events of ``update``, in order (possibly none)."""

    def ended(self, error: Exception) -> str:
        """The SSE text that ends a stream that cannot go on because of ``error``."""


def run_id(session_id: SessionId, turn: int) -> str:
    """The AG-UI run id of turn ``turn``: stable, so a reconnect names the same run."""
    return f"{session_id}.turn-{turn}"


class AgUiForm:
    """AG-UI: each turn is a run (``RUN_STARTED`` at its ``turn/start``,
    ``RUN_FINISHED`` or ``RUN_ERROR`` at its ``turn/end``)."""

    def __init__(self, session_id: SessionId) -> None:
        self.headers: dict[str, str] = {}
        self._session_id = session_id
        self._run: AgUiEncoder | None = None
        self._outside = AgUiEncoder(thread_id=session_id, run_id=session_id)
        """For what comes outside a turn (a log another writer left half-written)."""

    def encode(self, update: AgentUpdate) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        if isinstance(update, TurnStarted):
            self._run = AgUiEncoder(
                thread_id=self._session_id, run_id=run_id(self._session_id, update.turn)
            )
            events += self._run.start()
        current = self._run or self._outside
        events += current.encode(update)
        if isinstance(update, TurnEnded):
            events += current.finish()
            self._run = None
        return events

    def ended(self, error: Exception) -> str:
        message = describe_exception(error, with_type=False)
        return sse_line({"type": "RUN_ERROR", "message": message, "code": type(error).__name__})


class VercelAiForm:
    """The Vercel AI SDK UI message stream (v1)."""

    def __init__(self, session_id: SessionId) -> None:
        self.headers = dict(VERCEL_UI_STREAM_HEADERS)
        self._encoder = VercelUiEncoder()

    def encode(self, update: AgentUpdate) -> list[dict[str, Any]]:
        return self._encoder.encode(update)

    def ended(self, error: Exception) -> str:
        parts = [*self._encoder.close("error"), {"type": "error", "errorText": str(error)}]
        return "".join(sse_line(part) for part in parts) + VERCEL_UI_DONE


def wire_form(name: FormName, session_id: SessionId) -> WireForm:
    return AgUiForm(session_id) if name == "ag-ui" else VercelAiForm(session_id)


__all__ = ["FORMS", "AgUiForm", "FormName", "VercelAiForm", "WireForm", "run_id", "wire_form"]
