"""The only ways to get a message: creation (mints a new id) and import (keeps one).

Creation helpers take no ``id`` so that nobody can present an import as a creation;
:func:`freeze_message` never mints one. Both return detached, deep-immutable values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, TypeAlias, TypeVar

from dsh_llm._content import ContentBlock, ToolResultBlock
from dsh_llm._ids import CallId, MessageId, new_message_id
from dsh_llm._messages import (
    MESSAGE_TYPES,
    AssistantMessage,
    Message,
    MessageAdapter,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
)
from dsh_llm._sources import (
    KNOWN_SOURCE_KINDS,
    ModelSource,
    PluginSource,
    UnknownSource,
    UserSource,
    UserSourceInput,
)
from dsh_llm.errors import InputError

ContentInput: TypeAlias = str | Iterable[ContentBlock | Mapping[str, Any]]
"""Content as a caller may give it: a string (one text block) or blocks/mappings."""
SourceInput: TypeAlias = UserSource | PluginSource | UnknownSource | ModelSource | Mapping[str, Any]
Role: TypeAlias = Literal["user", "assistant", "system"]

M = TypeVar("M", UserMessage, ToolResultMessage, AssistantMessage, SystemMessage)


# Creation validates one nested mapping in a single pass of the model's validator
# (the fastest way pydantic offers: no keyword-argument ``__init__`` frame, and nested
# blocks given as mappings are built in Rust rather than by separate model calls).
_validate_user = UserMessage.__pydantic_validator__.validate_python
_validate_assistant = AssistantMessage.__pydantic_validator__.validate_python
_validate_tool_result = ToolResultMessage.__pydantic_validator__.validate_python
_validate_system = SystemMessage.__pydantic_validator__.validate_python
_PLAIN_USER = {"kind": "user"}
_USER = UserSource.model_validate(_PLAIN_USER)
"""The source of every prompt created from ``{"kind": "user"}`` and of every system
message: one frozen value instead of a 480-byte model each. Its fields set is that of
the mapping, so ``exclude_unset`` dumps are unchanged; a source with extras or
``editOf`` is its own."""


def _content(content: ContentInput) -> Any:
    if isinstance(content, str):
        return ({"type": "text", "text": content},)
    if isinstance(content, Mapping):
        raise TypeError("content must be a string or a sequence of blocks, not one mapping")
    return content if isinstance(content, tuple) else tuple(content)


def _known_kind(source: object) -> object:
    """``source``, unless it is a mapping of a kind this version does not know: creation
    makes messages of the known kinds (a misspelled ``"usr"`` would otherwise pass as
    an unknown source); a message of another system's kind is imported, id and all.
    The plain user source is given as the one shared value."""
    if type(source) is dict and source == _PLAIN_USER:
        return _USER
    if isinstance(source, Mapping) and source.get("kind") not in KNOWN_SOURCE_KINDS:
        raise InputError(
            f"unknown source kind {source.get('kind')!r} (creation knows "
            f"{', '.join(sorted(KNOWN_SOURCE_KINDS))}; pass an UnknownSource to mean "
            "another kind, or import the whole message with freeze_message())",
            field="source.kind",
        )
    return source


def create_message(*, role: Role, content: ContentInput, source: SourceInput) -> Message:
    """Create a message of any role with a newly minted id."""
    return MessageAdapter.validate_python(
        {
            "id": new_message_id(),
            "role": role,
            "content": _content(content),
            "source": _known_kind(source),
        }
    )


def create_user_message(content: ContentInput, *, source: UserSourceInput = _USER) -> UserMessage:
    """Create a user-role message (a prompt or program context) with a new id:
    ``create_user_message("hello")``. ``source`` defaults to the user
    (``{"kind": "user"}``); a source mapping of an unknown kind raises
    :class:`~dsh_llm.errors.InputError`."""
    message: UserMessage = _validate_user(
        {
            "id": new_message_id(),
            "role": "user",
            "content": _content(content),
            "source": _known_kind(source),
        }
    )
    return message


def create_assistant_message(
    *, content: ContentInput, source: ModelSource | Mapping[str, Any]
) -> AssistantMessage:
    """Create an assistant message with a new id. ``source`` gives ``provider``,
    ``model`` and optionally ``replayState``; its kind is always ``model``."""
    return _create_assistant(new_message_id(), content, source)


def _create_assistant(
    id: MessageId, content: ContentInput, source: ModelSource | Mapping[str, Any]
) -> AssistantMessage:
    """Create an assistant message under ``id``, minted by the caller in this package
    for this very message (the assembler mints it when the stream starts)."""
    if isinstance(source, Mapping):
        if "kind" in source:
            raise TypeError(
                "create_assistant_message() fixes the source kind to 'model'; do not pass 'kind'"
            )
        key = _model_source_key(source)
        shared = _MODEL_SOURCES.get(key) if key else None
        source = {"kind": "model", **source} if shared is None else shared
    else:
        key = shared = None
    message: AssistantMessage = _validate_assistant(
        {
            "id": id,
            "role": "assistant",
            "content": _content(content),
            "source": source,
        }
    )
    if key and shared is None and len(_MODEL_SOURCES) < _MAX_MODEL_SOURCES:
        _MODEL_SOURCES[key] = message.source
    return message


_MODEL_SOURCES: dict[tuple[str, str], ModelSource] = {}
"""The validated source of each provider and model that assistant messages were created
for without replay state: every later message of the pair holds the same frozen value
instead of a new 480-byte model."""
_MAX_MODEL_SOURCES = 256
"""A process talks to a few models; past this many pairs, new ones are not kept."""


def _model_source_key(source: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(provider, model)`` when ``source`` holds exactly those two strings."""
    if type(source) is not dict or len(source) != 2:
        return None
    provider, model = source.get("provider"), source.get("model")
    if type(provider) is str and type(model) is str:
        return (provider, model)
    return None


