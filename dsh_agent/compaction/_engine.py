"""The compaction engine: prune, then summarize whole units, with provenance in the log.

A summary attempt is one bracket: ``compaction/start``, the summarizer's await, then
(only if the summary is smaller than what it replaces and the span is unchanged)
``compaction/summary`` and the checkpoint ``user/message`` that replaces the span,
then ``compaction/end``. Any failure, cancellation included, closes the bracket with
``compaction/end {error}`` and leaves the surface as it was. Pruning needs no model
and no bracket: each rewrite is preceded by its ``compaction/prune`` (the harness
writes them the same way).
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass

from dsh_agent.compaction._config import Compaction
from dsh_agent.compaction._meter import TokenMeter
from dsh_agent.compaction._plan import plan_summary
from dsh_agent.compaction._prune import ToolResultPruner
from dsh_agent.compaction._summarize import SummarizationInput, Summarizer, as_summary, frame
from dsh_agent.errors import CompactionError, SummaryError
from dsh_llm._create import create_user_message
from dsh_llm._failure import describe_exception
from dsh_llm._messages import Message
from dsh_llm._sources import PluginSource
from dsh_llm.failure_codes import CONTEXT_WINDOW_EXCEEDED
from dsh_session._events_harness import (
    CompactionEndData,
    CompactionStartData,
    CompactionSummaryData,
    ShadowedRange,
)
from dsh_session._session import Session
from dsh_session._surface import project
from dsh_session.events import Replace

_log = logging.getLogger("dsh_agent")

CHECKPOINT_PLUGIN = "compact"
"""The checkpoint message's ``source.plugin`` (the harness's marker)."""

SHADOWED_IDS_FIELD = "shadowedMessageIds"
"""The field of a checkpoint's source that lists the ids of the messages it replaced,
in surface order: a dsh extra the harness keeps as it is (the harness's own checkpoints
lack it; their ``compaction/summary`` names the replaced events by seq)."""


@dataclass(frozen=True, slots=True)
class CompactionResult:
    """A landed summary checkpoint."""

    compaction_id: str
    start_seq: int
    summary_seq: int
    checkpoint_seq: int
    end_seq: int
    shadowed_seqs: tuple[int, ...]
    shadowed_token_count: int
    checkpoint_token_count: int


_OVERFLOW_ATTEMPTS = 4


def _overflowed(error: BaseException) -> bool:
    """Whether the summary call itself failed with ``CONTEXT_WINDOW_EXCEEDED``."""
    cause = error.__cause__
    failure = getattr(cause, "failure", None)
    return isinstance(cause, SummaryError) and getattr(failure, "code", None) == (
        CONTEXT_WINDOW_EXCEEDED
    )


def error_chain(error: BaseException) -> str:
    """``Type: message`` of an error and each of its causes, joined by ``: ``."""
    parts: list[str] = []
    current: BaseException | None = error
    while current is not None and len(parts) < 8:
        parts.append(describe_exception(current))
        current = current.__cause__ or current.__context__
    return ": ".join(parts)


class CompactionEngine:
    """Compacts one session's surface under one policy."""

    def __init__(
        self,
        session: Session,
        meter: TokenMeter,
        policy: Compaction,
        summarizer: Summarizer,
        context_window: int | None,
    ) -> None:
        self._session = session
        self.meter = meter
        self.policy = policy
        self._summarizer = summarizer
        self.context_window = context_window
        self._pruner = (
            None if policy.prune is None else ToolResultPruner(session, meter, policy.prune)
        )

    @property
    def threshold_tokens(self) -> int | None:
        window = self.context_window
        return None if window is None else int(self.policy.threshold_ratio * window)

    # --- triggers --------------------------------------------------------------------

    async def relieve_pressure(self, turn: int | None) -> None:
        """At a pre-step boundary: prune, then summarize, while the next request would
        cross the threshold. A failed summary is logged and the step goes on (the
        overflow recovery is the next line of defence)."""
        threshold, window = self.threshold_tokens, self.context_window
        if threshold is None or window is None or self._below(threshold):
            return
        if self._pruner is not None:
            self._pruner.prune()
            if self._below(threshold):
                return
        retain = int(self.policy.retain_ratio * window)
        for _ in range(1 + self.policy.extra_summaries):
            try:
                result = await self.summarize_head(turn, retain_tokens=retain)
            except CompactionError as error:
                _log.warning("session %s: compaction failed: %s", self._session.id, error)
                return
            if result is None or self._below(threshold):
                return
        _log.warning(
            "session %s: still above the compaction threshold (%d >= %d tokens)",
            self._session.id,
            self.meter.measure().tokens,
            threshold,
        )

    async def compact_maximally(self, turn: int | None) -> bool:
        """After a context overflow: prune, then summarize everything but the last
        unit. A summary request that overflows too (it replays nearly the same prefix)
        is retried on a smaller head, then the rest is summarized again. Returns
        whether the surface changed (then the request is worth a retry)."""
        generation = self._session.surface.generation
        if self._pruner is not None:
            self._pruner.prune()
        retain = 0
        for _ in range(_OVERFLOW_ATTEMPTS):
            try:
                result = await self.summarize_head(turn, retain_tokens=retain)
            except CompactionError as error:
                _log.warning("session %s: overflow compaction failed: %s", self._session.id, error)
                if not _overflowed(error):
                    break
                surface = self.meter.measure().surface_tokens
                retain = (retain + surface) // 2  # summarize an older, smaller head
                continue
            if result is None or retain == 0:
                break
            retain = 0  # a smaller head landed: now summarize up to the last unit
        return self._session.surface.generation > generation

    def _below(self, threshold: int) -> bool:
        return self.meter.measure().tokens < threshold

    # --- one summary attempt ---------------------------------------------------------

    async def summarize_head(
        self, turn: int | None, *, retain_tokens: int
    ) -> CompactionResult | None:
        """Summarize the head of the surface up to a balanced cut that keeps
        ``retain_tokens`` (and at least one unit); ``None`` when there is no such cut.
        Raises :class:`CompactionError` once a failed attempt is closed."""
        session = self._session
        view = session.surface
        count = plan_summary(view, self.meter.price, retain_tokens)
        if count is None:
            return None
        shadowed = view.seqs[:count]
        shadowed_tokens = sum(map(self.meter.price, shadowed))
        header = session.request_header
        messages: list[Message] = []
        for node in view[:count]:
            message = project(node.event)
            if message is not None:
                messages.append(message)
        source = SummarizationInput(
            messages=tuple(messages),
            system=None if header is None else header.system,
            tools=None if header is None else header.tools,
        )
        compaction_id = str(uuid.uuid4())
        start = session.append(
            "compaction/start", CompactionStartData(compaction_id=compaction_id, turn=turn)
        )
        try:
            summary = as_summary(await self._summarizer(source), self._summarizer)
            checkpoint = create_user_message(
                content=frame(summary.summary),
                source=PluginSource.model_validate(
                    {
                        "plugin": CHECKPOINT_PLUGIN,
                        "compactionId": compaction_id,
                        SHADOWED_IDS_FIELD: [node.message.id for node in view[:count]],
                    }
                ),
            )
            checkpoint_tokens = self.meter.price_message(checkpoint)
            if checkpoint_tokens >= shadowed_tokens:
                raise SummaryError(
                    f"the summary does not shrink its source ({checkpoint_tokens} framed "
                    f"tokens >= {shadowed_tokens} shadowed)"
                )
            if session.surface.seqs[:count] != shadowed:
                raise CompactionError(
                    "the summarized span changed during summarization",
                    compaction_id=compaction_id,
                )
            summary_event = session.append(
                "compaction/summary",
                CompactionSummaryData(
                    compaction_id=compaction_id,
                    summary=summary.summary,
                    raw_output=None
                    if summary.raw_output is None
                    else [
                        block.model_dump(mode="json", by_alias=True, exclude_none=True)
                        for block in summary.raw_output
                    ],
                    llm_stream_call=True if summary.llm_stream_call else None,
                    shadowed_range=ShadowedRange(start=shadowed[0], end=shadowed[-1]),
                    shadowed_seqs=shadowed,
                    shadowed_token_count=shadowed_tokens,
                    provider=summary.provider,
                    model=summary.model,
                    max_tokens=summary.max_tokens,
                    usage=summary.usage,
                ),
            )
            replacement = session.append(
                "user/message",
                checkpoint,
                surface_op=Replace(start=shadowed[0], end=shadowed[-1]),
                source_event_seqs=(start.seq, summary_event.seq, *shadowed),
            )
        except BaseException as error:  # cancellation too: the bracket always closes
            session.append(
                "compaction/end",
                CompactionEndData(compaction_id=compaction_id, turn=turn, error=error_chain(error)),
            )
            if isinstance(error, Exception) and not isinstance(error, CompactionError):
                detail = describe_exception(error, with_type=False)
                raise CompactionError(
                    f"compaction {compaction_id} failed: {detail}", compaction_id=compaction_id
                ) from error
            raise
        end = session.append(
            "compaction/end", CompactionEndData(compaction_id=compaction_id, turn=turn)
        )
        return CompactionResult(
            compaction_id=compaction_id,
            start_seq=start.seq,
            summary_seq=summary_event.seq,
            checkpoint_seq=replacement.seq,
            end_seq=end.seq,
            shadowed_seqs=shadowed,
            shadowed_token_count=shadowed_tokens,
            checkpoint_token_count=checkpoint_tokens,
        )


__all__ = [
    "CHECKPOINT_PLUGIN",
    "SHADOWED_IDS_FIELD",
    "CompactionEngine",
    "CompactionResult",
    "error_chain",
]
