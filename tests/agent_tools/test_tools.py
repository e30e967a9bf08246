"""Tools: building them from typed functions, and executing one requested call.

The executor never raises for a tool problem: every failure is an error outcome with
a stable code and a text the model can act on.
"""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from dsh_agent.errors import ToolArgumentsError
from dsh_agent.tools import Tool, ToolCallOutcome, ToolContext, ToolOutput, execute_tool_call, tool
from dsh_llm import (
    MAX_JSON_DEPTH,
    ImageBlock,
    TextBlock,
    ToolCallBlock,
    ToolSchema,
    create_tool_result_message,
    create_user_message,
)
from dsh_session import ToolErrorInfo, ToolResultData


def call(name: str, arguments: str, call_id: str = "call-1") -> ToolCallBlock:
    return ToolCallBlock(call_id=call_id, name=name, arguments=arguments)


def context(call_id: str = "call-1", *, cancelled: bool = False) -> ToolContext:
    event = asyncio.Event()
    if cancelled:
        event.set()
    return ToolContext(call_id=call_id, turn=3, step=2, cancelled=event)  # type: ignore[arg-type]


async def run(tools: list[Tool], name: str, arguments: str) -> ToolCallOutcome:
    return await execute_tool_call({t.name: t for t in tools}, call(name, arguments), context())


def text_of(outcome: ToolCallOutcome) -> str:
    return "\n".join(block.text for block in outcome.content if isinstance(block, TextBlock))


class Point(BaseModel):
    x: int
    y: int


@tool
async def move(
    point: Point, distance: Annotated[float, Field(description="How far, in metres.")] = 1.0
) -> str:
    """Move a point to the right."""
    return f"({point.x + distance}, {point.y})"


# --- building tools ---------------------------------------------------------------------


def test_tool_decorator_takes_name_docstring_and_schema_from_the_function() -> None:
    assert move.name == "move"
    assert move.description == "Move a point to the right."
    schema = move.parameters
    assert schema["type"] == "object"
    assert schema["required"] == ("point",)
    assert schema["additionalProperties"] is False
    assert schema["properties"]["distance"]["description"] == "How far, in metres."
    assert schema["properties"]["distance"]["default"] == 1.0


def test_tool_decorator_accepts_name_and_description() -> None:
    @tool(name="lookup", description="Find a word.")
    async def find_word(word: str) -> str:
        """Ignored docstring."""
        return word

    assert (find_word.name, find_word.description) == ("lookup", "Find a word.")


def test_schema_is_the_tool_schema_sent_to_the_model_and_is_built_once() -> None:
    schema = move.schema()
    assert isinstance(schema, ToolSchema)
    assert schema.name == "move"
    assert schema.parameters == move.parameters
    assert move.schema() is schema


def test_parameters_are_frozen() -> None:
    with pytest.raises(TypeError):
        move.parameters["type"] = "array"  # type: ignore[index]


def test_a_sync_raw_handler_is_refused() -> None:
    """A raw handler must be async; ``@tool`` is the way to a plain ``def`` tool."""

    def not_async(arguments: dict[str, Any]) -> str:
        return ""

    with pytest.raises(TypeError, match="async"):
        Tool(name="x", description="", parameters={}, handler=not_async)  # type: ignore[arg-type]


def test_parameters_must_be_a_schema_object() -> None:
    async def noop(arguments: dict[str, Any]) -> str:
        return ""

    with pytest.raises(TypeError, match="JSON Schema object"):
        Tool(name="x", description="", parameters=["not", "a", "schema"], handler=noop)  # type: ignore[arg-type]


def test_an_unresolvable_annotation_is_reported_at_decoration() -> None:
    async def lookup(word: Undefined) -> str:  # type: ignore[name-defined]  # noqa: F821
        return ""

    with pytest.raises(TypeError, match="'lookup': cannot resolve an annotation"):
        tool(lookup)


