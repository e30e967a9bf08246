"""The demo's offline assistant: two tools and a deterministic stand-in for a model.

:func:`demo_model` reads a request the way a model would: it looks at what arrived
since its last answer (prompts, steers, tool results) and either asks for tool calls
or answers from the results. Played through a :class:`~dsh_llm.testing.FunctionAdapter`
it streams like a real provider, so the demo runs the real agent loop with no network.
"""

from __future__ import annotations

import ast
import asyncio
import operator
import re
from collections.abc import Callable, Sequence

from dsh_agent import ToolArgumentsError, tool
from dsh_llm import (
    AssistantMessage,
    GenerateRequest,
    Message,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
    UserSource,
)
from dsh_llm.testing import Reply, reply

TOOL_LATENCY = 0.2
"""Seconds a weather lookup takes: long enough for the demo to steer while it runs."""

_WEATHER = {
    "paris": "Paris: 17 °C, light rain",
    "tokyo": "Tokyo: 24 °C, clear skies",
    "lisbon": "Lisbon: 21 °C, sunny",
}
_EXPRESSION = re.compile(r"\d+(?:\.\d+)?(?:\s*[-+*/]\s*\(?\s*\d+(?:\.\d+)?\s*\)?)+")
_OPERATORS: dict[type[ast.AST], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


@tool
async def weather(city: str) -> str:
    """The current weather in a city."""
    await asyncio.sleep(TOOL_LATENCY)
    report = _WEATHER.get(city.strip().lower())
    if report is None:
        raise ToolArgumentsError(f"no weather data for {city!r}; try {', '.join(_WEATHER)}")
    return report


def _evaluate(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_evaluate(node.operand)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    raise ToolArgumentsError("only numbers, + - * / and parentheses are allowed")


@tool
async def calculate(expression: str) -> str:
    """Evaluate an arithmetic expression (numbers, + - * / and parentheses)."""
    try:
        value = _evaluate(ast.parse(expression, mode="eval").body)
    except (SyntaxError, ZeroDivisionError) as error:
        raise ToolArgumentsError(f"cannot evaluate {expression!r}: {error}") from None
    return f"{expression} = {value:g}"


DEMO_TOOLS = (weather, calculate)


def _text(message: Message) -> str:
    return " ".join(block.text for block in message.content if isinstance(block, TextBlock))


def _since_last_answer(messages: Sequence[Message]) -> list[Message]:
    """The messages after the assistant's last final answer (one with no tool calls)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, AssistantMessage) and not any(
            isinstance(block, ToolCallBlock) for block in message.content
        ):
            return list(messages[index + 1 :])
    return list(messages)


def _unanswered_asks(messages: Sequence[Message]) -> list[str]:
    """Human prompts and steers that arrived after the assistant last spoke."""
    asks: list[str] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            asks.clear()
        elif isinstance(message, UserMessage) and isinstance(message.source, UserSource):
            asks.append(_text(message))
    return asks


def _calls_for(ask: str) -> list[dict[str, object]]:
    lowered = ask.lower()
    calls: list[dict[str, object]] = [
        {"name": "weather", "arguments": {"city": city.title()}}
        for city in _WEATHER
        if city in lowered
    ]
    calls += [
        {"name": "calculate", "arguments": {"expression": match.group(0)}}
        for match in _EXPRESSION.finditer(ask)
    ]
    return calls


def demo_model(request: GenerateRequest) -> Reply:
    """Answer ``request`` like a small tool-using assistant would."""
    recent = _since_last_answer(request.messages)
    calls = [call for ask in _unanswered_asks(recent) for call in _calls_for(ask)]
    if calls:
        wanted = ", ".join(f"{call['name']}" for call in calls)
        return reply(reasoning=f"I need to call {wanted} before I can answer.", tool_calls=calls)
    results = [
        _text_of_result(message) for message in recent if isinstance(message, ToolResultMessage)
    ]
    if not results:
        return reply(text="I can look up the weather in Paris, Tokyo or Lisbon, and do sums.")
    return reply(
        reasoning="I have everything I asked for; time to answer.",
        text="Here is what I found: " + "; ".join(results) + ".",
    )


def _text_of_result(message: ToolResultMessage) -> str:
    return " ".join(
        block.text for block in message.content[0].content if isinstance(block, TextBlock)
    )


__all__ = [
    "DEMO_TOOLS",
    "TOOL_LATENCY",
    "calculate",
    "demo_model",
    "weather",
]
