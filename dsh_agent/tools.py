"""Tools: what the model may call, and the executor that turns one call into an outcome.

A :class:`Tool` is a name, a description, the JSON Schema of its arguments and an async
handler. :func:`tool` builds one from a typed function, validating the arguments with
Pydantic before the body runs. :func:`execute_tool_call` never raises for a tool
problem: bad arguments, an unknown tool, a failing or cancelled handler all become an
error outcome with a stable code and a text the model can act on, so the turn goes on.
The loop creates the ``ToolResultMessage`` from the outcome when it commits it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias, get_type_hints, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from dsh_agent.errors import AgentError
from dsh_agent.model_json import ModelJsonError, parse_model_json
from dsh_llm.content import (
    ContentBlock,
    ContentBlockAdapter,
    ImageBlock,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from dsh_llm.frozen_json import FrozenJson, freeze_json
from dsh_llm.ids import CallId
from dsh_llm.messages import UserMessage
from dsh_llm.request import ToolSchema
from dsh_session.events import ToolErrorInfo

_log = logging.getLogger("dsh_agent")

TOOL_ARGUMENTS_INVALID = "TOOL_ARGUMENTS_INVALID"
TOOL_NOT_FOUND = "TOOL_NOT_FOUND"
TOOL_FAILED = "TOOL_FAILED"
TOOL_CANCELLED = "TOOL_CANCELLED"

_BLOCK_TYPES = (TextBlock, ReasoningBlock, ImageBlock, ToolCallBlock, ToolResultBlock)


@dataclass(frozen=True, slots=True)
class ToolContext:
    """What a handler may learn about the call it serves, when it declares a second
    parameter. Cancellation is cooperative: ``cancelled`` is set when the turn is
    cancelled, and the handler decides whether to stop."""

    call_id: CallId
    turn: int
    step: int
    cancelled: asyncio.Event
    """Set when the turn is cancelled; a handler that stops because of it gets a
    ``TOOL_CANCELLED`` result."""


ToolContent: TypeAlias = str | Sequence[ContentBlock | Mapping[str, Any]]
"""Content as a handler may give it: a string (one text block) or blocks/mappings."""


@dataclass(frozen=True, slots=True, init=False)
class ToolOutput:
    """What a handler returns when a plain string or block list is not enough.
    Everything is validated and frozen at construction, so a bad output fails inside
    the handler (and becomes ``TOOL_FAILED``) rather than at commit time."""

    content: tuple[ContentBlock, ...]
    """The result blocks the model sees."""
    is_error: bool
    """The tool reports a failure of its own (the result carries no ``error`` code)."""
    additional_contexts: tuple[UserMessage, ...]
    """Messages that enter the next step right after this result is committed."""
    meta: FrozenJson | None
    """Presentation data logged with the result, not shown to the model."""

    def __init__(
        self,
        content: ToolContent,
        is_error: bool = False,
        additional_contexts: Iterable[UserMessage] = (),
        meta: object = None,
    ) -> None:
        contexts = tuple(additional_contexts)
        for index, message in enumerate(contexts):
            if type(message) is not UserMessage:
                raise TypeError(
                    f"additional_contexts[{index}] must be a UserMessage, "
                    f"not {type(message).__name__}"
                )
        object.__setattr__(self, "content", _content_blocks(content))
        object.__setattr__(self, "is_error", bool(is_error))
        object.__setattr__(self, "additional_contexts", contexts)
        object.__setattr__(self, "meta", None if meta is None else freeze_json(meta))


ToolReturn: TypeAlias = str | Sequence[ContentBlock | Mapping[str, Any]] | ToolOutput
"""Anything a handler may return."""

ToolHandler: TypeAlias = (
    Callable[[dict[str, Any]], Awaitable[ToolReturn]]
    | Callable[[dict[str, Any], ToolContext], Awaitable[ToolReturn]]
)
"""``async def handler(arguments)`` or ``async def handler(arguments, context)``."""


class ToolArgumentsError(AgentError):
    """Raised by a handler (the ones :func:`tool` builds do it for you) when the
    arguments are unusable; the call ends ``TOOL_ARGUMENTS_INVALID`` with this text."""


@dataclass(frozen=True, slots=True)
class Tool:
    """A tool the model may call: ``parameters`` is the JSON Schema of the arguments
    object sent to the model; ``handler`` receives the parsed arguments (a dict) and,
    if it declares a second parameter, a :class:`ToolContext`. A tool that
    ``requires_approval`` runs only once a person approved the call
    (:mod:`dsh_agent.approvals`)."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    handler: ToolHandler
    requires_approval: bool = False
    _schema: ToolSchema = field(init=False, repr=False, compare=False)
    _wants_context: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not _is_async_callable(self.handler):
            raise TypeError(f"the handler of tool {self.name!r} must be an async function")
        schema = ToolSchema(
            name=self.name, description=self.description, parameters=self.parameters
        )
        if not isinstance(schema.parameters, Mapping):
            raise TypeError(
                f"the parameters of tool {self.name!r} must be a JSON Schema object, "
                f"not {type(self.parameters).__name__}"
            )
        object.__setattr__(self, "parameters", schema.parameters)
        object.__setattr__(self, "_schema", schema)
        object.__setattr__(self, "_wants_context", _positional_arity(self.handler) >= 2)

    def schema(self) -> ToolSchema:
        """The tool as the model sees it (built once, the same value every call)."""
        return self._schema

    async def invoke(self, arguments: dict[str, Any], context: ToolContext) -> ToolReturn:
        """Run the handler on parsed arguments; it may raise."""
        if self._wants_context:
            return await self.handler(arguments, context)  # type: ignore[call-arg]
        return await self.handler(arguments)  # type: ignore[call-arg]