def test_variadic_parameters_are_refused_by_the_decorator() -> None:
    async def variadic(*words: str) -> str:
        return ""

    with pytest.raises(TypeError, match="words"):
        tool(variadic)


async def test_a_parameter_may_share_a_name_with_a_pydantic_method() -> None:
    @tool
    async def emit(json: str, schema: int = 0) -> str:
        """Parameters named like BaseModel attributes still work."""
        return f"{json}/{schema}"

    assert set(emit.parameters["properties"]) == {"json", "schema"}
    assert text_of(await run([emit], "emit", '{"json": "a", "schema": 2}')) == "a/2"


# --- successful calls -------------------------------------------------------------------


async def test_arguments_are_validated_and_converted_before_the_body_runs() -> None:
    outcome = await run([move], "move", '{"point": {"x": 1, "y": 2}, "distance": 2}')
    assert not outcome.is_error
    assert outcome.error is None
    assert text_of(outcome) == "(3.0, 2)"


async def test_empty_arguments_mean_an_empty_object() -> None:
    @tool
    async def ping() -> str:
        """Answer pong."""
        return "pong"

    for raw in ("", "  "):
        assert text_of(await run([ping], "ping", raw)) == "pong"


async def test_a_raw_handler_gets_the_parsed_arguments() -> None:
    seen: list[dict[str, Any]] = []

    async def record(arguments: dict[str, Any]) -> str:
        seen.append(arguments)
        return "ok"

    raw = Tool(name="record", description="", parameters={"type": "object"}, handler=record)
    await run([raw], "record", '{"a": [1, 2], "b": null}')
    assert seen == [{"a": [1, 2], "b": None}]


async def test_handler_may_return_blocks_or_block_mappings() -> None:
    async def blocks(arguments: dict[str, Any]) -> list[Any]:
        return [
            TextBlock(text="a chart"),
            {"type": "image", "mediaType": "image/png", "url": "https://example.test/c.png"},
        ]

    outcome = await run([Tool("chart", "", {}, blocks)], "chart", "{}")
    assert outcome.content[0] == TextBlock(text="a chart")
    assert isinstance(outcome.content[1], ImageBlock)
    assert outcome.content[1].url == "https://example.test/c.png"


async def test_tool_output_keeps_error_flag_meta_and_additional_contexts() -> None:
    extra = create_user_message(
        content="the file changed", source={"kind": "plugin", "plugin": "fs"}
    )

    async def report(arguments: dict[str, Any]) -> ToolOutput:
        return ToolOutput(
            "disk full", is_error=True, additional_contexts=[extra], meta={"bytes": [1, 2]}
        )

    outcome = await run([Tool("report", "", {}, report)], "report", "{}")
    assert outcome.is_error
    assert outcome.error is None  # the tool reported its own failure; the call itself worked
    assert text_of(outcome) == "disk full"
    assert outcome.additional_contexts[0] is extra
    assert outcome.meta == {"bytes": (1, 2)}


async def test_an_outcome_becomes_a_valid_tool_result_payload() -> None:
    outcome = await run([move], "move", '{"point": {"x": 0, "y": 0}}')
    message = create_tool_result_message(
        call_id="call-1", content=outcome.content, is_error=outcome.is_error
    )
    data = ToolResultData(turn=1, step=1, message=message, error=outcome.error, meta=outcome.meta)
    assert data.model_dump(mode="json")["message"]["content"][0]["content"] == [
        {"type": "text", "text": "(1.0, 0)"}
    ]


def test_tool_output_rejects_a_message_that_is_not_a_user_message() -> None:
    result = create_tool_result_message(call_id="c", content="x")
    with pytest.raises(TypeError, match=r"additional_contexts\[0\]"):
        ToolOutput("x", additional_contexts=[result])  # type: ignore[list-item]


# --- error outcomes ---------------------------------------------------------------------


