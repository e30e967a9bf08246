"""The approvals of the open turn, folded from the log.

A tool call that needs a person's approval is asked about with ``approval/asked``
(``callId`` names the call) and answered with ``approval/decided`` of the same ``id``,
both inside the open turn, as the harness's user-approval package writes them. A turn
whose open step has a call still asked about and undecided is *waiting on approval*:
it stays open across a process exit, and crash repair (:mod:`dsh_session._repair`)
leaves it open, because a person can still answer and the call never started.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dsh_llm._ids import CallId
from dsh_session.events import (
    ApprovalAskedEvent,
    ApprovalDecidedEvent,
    SessionEvent,
    TurnEndEvent,
    TurnStartEvent,
)


@dataclass(frozen=True, slots=True)
class ApprovalRecord:
    """One ``approval/asked`` about a tool call, with its decision once there is one."""

    asked: ApprovalAskedEvent
    decided: ApprovalDecidedEvent | None

    @property
    def call_id(self) -> CallId:
        assert self.asked.data.call_id is not None  # only asks about a call are kept
        return self.asked.data.call_id


def open_turn_approvals(events: Sequence[SessionEvent]) -> dict[CallId, ApprovalRecord]:
    """The asks about tool calls in the open turn, by call id, in log order (empty
    between turns). A call asked about twice keeps its latest ask."""
    start = _open_turn_start(events)
    return {} if start is None else approvals_since(events, start)


def approvals_since(events: Sequence[SessionEvent], start: int) -> dict[CallId, ApprovalRecord]:
    """The asks about tool calls from ``events[start]`` on, with their decisions, by
    call id. An agent asks and decides in the step of the call, so the fold from the
    open step's start costs the step's length, not the turn's."""
    by_request: dict[str, ApprovalRecord] = {}
    by_call: dict[CallId, ApprovalRecord] = {}
    for event in events[start:]:
        if isinstance(event, ApprovalAskedEvent) and event.data.call_id is not None:
            record = ApprovalRecord(asked=event, decided=None)
            by_request[event.data.id] = by_call[event.data.call_id] = record
        elif isinstance(event, ApprovalDecidedEvent):
            asked = by_request.get(event.data.id)
            if asked is not None and asked.decided is None:
                decided = ApprovalRecord(asked=asked.asked, decided=event)
                by_request[event.data.id] = by_call[asked.call_id] = decided
    return by_call


def undecided_call_ids(events: Sequence[SessionEvent]) -> set[CallId]:
    """The call ids of the open turn asked about and not decided yet."""
    return {
        call_id for call_id, record in open_turn_approvals(events).items() if record.decided is None
    }


def _open_turn_start(events: Sequence[SessionEvent]) -> int | None:
    """The index of the open turn's ``turn/start``, found from the end."""
    for index in range(len(events) - 1, -1, -1):
        event = events[index]
        if isinstance(event, TurnEndEvent):
            return None
        if isinstance(event, TurnStartEvent):
            return index
    return None


__all__ = [
    "ApprovalRecord",
    "approvals_since",
    "open_turn_approvals",
    "undecided_call_ids",
]
