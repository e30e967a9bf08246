"""Terminal rendering of a session's conversation, shared by ``demo``, ``chat`` and
``sessions show``.

One :class:`TranscriptPrinter` renders events either *live* (text and reasoning are
printed from ``assistant/chunk`` events as they stream) or *from the log* (each
assistant message is printed whole). Everything is built as :class:`rich.text.Text`,
never as markup, so text from a model or a user cannot inject styles.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from rich.console import Console
from rich.text import Text

from dsh_agent._engine.branching import is_regeneration
from dsh_llm import (
    AttachmentRef,
    ContentBlock,
    FileBlock,
    ImageBlock,
    Message,
    ModelSource,
    PluginSource,
    ReasoningBlock,
    ReasoningDeltaChunk,
    TextBlock,
    TextDeltaChunk,
    TokenUsage,
    ToolCallBlock,
    ToolResultBlock,
    UserMessage,
    UserSource,
)
from dsh_session import (
    AbortedReason,
    AssistantChunkEvent,
    AssistantMessageEvent,
    EndSeedEvent,
    ErrorReason,
    HookCause,
    InboxSplicedEvent,
    RequestHeaderEvent,
    SessionEvent,
    ToolResultEvent,
    TurnEndEvent,
    TurnEndReason,
    TurnStartEvent,
    UserMessageEvent,
)
from dsh_session.events import LlmRetryEvent
from dsh_session.tool_failure_codes import TOOL_NOT_STARTED, TOOL_OUTCOME_UNKNOWN

REPAIR_CODES = frozenset({TOOL_OUTCOME_UNKNOWN, TOOL_NOT_STARTED})
"""Error codes that only crash repair writes: a result marked with one was synthesized
when a log cut by a crash was loaded."""

SHORT_ID_LENGTH = 8


def short_id(value: str) -> str:
    """The last characters of an id, for transcripts. A UUIDv7 begins with its
    timestamp, which messages created close together share, so the tail is the part
    that tells them apart."""
    return value if len(value) <= SHORT_ID_LENGTH + 1 else "…" + value[-SHORT_ID_LENGTH:]


def format_time(epoch_ms: int, *, seconds: bool = True) -> str:
    """Local wall-clock time of an epoch-millisecond stamp."""
    pattern = "%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M"
    return datetime.fromtimestamp(epoch_ms / 1000).strftime(pattern)


def describe_reason(reason: TurnEndReason) -> str:
    """One line saying why a turn ended, in the user's words."""
    if isinstance(reason, AbortedReason):
        cause = reason.reason
        if isinstance(cause, HookCause):
            return f"cancelled by a hook: {cause.reason}"
        return {
            "user": "cancelled by the user",
            "parent": "cancelled by the parent agent",
            "disposed": "cancelled: the agent was disposed",
        }[cause.kind]
    if isinstance(reason, ErrorReason):
        return f"error {reason.error.code}: {reason.error.message}"
    return {
        "completed": "completed",
        "blocked": "blocked by a pre-step handler",
        "max-tokens": "stopped at the output token limit",
        "interrupted": "interrupted: the process stopped mid-turn (closed by crash repair)",
    }[reason.kind]


def describe_retry(event: LlmRetryEvent) -> str:
    """One line for a scheduled retry: ``SERVER: HTTP 503: ...; retry 1 of 5 in 500 ms``."""
    data = event.data
    budget = "" if data.max_retries is None else f" of {data.max_retries}"
    return (
        f"{data.failure.code}: {data.failure.message}; "
        f"retry {data.retry}{budget} in {data.delay_ms:g} ms"
    )


def speaker(message: Message) -> str:
    """Who a message is from, as a transcript label."""
    source = message.source
    if isinstance(source, UserSource):
        return "you"
    if isinstance(source, PluginSource):
        return f"context · {source.plugin}"
    if isinstance(source, ModelSource):
        return f"assistant · {source.provider}/{source.model}"
    return source.kind