def _is_async_callable(handler: object) -> bool:
    if inspect.iscoroutinefunction(handler):
        return True
    return callable(handler) and inspect.iscoroutinefunction(type(handler).__call__)


def _positional_arity(handler: Callable[..., object]) -> int:
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    parameters = inspect.signature(handler).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters):
        return 2
    return sum(1 for p in parameters if p.kind in kinds)


AsyncFunction: TypeAlias = Callable[..., Awaitable[ToolReturn]]


@overload
def tool(fn: AsyncFunction, /) -> Tool: ...


@overload
def tool(
    *, name: str | None = None, description: str | None = None, requires_approval: bool = False
) -> Callable[[AsyncFunction], Tool]: ...


def tool(
    fn: AsyncFunction | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    requires_approval: bool = False,
) -> Tool | Callable[[AsyncFunction], Tool]:
    """Build a :class:`Tool` from a typed async function: the name is the function's,
    the description its docstring, the schema comes from its annotations, and the
    arguments are validated with Pydantic before the body runs. A parameter annotated
    :class:`ToolContext` receives the call's context instead of an argument. Use as
    ``@tool`` or ``@tool(name=..., description=..., requires_approval=...)``."""

    def build(function: AsyncFunction) -> Tool:
        built = _tool_from_function(function, name=name, description=description)
        return dataclasses.replace(built, requires_approval=True) if requires_approval else built

    return build if fn is None else build(fn)


def _tool_from_function(
    function: AsyncFunction, *, name: str | None, description: str | None
) -> Tool:
    if not inspect.iscoroutinefunction(function):
        raise TypeError(f"@tool needs an async function, got {function!r}")
    tool_name = name or function.__name__
    try:
        hints = get_type_hints(function, include_extras=True)
    except NameError as error:
        raise TypeError(
            f"@tool {tool_name!r}: cannot resolve an annotation ({error}); "
            "define the types it names where the function's module can see them"
        ) from None
    fields: dict[str, Any] = {}
    context_parameter: str | None = None
    for parameter in inspect.signature(function).parameters.values():
        if parameter.kind not in (
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            inspect.Parameter.KEYWORD_ONLY,
        ):
            raise TypeError(
                f"@tool {tool_name!r}: parameter {parameter.name!r} must be a plain or "
                "keyword-only parameter (no *args, **kwargs or positional-only)"
            )
        annotation = hints.get(parameter.name, Any)
        if annotation is ToolContext:
            context_parameter = parameter.name
            continue
        # Fields get neutral names and the parameter name as alias, so a parameter
        # may be called ``json`` or ``schema`` without shadowing BaseModel attributes.
        spec = Field(alias=parameter.name)
        if parameter.default is not inspect.Parameter.empty:
            spec = Field(parameter.default, alias=parameter.name)
        fields[f"field_{len(fields)}"] = (annotation, spec)
    arguments_model: type[BaseModel] = create_model(
        f"{tool_name}_arguments", __config__=ConfigDict(extra="forbid"), **fields
    )
    parameters = arguments_model.model_json_schema()
    parameters.pop("title", None)
    names = {key: spec.alias for key, (_, spec) in fields.items()}

    async def handler(arguments: dict[str, Any], context: ToolContext) -> ToolReturn:
        try:
            parsed = arguments_model.model_validate(arguments)
        except ValidationError as error:
            raise ToolArgumentsError(_describe_validation(tool_name, error)) from None
        values: dict[str, Any] = {name: getattr(parsed, key) for key, name in names.items()}
        if context_parameter is not None:
            values[context_parameter] = context
        return await function(**values)

    doc = inspect.getdoc(function) or ""
    return Tool(
        name=tool_name,
        description=doc if description is None else description,
        parameters=parameters,
        handler=handler,
    )


