"""Context that never overflows: the token meter and the compaction engine.

``AgentLoop(..., context_window=N, compaction=Compaction())`` prunes oversized tool
results and summarizes the oldest whole units at pre-step boundaries, recovers from a
context overflow once per step, and ``await agent.compact_now()`` compacts between
turns. Every step is in the log (``compaction/*`` events, harness wire shapes).
"""

from dsh_agent.compaction._config import KNOWN_CONTEXT_WINDOWS, Compaction
from dsh_agent.compaction._engine import (
    CHECKPOINT_PLUGIN,
    SHADOWED_IDS_FIELD,
    CompactionEngine,
    CompactionResult,
)
from dsh_agent.compaction._meter import (
    HeuristicCounter,
    Pressure,
    TokenCounter,
    TokenMeter,
    estimate_content,
)
from dsh_agent.compaction._plan import balanced_cuts, plan_summary
from dsh_agent.compaction._prune import PRUNE_MARKER, PruneConfig, Pruned, ToolResultPruner
from dsh_agent.compaction._summarize import (
    INSTRUCTION,
    ModelSummarizer,
    SummarizationInput,
    Summarizer,
    Summary,
)
from dsh_agent.errors import CompactionError, SummaryError

__all__ = [
    "CHECKPOINT_PLUGIN",
    "INSTRUCTION",
    "KNOWN_CONTEXT_WINDOWS",
    "PRUNE_MARKER",
    "SHADOWED_IDS_FIELD",
    "Compaction",
    "CompactionEngine",
    "CompactionError",
    "CompactionResult",
    "HeuristicCounter",
    "ModelSummarizer",
    "Pressure",
    "PruneConfig",
    "Pruned",
    "SummarizationInput",
    "Summarizer",
    "Summary",
    "SummaryError",
    "TokenCounter",
    "TokenMeter",
    "ToolResultPruner",
    "balanced_cuts",
    "estimate_content",
    "plan_summary",
]