async def test_invalid_json_arguments_are_reported_and_the_body_does_not_run() -> None:
    ran = False

    @tool
    async def touch(path: str) -> str:
        """Touch a file."""
        nonlocal ran
        ran = True
        return path

    outcome = await run([touch], "touch", '{"path": "a"')
    assert outcome.is_error
    assert outcome.error == ToolErrorInfo(name="ToolArgumentsError", code="TOOL_ARGUMENTS_INVALID")
    assert "not valid JSON" in text_of(outcome)
    assert not ran


def nested(levels: int) -> str:
    """An arguments object ``levels`` levels deep: objects and arrays in turn."""
    opening = "".join('{"a": ' if level % 2 == 0 else "[" for level in range(levels))
    closing = "".join("}" if level % 2 == 0 else "]" for level in reversed(range(levels)))
    return opening + "1" + closing


def recording_tool() -> tuple[Tool, list[dict[str, Any]]]:
    seen: list[dict[str, Any]] = []

    async def record(arguments: dict[str, Any]) -> str:
        seen.append(arguments)
        return "ok"

    return Tool(name="record", description="", parameters={"type": "object"}, handler=record), seen


@pytest.mark.parametrize("levels", [MAX_JSON_DEPTH + 1, 100_000])
async def test_arguments_deeper_than_the_nesting_limit_are_refused(levels: int) -> None:
    record, seen = recording_tool()
    outcome = await run([record], "record", nested(levels))
    assert outcome.error == ToolErrorInfo(name="ToolArgumentsError", code="TOOL_ARGUMENTS_INVALID")
    assert f"MAX_JSON_DEPTH={MAX_JSON_DEPTH}" in text_of(outcome)
    assert seen == []


async def test_arguments_at_the_nesting_limit_reach_the_handler() -> None:
    record, seen = recording_tool()
    outcome = await run([record], "record", nested(MAX_JSON_DEPTH))
    assert outcome.error is None
    assert seen == [json.loads(nested(MAX_JSON_DEPTH))]


async def test_an_integer_too_long_to_read_is_invalid_json() -> None:
    record, seen = recording_tool()
    outcome = await run([record], "record", '{"n": ' + "7" * 10_000 + "}")
    assert outcome.error is not None and outcome.error.code == "TOOL_ARGUMENTS_INVALID"
    assert "not valid JSON" in text_of(outcome)
    assert seen == []


async def test_arguments_that_are_not_an_object_are_invalid() -> None:
    outcome = await run([move], "move", "[1, 2]")
    assert outcome.error is not None and outcome.error.code == "TOOL_ARGUMENTS_INVALID"
    assert "JSON object" in text_of(outcome)


async def test_a_validation_failure_names_the_field() -> None:
    outcome = await run([move], "move", '{"point": {"x": "left", "y": 2}}')
    assert outcome.error is not None and outcome.error.code == "TOOL_ARGUMENTS_INVALID"
    text = text_of(outcome)
    assert "'point.x'" in text
    assert "valid integer" in text
    assert "'move'" in text


async def test_missing_and_unknown_arguments_are_named() -> None:
    outcome = await run([move], "move", '{"distance": 1, "speed": 3}')
    text = text_of(outcome)
    assert "'point': Field required" in text
    assert "'speed'" in text


async def test_a_raw_handler_may_reject_its_arguments() -> None:
    async def picky(arguments: dict[str, Any]) -> str:
        raise ToolArgumentsError("'when' must be a date in the future")

    outcome = await run([Tool("picky", "", {}, picky)], "picky", "{}")
    assert outcome.error is not None and outcome.error.code == "TOOL_ARGUMENTS_INVALID"
    assert "'when' must be a date in the future" in text_of(outcome)


async def test_an_unknown_tool_is_reported_with_the_available_names() -> None:
    outcome = await run([move], "teleport", "{}")
    assert outcome.is_error
    assert outcome.error == ToolErrorInfo(name="ToolNotFoundError", code="TOOL_NOT_FOUND")
    assert "'teleport'" in text_of(outcome)
    assert "Available tools: move" in text_of(outcome)


