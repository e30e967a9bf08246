"""JSON Schema (draft 2020-12) of the session wire types, for ``dsh schema``.

The schemas describe what a reader accepts: the camelCase wire names, optional fields
that may be omitted, and for ``SessionEvent`` every event type, tagged on ``type``
(plus an unknown type that is marked ``ignorable: true``).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from dsh_llm._schema import strict_2020_12
from dsh_session._events_harness import (
    ApprovalAskedData,
    ApprovalDecidedData,
    ApprovalPolicyData,
    CompactionEndData,
    CompactionPruneData,
    CompactionStartData,
    CompactionSummaryData,
    LlmRetryData,
    LlmRetryStartedData,
)
from dsh_session._header import SessionHeader
from dsh_session.events import (
    AssistantChunkData,
    AssistantMessageData,
    EndSeedData,
    InboxSplicedData,
    RequestContextData,
    RequestHeaderData,
    SessionEventAdapter,
    StepData,
    ToolCallData,
    ToolResultData,
    TurnEndData,
    TurnStartData,
)

_PAYLOADS: tuple[type[BaseModel], ...] = (
    TurnStartData,
    TurnEndData,
    StepData,
    AssistantChunkData,
    AssistantMessageData,
    ToolCallData,
    ToolResultData,
    RequestHeaderData,
    InboxSplicedData,
    RequestContextData,
    EndSeedData,
    CompactionStartData,
    CompactionSummaryData,
    CompactionPruneData,
    CompactionEndData,
    LlmRetryData,
    LlmRetryStartedData,
    ApprovalAskedData,
    ApprovalDecidedData,
    ApprovalPolicyData,
)


def wire_schemas() -> dict[str, dict[str, Any]]:
    """Schemas by type name: ``SessionHeader``, ``SessionEvent`` and each event
    payload (``TurnStartData``, ...). ``user/message`` data is a ``UserMessage``,
    whose schema dsh_llm exports."""
    schemas: dict[str, dict[str, Any]] = {
        "SessionHeader": SessionHeader.model_json_schema(),
        "SessionEvent": {"title": "SessionEvent", **SessionEventAdapter.json_schema()},
    }
    for payload in _PAYLOADS:
        schemas[payload.__name__] = payload.model_json_schema()
    return {name: strict_2020_12(schema) for name, schema in schemas.items()}


__all__ = [
    "wire_schemas",
]