def block_text(block: ContentBlock) -> Text:
    """One content block as styled text (tool results render their inner blocks)."""
    if isinstance(block, TextBlock):
        return Text(block.text)
    if isinstance(block, ReasoningBlock):
        return Text(f"thinking: {block.text}", style="dim italic")
    if isinstance(block, ImageBlock):
        if block.attachment is not None:
            return Text(f"[image {describe_attachment(block.attachment)}]", style="cyan")
        where = block.url or f"{len(block.data or '')} base64 chars"
        return Text(f"[image {block.media_type}, {where}]", style="cyan")
    if isinstance(block, FileBlock):
        return Text(f"[file {describe_attachment(block.attachment)}]", style="cyan")
    if isinstance(block, ToolCallBlock):
        return Text.assemble(
            ("→ ", "yellow"),
            (f"{block.name}({block.arguments})", "yellow"),
            (f"  call {block.call_id}", "dim"),
        )
    assert isinstance(block, ToolResultBlock)
    return Text("\n").join(block_text(inner) for inner in block.content)


def describe_attachment(ref: AttachmentRef) -> str:
    """An attachment in one line: media type, pixel size, byte size, name, short hash."""
    parts = [ref.media_type]
    if ref.width is not None and ref.height is not None:
        parts.append(f"{ref.width}x{ref.height}")
    parts.append(f"{ref.size} bytes")
    if ref.name is not None:
        parts.append(repr(ref.name))
    parts.append(f"{ref.attachment_id[:19]}…")
    return ", ".join(parts)


def indented(text: Text, prefix: str = "  ") -> Text:
    """``text`` with ``prefix`` before each of its lines, so a multi-line message stays
    inside its speaker's block."""
    return Text("\n").join(Text(prefix).append_text(line) for line in text.split("\n"))


def describe_usage(usage: TokenUsage) -> str:
    """A model call's token counts; the optional ones only when the provider gave them."""
    parts = [f"tokens in {usage.input_tokens}"]
    if usage.cache_read_tokens is not None:
        parts.append(f"cached in {usage.cache_read_tokens}")
    if usage.cache_write_tokens is not None:
        parts.append(f"cache written {usage.cache_write_tokens}")
    out = f"out {usage.output_tokens}"
    if usage.reasoning_tokens is not None:
        out += f" (reasoning {usage.reasoning_tokens})"
    return " / ".join([*parts, out])


