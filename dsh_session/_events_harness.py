"""Typed payloads of the harness event types dsh acts on, and the names of the rest.

The TypeScript harness knows 48 event types (``KNOWN_SESSION_EVENT_TYPES``) and writes
most of them without ``ignorable``. dsh types the payloads it reads facts from
(compaction, LLM retries, approvals); the others are :data:`ForeignEventType` and are
kept as frozen JSON. Fields are declared in the order the harness builds the objects,
so a typed event dumps back to the bytes the harness wrote.
"""

from __future__ import annotations

from typing import Annotated, Literal, Self, TypeAlias

from pydantic import Field, model_validator

from dsh_llm._content import ContentBlock
from dsh_llm._failure import LlmFailure
from dsh_llm._frozen_json import FrozenJson
from dsh_llm._ids import CallId
from dsh_llm._json_limits import JSON_INT_MAX
from dsh_llm._model import DshModel, optional
from dsh_llm._stream import TokenUsage

__all__ = [
    "ApprovalAskedData",
    "ApprovalDecidedData",
    "ApprovalPolicyData",
    "CompactionEndData",
    "CompactionPruneData",
    "CompactionStartData",
    "CompactionSummaryData",
    "ForeignEventType",
    "LlmRetryData",
    "LlmRetryStartedData",
    "ShadowedRange",
]

_Count = Annotated[int, Field(ge=0, le=JSON_INT_MAX)]
_Positive = Annotated[int, Field(ge=1, le=JSON_INT_MAX)]
_Name = Annotated[str, Field(min_length=1)]

# Spelled out for type checkers; tests/session_log/test_event_table.py asserts it lists
# the foreign rows of the event table (dsh_session._events.table), in order.
ForeignEventType: TypeAlias = Literal[
    "agent-preset/selected",
    "command/done",
    "command/run",
    "feedback/record",
    "goal/change",
    "hook/invoked",
    "hook/result",
    "permission/preset",
    "plan/mode",
    "sandbox/mode",
    "schedule/change",
    "session/title",
    "session/title-llm-request",
    "subagent/descriptor",
    "team/member",
    "team/message/delivered",
    "team/message/queued",
    "team/task",
    "todo/write",
    "tool-workflow/agent-end",
    "tool-workflow/agent-start",
    "tool-workflow/run-end",
    "tool-workflow/run-start",
    "tool/code-dispatch",
    "tool/code-dispatch-start",
    "web/deepseek-search-llm-request",
]
"""Harness types dsh reads and keeps but does not act on: derivation and request
reconstruction ignore them, as the harness's own do."""


class CompactionStartData(DshModel):
    """``compaction/start``: a compaction region opens (compaction-basic region.ts)."""

    compaction_id: _Name
    source_command_id: str | None = optional()
    """The command that asked for it, when a user command did."""
    turn: _Positive | None
    """The turn that owns the region, or ``None`` (always written) between turns."""


class CompactionEndData(CompactionStartData):
    """``compaction/end``: the region closes, with the error chain if it failed."""

    error: str | None = optional()


class ShadowedRange(DshModel):
    """The inclusive seq range of surface events a compaction shadows."""

    start: _Count
    end: _Count


class CompactionSummaryData(DshModel):
    """``compaction/summary``: the summary the checkpoint message is made from."""

    compaction_id: _Name
    source_command_id: str | None = optional()
    summary: tuple[ContentBlock, ...]
    raw_output: FrozenJson | None = optional()
    """What the summarizing model returned, when kept."""
    llm_stream_call: Literal[True] | None = optional()
    """Set when the summary came from a model stream (then ``raw_output`` is present)."""
    shadowed_range: ShadowedRange
    shadowed_seqs: tuple[_Count, ...]
    shadowed_token_count: _Count
    provider: _Name
    model: _Name
    max_tokens: _Positive | None = optional()
    usage: TokenUsage | None = optional()

    @model_validator(mode="after")
    def _stream_call_keeps_output(self) -> Self:
        if self.llm_stream_call and self.raw_output is None:
            raise ValueError("llmStreamCall: true needs rawOutput")
        return self


class CompactionPruneData(DshModel):
    """``compaction/prune``: tool results shadowed in place (each replaced next)."""

    shadowed_range: ShadowedRange
    shadowed_seqs: tuple[_Count, ...]
    shadowed_token_count: _Count


class LlmRetryData(DshModel):
    """``llm/retry``: a failed attempt will be retried after ``delay_ms``
    (llm-retry index.ts). Mode ``normal`` has a budget; ``always`` has none."""

    retry_id: _Name
    turn: _Positive
    step: _Positive
    provider: _Name
    mode: Literal["normal", "always"]
    policy_key: _Name
    retry: _Positive
    max_retries: _Count | None = optional()
    delay_ms: _Count | Annotated[float, Field(ge=0)]
    """Milliseconds; an integer when the harness computed one (kept as written)."""
    failure: LlmFailure

    @model_validator(mode="after")
    def _budget_matches_mode(self) -> Self:
        if (self.mode == "normal") != (self.max_retries is not None):
            raise ValueError("maxRetries is present exactly when mode is 'normal'")
        return self


class LlmRetryStartedData(DshModel):
    """``llm/retry-started``: the delay of a retry elapsed and the attempt starts."""

    retry_id: _Name
    turn: _Positive
    step: _Positive
    retry: _Positive


class ApprovalAskedData(DshModel):
    """``approval/asked``: the user was asked to approve a tool use (user-approval)."""

    id: _Name
    tool_name: _Name
    call_id: CallId | None = optional()
    reason: str | None = optional()


class ApprovalDecidedData(DshModel):
    """``approval/decided``: the answer to the ``approval/asked`` of the same id."""

    id: _Name
    outcome: Literal["allowed-once", "rejected", "cancelled", "unavailable"]


class ApprovalPolicyData(DshModel):
    """``approval/policy``: whether tool uses are asked about from here on."""

    policy: Literal["ask", "never"]
    source: Literal["delegation"] | None = optional()
