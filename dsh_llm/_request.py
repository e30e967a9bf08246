"""The model request value and the adapter protocol that serves it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any, Protocol

from pydantic import Field, field_validator

from dsh_llm._frozen_json import FrozenJson
from dsh_llm._json_limits import JSON_INT_MAX
from dsh_llm._messages import MESSAGE_TYPES, Message, MessageAdapter, ValidatedMessages
from dsh_llm._model import DshModel, optional
from dsh_llm._prompt_cache import PromptCache
from dsh_llm._stream import StreamChunk

_MESSAGE_TYPES = frozenset(MESSAGE_TYPES)


class ToolSchema(DshModel):
    """A tool as the model sees it."""

    name: str = Field(min_length=1)
    description: str = ""
    parameters: FrozenJson
    """JSON Schema of the arguments object."""


class GenerateRequest(DshModel):
    """One model call. ``messages`` holds the very message objects of derived
    history; messages that already are dsh values are not validated again, so
    building a request costs no more as the conversation grows."""

    provider: str = Field(min_length=1)
    model: str = Field(min_length=1)
    messages: tuple[Message, ...]
    system: str | None = optional()
    tools: tuple[ToolSchema, ...] | None = optional()
    max_tokens: int | None = optional(ge=1, le=JSON_INT_MAX)
    temperature: float | None = optional(ge=0)
    top_p: float | None = optional(ge=0, le=1)
    stop: tuple[str, ...] | None = optional()
    reasoning_effort: str | None = optional()
    prompt_cache: PromptCache | None = optional()
    """Prompt caching controls; absent: the provider's default caching."""

    @field_validator("messages", mode="wrap")
    @classmethod
    def _keep_dsh_messages(cls, value: Any, handler: Any) -> tuple[Message, ...]:
        if isinstance(value, ValidatedMessages):
            return value.as_tuple()
        if isinstance(value, Sequence) and not isinstance(value, str):
            if _MESSAGE_TYPES.issuperset(map(type, value)):
                return value if type(value) is tuple else tuple(value)
            return tuple(
                item if type(item) in _MESSAGE_TYPES else MessageAdapter.validate_python(item)
                for item in value
            )
        result: tuple[Message, ...] = handler(value)
        return result


class ModelAdapter(Protocol):
    """A model provider. ``stream`` yields chunks ending in one ``finish`` chunk; a
    failure becomes a ``finish`` with an ``error`` reason rather than an exception.
    Cancellation is ordinary asyncio task cancellation."""

    def stream(self, request: GenerateRequest) -> AsyncIterator[StreamChunk]: ...


__all__ = [
    "GenerateRequest",
    "ModelAdapter",
    "ToolSchema",
]