class TranscriptPrinter:
    """Prints session events as a conversation. Use it as a session observer (live)
    or feed it a stored log (``live=False``). Events it does not show are skipped."""

    def __init__(self, console: Console, *, live: bool) -> None:
        self._console = console
        self._live = live
        self._stream_style: str | None = None
        """The style of the streamed line being printed, or None between lines."""

    def print_events(self, events: Iterable[SessionEvent]) -> None:
        """Render a whole log, in order."""
        for event in events:
            self(event)

    def __call__(self, event: SessionEvent) -> None:
        if isinstance(event, AssistantChunkEvent):
            if self._live:
                self._stream(event)
        elif isinstance(event, TurnStartEvent):
            self._rule(Text(f"turn {event.data.turn}", style="bold"))
        elif isinstance(event, UserMessageEvent):
            self._message_line(event.data, event.data.content)
            source = event.data.source
            if isinstance(source, UserSource) and source.edit_of is not None:
                self.note(f"edited from [{short_id(source.edit_of)}]")
        elif is_regeneration(event):
            seqs = event.source_event_seqs or ()
            shadowed = f"event {seqs[0]}" if len(seqs) == 1 else f"events {seqs[0]}..{seqs[-1]}"
            self.note(f"regenerating: the answer in {shadowed} left the history (the log keeps it)")
        elif isinstance(event, AssistantMessageEvent):
            self._assistant(event)
        elif isinstance(event, ToolResultEvent):
            self._tool_result(event)
        elif isinstance(event, TurnEndEvent):
            self._turn_end(event.data.reason)
        elif isinstance(event, InboxSplicedEvent) and event.data.outcome == "canceled":
            count = event.data.removed_count or 0
            self.note(f"{count} pending {event.data.target} message(s) canceled", "yellow")
        elif isinstance(event, LlmRetryEvent):
            self.note(describe_retry(event), "yellow")
        elif isinstance(event, RequestHeaderEvent) and not self._live:
            config = event.data.header.config
            self.note(f"request header: {config.provider}/{config.model}, {event.data.reason}")
        elif isinstance(event, EndSeedEvent) and not self._live:
            self._rule(Text("resumed or forked here", style="dim"))

    def note(self, text: str, style: str = "dim") -> None:
        """Print a parenthesized note on a line of its own (ending a streamed line)."""
        self.print_line(note_text(text, style))

    def print_message(self, message: Message) -> None:
        """A whole message: its speaker and id, then its blocks, indented."""
        self._message_line(message, message.content)

    def print_line(self, line: Text) -> None:
        """Print ``line`` on a line of its own (ending a streamed line first)."""
        self._end_stream()
        self._console.print(line)

    def _rule(self, title: Text) -> None:
        self._end_stream()
        self._console.rule(title, style="dim")

    def _stream(self, event: AssistantChunkEvent) -> None:
        chunk = event.data.chunk
        if isinstance(chunk, TextDeltaChunk):
            style = ""
        elif isinstance(chunk, ReasoningDeltaChunk):
            style = "dim italic"
        else:
            return
        if self._stream_style != style:
            self._end_stream()
            label = "assistant › " if style == "" else "thinking › "
            self._console.print(Text(label, style="bold green" if style == "" else "dim"), end="")
            self._stream_style = style
        self._console.print(Text(chunk.text, style=style), end="")

    def _end_stream(self) -> None:
        if self._stream_style is not None:
            self._console.print()
            self._stream_style = None

    def _message_line(self, message: Message, blocks: Iterable[ContentBlock]) -> None:
        self.print_line(
            Text.assemble(
                (speaker(message), "bold cyan" if message.role == "user" else "bold green"),
                (f" [{short_id(message.id)}]", "dim"),
            )
        )
        for block in blocks:
            self.print_line(indented(block_text(block)))

    def _assistant(self, event: AssistantMessageEvent) -> None:
        data = event.data
        message = data.message
        self._end_stream()  # the message is complete
        if self._live:
            # text and reasoning were streamed; what is left is the tool calls
            for block in message.content:
                if isinstance(block, ToolCallBlock):
                    self.print_line(indented(block_text(block)))
        else:
            self._message_line(message, message.content)
            if data.usage is not None:
                self.note(describe_usage(data.usage))
        if data.interrupted:
            self.note("interrupted: kept the prefix streamed before the cancel", "yellow")

    def _tool_result(self, event: ToolResultEvent) -> None:
        data = event.data
        block = data.message.content[0]
        marker = "✗ " if block.is_error else "← "
        style = "red" if block.is_error else "magenta"
        line = Text.assemble((marker, style), block_text(block))
        line.append(f"  [{short_id(data.message.id)}]", style="dim")
        if data.error is not None:
            line.append(f"  {data.error.code}", style=style)
        self.print_line(indented(line))
        if data.error is not None and data.error.code in REPAIR_CODES:
            self.note("repaired: synthesized when a log cut by a crash was loaded", "yellow")
        if event.surface_op != "append":
            self.note("rewritten: replaces an earlier result on the surface")

    def _turn_end(self, reason: TurnEndReason) -> None:
        if reason.kind != "completed":
            self.note(describe_reason(reason), "red" if reason.kind == "error" else "yellow")


def note_text(text: str, style: str = "dim") -> Text:
    """A note as printed: indented, in parentheses."""
    return Text(f"  ({text})", style=style)


def message_preview(message: UserMessage, width: int | None = 60) -> str:
    """The first line of a message's text, for one-line summaries: cut to ``width``
    characters (``None``: whole)."""
    text = " ".join(block.text for block in message.content if isinstance(block, TextBlock))
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first if width is None or len(first) <= width else first[: width - 1] + "…"


__all__ = [
    "REPAIR_CODES",
    "SHORT_ID_LENGTH",
    "TranscriptPrinter",
    "block_text",
    "describe_attachment",
    "describe_reason",
    "describe_retry",
    "describe_usage",
    "format_time",
    "indented",
    "message_preview",
    "note_text",
    "short_id",
    "speaker",
]
