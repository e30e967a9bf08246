"""One name for each concept across the three library packages
(docs/decisions/2026-12-04-one-name-per-concept.md).

- No two exported names share a spelling while being different objects: every
  package's ``__all__`` and the ``__all__`` of each of its public submodules.
- The tool call id is ``call_id`` everywhere: no exported pydantic model or dataclass
  holds a call id under another attribute name, and every ``call_id`` is a ``CallId``.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import re
import types
import typing
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from dsh_llm import CallId

PACKAGES = ("dsh_llm", "dsh_session", "dsh_agent")


def _public_modules() -> Iterator[types.ModuleType]:
    """Each package and every submodule whose dotted path has no ``_``-prefixed part."""
    for name in PACKAGES:
        package = importlib.import_module(name)
        yield package
        for info in pkgutil.walk_packages(package.__path__, prefix=f"{name}."):
            if any(part.startswith("_") for part in info.name.split(".")):
                continue
            yield importlib.import_module(info.name)


def _exports() -> list[tuple[str, str, object]]:
    """(module, name, object) for every name a public module exports: its ``__all__``,
    or, where it has none, every public name that is not a module."""
    found = []
    for module in _public_modules():
        names = getattr(module, "__all__", None)
        if names is None:
            names = [
                name
                for name, value in vars(module).items()
                if not name.startswith("_") and not isinstance(value, types.ModuleType)
            ]
        for name in names:
            found.append((module.__name__, name, getattr(module, name)))
    return found


EXPORTS = _exports()


def test_the_walk_sees_the_public_submodules() -> None:
    modules = {module for module, _, _ in EXPORTS}
    for expected in (
        "dsh_llm",
        "dsh_llm.providers",
        "dsh_llm.testing",
        "dsh_session",
        "dsh_session.stores",
        "dsh_session.events",
        "dsh_agent",
        "dsh_agent.approvals",
        "dsh_agent.compaction",
        "dsh_agent.retry",
        "dsh_agent.streaming",
        "dsh_agent.tracing",
        "dsh_agent.mcp",
        "dsh_agent.inbox",
        "dsh_agent.requests",
        "dsh_agent.testing",
        "dsh_agent.tools",
    ):
        assert expected in modules


def test_no_two_exported_names_are_different_objects() -> None:
    by_name: dict[str, dict[int, list[str]]] = {}
    for module, name, value in EXPORTS:
        by_name.setdefault(name, {}).setdefault(id(value), []).append(module)
    clashes = {
        name: sorted(modules for modules in objects.values())
        for name, objects in by_name.items()
        if len(objects) > 1
    }
    assert clashes == {}


def _holds_call_id(annotation: Any) -> bool:
    if isinstance(annotation, str):  # a hint that names a type-checking-only import
        return re.search(r"\bCallId\b", annotation) is not None
    if annotation is CallId:
        return True
    return any(_holds_call_id(arg) for arg in typing.get_args(annotation))


def _fields(cls: type) -> Iterator[tuple[str, Any]]:
    if isinstance(cls, type) and issubclass(cls, BaseModel):
        for name, info in cls.model_fields.items():
            yield name, info.annotation
    elif dataclasses.is_dataclass(cls):
        try:
            hints = typing.get_type_hints(cls)
        except NameError:
            hints = {}
        for field in dataclasses.fields(cls):
            yield field.name, hints.get(field.name, field.type)


EXPORTED_CLASSES = sorted(
    {
        (value.__module__, value.__qualname__): value
        for _, _, value in EXPORTS
        if isinstance(value, type)
    }.items()
)


@pytest.mark.parametrize(
    "cls", [cls for _, cls in EXPORTED_CLASSES], ids=[".".join(key) for key, _ in EXPORTED_CLASSES]
)
def test_a_call_id_is_named_call_id_and_typed_call_id(cls: type) -> None:
    for name, annotation in _fields(cls):
        if _holds_call_id(annotation):
            assert name == "call_id", f"{cls.__name__}.{name} holds a CallId"
        if name == "call_id":
            assert _holds_call_id(annotation), f"{cls.__name__}.call_id is {annotation!r}"
        assert name != "tool_call_id", f"{cls.__name__}.tool_call_id"


def test_the_call_id_keeps_its_wire_names() -> None:
    from dsh_llm import TextBlock, ToolCallBlock, ToolCallDeltaChunk, ToolResultBlock

    call = ToolCallBlock(call_id=CallId("c1"), name="f", arguments="{}")
    result = ToolResultBlock(call_id=CallId("c1"), content=(TextBlock(text="ok"),))
    delta = ToolCallDeltaChunk(index=0, call_id=CallId("c1"))
    assert call.model_dump_json() == '{"type":"tool-call","id":"c1","name":"f","arguments":"{}"}'
    assert result.model_dump_json() == (
        '{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"ok"}],'
        '"isError":false}'
    )
    assert (
        delta.model_dump_json()
        == '{"type":"tool-call-delta","index":0,"id":"c1","argumentsDelta":""}'
    )
    assert ToolCallBlock.model_validate_json(call.model_dump_json()) == call
    assert ToolResultBlock.model_validate_json(result.model_dump_json()) == result
    assert ToolCallDeltaChunk.model_validate_json(delta.model_dump_json()) == delta
