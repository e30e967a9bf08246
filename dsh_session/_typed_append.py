"""Per-type signatures of ``Session.append`` for type checkers.

``session.append("tool/result", data)`` returns a ``ToolResultEvent`` and takes that
event's payload (or a mapping of it) under mypy and pyright; any other type string
falls back to the untyped signature. Runtime behaviour is ``Session.append``'s.

One overload per typed row of the event table (``dsh_session._events.table``), then one
for the foreign types, then ``str``: ``tests/session_log/test_event_table.py`` checks
that the overloads and the table name the same types, payloads and event classes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, Protocol, overload

from dsh_llm._messages import (
    UserMessage,
)
from dsh_session._events_harness import (
    ApprovalAskedData,
    ApprovalDecidedData,
    ApprovalPolicyData,
    CompactionEndData,
    CompactionPruneData,
    CompactionStartData,
    CompactionSummaryData,
    ForeignEventType,
    LlmRetryData,
    LlmRetryStartedData,
)
from dsh_session.events import (
    ApprovalAskedEvent,
    ApprovalDecidedEvent,
    ApprovalPolicyEvent,
    AssistantChunkData,
    AssistantChunkEvent,
    AssistantMessageData,
    AssistantMessageEvent,
    CompactionEndEvent,
    CompactionPruneEvent,
    CompactionStartEvent,
    CompactionSummaryEvent,
    EndSeedData,
    EndSeedEvent,
    ForeignEvent,
    InboxSplicedData,
    InboxSplicedEvent,
    LlmRetryEvent,
    LlmRetryStartedEvent,
    LogEvent,
    RequestContextData,
    RequestContextEvent,
    RequestHeaderData,
    RequestHeaderEvent,
    StepData,
    StepEndEvent,
    StepStartEvent,
    SurfaceOp,
    ToolCallData,
    ToolCallEvent,
    ToolResultData,
    ToolResultEvent,
    TurnEndData,
    TurnEndEvent,
    TurnStartData,
    TurnStartEvent,
    UserMessageEvent,
)

__all__ = ["TypedAppend"]

_Seqs = Iterable[int] | None
_Op = SurfaceOp | Mapping[str, Any] | None


class TypedAppend(Protocol):
    """``Session.append`` as type checkers see it."""

    @overload
    def __call__(
        self,
        type: Literal["turn/start"],
        data: TurnStartData | Mapping[str, Any],
        *,
        surface_op: _Op = None,
        source_event_seqs: _Seqs = None,
    ) -> TurnStartEvent: ...

    @overload
    def __call__(
        self,
        type: Literal["turn/end"],
        data: TurnEndData | Mapping[str, Any],
        *,
        surface_op: _Op = None,
        source_event_seqs: _Seqs = None,
    ) -> TurnEndEvent: ...

    @overload
    def __call__(
        self,
        type: Literal["step/start"],
        data: StepData | Mapping[str, Any],
        *,
        surface_op: _Op = None,
        source_event_seqs: _Seqs = None,
    ) -> StepStartEvent: ...

    @overload
    def __call__(
        self,
        type: Literal["step/end"],
        data: StepData | Mapping[str, Any],
        *,
        surface_op: _Op = None,
        source_event_seqs: _Seqs = None,
    ) -> StepEndEvent: ...

    @overload
    def __call__(
        self,
        type: Literal["user/message"],
        data: UserMessage | Mapping[str, Any],
        *,
        surface_op: _Op = None,
        source_event_seqs: _Seqs = None,
    ) -> UserMessageEvent: ...

    @overload
    def __call__(
        self,
        type: Literal["assistant/chunk"],
        data: AssistantChunkData | Mapping[str, Any],
        *,
        surface_op: _Op = None,
        source_event_seqs: _Seqs = None,
    ) -> AssistantChunkEvent: ...

    @overload
    def __call__(
        self,
        type: Literal["assistant/message"],
        data: AssistantMessageData | Mapping[str, Any],
        *,
        surface_op: _Op = None,
        source_event_seqs: _Seqs = None,
    ) -> AssistantMessageEvent: ...

    @overload
    def __call__(
        self,
        type: Literal["tool/call"],
        data: ToolCallData | Mapping[str, Any],
        *,
        surface_op: _Op = None,
        source_event_seqs: _Seqs = None,
    ) -> ToolCallEvent: ...

    @overload
    def __call__(
        self,
        type: Literal["tool/result"],
        data: ToolResultData | Mapping[str, Any],
        *,
        surface_op: _Op = None,
        source_event_seqs: _Seqs = None,
    ) -> ToolResultEvent: ...

    @overload
    def __call__(
        self,
        type: Literal["request/header"],
        data: RequestHeaderData | Mapping[str, Any],
        *,
        surface_op: _Op = None,
        source_event_seqs: _Seqs = None,
    ) -> RequestHeaderEvent: ...

    @overload
    def __call__(
        self,
        type: Literal["agent/inbox/spliced"],
        data: InboxSplicedData | Mapping[str, Any],
        *,
        surface_op: _Op = None,
        source_event_seqs: _Seqs = None,
    ) -> InboxSplicedEvent: ...

    @overload
    def __call__(
        self,
        type: Literal["request/context"],
        data: RequestContextData | Mapping[str, Any],
        *,
        surface_op: _Op = None,
        source_event_seqs: _Seqs = None,
    ) -> RequestContextEvent: ...

    @overload
    def __call__(
        self,
        type: Literal["session/end-seed"],
        data: EndSeedData | Mapping[str, Any],
        *,
        surface_op: _Op = None,
        source_event_seqs: _Seqs = None,
    ) -> EndSeedEvent: ...

    @overload
    def __call__(
        self,
        type: Literal["compaction/start"],
        data: CompactionStartData | Mapping[str, Any],
        *,
        surface_op: _Op = None,
        source_event_seqs: _Seqs = None,
    ) -> CompactionStartEvent: ...

    @overload
    def __call__(
        self,
        type: Literal["compaction/summary"],
        data: CompactionSummaryData | Mapping[str, Any],
        *,
        surface_op: _Op = None,
        source_event_seqs: _Seqs = None,
    ) -> CompactionSummaryEvent: ...

    @overload
    def __call__(
        self,
        type: Literal["compaction/prune"],
        data: CompactionPruneData | Mapping[str, Any],
        *,
        surface_op: _Op = None,
        source_event_seqs: _Seqs = None,
    ) -> CompactionPruneEvent: ...

    @overload
    def __call__(
        self,
        type: Literal["compaction/end"],
        data: CompactionEndData | Mapping[str, Any],
        *,
        surface_op: _Op = None,
        source_event_seqs: _Seqs = None,
    ) -> CompactionEndEvent: ...

    @overload
    def __call__(
        self,
        type: Literal["llm/retry"],
        data: LlmRetryData | Mapping[str, Any],
        *,
        surface_op: _Op = None,
        source_event_seqs: _Seqs = None,
    ) -> LlmRetryEvent: ...

    @overload
    def __call__(
        self,
        type: Literal["llm/retry-started"],
        data: LlmRetryStartedData | Mapping[str, Any],
        *,
        surface_op: _Op = None,
        source_event_seqs: _Seqs = None,
    ) -> LlmRetryStartedEvent: ...

    @overload
    def __call__(
        self,
        type: Literal["approval/asked"],
        data: ApprovalAskedData | Mapping[str, Any],
        *,
        surface_op: _Op = None,
        source_event_seqs: _Seqs = None,
    ) -> ApprovalAskedEvent: ...

    @overload
    def __call__(
        self,
        type: Literal["approval/decided"],
        data: ApprovalDecidedData | Mapping[str, Any],
        *,
        surface_op: _Op = None,
        source_event_seqs: _Seqs = None,
    ) -> ApprovalDecidedEvent: ...

    @overload
    def __call__(
        self,
        type: Literal["approval/policy"],
        data: ApprovalPolicyData | Mapping[str, Any],
        *,
        surface_op: _Op = None,
        source_event_seqs: _Seqs = None,
    ) -> ApprovalPolicyEvent: ...

    @overload
    def __call__(
        self,
        type: ForeignEventType,
        data: Any,
        *,
        surface_op: _Op = None,
        source_event_seqs: _Seqs = None,
    ) -> ForeignEvent: ...

    @overload
    def __call__(
        self,
        type: str,
        data: Any,
        *,
        surface_op: _Op = None,
        source_event_seqs: _Seqs = None,
    ) -> LogEvent: ...

    # The signature every overload above narrows. Declared so that the attribute is this
    # function (not typing's overload placeholder) and ``typing.get_overloads`` finds them.
    def __call__(
        self,
        type: str,
        data: Any,
        *,
        surface_op: _Op = None,
        source_event_seqs: _Seqs = None,
    ) -> LogEvent: ...
