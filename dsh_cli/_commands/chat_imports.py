"""``--tools MODULE:NAME`` and ``--deps MODULE:NAME``: what ``dsh chat`` takes from the
user's own Python code.

``--tools`` names a :class:`~dsh_agent.Tool` (made with ``@tool``) or a sequence of
them. ``--deps`` names a function that takes no arguments and returns the object the
tools receive as ``ctx.deps`` (an ``async def`` is awaited); it is called once, before
the chat starts. Modules are imported from ``sys.path`` or, failing that, the current
directory (as ``python -m`` would find them). Anything else is one error line naming
what was given and what was expected.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from collections.abc import Callable, Iterable

from dsh_agent import Tool
from dsh_cli._errors import ToolSpecError

TOOLS_EXPECTED = "a dsh tool (a function decorated with @tool) or a list or tuple of them"
DEPS_EXPECTED = "a function that takes no arguments and returns the tools' dependencies"


def import_named(option: str, spec: str) -> tuple[str, object]:
    """The object ``MODULE:NAME`` names, and NAME."""
    module_name, colon, attribute = spec.partition(":")
    if not colon or not module_name or not attribute:
        raise ToolSpecError(f"{option} takes MODULE:NAME, not {spec!r}")
    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ToolSpecError(f"{option} {spec}: cannot import {module_name!r}: {error}") from None
    if not hasattr(module, attribute):
        raise ToolSpecError(f"{option} {spec}: module {module_name!r} has no {attribute!r}")
    return attribute, getattr(module, attribute)


def describe_value(value: object) -> str:
    """What a value is, in words, for an error line."""
    if inspect.isclass(value):
        return f"the class {value.__name__}"
    if inspect.isroutine(value):
        return "a plain function"
    kind = type(value).__name__
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"


def load_tools(spec: str) -> tuple[Tool, ...]:
    """The tools ``MODULE:NAME`` holds."""
    name, value = import_named("--tools", spec)
    if isinstance(value, Tool):
        return (value,)
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise ToolSpecError(
            f"--tools {spec}: {name} is {describe_value(value)}; expected {TOOLS_EXPECTED}"
        )
    tools = tuple(value)
    strangers = [item for item in tools if not isinstance(item, Tool)]
    if strangers:
        raise ToolSpecError(
            f"--tools {spec}: {name} holds {describe_value(strangers[0])}; "
            f"expected {TOOLS_EXPECTED}"
        )
    return tools


async def load_deps(spec: str) -> object:
    """The dependencies the function ``MODULE:NAME`` makes (awaited if it is async)."""
    name, factory = import_named("--deps", spec)
    if not callable(factory):
        raise ToolSpecError(
            f"--deps {spec}: {name} is {describe_value(factory)}; expected {DEPS_EXPECTED}"
        )
    if not _takes_no_arguments(factory):
        raise ToolSpecError(
            f"--deps {spec}: {name}{inspect.signature(factory)} needs arguments; "
            f"expected {DEPS_EXPECTED}"
        )
    deps = factory()
    if inspect.isawaitable(deps):
        deps = await deps
    return deps


def _takes_no_arguments(function: Callable[..., object]) -> bool:
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return True  # a builtin without a signature: let the call say
    return all(
        parameter.default is not parameter.empty
        or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)
        for parameter in signature.parameters.values()
    )


__all__ = [
    "DEPS_EXPECTED",
    "TOOLS_EXPECTED",
    "describe_value",
    "import_named",
    "load_deps",
    "load_tools",
]
