"""Model-free pruning of oversized tool results (dsh-compaction-tool-result-pruner).

A tool result whose text exceeds ``threshold_chars`` code points keeps its head and
tail and loses its middle to a marker. The rewrite keeps the message id, the call id,
``isError`` and every other field (a content rewrite), cites the original, and follows
a ``compaction/prune`` event that states the shadowed node's estimated price, as the
harness writes them. Non-text blocks stay where they were.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dsh_agent.compaction._meter import TokenMeter
from dsh_llm import CallId
from dsh_llm._content import ContentBlock, TextBlock
from dsh_llm._create import replace_content
from dsh_session._events_harness import CompactionPruneData, ShadowedRange
from dsh_session._session import Session
from dsh_session.events import Replace, ToolResultData, ToolResultEvent

PRUNE_MARKER = "\n\n[... tool result middle pruned ...]\n\n"
"""What replaces a pruned middle: the harness's marker, so both sides recognise it."""


@dataclass(frozen=True, slots=True)
class PruneConfig:
    """Character budgets (Unicode code points) of tool-result pruning."""

    threshold_chars: int = 8192
    head_chars: int = 4096
    tail_chars: int = 1024

    def __post_init__(self) -> None:
        if self.threshold_chars < 1 or self.head_chars < 0 or self.tail_chars < 0:
            raise ValueError(
                "PruneConfig: threshold_chars must be >= 1, head_chars and tail_chars >= 0"
            )
        emitted = self.head_chars + len(PRUNE_MARKER) + self.tail_chars
        if emitted > self.threshold_chars:
            raise ValueError(
                f"PruneConfig: head_chars + marker + tail_chars ({emitted}) must be at "
                f"most threshold_chars ({self.threshold_chars})"
            )


@dataclass(frozen=True, slots=True)
class Pruned:
    """One landed rewrite."""

    original_seq: int
    replacement_seq: int
    call_id: CallId
    chars_before: int
    chars_after: int


def text_chars(blocks: Sequence[ContentBlock]) -> int:
    return sum(len(block.text) for block in blocks if isinstance(block, TextBlock))


def prune_content(blocks: Sequence[ContentBlock], config: PruneConfig) -> list[ContentBlock] | None:
    """``blocks`` with the middle of their text removed, or ``None`` within budget."""
    total = text_chars(blocks)
    if total <= config.threshold_chars:
        return None
    cut_from, cut_to = config.head_chars, total - config.tail_chars
    pruned: list[ContentBlock] = []
    offset = 0
    marked = False
    for block in blocks:
        if not isinstance(block, TextBlock):
            pruned.append(block)
            continue
        text, start = block.text, offset
        offset += len(text)
        if offset <= cut_from or start >= cut_to:  # wholly kept
            pruned.append(block)
            continue
        head = text[: max(0, cut_from - start)]
        tail = text[max(0, cut_to - start) :]
        marker = "" if marked else PRUNE_MARKER
        marked = True
        if head or marker or tail:
            pruned.append(TextBlock(text=head + marker + tail))
    return pruned


class ToolResultPruner:
    """Prunes the oversized tool results of one session's surface. Results already
    seen within budget are remembered (events never change), so a pass costs
    O(surface) lookups plus the new results only."""

    def __init__(self, session: Session, meter: TokenMeter, config: PruneConfig) -> None:
        self._session = session
        self._meter = meter
        self.config = config
        self._within_budget: set[int] = set()

    def prune(self) -> list[Pruned]:
        """Rewrite every oversized tool result on the current surface."""
        session, seen = self._session, self._within_budget
        candidates = [
            node.event
            for node in session.surface
            if node.seq not in seen and isinstance(node.event, ToolResultEvent)
        ]
        landed = []
        for event in candidates:
            result = event.data.message.content[0]
            content = prune_content(result.content, self.config)
            if content is None:
                seen.add(event.seq)
                continue
            landed.append(self._rewrite(event, content))
        return landed

    def _rewrite(self, event: ToolResultEvent, content: list[ContentBlock]) -> Pruned:
        seq, session = event.seq, self._session
        message = replace_content(event.data.message, content)
        session.append(
            "compaction/prune",
            CompactionPruneData(
                shadowed_range=ShadowedRange(start=seq, end=seq),
                shadowed_seqs=(seq,),
                shadowed_token_count=self._meter.price(seq),
            ),
        )
        old = event.data
        data = ToolResultData(
            turn=old.turn, step=old.step, message=message, error=old.error, meta=old.meta
        )
        replacement = session.append(
            "tool/result",
            data,
            surface_op=Replace(start=seq, end=seq),
            source_event_seqs=(seq,),
        )
        self._within_budget.add(replacement.seq)
        return Pruned(
            original_seq=seq,
            replacement_seq=replacement.seq,
            call_id=event.data.message.source.call_id,
            chars_before=text_chars(event.data.message.content[0].content),
            chars_after=text_chars(content),
        )


__all__ = [
    "PRUNE_MARKER",
    "PruneConfig",
    "Pruned",
    "ToolResultPruner",
    "prune_content",
    "text_chars",
]