async def test_a_handler_that_raises_gives_tool_failed_with_its_error() -> None:
    @tool
    async def divide(a: int, b: int) -> str:
        """Divide a by b."""
        return str(a // b)

    outcome = await run([divide], "divide", '{"a": 1, "b": 0}')
    assert outcome.is_error
    assert outcome.error == ToolErrorInfo(name="ZeroDivisionError", code="TOOL_FAILED")
    assert "ZeroDivisionError" in text_of(outcome)
    assert "'divide'" in text_of(outcome)


async def test_a_handler_returning_something_else_gives_tool_failed() -> None:
    async def number(arguments: dict[str, Any]) -> Any:
        return 42

    outcome = await run([Tool("number", "", {}, number)], "number", "{}")
    assert outcome.error is not None and outcome.error.code == "TOOL_FAILED"
    assert "int" in text_of(outcome)


# --- context and cancellation -----------------------------------------------------------


async def test_a_handler_with_a_second_parameter_gets_the_context() -> None:
    seen: list[ToolContext] = []

    async def spy(arguments: dict[str, Any], ctx: ToolContext) -> str:
        seen.append(ctx)
        return ""

    ctx = context("call-9")
    await execute_tool_call({"spy": Tool("spy", "", {}, spy)}, call("spy", "{}", "call-9"), ctx)
    assert seen == [ctx]
    assert (seen[0].call_id, seen[0].turn, seen[0].step) == ("call-9", 3, 2)


async def test_a_decorated_parameter_typed_tool_context_gets_the_context() -> None:
    @tool
    async def where(label: str, ctx: ToolContext) -> str:
        """Say where the call runs."""
        return f"{label}: turn {ctx.turn} step {ctx.step}"

    assert set(where.parameters["properties"]) == {"label"}
    assert text_of(await run([where], "where", '{"label": "here"}')) == "here: turn 3 step 2"


async def test_a_tool_that_stops_because_of_cancellation_gets_tool_cancelled() -> None:
    started = asyncio.Event()

    async def wait_for_cancel(arguments: dict[str, Any], ctx: ToolContext) -> str:
        started.set()
        await ctx.cancelled.wait()
        return "stopped at item 3"

    ctx = context()
    task = asyncio.create_task(
        execute_tool_call({"w": Tool("w", "", {}, wait_for_cancel)}, call("w", "{}"), ctx)
    )
    await started.wait()
    ctx.cancelled.set()
    outcome = await task
    assert outcome.is_error
    assert outcome.error == ToolErrorInfo(name="ToolCancelledError", code="TOOL_CANCELLED")
    assert "cancelled" in text_of(outcome)
    assert "stopped at item 3" in text_of(outcome)  # what it returned is not lost


async def test_a_running_tool_is_not_killed_by_cancellation() -> None:
    finished = False

    async def slow(arguments: dict[str, Any], ctx: ToolContext) -> str:
        nonlocal finished
        ctx.cancelled.set()  # the turn is cancelled while the body runs
        await asyncio.sleep(0.01)
        finished = True
        return "done"

    outcome = await run([Tool("slow", "", {}, slow)], "slow", "{}")
    assert finished
    assert outcome.error is not None and outcome.error.code == "TOOL_CANCELLED"


async def test_a_tool_raising_cancelled_error_gets_tool_cancelled() -> None:
    async def give_up(arguments: dict[str, Any], ctx: ToolContext) -> str:
        raise asyncio.CancelledError

    outcome = await run([Tool("give_up", "", {}, give_up)], "give_up", "{}")
    assert outcome.error == ToolErrorInfo(name="ToolCancelledError", code="TOOL_CANCELLED")


async def test_cancelling_the_task_running_the_call_still_cancels_it() -> None:
    started = asyncio.Event()

    async def forever(arguments: dict[str, Any]) -> str:
        started.set()
        await asyncio.Event().wait()
        return ""

    task = asyncio.create_task(run([Tool("forever", "", {}, forever)], "forever", "{}"))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