def _describe_validation(tool_name: str, error: ValidationError) -> str:
    problems = []
    for detail in error.errors(include_url=False):
        location = ".".join(str(part) for part in detail["loc"]) or "(arguments)"
        problems.append(f"'{location}': {detail['msg']}")
    return f"invalid arguments for tool {tool_name!r}: " + "; ".join(problems)


def _content_blocks(content: object) -> tuple[ContentBlock, ...]:
    if isinstance(content, str):
        return (TextBlock(text=content),)
    if isinstance(content, Mapping) or not isinstance(content, Sequence):
        raise TypeError(
            "tool content must be a string, a sequence of content blocks or a ToolOutput, "
            f"not {type(content).__name__}"
        )
    return tuple(
        block if isinstance(block, _BLOCK_TYPES) else ContentBlockAdapter.validate_python(block)
        for block in content
    )


@dataclass(frozen=True, slots=True)
class ToolCallOutcome:
    """What one call produced, ready to become a ``tool/result`` when committed."""

    content: tuple[ContentBlock, ...]
    is_error: bool
    error: ToolErrorInfo | None
    """The harness-level failure (name and stable code), when the call failed as a call."""
    meta: FrozenJson | None
    additional_contexts: tuple[UserMessage, ...]


def _failure(text: str, name: str, code: str) -> ToolCallOutcome:
    return ToolCallOutcome(
        content=(TextBlock(text=f"Error: {text}"),),
        is_error=True,
        error=ToolErrorInfo(name=name, code=code),
        meta=None,
        additional_contexts=(),
    )


def _parse_arguments(raw: str) -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        value = parse_model_json(raw)
    except ModelJsonError as error:
        raise ToolArgumentsError(f"the arguments are refused: {error}") from None
    if not isinstance(value, dict):
        raise ToolArgumentsError(
            f"the arguments must be a JSON object, not a JSON {type(value).__name__}"
        )
    return value


async def execute_tool_call(
    tools: Mapping[str, Tool], call: ToolCallBlock, context: ToolContext
) -> ToolCallOutcome:
    """Run one requested call and return its outcome; tool problems never raise.

    A handler that raises ``asyncio.CancelledError`` on its own, or returns after
    ``context.cancelled`` was set, gets ``TOOL_CANCELLED`` (a returned output is kept
    behind a notice, since it may be partial). If the task running this call is
    itself being cancelled, the ``CancelledError`` propagates as asyncio requires.
    """
    selected = tools.get(call.name)
    if selected is None:
        available = ", ".join(sorted(tools)) or "none"
        return _failure(
            f"there is no tool named {call.name!r}. Available tools: {available}.",
            "ToolNotFoundError",
            TOOL_NOT_FOUND,
        )
    try:
        arguments = _parse_arguments(call.arguments)
        returned = await selected.invoke(arguments, context)
        output = returned if isinstance(returned, ToolOutput) else ToolOutput(returned)
    except ToolArgumentsError as error:
        return _failure(
            f"{error}. Fix the arguments and call the tool again.",
            "ToolArgumentsError",
            TOOL_ARGUMENTS_INVALID,
        )
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise
        return _failure(
            f"tool {call.name!r} was cancelled before it finished.",
            "ToolCancelledError",
            TOOL_CANCELLED,
        )
    except Exception as error:
        _log.warning("tool %r (call %s) raised", call.name, call.id, exc_info=True)
        return _failure(
            f"tool {call.name!r} failed: {type(error).__name__}: {error}",
            type(error).__name__,
            TOOL_FAILED,
        )
    if context.cancelled.is_set():
        notice = TextBlock(
            text=f"Error: tool {call.name!r} was cancelled while running; "
            "the output below may be incomplete."
        )
        return ToolCallOutcome(
            content=(notice, *output.content),
            is_error=True,
            error=ToolErrorInfo(name="ToolCancelledError", code=TOOL_CANCELLED),
            meta=output.meta,
            additional_contexts=output.additional_contexts,
        )
    return ToolCallOutcome(
        content=output.content,
        is_error=output.is_error,
        error=None,
        meta=output.meta,
        additional_contexts=output.additional_contexts,
    )
