"""Summarizers: what turns a replayed conversation prefix into a summary.

The default asks a model. Its request is the conversation's own system prompt, tools
and the shadowed messages verbatim, followed by one instruction message, so it is a
prefix of the conversation's last request and a provider can reuse its prompt cache.
Any async function ``(SummarizationInput) -> Summary | str`` can take its place.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeAlias

from dsh_agent.errors import SummaryError
from dsh_llm._assembler import BlockAssembler
from dsh_llm._content import ContentBlock, ImageBlock, TextBlock
from dsh_llm._create import create_user_message
from dsh_llm._messages import Message
from dsh_llm._request import GenerateRequest, ModelAdapter, ToolSchema
from dsh_llm._sources import PluginSource
from dsh_llm._stream import AbortedFinish, ErrorFinish, MaxTokensFinish, TokenUsage

SUMMARY_OPEN = "<compacted-summary>"
SUMMARY_CLOSE = "</compacted-summary>"
"""The tags around a summary in its checkpoint message (the harness's, so a later
summarizer on either side recognises an earlier checkpoint)."""

INSTRUCTION = f"""Stop working on the task for one moment: write a checkpoint of the \
conversation above, so that it can be continued from the checkpoint alone.

Use these Markdown sections, in this order, each as short bullet points; write \
"(none)" under a section with nothing to say:

## Goal
## Decisions and constraints
## Files, commands and identifiers
## Problems met and how they were solved
## Done so far
## In progress
## Next step

Keep exact paths, commands, error messages, names and numbers. Keep what the user \
asked for and corrected, in their words where the wording matters. If the \
conversation starts with an earlier checkpoint (inside {SUMMARY_OPEN}), fold what is \
still true into this one instead of copying it. Answer with the checkpoint text only: \
no tool calls, and no remark about writing a checkpoint."""

PREAMBLE = (
    "Earlier parts of this conversation were condensed into the checkpoint below to "
    "save context. Take it as established; carry on from the messages after it "
    "without mentioning the checkpoint."
)

_INSTRUCTION_SOURCE = PluginSource(plugin="dsh-compaction")


@dataclass(frozen=True, slots=True)
class SummarizationInput:
    """The conversation prefix to condense, as the conversation's requests carry it."""

    messages: tuple[Message, ...]
    system: str | None = None
    tools: tuple[ToolSchema, ...] | None = None


@dataclass(frozen=True, slots=True)
class Summary:
    """A summary and the facts of the call that wrote it (logged in
    ``compaction/summary``)."""

    summary: tuple[TextBlock, ...]
    provider: str
    model: str
    max_tokens: int | None = None
    usage: TokenUsage | None = None
    raw_output: tuple[ContentBlock, ...] | None = None
    """Everything the model returned, when a model wrote it."""
    llm_stream_call: bool = False
    """True when the summary came from one model stream (``raw_output`` is then set)."""


Summarizer: TypeAlias = Callable[[SummarizationInput], Awaitable[Summary | str]]
"""``async def summarize(input) -> Summary | str``; a string is one text block."""


class ModelSummarizer:
    """Summarizes with one model call through ``adapter`` (the conversation's or
    another), to ``provider``/``model``."""

    def __init__(
        self, adapter: ModelAdapter, *, provider: str, model: str, max_tokens: int = 8192
    ) -> None:
        self.adapter = adapter
        self.provider = provider
        self.model = model
        self.max_tokens = max_tokens

    def request(self, source: SummarizationInput) -> GenerateRequest:
        """The summary request: the prefix verbatim, then the instruction."""
        instruction = create_user_message(content=INSTRUCTION, source=_INSTRUCTION_SOURCE)
        return GenerateRequest(
            provider=self.provider,
            model=self.model,
            messages=(*source.messages, instruction),
            system=source.system,
            tools=source.tools,
            max_tokens=self.max_tokens,
        )

    async def __call__(self, source: SummarizationInput) -> Summary:
        assembler = BlockAssembler()
        stream = self.adapter.stream(self.request(source))
        try:
            async for chunk in stream:
                assembler.push(chunk)
                if assembler.finish is not None:
                    break
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()
        finish = assembler.finish
        if isinstance(finish, ErrorFinish | AbortedFinish):
            failure = finish.failure
            raise SummaryError(
                f"the summary call failed ({failure.code}): {failure.message}", failure=failure
            )
        if isinstance(finish, MaxTokensFinish):
            raise SummaryError("the summary was cut at max_tokens (an incomplete checkpoint)")
        if finish is None:
            raise SummaryError("the summary stream ended without a finish")
        raw = assembler.blocks
        return Summary(
            summary=text_only(raw),
            provider=self.provider,
            model=self.model,
            max_tokens=self.max_tokens,
            usage=assembler.usage,
            raw_output=raw,
            llm_stream_call=True,
        )


def text_only(blocks: tuple[ContentBlock, ...]) -> tuple[TextBlock, ...]:
    """The text blocks of a summary; an image or a blank summary is refused."""
    if any(isinstance(block, ImageBlock) for block in blocks):
        raise SummaryError("a summary cannot contain images")
    texts = tuple(block for block in blocks if isinstance(block, TextBlock))
    if not any(block.text.strip() for block in texts):
        raise SummaryError("the summary holds no text")
    return texts


def as_summary(result: Summary | str, summarizer: object) -> Summary:
    """A user function's string result, as a summary it wrote."""
    if isinstance(result, Summary):
        text_only(result.summary)
        return result
    if not isinstance(result, str):
        raise TypeError(f"a summarizer returns a Summary or a str, not {type(result).__name__}")
    name = getattr(summarizer, "__qualname__", None) or type(summarizer).__qualname__
    return Summary(summary=text_only((TextBlock(text=result),)), provider="function", model=name)


def frame(summary: tuple[TextBlock, ...]) -> tuple[TextBlock, ...]:
    """The checkpoint message's content: preamble and tags around the summary."""
    return (
        TextBlock(text=f"{PREAMBLE}\n\n{SUMMARY_OPEN}"),
        *summary,
        TextBlock(text=SUMMARY_CLOSE),
    )


__all__ = [
    "INSTRUCTION",
    "PREAMBLE",
    "SUMMARY_CLOSE",
    "SUMMARY_OPEN",
    "ModelSummarizer",
    "SummarizationInput",
    "Summarizer",
    "Summary",
    "as_summary",
    "frame",
    "text_only",
]
