"""A scripted tool-heavy model with a real context bound, and the log checks every
compaction test shares."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from dsh_agent import tool
from dsh_agent.compaction import CHECKPOINT_PLUGIN, INSTRUCTION, HeuristicCounter
from dsh_llm import (
    GenerateRequest,
    LlmFailure,
    Message,
    TextBlock,
    TokenUsage,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)
from dsh_llm.testing import Reply
from dsh_session import (
    AssistantMessageEvent,
    CompactionEndEvent,
    CompactionPruneEvent,
    CompactionStartEvent,
    CompactionSummaryEvent,
    Replace,
    SessionEvent,
    ToolResultEvent,
    UserMessageEvent,
)

PER_MESSAGE = 3
"""The fake provider's framing per message, which dsh's estimate does not know about:
the meter only sees it through the reported usage."""
_COUNTER = HeuristicCounter()


def true_tokens(request: GenerateRequest) -> int:
    """What the fake provider counts for a request (its 'tokenizer')."""
    header = 0
    if request.system is not None:
        header += -(-len(request.system) // 4) + 4
    if request.tools:
        header += sum(-(-len(t.model_dump_json(by_alias=True)) // 4) for t in request.tools) + 4
    return header + sum(_COUNTER.count_message(m) + PER_MESSAGE for m in request.messages)


def is_summary_request(request: GenerateRequest) -> bool:
    last = request.messages[-1]
    return isinstance(last, UserMessage) and last.content == (TextBlock(text=INSTRUCTION),)


def output_size(n: int) -> int:
    """Every fifth result is far too large to keep whole."""
    return 6000 if n % 5 == 0 else 400


@tool
async def read(n: int) -> str:
    """Read record ``n``."""
    line = f"record {n}: " + "x" * 60 + "\n"
    return (line * (output_size(n) // len(line) + 1))[: output_size(n)]


@dataclass
class ToolHeavyModel:
    """Each task: call ``read(n)``, then answer. Refuses a request above ``window``
    as a provider does (CONTEXT_WINDOW_EXCEEDED), and reports usage it counted."""

    window: int
    conversation: list[GenerateRequest] = field(default_factory=list)
    summaries: list[GenerateRequest] = field(default_factory=list)
    largest: int = 0
    refused: int = 0

    def __call__(self, request: GenerateRequest) -> Reply | LlmFailure:
        tokens = true_tokens(request)
        self.largest = max(self.largest, tokens)
        if tokens > self.window:
            self.refused += 1
            return LlmFailure(
                message=f"maximum context length is {self.window} tokens",
                code="CONTEXT_WINDOW_EXCEEDED",
            )
        last = request.messages[-1]
        if is_summary_request(request):
            self.summaries.append(request)
            text = f"Checkpoint of {len(request.messages) - 1} messages: tasks read records."
            return self._reply(tokens, text=text)
        self.conversation.append(request)
        if isinstance(last, ToolResultMessage):
            return self._reply(tokens, text=f"done {last.source.call_id}")
        assert isinstance(last, UserMessage)
        block = last.content[0]
        assert isinstance(block, TextBlock)
        n = int(block.text.split()[-1])
        call = {"call_id": f"call-{n}", "name": "read", "arguments": {"n": n}}
        return self._reply(tokens, tool_calls=(call,))

    @staticmethod
    def _reply(tokens: int, **fields: object) -> Reply:
        usage = TokenUsage(input_tokens=tokens, output_tokens=12)
        return Reply(usage=usage, **fields)  # type: ignore[arg-type]


# --- log checks ---------------------------------------------------------------------------


def compaction_events(events: Sequence[SessionEvent]) -> list[SessionEvent]:
    kinds = (CompactionStartEvent, CompactionSummaryEvent, CompactionPruneEvent, CompactionEndEvent)
    return [event for event in events if isinstance(event, kinds)]


def check_prunes(events: Sequence[SessionEvent]) -> int:
    """Every pruned result follows its ``compaction/prune`` and keeps its message id,
    call id and error flag; returns how many there are."""
    count = 0
    for event in events:
        if not (isinstance(event, ToolResultEvent) and isinstance(event.surface_op, Replace)):
            continue
        price = events[event.seq - 1]
        original = events[event.surface_op.start]
        assert isinstance(price, CompactionPruneEvent)
        assert isinstance(original, ToolResultEvent)
        assert price.data.shadowed_seqs == (original.seq,) == event.source_event_seqs
        new, old = event.data.message, original.data.message
        assert new.id == old.id
        assert new.source.call_id == old.source.call_id == new.content[0].call_id
        assert new.content[0].is_error == old.content[0].is_error
        count += 1
    return count


def check_summaries(events: Sequence[SessionEvent]) -> int:
    """Every checkpoint has a new id, is bracketed by its compaction, and cites the
    bracket, its summary and every event it shadows; returns how many there are."""
    count = 0
    surface_ids: dict[int, str] = {}
    for event in events:
        if not (isinstance(event, UserMessageEvent) and isinstance(event.surface_op, Replace)):
            continue
        summary, closing = events[event.seq - 1], events[event.seq + 1]
        assert isinstance(summary, CompactionSummaryEvent)
        assert isinstance(closing, CompactionEndEvent) and closing.data.error is None
        compaction_id = event.data.source.model_dump(by_alias=True)["compactionId"]
        assert event.data.source.model_dump(by_alias=True)["plugin"] == CHECKPOINT_PLUGIN
        assert compaction_id == summary.data.compaction_id == closing.data.compaction_id
        shadowed = summary.data.shadowed_seqs
        assert summary.data.shadowed_range.start == shadowed[0] == event.surface_op.start
        assert summary.data.shadowed_range.end == shadowed[-1] == event.surface_op.end
        cited = event.source_event_seqs or ()
        opening = next(
            e
            for e in reversed(events[: summary.seq])
            if isinstance(e, CompactionStartEvent) and e.data.compaction_id == compaction_id
        )
        assert cited == (opening.seq, summary.seq, *shadowed)
        for seq in shadowed:
            message = _message(events[seq])
            assert message is not None and message.id != event.data.id
        surface_ids[event.seq] = event.data.id
        count += 1
    assert len(set(surface_ids.values())) == len(surface_ids)
    return count


def _message(event: SessionEvent) -> Message | None:
    if isinstance(event, UserMessageEvent):
        return event.data
    if isinstance(event, AssistantMessageEvent | ToolResultEvent):
        return event.data.message
    return None


def check_pairs(messages: Sequence[Message]) -> None:
    """Every tool result in a request follows the call it answers, and every call
    before the request's last message has its result in the request."""
    open_calls: set[str] = set()
    for message in messages:
        for block in message.content:
            if isinstance(block, ToolCallBlock):
                open_calls.add(block.call_id)
        if isinstance(message, ToolResultMessage):
            assert message.source.call_id in open_calls, "a result without its call"
            open_calls.remove(message.source.call_id)
    assert not open_calls, f"calls without results: {open_calls}"
