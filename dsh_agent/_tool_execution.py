"""The executor: one requested tool call in, one outcome out, never an exception for a
tool problem (a bad argument, an unknown tool, a failing or cancelled handler become an
error outcome with a stable code and a text the model can act on)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dsh_agent._model_json import _ModelJsonError, parse_model_json
from dsh_agent._tool_context import ToolContext
from dsh_agent._tool_definition import Tool, ToolOutput, ToolReturn
from dsh_agent.errors import ToolArgumentsError
from dsh_llm._content import ContentBlock, TextBlock, ToolCallBlock
from dsh_llm._failure import describe_exception
from dsh_llm._frozen_json import FrozenJson
from dsh_llm._messages import UserMessage
from dsh_session.events import ToolErrorInfo
from dsh_session.tool_failure_codes import (
    TOOL_ARGUMENTS_INVALID,
    TOOL_CANCELLED,
    TOOL_FAILED,
    TOOL_NOT_FOUND,
)

_log = logging.getLogger("dsh_agent")


@dataclass(frozen=True, slots=True)
class ToolCallOutcome:
    """What one call produced, ready to become a ``tool/result`` when committed."""

    content: tuple[ContentBlock, ...]
    is_error: bool
    error: ToolErrorInfo | None
    """The harness-level failure (name and stable code), when the call failed as a call."""
    meta: FrozenJson | None
    additional_contexts: tuple[UserMessage, ...]
    concludes_turn: bool = False


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
    except _ModelJsonError as error:
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
        try:
            arguments = _parse_arguments(call.arguments)
        except ToolArgumentsError as error:
            refused = selected._arguments_refused(describe_exception(error, with_type=False))
            if refused is None:
                raise
            returned: ToolReturn = refused
        else:
            returned = await selected.invoke(arguments, context)
        output = returned if isinstance(returned, ToolOutput) else ToolOutput(returned)
    except ToolArgumentsError as error:
        return _failure(
            f"{describe_exception(error, with_type=False)}. Fix the arguments and call "
            "the tool again.",
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
        _log.warning("tool %r (call %s) raised", call.name, call.call_id, exc_info=True)
        return _failure(
            f"tool {call.name!r} failed: {describe_exception(error)}",
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
        concludes_turn=output.concludes_turn,
    )


__all__ = ["ToolCallOutcome", "execute_tool_call"]
