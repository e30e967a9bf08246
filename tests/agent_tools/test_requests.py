"""Requests: the one builder, and rebuilding every sent request from the log alone.

The logs here are built by hand through ``Session.append``, the way the loop writes
them, so each test pins one rule of reconstruction.
"""

from __future__ import annotations

import gc
import json
import tracemalloc
from typing import Any

import pytest

from dsh_agent.errors import RequestReconstructionError
from dsh_agent.requests import (
    build_request,
    diff_requests,
    reconstruct_attempts,
    reconstruct_request,
    reconstruct_requests,
)
from dsh_cli._commands.rebuild import (
    RebuiltRequest,
    id_list_digest,
    rebuild_requests,
    request_table,
)
from dsh_llm import (
    FinishChunk,
    GenerateRequest,
    LlmFailure,
    Message,
    TextBlock,
    TextDeltaChunk,
    ToolCallBlock,
    ToolResultBlock,
    ToolSchema,
    create_assistant_message,
    create_tool_result_message,
    create_user_message,
    replace_content,
)
from dsh_llm._stream import ErrorFinish, StopFinish, ToolCallsFinish
from dsh_session import (
    SURFACE_TYPES,
    Replace,
    RequestConfig,
    RequestHeader,
    Session,
    SessionValidationError,
    StepStartEvent,
)

LOOKUP = ToolSchema(name="lookup", description="Look a word up.", parameters={"type": "object"})
HEADER = RequestHeader(
    config=RequestConfig(provider="acme", model="acme-1", max_tokens=512, temperature=0.5),
    system="Be brief.",
    tools=(LOOKUP,),
)
MODEL = {"provider": "acme", "model": "acme-1"}


class Log:
    """Writes a conversation into a session the way the loop does."""

    def __init__(self) -> None:
        self.session = Session.create()
        self.turn = 0
        self.step = 0

    def append(self, type: str, data: Any, **envelope: Any) -> int:
        return self.session.append(type, data, **envelope).seq

    def start_turn(self) -> None:
        self.turn += 1
        self.step = 0
        self.append("turn/start", {"turn": self.turn})

    def start_step(self, *messages: Message) -> None:
        self.step += 1
        self.append("step/start", {"turn": self.turn, "step": self.step})
        for message in messages:
            self.append("user/message", message)

    def header(self, header: RequestHeader = HEADER, reason: str = "initial") -> None:
        self.append("request/header", {"header": header, "reason": reason})

    def chunks(self, *chunks: Any) -> list[int]:
        return [
            self.append("assistant/chunk", {"turn": self.turn, "step": self.step, "chunk": chunk})
            for chunk in chunks
        ]

    def answer(self, message: Any, chunk_seqs: list[int], **extra: Any) -> int:
        data = {"turn": self.turn, "step": self.step, "message": message, **extra}
        return self.append("assistant/message", data, source_event_seqs=chunk_seqs)

    def stream_text(self, text: str) -> Any:
        seqs = self.chunks(TextDeltaChunk(index=0, text=text), FinishChunk(reason=StopFinish()))
        message = create_assistant_message(content=text, source=MODEL)
        self.answer(message, seqs)
        return message

    def tool_result(self, call: ToolCallBlock, text: str) -> Any:
        call_seq = self.append(
            "tool/call",
            {
                "turn": self.turn,
                "step": self.step,
                "callId": call.call_id,
                "name": call.name,
                "arguments": call.arguments,
            },
        )
        result = create_tool_result_message(call_id=call.call_id, content=text)
        self.append(
            "tool/result",
            {"turn": self.turn, "step": self.step, "message": result},
            source_event_seqs=[call_seq],
        )
        return result

    def end_step(self) -> None:
        self.append("step/end", {"turn": self.turn, "step": self.step})

    def end_turn(self) -> None:
        self.append("turn/end", {"turn": self.turn, "reason": {"kind": "completed"}})


def prompt(text: str) -> Any:
    return create_user_message(content=text, source={"kind": "user"})


def tool_turn(log: Log) -> tuple[Any, ...]:
    """Turn with a tool step and a final text step; returns (question, call, result, answer)."""
    question = prompt("What does 'dsh' mean?")
    log.start_turn()
    log.start_step(question)
    log.header()
    call = ToolCallBlock(call_id="call-1", name="lookup", arguments='{"word": "dsh"}')
    seqs = log.chunks(
        TextDeltaChunk(index=0, text="Let me look."), FinishChunk(reason=ToolCallsFinish())
    )
    asking = create_assistant_message(content=[TextBlock(text="Let me look."), call], source=MODEL)
    log.answer(asking, seqs)
    result = log.tool_result(call, "a harness")
    log.end_step()
    log.start_step()
    answer = log.stream_text("It names a harness.")
    log.end_step()
    log.end_turn()
    return question, asking, result, answer


