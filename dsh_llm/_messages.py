"""The message value: one frozen model per role, all with required id, role,
content and source. Build them with the helpers in :mod:`dsh_llm._create`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal, Self, TypeAlias

from pydantic import GetCoreSchemaHandler, TypeAdapter, model_validator
from pydantic_core import core_schema

from dsh_llm._content import ContentBlock, ToolResultBlock
from dsh_llm._ids import MessageIdField
from dsh_llm._model import DshModel, SerializedByMemberType
from dsh_llm._sources import ModelSource, ToolSource, UserRoleSource


class UserMessage(DshModel):
    """A user-role message: a human prompt or context a program produced."""

    id: MessageIdField
    """Identity given at creation; kept by every later representation."""
    role: Literal["user"]
    content: tuple[ContentBlock, ...]
    """The blocks, in order."""
    source: UserRoleSource
    """Who produced it; ``source.kind == "user"`` marks a human prompt."""


class ToolResultMessage(DshModel):
    """The result of one tool call: a user-role message holding exactly one
    ``tool-result`` block whose ``toolCallId`` is ``source.callId``."""

    id: MessageIdField
    role: Literal["user"]
    content: tuple[ToolResultBlock]
    """Exactly one tool-result block."""
    source: ToolSource

    @model_validator(mode="after")
    def _result_answers_source_call(self) -> Self:
        call_id = self.content[0].call_id
        if call_id != self.source.call_id:
            raise ValueError(
                f"tool-result block answers call {call_id!r} but the source names "
                f"call {self.source.call_id!r}"
            )
        return self


class AssistantMessage(DshModel):
    """Model output; its source names the provider and model."""

    id: MessageIdField
    role: Literal["assistant"]
    content: tuple[ContentBlock, ...]
    source: ModelSource


class SystemMessage(DshModel):
    """A system-role message, for hand-built one-shot requests."""

    id: MessageIdField
    role: Literal["system"]
    content: tuple[ContentBlock, ...]
    source: UserRoleSource


_SOURCE_KIND: list[list[str | int]] = [["source", "kind"]]


class _RoleTaggedMessage:
    """Pydantic glue for :data:`Message`: a union tagged on ``role`` whose ``user``
    member picks :class:`ToolResultMessage` when ``source.kind`` is ``tool`` and
    :class:`UserMessage` otherwise.

    Every choice is made inside pydantic-core by looking up a key, so JSON validates
    without first becoming Python objects, as a callable discriminator would require
    (docs/decisions/2026-12-02-message-union-and-serialization.md)."""

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        tool_result = core_schema.tagged_union_schema(
            {"tool": handler.generate_schema(ToolResultMessage)},
            discriminator=_SOURCE_KIND,
            custom_error_type="not_a_tool_result",
            custom_error_message="not a tool result (source.kind is not 'tool')",
        )
        user_role = core_schema.union_schema(
            [
                (tool_result, "ToolResultMessage"),
                (handler.generate_schema(UserMessage), "UserMessage"),
            ],
            mode="left_to_right",
        )
        return core_schema.tagged_union_schema(
            {
                "user": user_role,
                "assistant": handler.generate_schema(AssistantMessage),
                "system": handler.generate_schema(SystemMessage),
            },
            discriminator="role",
            custom_error_type="invalid_message_role",
            custom_error_message="role must be 'user', 'assistant' or 'system'",
        )


Message: TypeAlias = Annotated[
    UserMessage | ToolResultMessage | AssistantMessage | SystemMessage,
    _RoleTaggedMessage,
    SerializedByMemberType,
]
"""Any message. A user-role value with a ``tool`` source validates as a
:class:`ToolResultMessage`."""

MESSAGE_TYPES: tuple[type[DshModel], ...] = (
    UserMessage,
    ToolResultMessage,
    AssistantMessage,
    SystemMessage,
)


class ValidatedMessages(Sequence[Message]):
    """Marker base for immutable sequences whose items are all validated dsh
    messages, such as a session's derived history. :class:`GenerateRequest` takes
    one without checking each item, so a request costs the same however long the
    conversation is. Only subclass it for sequences that guarantee this."""

    __slots__ = ()

    def as_tuple(self) -> tuple[Message, ...]:
        """The items as one tuple (what a request holds). A subclass that keeps its
        items in a list may copy them at C speed; this general form iterates."""
        return tuple(self)


MessageAdapter: TypeAdapter[Message] = TypeAdapter(Message)
"""Validates (from Python or JSON) and dumps a message of any role."""

HistoryAdapter: TypeAdapter[tuple[Message, ...]] = TypeAdapter(tuple[Message, ...])
"""Validates and dumps a whole message history."""

__all__ = [
    "MESSAGE_TYPES",
    "AssistantMessage",
    "HistoryAdapter",
    "Message",
    "MessageAdapter",
    "SystemMessage",
    "ToolResultMessage",
    "UserMessage",
    "ValidatedMessages",
]
