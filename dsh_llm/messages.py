"""The message value: one frozen model per role, all with required id, role,
content and source. Build them with the helpers in :mod:`dsh_llm.create`."""

from __future__ import annotations

from typing import Annotated, Literal, Self, TypeAlias

from pydantic import Discriminator, Tag, TypeAdapter, model_validator

from dsh_llm._model import DshModel
from dsh_llm.content import ContentBlock, ToolResultBlock
from dsh_llm.ids import MessageIdField
from dsh_llm.sources import ModelSource, ToolSource, UserRoleSource


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
        call_id = self.content[0].tool_call_id
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


def _message_tag(value: object) -> str | None:
    """Route a mapping or model to its message class: the role decides, and a
    user-role value with a tool source is a tool result."""
    if isinstance(value, dict):
        role = value.get("role")
        if role == "user":
            source = value.get("source")
            kind = source.get("kind") if isinstance(source, dict) else getattr(source, "kind", None)
            return "tool-result" if kind == "tool" else "user"
        return role if isinstance(role, str) else None
    if isinstance(value, ToolResultMessage):
        return "tool-result"
    return getattr(value, "role", None)


Message: TypeAlias = Annotated[
    Annotated[UserMessage, Tag("user")]
    | Annotated[ToolResultMessage, Tag("tool-result")]
    | Annotated[AssistantMessage, Tag("assistant")]
    | Annotated[SystemMessage, Tag("system")],
    Discriminator(
        _message_tag,
        custom_error_type="invalid_message_role",
        custom_error_message="role must be 'user', 'assistant' or 'system'",
    ),
]
"""Any message. A user-role value with a ``tool`` source validates as a
:class:`ToolResultMessage`."""

MESSAGE_TYPES: tuple[type[DshModel], ...] = (
    UserMessage,
    ToolResultMessage,
    AssistantMessage,
    SystemMessage,
)

MessageAdapter: TypeAdapter[Message] = TypeAdapter(Message)
"""Validates (from Python or JSON) and dumps a message of any role."""

HistoryAdapter: TypeAdapter[tuple[Message, ...]] = TypeAdapter(tuple[Message, ...])
"""Validates and dumps a whole message history."""
