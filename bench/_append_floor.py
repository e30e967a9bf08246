"""The floor for ``Session.append``: a hand-written frozen Pydantic model of an
``assistant/chunk`` event (the commonest event of a turn), validated from Python
objects.

It checks what dsh's event model checks of that payload (the tagged chunk union,
non-negative indices, turn and step from 1) and nothing of the log (no seq or time
rules, no state machine, no observers). Like dsh's models it keeps one shared
``__pydantic_fields_set__`` per set of field names (the memory design of
docs/decisions/2026-12-03-shared-model-state.md), so ``append`` over this floor is the
price of the log's guarantees (issue 33: the floor with the shared fields set).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from dsh_llm._fields_sets import shared_fields_set


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    if not TYPE_CHECKING:  # as dsh_llm's models declare it
        __pydantic_fields_set__ = shared_fields_set


class _TextDelta(_Frozen):
    type: Literal["text-delta"]
    index: Annotated[int, Field(ge=0)]
    text: str


class _ReasoningDelta(_Frozen):
    type: Literal["reasoning-delta"]
    index: Annotated[int, Field(ge=0)]
    text: str


class _ChunkData(_Frozen):
    turn: Annotated[int, Field(ge=1)]
    step: Annotated[int, Field(ge=1)]
    chunk: Annotated[_TextDelta | _ReasoningDelta, Field(discriminator="type")]


class FloorChunkEvent(_Frozen):
    """``{"type", "seq", "time", "data"}`` of one ``assistant/chunk`` event."""

    type: Literal["assistant/chunk"]
    seq: Annotated[int, Field(ge=0)]
    time: Annotated[int, Field(ge=0)]
    data: _ChunkData
