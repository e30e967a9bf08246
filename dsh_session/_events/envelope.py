"""The envelope every event shares, and how a surface event changes the surface.

Every event dumps to the wire shape ``{"type", "seq", "time", "data",
"sourceEventSeqs"?, "surfaceOp"?, "ignorable"?}`` in camelCase. Each concrete event
class derives from :class:`SurfaceEvent` (it puts a message on the model-visible surface
and says how) or :class:`PlainEvent` (it carries no surface fields).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal, Self, TypeAlias

from pydantic import Discriminator, Field, Tag, TypeAdapter, field_validator

from dsh_llm._json_limits import JSON_INT_MAX
from dsh_llm._model import DshModel, optional

__all__ = [
    "NonNegativeInt",
    "PlainEvent",
    "Replace",
    "SessionEvent",
    "StepNumber",
    "SurfaceEvent",
    "SurfaceOp",
    "TurnNumber",
]

NonNegativeInt = Annotated[int, Field(ge=0, le=JSON_INT_MAX)]
TurnNumber = Annotated[int, Field(ge=1, le=JSON_INT_MAX)]
"""Turns are numbered from 1, continuing from the last ``turn/start`` in the log."""
StepNumber = Annotated[int, Field(ge=1, le=JSON_INT_MAX)]
"""Steps restart at 1 in each turn."""


# --- surface operations -----------------------------------------------------------------


class Replace(DshModel):
    """Replace the inclusive range of surface nodes from the one holding event ``start``
    to the one holding event ``end`` (both seqs) with the new event's message."""

    op: Literal["replace"] = "replace"
    start: NonNegativeInt
    end: NonNegativeInt


def _surface_op_kind(value: object) -> str | None:
    if value == "append":
        return "append"
    return "replace" if isinstance(value, (Replace, Mapping)) else None


SurfaceOp: TypeAlias = Annotated[
    Annotated[Literal["append"], Tag("append")] | Annotated[Replace, Tag("replace")],
    Discriminator(
        _surface_op_kind,
        custom_error_type="invalid_surface_op",
        custom_error_message="surfaceOp must be 'append' or {op: 'replace', start, end}",
    ),
]
"""How a surface event changes the model-visible surface: ``"append"`` or a
:class:`Replace`."""


# --- the envelope -----------------------------------------------------------------------

_ABSTRACT_ENVELOPE = (
    "SessionEvent is the abstract envelope; build a concrete event class "
    "(e.g. TurnStartEvent) or validate with SessionEventAdapter"
)


class SessionEvent(DshModel):
    """One durable event. Concrete events are its subclasses, tagged on ``type``;
    validate unknown input with :data:`~dsh_session.events.SessionEventAdapter` (or
    ``SessionEvent.model_validate``, which dispatches to it)."""

    type: str
    """The event type, e.g. ``turn/start``."""
    seq: NonNegativeInt
    """Position in the log, contiguous from 0."""
    time: NonNegativeInt
    """When the event was appended, epoch milliseconds."""
    data: Any
    """The typed payload (for ``user/message``, the message itself)."""
    source_event_seqs: tuple[NonNegativeInt, ...] | None = optional()
    """Events this one was made from (chunks, a tool call, shadowed nodes)."""
    surface_op: SurfaceOp | None = optional()
    """How a surface event changes the surface; only surface events carry it."""
    ignorable: bool | None = optional()
    """Readers that do not know this type may skip it."""

    # The refusal sits in ``__init__``, the way Python code builds a model. Marked as
    # pydantic's own ``__init__`` (``__pydantic_base_init__``), it is not called by
    # validation, which builds the concrete classes only: the guard costs appends
    # nothing (a ``__new__`` guard cost a Python frame per event).
    def __init__(self, /, **data: Any) -> None:
        if type(self) is SessionEvent:
            raise TypeError(_ABSTRACT_ENVELOPE)
        super().__init__(**data)

    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    @classmethod
    def model_validate(cls, obj: Any, **kwargs: Any) -> Self:
        """Validate an event; on the base class, dispatch on ``type``."""
        if cls is SessionEvent:
            return _adapter().validate_python(obj, **kwargs)  # type: ignore[no-any-return]
        return super().model_validate(obj, **kwargs)

    @classmethod
    def model_validate_json(cls, json_data: str | bytes | bytearray, **kwargs: Any) -> Self:
        """Validate an event from JSON; on the base class, dispatch on ``type``."""
        if cls is SessionEvent:
            return _adapter().validate_json(json_data, **kwargs)  # type: ignore[no-any-return]
        return super().model_validate_json(json_data, **kwargs)


_DISPATCH: list[TypeAdapter[Any]] = []
"""The adapter over every concrete event class, once :mod:`.log_event` has built it
(over classes built over this module, so it registers itself rather than being
imported here)."""


def register_dispatch(adapter: TypeAdapter[Any]) -> None:
    """Make ``adapter`` what ``SessionEvent.model_validate`` dispatches through."""
    _DISPATCH[:] = [adapter]


def _adapter() -> TypeAdapter[Any]:
    return _DISPATCH[0]


class SurfaceEvent(SessionEvent):
    """An event that puts a message on the surface; it must say how."""

    surface_op: SurfaceOp


class PlainEvent(SessionEvent):
    """An event that is not on the surface; it carries no surface fields."""

    # Always None, so never dumped: excluded outright rather than tested per dump.
    source_event_seqs: None = Field(default=None, exclude=True)
    surface_op: None = Field(default=None, exclude=True)

    @field_validator("source_event_seqs", "surface_op", mode="before")
    @classmethod
    def _not_on_surface(cls, value: object) -> object:
        if value is not None:
            raise ValueError(
                "only surface events (user/message, assistant/message, tool/result) "
                "carry surfaceOp or sourceEventSeqs"
            )
        return value
