"""Why a turn was cancelled (:data:`CancelCause`) and why it ended
(:data:`TurnEndReason`), each tagged on ``kind``."""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

from pydantic import Field

from dsh_llm._failure import LlmFailure
from dsh_llm._model import DshModel

__all__ = [
    "AbortedReason",
    "BlockedReason",
    "CancelCause",
    "CompletedReason",
    "DisposedCause",
    "ErrorReason",
    "HookCause",
    "InterruptedReason",
    "LegacyCause",
    "MaxTokensReason",
    "ParentCause",
    "TurnEndReason",
    "UserCause",
]


# --- cancel causes ----------------------------------------------------------------------


class UserCause(DshModel):
    """The user cancelled."""

    kind: Literal["user"] = "user"


class ParentCause(DshModel):
    """The parent agent cancelled this one."""

    kind: Literal["parent"] = "parent"


class HookCause(DshModel):
    """A hook cancelled the turn, saying why."""

    kind: Literal["hook"] = "hook"
    reason: str


class DisposedCause(DshModel):
    """The agent was disposed while the turn ran."""

    kind: Literal["disposed"] = "disposed"


class LegacyCause(DshModel):
    """A turn aborted in a log older than causes; the harness's legacy migration
    writes it for a stored ``{kind: "aborted"}``."""

    kind: Literal["legacy"] = "legacy"


CancelCause: TypeAlias = Annotated[
    UserCause | ParentCause | HookCause | DisposedCause | LegacyCause,
    Field(discriminator="kind"),
]
"""Why a turn was cancelled, tagged on ``kind``; the first cause wins."""


# --- turn-end reasons -------------------------------------------------------------------


class CompletedReason(DshModel):
    """The model finished and nothing forced another step."""

    kind: Literal["completed"] = "completed"


class AbortedReason(DshModel):
    """The turn was cancelled."""

    kind: Literal["aborted"] = "aborted"
    reason: CancelCause


class BlockedReason(DshModel):
    """A pre-step handler rejected the step."""

    kind: Literal["blocked"] = "blocked"


class ErrorReason(DshModel):
    """The model call or the loop failed."""

    kind: Literal["error"] = "error"
    error: LlmFailure


class MaxTokensReason(DshModel):
    """A step hit the output token limit (sticky for the rest of the turn)."""

    kind: Literal["max-tokens"] = "max-tokens"


class InterruptedReason(DshModel):
    """The process stopped mid-turn; written only by crash repair."""

    kind: Literal["interrupted"] = "interrupted"


TurnEndReason: TypeAlias = Annotated[
    CompletedReason
    | AbortedReason
    | BlockedReason
    | ErrorReason
    | MaxTokensReason
    | InterruptedReason,
    Field(discriminator="kind"),
]
"""Why a turn ended, tagged on ``kind``."""
