"""``Compaction``: the policy an agent loop compacts its context by."""

from __future__ import annotations

from dataclasses import dataclass

from dsh_agent.compaction._meter import TokenCounter
from dsh_agent.compaction._prune import PruneConfig
from dsh_agent.compaction._summarize import Summarizer

DEFAULT_PRUNE = PruneConfig()
"""The harness's budgets: prune above 8192 code points to 4096 head + 1024 tail."""

KNOWN_CONTEXT_WINDOWS: dict[str, int] = {
    "deepseek-v4-flash": 1_000_000,
    "deepseek-v4-pro": 1_000_000,
    "deepseek-chat": 131_072,
    "deepseek-reasoner": 131_072,
}
"""Context windows of models by model id, used when ``AgentLoop`` gets none."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Compaction:
    """When and how to compact. At a pre-step boundary where the next request would
    use ``threshold_ratio x context_window`` tokens or more, oversized tool results are
    pruned first; if that is not enough, the oldest whole units are summarized, keeping
    a recent tail of ``retain_ratio x context_window`` tokens verbatim.

    ``summarizer``: ``None`` asks the conversation's adapter and model; a
    :class:`~dsh_agent.compaction.ModelSummarizer` asks another adapter or model; any
    async function ``(SummarizationInput) -> Summary | str`` replaces the model.
    ``prune=None`` turns tool-result pruning off. ``counter`` prices messages exactly
    (default: the harness's 4-characters-a-token estimate)."""

    threshold_ratio: float = 0.8
    retain_ratio: float = 0.16
    summarizer: Summarizer | None = None
    max_tokens: int = 8192
    """The summary call's output cap (the default summarizer's)."""
    prune: PruneConfig | None = DEFAULT_PRUNE
    counter: TokenCounter | None = None
    extra_summaries: int = 1
    """Further summaries in one pass while the pressure stays above the threshold."""
    overflow_recovery: bool = True
    """On ``CONTEXT_WINDOW_EXCEEDED``, compact maximally once and retry the request."""

    def __post_init__(self) -> None:
        if not 0 < self.threshold_ratio <= 1:
            raise ValueError(f"threshold_ratio must be in (0, 1], not {self.threshold_ratio}")
        if not 0 <= self.retain_ratio < self.threshold_ratio:
            raise ValueError(
                f"retain_ratio must be in [0, threshold_ratio), not {self.retain_ratio}"
            )
        if self.max_tokens < 1 or self.extra_summaries < 0:
            raise ValueError("max_tokens must be >= 1 and extra_summaries >= 0")


__all__ = [
    "DEFAULT_PRUNE",
    "KNOWN_CONTEXT_WINDOWS",
    "Compaction",
]