def create_tool_result_message(
    *, call_id: CallId | str, content: ContentInput, is_error: bool = False
) -> ToolResultMessage:
    """Create the result message of tool call ``call_id`` with a new id."""
    block = {
        "type": "tool-result",
        "call_id": call_id,
        "content": _content(content),
        "is_error": is_error,
    }
    message: ToolResultMessage = _validate_tool_result(
        {
            "id": new_message_id(),
            "role": "user",
            "content": (block,),
            "source": {"kind": "tool", "call_id": call_id},
        }
    )
    return message


def create_system_message(*, content: ContentInput) -> SystemMessage:
    """Create a system-role message with a new id (for hand-built requests)."""
    message: SystemMessage = _validate_system(
        {"id": new_message_id(), "role": "system", "content": _content(content), "source": _USER}
    )
    return message


def freeze_message(message: Message | Mapping[str, Any]) -> Message:
    """Import a message that already has an id: validate it and return a detached,
    deep-immutable value with the same id. A validated dsh message is returned as is."""
    if type(message) in MESSAGE_TYPES:
        return message  # type: ignore[return-value]
    if not isinstance(message, Mapping) and not isinstance(message, MESSAGE_TYPES):
        raise TypeError(
            f"freeze_message() takes a dsh message or a mapping, not {type(message).__name__}"
        )
    return MessageAdapter.validate_python(message)


def replace_content(message: M, content: ContentInput) -> M:
    """Return a new value of the same type with the same id, role and source and new,
    validated content: a change of representation, not a new message. For a tool
    result, content that holds no ``tool-result`` block (a string, or plain blocks) is
    the result's new inner content: its block keeps the call id and ``isError``."""
    blocks = _content(content)
    if isinstance(message, ToolResultMessage) and not any(map(_is_tool_result, blocks)):
        result = message.content[0]
        blocks = (
            {
                "type": "tool-result",
                "call_id": result.call_id,
                "content": blocks,
                "is_error": result.is_error,
            },
        )
    rewritten: M = type(message).__pydantic_validator__.validate_python(
        {"id": message.id, "role": message.role, "content": blocks, "source": message.source}
    )
    return rewritten


def _is_tool_result(block: object) -> bool:
    if isinstance(block, Mapping):
        return block.get("type") == "tool-result"
    return isinstance(block, ToolResultBlock)


__all__ = [
    "ContentInput",
    "Role",
    "SourceInput",
    "create_assistant_message",
    "create_message",
    "create_system_message",
    "create_tool_result_message",
    "create_user_message",
    "freeze_message",
    "replace_content",
]
