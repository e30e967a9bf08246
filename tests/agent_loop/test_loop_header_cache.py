"""Loops built alike share one request header: the cached header must be exactly the
one a fresh build gives, for every input, or raise what a fresh build raises."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from dsh_agent import tool
from dsh_agent._engine.run_header import HEADER_CACHE_SIZE, _build_header, _headers, loop_header
from dsh_agent._model_settings import ModelSettings
from dsh_agent.tools import Tool


class Name(str):
    """A str subclass: equal to its text, yet not the same input."""


def make_tool(name: str, description: str) -> Tool:
    async def handler(arguments: dict[str, Any]) -> str:
        return "ok"

    return Tool(name=name, description=description, parameters={"type": "object"}, handler=handler)


@tool
async def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


ONE = make_tool("one", "first")
ONE_AGAIN = make_tool("one", "another tool of the same name")

PROVIDERS = ["p", Name("p")]
SYSTEMS: list[str | None] = [None, "", "You add.", Name("You add.")]
TOOLSETS: list[tuple[Tool, ...]] = [(), (add,), (ONE,), (ONE_AGAIN,), (add, ONE)]
SETTINGS: list[dict[str, Any]] = [
    {},
    {"temperature": 0},
    {"temperature": 0.0},
    {"temperature": False},
    {"max_tokens": 1},
    {"max_tokens": True},
    {"max_tokens": 1.0},
    {"max_tokens": 0},
    {"top_p": 1},
    {"top_p": 2},
    {"stop": ["a"]},
    {"stop": ("a",)},
    {"stop": [1]},
    {"stop": [["a"]]},  # unhashable
    {"reasoning_effort": "high"},
    {"temperature": float("nan")},
    {"temperature": {"x": 1}},  # unhashable
]


def outcome(build: Any, **arguments: Any) -> tuple[str, Any]:
    try:
        return "header", build(**arguments)
    except Exception as error:  # the same type and text either way
        return type(error).__name__, str(error)


def fresh_header(
    *, provider: str, model: str, system: str | None, tools: Any, settings: ModelSettings
) -> Any:
    return _build_header(provider, model, system, tools, settings)


@pytest.mark.parametrize("settings", SETTINGS, ids=repr)
def test_the_cached_header_is_the_one_a_fresh_build_gives(settings: dict[str, Any]) -> None:
    for _round, provider, system, tools in itertools.product(
        range(2), PROVIDERS, SYSTEMS, TOOLSETS
    ):
        arguments = {
            "provider": provider,
            "model": "m",
            "system": system,
            "tools": tools,
            "settings": ModelSettings(**settings),
        }
        fresh = outcome(fresh_header, **arguments)
        cached = outcome(loop_header, **arguments)
        assert cached == fresh
        if fresh[0] == "header":
            header = fresh[1]
            assert type(cached[1].config.provider) is type(header.config.provider)
            assert cached[1].model_dump_json() == header.model_dump_json()


def test_alike_loops_share_one_header_and_the_cache_is_bounded() -> None:
    settings = ModelSettings(temperature=0.5)
    first = loop_header(provider="p", model="m", system="s", tools=(add,), settings=settings)
    again = loop_header(
        provider="p", model="m", system="s", tools=[add], settings=ModelSettings(temperature=0.5)
    )
    assert again is first
    for index in range(HEADER_CACHE_SIZE + 5):
        loop_header(provider="p", model=f"m{index}", system=None, tools=(), settings=settings)
    assert len(_headers) == HEADER_CACHE_SIZE
    rebuilt = loop_header(provider="p", model="m", system="s", tools=(add,), settings=settings)
    assert rebuilt is not first and rebuilt == first  # evicted, then built again
