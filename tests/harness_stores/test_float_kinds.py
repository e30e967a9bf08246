"""An event's kind decides, once, whether its JSON may hold a float: a kind that is
said float-free skips the byte screen, so every way a float can reach the JSON must
make its kind keep the screen."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, JsonValue, model_serializer

from dsh_llm._stream import (
    BlockEndChunk,
    BlockStartChunk,
    FinishChunk,
    ReasoningDeltaChunk,
    TextDeltaChunk,
    ToolCallDeltaChunk,
    UsageChunk,
)
from dsh_session import Session
from dsh_session._events.classes import AssistantChunkEvent
from dsh_session.stores._float_kinds import (
    _decide,
    may_hold_floats,
    model_float_free,
    schema_float_free,
)


class _Plain(BaseModel):
    name: str
    count: int
    flag: bool | None = None
    mode: Literal["a", "b"] = "a"
    tags: tuple[str, ...] = ()
    pairs: dict[str, int] = {}


class _Nested(BaseModel):
    inner: _Plain
    children: list[_Nested] = []


class _Float(BaseModel):
    value: float


class _DeepFloat(BaseModel):
    rows: list[dict[str, tuple[int, float]]]


class _AnyJson(BaseModel):
    value: JsonValue


class _Untyped(BaseModel):
    value: Any


class _FreeMapping(BaseModel):
    value: dict  # type: ignore[type-arg]


class _KeepsExtras(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str


class _FloatLiteral(BaseModel):
    value: Literal[0.5] = 0.5  # type: ignore[valid-type]  # pydantic takes it


class _CustomDump(BaseModel):
    name: str

    @model_serializer
    def _dump(self):  # type: ignore[no-untyped-def]  # no return type: anything
        return {"name": self.name}


@pytest.mark.parametrize("model", [_Plain, _Nested])
def test_models_of_strings_integers_and_booleans_are_float_free(model: type[BaseModel]) -> None:
    assert model_float_free(model)


@pytest.mark.parametrize(
    "model",
    [
        _Float,
        _DeepFloat,
        _AnyJson,
        _Untyped,
        _FreeMapping,
        _KeepsExtras,
        _FloatLiteral,
        _CustomDump,
    ],
)
def test_every_way_to_a_float_keeps_the_screen(model: type[BaseModel]) -> None:
    assert not model_float_free(model)


def test_a_schema_that_cannot_be_read_keeps_the_screen() -> None:
    assert not schema_float_free(None)
    assert not schema_float_free({"type": "decimal-of-some-kind"})


def _chunk_event(chunk: dict[str, Any]) -> Any:
    session = Session.create()
    session.append("turn/start", {"turn": 1})
    session.append("step/start", {"turn": 1, "step": 1})
    return session.append("assistant/chunk", {"turn": 1, "step": 1, "chunk": chunk})


def test_event_kinds_of_a_turn() -> None:
    session = Session.create()
    turn_start = session.append("turn/start", {"turn": 1})
    step_start = session.append("step/start", {"turn": 1, "step": 1})
    text = _chunk_event({"type": "text-delta", "index": 0, "text": "1.5"})
    assert type(text.data.chunk) is TextDeltaChunk
    # the turn's start may set a temperature in its run options
    assert may_hold_floats([turn_start, step_start, text, turn_start]) == [0, 3]


def test_chunk_kinds_are_decided_by_the_chunks_own_class() -> None:
    free = {
        cls: _decide(AssistantChunkEvent, cls)
        for cls in (
            BlockStartChunk,
            TextDeltaChunk,
            ReasoningDeltaChunk,
            ToolCallDeltaChunk,
            BlockEndChunk,
            UsageChunk,
            FinishChunk,
        )
    }
    assert free[TextDeltaChunk] and free[ReasoningDeltaChunk] and free[ToolCallDeltaChunk]
    assert not free[FinishChunk]  # it carries the provider's state as free JSON
    for cls, is_free in free.items():  # the envelope and data around it hold no float
        assert is_free == model_float_free(cls), cls
    assert not model_float_free(AssistantChunkEvent)  # through the finish chunk alone
