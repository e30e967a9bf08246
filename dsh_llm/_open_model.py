"""The frozen base of values that keep fields this version does not know (message
sources, foreign events), deep-frozen, for lossless round trips."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict, Field

from dsh_llm._fields_sets import shared_fields_set_unless_extras
from dsh_llm._frozen_json import FrozenDict, FrozenJson, frozen_copy
from dsh_llm._model import DshModel

_NO_EXTRAS = frozen_copy({})


class OpenDshModel(DshModel):
    """A frozen model that keeps unknown fields, deep-frozen, for lossless round trips."""

    model_config = ConfigDict(extra="allow")

    # Typed extras: pydantic-core freezes each unknown field while validating and
    # thaws it back to plain JSON when dumping, with no Python pass over the model.
    __pydantic_extra__: dict[str, FrozenJson] = Field(init=False)
    if not TYPE_CHECKING:
        __pydantic_fields_set__ = shared_fields_set_unless_extras

    def model_post_init(self, context: Any, /) -> None:
        """Swap the plain dict in which pydantic-core collects the unknown fields for a
        read-only one, so they cannot be rewritten behind the value's id."""
        extra = self.__pydantic_extra__
        if type(extra) is not FrozenDict:
            object.__setattr__(
                self, "__pydantic_extra__", frozen_copy(extra) if extra else _NO_EXTRAS
            )

    @property
    def model_extra(self) -> FrozenDict | None:
        """The unknown fields, as a read-only mapping."""
        extra: FrozenDict | None = self.__pydantic_extra__  # type: ignore[assignment]
        return extra


__all__ = [
    "OpenDshModel",
]
