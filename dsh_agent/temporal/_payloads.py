"""What crosses Temporal: activity inputs and outputs, signal and query values.

Each names the session and positions in its log, never messages, so its size does not
depend on the conversation's length (the only text that crosses is one new user
input, once, on its way into the log). Plain dataclasses: Temporal's default data
converter writes them as JSON. (No ``from __future__ import annotations`` here: the
converter reads the field types at run time, inside the workflow sandbox too.)
"""

from dataclasses import dataclass
from typing import Literal

from dsh_llm import CallId

Lane = Literal["next-turn", "next-step"]
"""Where a delivered message waits: for a turn of its own (a followup) or for the
next step of the running turn, else of the next turn (a steer)."""


@dataclass(frozen=True, slots=True)
class ModelStepInput:
    """The input of a model-step activity."""

    store_url: str
    session_id: str
    from_seq: int
    """The seq the step starts from: the end of the log the workflow last saw."""
    message_ids: tuple[str, ...] = ()
    """The inputs the step is to take (already queued in the log's inbox)."""


@dataclass(frozen=True, slots=True)
class ToolStepInput:
    """The input of a tool-call activity: one call of the open step."""

    store_url: str
    session_id: str
    from_seq: int
    call_id: CallId


@dataclass(frozen=True, slots=True)
class DeliverInput:
    """The input of the activity that queues one user input in the log's inbox."""

    store_url: str
    session_id: str
    message_id: str
    """Chosen by the client (or the workflow, deterministically), so a delivery sent
    or retried twice is recognized."""
    text: str
    lane: Lane = "next-turn"


@dataclass(frozen=True, slots=True)
class SessionInput:
    """The value of the ``followup`` and ``steer`` signals: a user message whose id
    the client mints (the same id twice is stored once)."""

    message_id: str
    text: str


@dataclass(frozen=True, slots=True)
class AbortInput:
    """The input of the activity that closes the open turn as aborted."""

    store_url: str
    session_id: str
    from_seq: int


@dataclass(frozen=True, slots=True)
class DecisionInput:
    """The input of the activity that records a person's decision on a waiting call."""

    store_url: str
    session_id: str
    from_seq: int
    call_id: CallId
    approved: bool
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class StepReport:
    """What an activity did, as positions in the log: the output of every activity."""

    first_seq: int
    """The seq of the first event it appended."""
    end_seq: int
    """The seq the next event will get: it appended ``first_seq .. end_seq - 1``."""
    turn: int
    """The open turn after it, else the last turn (0: none yet)."""
    step: int | None
    """The open step after it, or ``None`` outside a step."""
    calls: tuple[str, ...]
    """The call ids of the open step's calls still without a result, in model order
    (plain strings: one name, ``call_id``, is kept for a single :data:`CallId`)."""
    awaiting_approval: tuple[str, ...]
    """Those of them that wait for a person's decision."""
    turn_end: str | None
    """How the turn it ended ended (``completed``, ``error``, ...), if it ended one."""
    queued: int
    """How many inputs wait in the inbox for turns of their own."""


@dataclass(frozen=True, slots=True)
class TurnOutcome:
    """What ``TemporalAgent.run`` returns: how the turn ended and where the log ends."""

    session_id: str
    turn: int
    reason: str | None
    """The ``turn/end`` reason's type; ``None`` when there was no input to answer."""
    end_seq: int
    queued: int
    """Inputs still queued for turns of their own."""


__all__ = [
    "AbortInput",
    "DecisionInput",
    "DeliverInput",
    "Lane",
    "ModelStepInput",
    "SessionInput",
    "StepReport",
    "ToolStepInput",
    "TurnOutcome",
]
