"""What every stress-run log must satisfy, whatever point the cancel hit."""

from __future__ import annotations

from collections.abc import Sequence

from dsh_agent import reconstruct_requests
from dsh_llm import AssistantMessage, GenerateRequest, ToolCallBlock, ToolResultMessage
from dsh_session import (
    AssistantMessageEvent,
    Session,
    SessionEvent,
    StepEndEvent,
    StepStartEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnEndEvent,
    TurnStartEvent,
)


def check_enclosure(events: Sequence[SessionEvent]) -> None:
    """Seqs are contiguous; every turn and step that opens also closes, properly nested;
    every requested tool call gets a result within its step, after its ``tool/call``."""
    turn: int | None = None
    step: int | None = None
    awaiting: set[str] = set()
    started: set[str] = set()
    for index, event in enumerate(events):
        assert event.seq == index, f"event {index} has seq {event.seq}"
        if isinstance(event, TurnStartEvent):
            assert turn is None, f"turn/start {event.seq} inside turn {turn}"
            turn = event.data.turn
        elif isinstance(event, TurnEndEvent):
            assert turn == event.data.turn and step is None, f"turn/end {event.seq} misplaced"
            turn = None
        elif isinstance(event, StepStartEvent):
            assert turn is not None and step is None, f"step/start {event.seq} misplaced"
            step = event.data.step
        elif isinstance(event, StepEndEvent):
            assert step == event.data.step, f"step/end {event.seq} closes no open step"
            assert not awaiting, f"step/end {event.seq} leaves calls {awaiting} unanswered"
            step = None
            started.clear()
        elif isinstance(event, AssistantMessageEvent):
            calls = [b.call_id for b in event.data.message.content if isinstance(b, ToolCallBlock)]
            assert not (calls and event.data.interrupted), f"interrupted {event.seq} has calls"
            awaiting.update(calls)
        elif isinstance(event, ToolCallEvent):
            assert event.data.call_id in awaiting, f"tool/call {event.seq} was not requested"
            started.add(event.data.call_id)
        elif isinstance(event, ToolResultEvent):
            call_id = event.data.message.source.call_id
            assert call_id in started, f"tool/result {event.seq} has no tool/call before it"
            awaiting.remove(call_id)
    assert turn is None, f"turn {turn} never ended"


def check_requests_are_valid_for_a_provider(requests: Sequence[GenerateRequest]) -> None:
    """In every request, each tool call is answered before the next assistant message."""
    for number, request in enumerate(requests):
        awaiting: set[str] = set()
        for message in request.messages:
            if isinstance(message, AssistantMessage):
                assert not awaiting, f"request {number}: calls {awaiting} unanswered"
                awaiting = {b.call_id for b in message.content if isinstance(b, ToolCallBlock)}
            elif isinstance(message, ToolResultMessage):
                awaiting.discard(message.source.call_id)
            else:
                assert not awaiting, f"request {number}: a prompt interrupts calls {awaiting}"


def check_log(
    session: Session, sent: Sequence[GenerateRequest], received: Sequence[GenerateRequest]
) -> None:
    """The whole log is valid, loads again, and rebuilds every request that ``sent`` a
    chunk back. Of the requests the model ``received``, only the last of an aborted
    turn may have been cut before its first chunk (and so be missing from the log)."""
    events = session.events
    check_enclosure(events)
    Session.from_log(session.header, events)
    rebuilt = reconstruct_requests(events)
    assert [r.model_dump_json() for r in rebuilt] == [r.model_dump_json() for r in sent], (
        f"{len(rebuilt)} rebuilt requests differ from the {len(sent)} sent"
    )
    aborted = sum(
        1 for e in events if isinstance(e, TurnEndEvent) and e.data.reason.kind == "aborted"
    )
    assert len(received) - len(sent) <= aborted, (
        f"{len(received) - len(sent)} requests left no chunk, but only {aborted} turns aborted"
    )
    check_requests_are_valid_for_a_provider(rebuilt)