# --- build_request ----------------------------------------------------------------------


def test_build_request_puts_config_fields_at_the_top_level() -> None:
    question = prompt("hi")
    request = build_request(HEADER, [question])
    assert request.model_dump(mode="json") == {
        "provider": "acme",
        "model": "acme-1",
        "messages": [question.model_dump(mode="json")],
        "system": "Be brief.",
        "tools": [LOOKUP.model_dump(mode="json")],
        "maxTokens": 512,
        "temperature": 0.5,
    }


def test_build_request_holds_the_very_message_and_tool_objects() -> None:
    history = (prompt("one"), prompt("two"))
    request = build_request(HEADER, history)
    assert all(a is b for a, b in zip(request.messages, history, strict=True))
    assert request.tools is not None and request.tools[0] is LOOKUP


def test_build_request_leaves_out_config_fields_a_request_cannot_carry() -> None:
    header = RequestHeader(config=RequestConfig(provider="acme", model="acme-1", topK=3))
    request = build_request(header, ())
    assert "topK" not in request.model_dump(mode="json")
    assert request.system is None and request.tools is None


# --- reconstruct_requests -----------------------------------------------------------------


def test_every_attempt_is_rebuilt_with_the_history_before_its_first_chunk() -> None:
    log = Log()
    question, asking, result, _ = tool_turn(log)
    first, second = reconstruct_requests(log.session.events)
    assert first == build_request(HEADER, [question])
    assert second == build_request(HEADER, [question, asking, result])


def test_rebuilt_messages_are_the_objects_stored_in_the_log() -> None:
    log = Log()
    question, asking, result, _ = tool_turn(log)
    second = reconstruct_requests(log.session.events)[1]
    assert [m is o for m, o in zip(second.messages, (question, asking, result), strict=True)] == [
        True,
        True,
        True,
    ]


def test_later_turns_see_the_whole_history_and_the_latest_header() -> None:
    log = Log()
    question, asking, result, answer = tool_turn(log)
    changed = RequestHeader(config=RequestConfig(provider="acme", model="acme-2"))
    follow_up = prompt("Thanks!")
    log.start_turn()
    log.start_step(follow_up)
    log.header(changed, reason="change")
    log.stream_text("You're welcome.")
    log.end_step()
    log.end_turn()
    third = reconstruct_requests(log.session.events)[2]
    assert third == build_request(changed, [question, asking, result, answer, follow_up])
    assert third.model == "acme-2" and third.tools is None


def test_a_failed_attempt_and_its_retry_are_two_requests() -> None:
    log = Log()
    question = prompt("hi")
    log.start_turn()
    log.start_step(question)
    log.header()
    failure = LlmFailure(message="overloaded", code="RATE_LIMIT")
    log.chunks(FinishChunk(reason=ErrorFinish(failure=failure)))
    log.stream_text("hello")  # the retry streams right after the failed finish
    log.end_step()
    log.end_turn()
    assert reconstruct_requests(log.session.events) == [build_request(HEADER, [question])] * 2


def test_chunks_after_a_successful_finish_belong_to_the_same_attempt() -> None:
    # Older loops logged whatever a provider sent after its finish (and a second
    # finish when the answer could not be assembled): still one request.
    log = Log()
    question = prompt("hi")
    log.start_turn()
    log.start_step(question)
    log.header()
    failure = LlmFailure(message="cannot assemble", code="MALFORMED_RESPONSE")
    seqs = log.chunks(
        TextDeltaChunk(index=0, text="hello"),
        FinishChunk(reason=StopFinish()),
        TextDeltaChunk(index=0, text=" leaked"),
        FinishChunk(reason=ErrorFinish(failure=failure)),
    )
    log.end_step()
    log.append("turn/end", {"turn": 1, "reason": {"kind": "error", "error": failure}})
    later = prompt("again")
    log.start_turn()
    log.start_step(later)
    log.stream_text("ok")
    assert len(seqs) == 4
    assert reconstruct_requests(log.session.events) == [
        build_request(HEADER, [question]),
        build_request(HEADER, [question, later]),
    ]


