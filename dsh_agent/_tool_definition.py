"""What a tool is: a name, a description, the JSON Schema of its arguments and an async
handler (:class:`Tool`), built from a typed function by :func:`tool`, which validates
the arguments with Pydantic before the body runs; and what a handler may return
(:class:`ToolOutput`)."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Concatenate, Generic, ParamSpec, Protocol, TypeAlias, overload

from pydantic import ValidationError
from typing_extensions import TypeVar

from dsh_agent._tool_context import ToolContext
from dsh_agent._tool_schema import inspect_function
from dsh_agent.errors import ToolArgumentsError
from dsh_llm._content import (
    ContentBlock,
    ContentBlockAdapter,
    FileBlock,
    ImageBlock,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from dsh_llm._frozen_json import FrozenJson, freeze_json
from dsh_llm._messages import UserMessage
from dsh_llm._request import ToolSchema

_log = logging.getLogger("dsh_agent")

_BLOCK_TYPES = (TextBlock, ReasoningBlock, ImageBlock, FileBlock, ToolCallBlock, ToolResultBlock)


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
    concludes_turn: bool
    """No model step follows this step's results: the turn completes (the harness's
    ``concludesTurn``; e.g. a structured-output tool that received its answer)."""

    def __init__(
        self,
        content: ToolContent,
        is_error: bool = False,
        additional_contexts: Iterable[UserMessage] = (),
        meta: object = None,
        concludes_turn: bool = False,
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
        object.__setattr__(self, "concludes_turn", bool(concludes_turn))


ToolReturn: TypeAlias = str | Sequence[ContentBlock | Mapping[str, Any]] | ToolOutput
"""Anything a handler may return."""

DepsT_contra = TypeVar("DepsT_contra", contravariant=True, default=Any)
"""The dependencies a tool needs from ``ToolContext.deps`` (``Any``: no requirement)."""
DepsT = TypeVar("DepsT")
P = ParamSpec("P")

ToolHandler: TypeAlias = (
    Callable[[dict[str, Any]], Awaitable[ToolReturn]]
    | Callable[[dict[str, Any], ToolContext[DepsT_contra]], Awaitable[ToolReturn]]
)
"""``async def handler(arguments)`` or ``async def handler(arguments, context)``."""


@dataclass(frozen=True, slots=True)
class Tool(Generic[DepsT_contra]):
    """A tool the model may call: ``parameters`` is the JSON Schema of the arguments
    object sent to the model; ``handler`` receives the parsed arguments (a dict) and,
    if it declares a second parameter, a :class:`ToolContext`. A tool that
    ``requires_approval`` runs only once a person approved the call
    (:mod:`dsh_agent.approvals`); a ``concurrency_safe`` tool may run at the same time
    as the adjacent safe calls of the same step."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    handler: ToolHandler[DepsT_contra]
    requires_approval: bool = False
    concurrency_safe: bool = False
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

    async def invoke(
        self, arguments: dict[str, Any], context: ToolContext[DepsT_contra]
    ) -> ToolReturn:
        """Run the handler on parsed arguments; it may raise."""
        if self._wants_context:
            return await self.handler(arguments, context)  # type: ignore[call-arg]
        return await self.handler(arguments)  # type: ignore[call-arg]

    def _arguments_refused(self, problem: str) -> ToolOutput | None:
        """This tool's own answer to arguments that do not parse into an object, or
        None for the standard ``TOOL_ARGUMENTS_INVALID`` failure (the final-result tool
        counts them as failed attempts: :mod:`dsh_agent._structured_output`)."""
        return None


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


class ToolDecorator(Protocol):
    """What ``@tool(...)`` with options returns: the decorator itself."""

    @overload
    def __call__(
        self, fn: Callable[Concatenate[ToolContext[DepsT], P], object], /
    ) -> Tool[DepsT]: ...

    @overload
    def __call__(self, fn: Callable[..., object], /) -> Tool[object]: ...


@overload
def tool(fn: Callable[Concatenate[ToolContext[DepsT], P], object], /) -> Tool[DepsT]: ...


@overload
def tool(fn: Callable[..., object], /) -> Tool[object]: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    requires_approval: bool = False,
    concurrency_safe: bool = False,
) -> ToolDecorator: ...


def tool(
    fn: Callable[..., object] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    requires_approval: bool = False,
    concurrency_safe: bool = False,
) -> Tool | ToolDecorator:
    """Build a :class:`Tool` from a typed function: the name is the function's, the
    description its docstring's prose, the schema comes from its annotations, defaults
    and ``Field(...)`` specs, with the docstring's argument descriptions (Google, NumPy
    or Sphinx style). The arguments are validated with Pydantic before the body runs;
    a plain ``def`` runs in a worker thread so it cannot block the loop. A parameter
    annotated :class:`ToolContext` (first, for mypy to check ``ToolContext[Deps]``
    against the loop's ``deps``) receives the call's context. Use as ``@tool`` or
    ``@tool(name=..., description=..., requires_approval=..., concurrency_safe=...)``."""

    def build(function: Callable[..., object]) -> Tool:
        return _tool_from_function(
            function,
            name=name,
            description=description,
            requires_approval=requires_approval,
            concurrency_safe=concurrency_safe,
        )

    return build if fn is None else build(fn)


def _tool_from_function(
    function: Callable[..., object],
    *,
    name: str | None,
    description: str | None,
    requires_approval: bool,
    concurrency_safe: bool,
) -> Tool:
    if not callable(function) or inspect.isclass(function):
        raise TypeError(f"@tool needs a function, got {function!r}")
    tool_name = name or getattr(function, "__name__", "") or type(function).__name__
    signature = inspect_function(function, tool_name)
    context_parameter = signature.context_parameter
    is_async = inspect.iscoroutinefunction(function)

    async def handler(arguments: dict[str, Any], context: ToolContext) -> ToolReturn:
        try:
            values = signature.arguments(arguments)
        except ValidationError as error:
            raise ToolArgumentsError(_describe_validation(tool_name, error)) from None
        if context_parameter is not None:
            values[context_parameter] = context
        if is_async:
            returned: Any = await function(**values)  # type: ignore[misc]
        else:
            returned = await asyncio.to_thread(function, **values)
        return returned  # type: ignore[no-any-return]

    return Tool(
        name=tool_name,
        description=signature.description if description is None else description,
        parameters=signature.parameters,
        handler=handler,
        requires_approval=requires_approval,
        concurrency_safe=concurrency_safe,
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


__all__ = [
    "Tool",
    "ToolContent",
    "ToolDecorator",
    "ToolHandler",
    "ToolOutput",
    "ToolReturn",
    "tool",
]
