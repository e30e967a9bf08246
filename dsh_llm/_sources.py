"""Message sources: who or what produced a message, discriminated on ``kind``.

Known kinds have typed models. Any other kind is kept as an :class:`UnknownSource`
carrying its fields as frozen JSON, so a log written by a newer or richer system
round-trips without loss. A human prompt is exactly ``source.kind == "user"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal, NotRequired, Self, TypeAlias, TypedDict, get_args

from pydantic import Field, JsonValue, model_validator

from dsh_llm._frozen_json import FrozenJson
from dsh_llm._ids import CallIdField, MessageIdField
from dsh_llm._model import DshModel, SerializedByMemberType, optional
from dsh_llm._open_model import OpenDshModel

KNOWN_SOURCE_KINDS = frozenset({"user", "plugin", "model", "tool"})
_KNOWN_KIND_NAMES: list[JsonValue] = [*sorted(KNOWN_SOURCE_KINDS)]


class UserSource(OpenDshModel):
    """A human prompt. Extra JSON fields (e.g. ``rpcId``) are kept, deep-frozen."""

    kind: Literal["user"] = "user"
    edit_of: MessageIdField | None = optional()
    """The prompt this one edits (``editOf`` on the wire): an edit is a new message with
    a new id, so it names the message whose text it changes."""


class SnapshotSection(DshModel):
    """One named section of a plugin ``snapshot`` form."""

    name: str
    text: str


PluginFormKind: TypeAlias = Literal[
    "instructions", "catalog", "snapshot", "notice", "relay", "recall"
]
"""The form kinds this version knows; others are kept as they are."""


class PluginForm(OpenDshModel):
    """How a plugin's context is presented. ``snapshot`` carries ``sections``;
    ``notice`` carries a ``summary`` of at most 120 characters. A kind this version
    does not know is kept with its fields, like an unknown source kind."""

    kind: str = Field(min_length=1, json_schema_extra={"examples": list(get_args(PluginFormKind))})
    """One of :data:`PluginFormKind`, or a newer kind."""
    sections: tuple[SnapshotSection, ...] | None = optional()
    """The sections of a ``snapshot``."""
    summary: str | None = optional(max_length=120)
    """The one-line summary of a ``notice``."""

    @model_validator(mode="after")
    def _fields_fit_kind(self) -> Self:
        if self.kind == "snapshot" and self.sections is None:
            raise ValueError("a 'snapshot' form needs 'sections'")
        if self.kind == "notice" and self.summary is None:
            raise ValueError("a 'notice' form needs a 'summary'")
        return self


class PluginSource(OpenDshModel):
    """Context that a program produced. Extra JSON fields (e.g. ``compactionId``)
    are kept, deep-frozen."""

    kind: Literal["plugin"] = "plugin"
    plugin: str = Field(min_length=1)
    """The producing plugin's name."""
    form: PluginForm | None = optional()
    """How the context is presented, when the plugin says."""


class ModelSource(DshModel):
    """Assistant output: which provider and model produced it."""

    kind: Literal["model"] = "model"
    provider: str = Field(min_length=1)
    model: str = Field(min_length=1)
    replay_state: FrozenJson | None = optional()
    """Provider state to send back on later requests to the same provider and model."""


class ToolSource(DshModel):
    """A tool result: the call it answers."""

    kind: Literal["tool"] = "tool"
    call_id: CallIdField


class UnknownSource(OpenDshModel):
    """A source kind this version does not know, kept losslessly as frozen JSON."""

    kind: str = Field(json_schema_extra={"not": {"enum": _KNOWN_KIND_NAMES}})
    """Any kind but the known ones (a known kind must match its own shape)."""

    @model_validator(mode="after")
    def _kind_is_unknown(self) -> Self:
        if self.kind in KNOWN_SOURCE_KINDS:
            raise ValueError(
                f"a {self.kind!r} source is not allowed here, or does not match its shape"
            )
        if not self.kind:
            raise ValueError("source kind must be a non-empty string")
        return self


KnownSource: TypeAlias = Annotated[
    UserSource | PluginSource | ModelSource | ToolSource, Field(discriminator="kind")
]
UserRoleSource: TypeAlias = Annotated[
    Annotated[UserSource | PluginSource, Field(discriminator="kind")] | UnknownSource,
    Field(union_mode="left_to_right"),
    SerializedByMemberType,
]
"""Sources a user- or system-role message may have (a tool source makes a
``ToolResultMessage``; a model source belongs to assistant messages)."""

Source: TypeAlias = Annotated[
    KnownSource | UnknownSource, Field(union_mode="left_to_right"), SerializedByMemberType
]
"""Any message source."""


class UserSourceDict(TypedDict):
    """A human prompt's source as a mapping, typed so a type checker catches a
    misspelled kind (``{"kind": "user"}``)."""

    kind: Literal["user"]
    editOf: NotRequired[str]


class PluginSourceDict(TypedDict):
    """Program context's source as a mapping (``{"kind": "plugin", "plugin": NAME}``)."""

    kind: Literal["plugin"]
    plugin: str
    form: NotRequired[PluginForm | Mapping[str, Any]]


UserSourceInput: TypeAlias = (
    UserSource
    | PluginSource
    | UnknownSource
    | UserSourceDict
    | PluginSourceDict
    | Mapping[str, Any]
)
"""What :func:`~dsh_llm._create.create_user_message` takes as ``source``. A plain mapping
stays accepted (extra fields such as ``rpcId`` are part of the format), and a mapping of
an unknown kind is refused at run time; annotate a mapping as :class:`UserSourceDict` or
:class:`PluginSourceDict`, or build the model (``UserSource()``, ``PluginSource(plugin=...)``),
to have a type checker catch a misspelled kind first. An unknown kind is created only
from an explicit :class:`UnknownSource`, or imported with a whole message."""

__all__ = [
    "KNOWN_SOURCE_KINDS",
    "KnownSource",
    "ModelSource",
    "PluginForm",
    "PluginFormKind",
    "PluginSource",
    "PluginSourceDict",
    "SnapshotSection",
    "Source",
    "ToolSource",
    "UnknownSource",
    "UserRoleSource",
    "UserSource",
    "UserSourceDict",
    "UserSourceInput",
]