def test_an_inbox_splice_during_a_stream_does_not_start_a_new_attempt() -> None:
    log = Log()
    question = prompt("hi")
    log.start_turn()
    log.start_step(question)
    log.header()
    seqs = log.chunks(TextDeltaChunk(index=0, text="hel"))
    log.append(
        "agent/inbox/spliced", {"target": "next-step", "start": 0, "inserted": [prompt("!")]}
    )
    seqs += log.chunks(TextDeltaChunk(index=0, text="lo"), FinishChunk(reason=StopFinish()))
    log.answer(create_assistant_message(content="hello", source=MODEL), seqs)
    assert reconstruct_requests(log.session.events) == [build_request(HEADER, [question])]


def test_an_interrupted_prefix_is_part_of_the_next_request() -> None:
    log = Log()
    question = prompt("Tell me a story.")
    log.start_turn()
    log.start_step(question)
    log.header()
    seqs = log.chunks(TextDeltaChunk(index=0, text="Once upon"))
    prefix = create_assistant_message(content="Once upon", source=MODEL)
    log.answer(prefix, seqs, interrupted=True)
    log.end_step()
    log.append("turn/end", {"turn": 1, "reason": {"kind": "aborted", "reason": {"kind": "user"}}})
    again = prompt("Go on.")
    log.start_turn()
    log.start_step(again)
    log.stream_text("a time.")
    requests = reconstruct_requests(log.session.events)
    assert [len(r.messages) for r in requests] == [1, 3]
    assert requests[1].messages[1] is prefix


def test_an_empty_assistant_message_is_not_sent_again() -> None:
    log = Log()
    question = prompt("Say nothing.")
    log.start_turn()
    log.start_step(question)
    log.header()
    seqs = log.chunks(FinishChunk(reason=StopFinish()))
    log.answer(create_assistant_message(content=[], source=MODEL), seqs)
    log.end_step()
    log.end_turn()
    later = prompt("Now say something.")
    log.start_turn()
    log.start_step(later)
    log.stream_text("Something.")
    assert reconstruct_requests(log.session.events)[1].messages == (question, later)


def surface_seqs(log: Log) -> list[int]:
    return [e.seq for e in log.session.events if e.type in SURFACE_TYPES]


def next_turn(log: Log, text: str) -> Any:
    message = prompt(text)
    log.start_turn()
    log.start_step(message)
    log.stream_text("ok")
    return message


def test_a_rewritten_tool_result_replaces_the_original_in_later_requests() -> None:
    log = Log()
    question, asking, result, answer = tool_turn(log)
    result_seq = surface_seqs(log)[2]
    block = ToolResultBlock(call_id="call-1", content=(TextBlock(text="[pruned]"),))
    rewritten = replace_content(result, [block])
    log.append(
        "tool/result",
        {"turn": 1, "step": 1, "message": rewritten},
        surface_op=Replace(start=result_seq, end=result_seq),
        source_event_seqs=[result_seq],
    )
    later = next_turn(log, "Thanks!")
    third = reconstruct_requests(log.session.events)[2]
    assert third.messages == (question, asking, rewritten, answer, later)
    assert third.messages[2] is rewritten


def test_a_summary_checkpoint_replaces_the_range_it_shadows() -> None:
    log = Log()
    tool_turn(log)
    shadowed = surface_seqs(log)
    summary = create_user_message(
        content="Summary: 'dsh' names a harness.", source={"kind": "plugin", "plugin": "compact"}
    )
    log.append(
        "user/message",
        summary,
        surface_op=Replace(start=shadowed[0], end=shadowed[-1]),
        source_event_seqs=shadowed,
    )
    later = next_turn(log, "And 'llm'?")
    assert reconstruct_requests(log.session.events)[2].messages == (summary, later)


def test_a_chunk_without_a_header_cannot_be_explained() -> None:
    log = Log()
    log.start_turn()
    log.start_step(prompt("hi"))
    log.chunks(TextDeltaChunk(index=0, text="hello"))
    with pytest.raises(RequestReconstructionError) as raised:
        reconstruct_requests(log.session.events)
    assert raised.value.seq == 3
    assert "request/header" in str(raised.value)


def test_a_log_with_a_gap_is_refused_with_the_seq() -> None:
    log = Log()
    tool_turn(log)
    events = list(log.session.events)
    del events[3]
    with pytest.raises(RequestReconstructionError) as raised:
        reconstruct_requests(events)
    assert raised.value.seq == 4


