"""What an owned run takes, written once for :func:`~dsh_agent.run`,
:func:`~dsh_agent.run_sync` and :meth:`SyncAgent.run <dsh_agent.SyncAgent.run>`: the
prompt type and the options. Each entry point declares ``output_type`` itself (its
overloads on it give ``RunResult[Model]``) and takes the rest as
``**options: Unpack[RunOptions]`` (``OutputRunOptions`` with an ``output_type``), so a new
option is one key here and one read in the run itself."""

from __future__ import annotations

from typing import TypeAlias, TypedDict

from dsh_agent._model_settings import ModelSettings
from dsh_llm._messages import UserMessage

__all__ = ["OutputRunOptions", "RunOptions", "RunPrompt"]

RunPrompt: TypeAlias = UserMessage
"""What a run sends as its followup: a created message, not bare text."""


class RunOptions(TypedDict, total=False):
    """The keyword options of every run."""

    settings: ModelSettings | None
    """Override the loop's model settings for this run's requests (default: none)."""
    raise_on_error: bool
    """Raise :class:`~dsh_agent.TurnFailed` when the interval's last turn ended
    ``error`` (default True); False returns the failure in the result."""


class OutputRunOptions(RunOptions, total=False):
    """The options of a run that asks for an ``output_type``."""

    output_corrections: int
    """How many failed answers (an invalid ``final_result`` call, or none) the model may
    correct before :class:`~dsh_agent.OutputValidationError` is raised (default 2)."""


def unknown_options(options: OutputRunOptions) -> list[str]:
    """The keywords in ``options`` no run takes (type checkers catch them; this is
    for callers that are not checked)."""
    known = OutputRunOptions.__required_keys__ | OutputRunOptions.__optional_keys__
    return sorted(set(options) - known)