def test_a_log_that_breaks_the_rules_is_refused_with_its_seq() -> None:
    log = Log()
    tool_turn(log)
    events = list(log.session.events)
    step_end = next(e for e in events if e.type == "step/end")
    events[step_end.seq] = StepStartEvent(  # a step opening inside the open step
        seq=step_end.seq, time=step_end.time, data={"turn": 1, "step": 2}
    )
    with pytest.raises(SessionValidationError) as raised:
        reconstruct_requests(events)
    assert raised.value.seq == step_end.seq


def test_reconstruct_request_gives_the_request_an_attempt_starting_now_would_send() -> None:
    log = Log()
    question, asking, result, answer = tool_turn(log)
    follow_up = prompt("Thanks!")
    log.start_turn()
    log.start_step(follow_up)
    assert reconstruct_request(log.session.events) == build_request(
        HEADER, [question, asking, result, answer, follow_up]
    )


def test_the_live_history_and_the_rebuilt_one_agree() -> None:
    log = Log()
    tool_turn(log)
    rebuilt = reconstruct_request(log.session.events)
    live = build_request(HEADER, log.session.derive_messages())
    assert diff_requests(live, rebuilt) == []


# --- diff_requests ------------------------------------------------------------------------


def test_diff_names_differing_config_fields() -> None:
    question = prompt("hi")
    live = build_request(HEADER, [question])
    other = RequestHeader(config=RequestConfig(provider="acme", model="acme-2", max_tokens=512))
    differences = diff_requests(live, build_request(other, [question]))
    assert any(line.startswith("model:") and "'acme-2'" in line for line in differences)
    assert any(line.startswith("temperature:") for line in differences)
    assert any(line.startswith("system:") for line in differences)
    assert "tools: live has 1, rebuilt has 0" in differences


def test_diff_names_a_message_by_index_and_id() -> None:
    question, answer = prompt("hi"), create_assistant_message(content="hello", source=MODEL)
    rewritten = replace_content(answer, "HELLO")
    differences = diff_requests(
        build_request(HEADER, [question, answer]), build_request(HEADER, [question, rewritten])
    )
    assert differences == [f"messages[1] (id {answer.id!r}): content differs"]


def test_diff_names_missing_and_different_messages() -> None:
    one, two, three = prompt("1"), prompt("2"), prompt("3")
    differences = diff_requests(
        build_request(HEADER, [one, two, three]), build_request(HEADER, [one, three])
    )
    assert "messages: live has 3, rebuilt has 2" in differences
    assert f"messages[1]: live id {two.id!r} != rebuilt id {three.id!r}" in differences


def test_diff_of_equal_values_that_are_not_the_same_objects_is_empty() -> None:
    question = prompt("hi")
    copied = GenerateRequest.model_validate_json(
        build_request(HEADER, [question]).model_dump_json()
    )
    assert diff_requests(build_request(HEADER, [question]), copied) == []


# --- reconstruct_attempts: linear in the log -------------------------------------------


def long_log(turns: int) -> Log:
    log = Log()
    for _ in range(turns):
        tool_turn(log)
    return log


def test_attempts_share_the_history_instead_of_copying_it() -> None:
    log = long_log(3)
    attempts = reconstruct_attempts(log.session.events)
    assert [attempt.request() for attempt in attempts] == reconstruct_requests(log.session.events)
    assert [attempt.rewritten for attempt in attempts] == [False] * 6
    first, last = attempts[0].messages, attempts[-1].messages
    assert all(a is b for a, b in zip(first, last[: len(first)], strict=True))


def test_an_attempt_after_a_surface_rewrite_says_so() -> None:
    log = Log()
    tool_turn(log)
    shadowed = surface_seqs(log)
    summary = create_user_message(content="Summary.", source={"kind": "plugin", "plugin": "c"})
    log.append(
        "user/message",
        summary,
        surface_op=Replace(start=shadowed[0], end=shadowed[-1]),
        source_event_seqs=shadowed,
    )
    next_turn(log, "And then?")
    log.end_step()
    log.end_turn()
    next_turn(log, "And now?")
    assert [a.rewritten for a in reconstruct_attempts(log.session.events)] == [
        False,
        False,
        True,
        False,
    ]


def held_while_rebuilding(turns: int) -> int:
    """Bytes still allocated while every rebuilt request of a ``turns``-turn log is kept
    (as ``dsh sessions verify`` keeps them), over the log itself."""
    events = long_log(turns).session.events
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        rebuilt = rebuild_requests(events)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(rebuilt) == 2 * turns
    return held


def test_rebuilding_every_request_holds_memory_linear_in_the_log() -> None:
    # Quadratic growth (each request copying its history) would make 4x the turns
    # cost about 16x the memory; linear growth costs about 4x.
    small, large = held_while_rebuilding(50), held_while_rebuilding(200)
    assert large < 6 * small


def test_a_long_request_table_collapses_plain_growth_but_keeps_every_rewrite() -> None:
    log = long_log(30)  # 60 requests, more than the table shows one by one
    shadowed = surface_seqs(log)[-4:]  # the last tool turn
    summary = create_user_message(content="Summary.", source={"kind": "plugin", "plugin": "c"})
    log.append(
        "user/message",
        summary,
        surface_op=Replace(start=shadowed[0], end=shadowed[-1]),
        source_event_seqs=shadowed,
    )
    for text in ("one", "two", "three"):
        next_turn(log, text)
        log.end_step()
        log.end_turn()
    table = request_table(rebuild_requests(log.session.events))
    numbers = list(table.columns[0].cells)
    rewritten = list(table.columns[4].cells)
    assert numbers == ["1", "2-60", "61", "62", "63"]
    assert rewritten == ["", "", "3", "", ""]  # request 60 ended with 3 of them


# --- the request deltas of ``sessions verify --json`` -----------------------------------


def apply_splices(ids: list[str], request: dict[str, Any]) -> list[str]:
    """What a consumer of ``verify --json`` does: the previous id list plus the splices."""
    rebuilt: list[str] = []
    cursor = 0
    for splice in request["splices"]:
        rebuilt += ids[cursor : splice["at"]] + splice["added"]
        cursor = splice["at"] + splice["removed"]
    return rebuilt + ids[cursor:]


def check_deltas(rebuilt: list[RebuiltRequest]) -> None:
    """Every request's full id list follows from the deltas alone, and matches its
    count and digest."""
    ids: list[str] = []
    for item in rebuilt:
        ids = apply_splices(ids, json.loads(json.dumps(item.to_json())))
        assert ids == [message.id for message in item.attempt.messages]
        assert item.to_json()["messageCount"] == len(ids)
        assert item.to_json()["messageDigest"] == id_list_digest(ids)


def test_deltas_rebuild_every_id_list_through_rewrites_and_summaries() -> None:
    log = Log()
    result = tool_turn(log)[2]
    result_seq = surface_seqs(log)[2]
    block = ToolResultBlock(call_id="call-1", content=(TextBlock(text="[pruned]"),))
    log.append(
        "tool/result",
        {"turn": 1, "step": 1, "message": replace_content(result, [block])},
        surface_op=Replace(start=result_seq, end=result_seq),
        source_event_seqs=[result_seq],
    )
    next_turn(log, "Thanks!")
    log.end_step()
    log.end_turn()
    seqs = surface_seqs(log)  # question, asking, result, answer, pruned result, ...
    shadowed = [seqs[1], seqs[4], seqs[3]]  # asking, pruned result, answer: in place
    summary = create_user_message(content="Summary.", source={"kind": "plugin", "plugin": "c"})
    log.append(
        "user/message",
        summary,
        surface_op=Replace(start=seqs[1], end=seqs[3]),
        source_event_seqs=sorted(shadowed),
    )
    next_turn(log, "And then?")
    rebuilt = rebuild_requests(log.session.events)
    check_deltas(rebuilt)
    pruned, summarized = rebuilt[2].to_json(), rebuilt[3].to_json()
    # the pruned result keeps its id, in place: one splice of one message
    assert pruned["splices"][0]["at"] == 2 and pruned["splices"][0]["removed"] == 1
    assert pruned["rewritten"] == 1
    # the summary replaces a range in the middle; the rest is not listed again
    assert summarized["splices"][0] == {"at": 1, "removed": 3, "added": [summary.id]}


def test_plain_growth_lists_only_the_new_ids() -> None:
    rebuilt = rebuild_requests(long_log(3).session.events)
    check_deltas(rebuilt)
    assert [len(item.to_json()["splices"]) for item in rebuilt] == [1] * 6
    assert [item.added for item in rebuilt] == [1, 2, 2, 2, 2, 2]


def verify_json_size(turns: int) -> int:
    rebuilt = rebuild_requests(long_log(turns).session.events)
    return len(json.dumps([item.to_json() for item in rebuilt]))


def test_the_verify_report_grows_linearly_with_the_log() -> None:
    # Listing every request's full id list makes 4x the turns about 16x the bytes.
    small, large = verify_json_size(25), verify_json_size(100)
    assert large < 5 * small
