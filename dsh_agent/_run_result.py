"""What an owned run observed: :class:`RunResult` (a leaf, so that ``TurnFailed`` can
carry one without importing the run machinery)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic

from typing_extensions import TypeVar

from dsh_agent._usage import PriceTable, UsageTotals, usage_of
from dsh_llm._failure import LlmFailure
from dsh_llm._ids import MessageId
from dsh_session.events import LogEvent

OutputT = TypeVar("OutputT", default=None)
_NO_OUTPUT: Any = None


@dataclass(frozen=True, slots=True)
class RunResult(Generic[OutputT]):
    """What a run observed. It reports the interval, not causation: another caller's
    input may have run in the same interval."""

    final_response: str | None
    """The text of the last committed assistant message that had text, if any."""
    finish_reason: str | None
    """The ``kind`` of the last turn-end reason (e.g. ``completed``), if a turn ended."""
    events: tuple[LogEvent, ...]
    """The events from the message's inbox receipt to the next idle."""
    failure: LlmFailure | None = None
    """Why the last turn of the interval failed, when it ended ``error``."""
    message_id: MessageId | None = None
    """The id of the message the run delivered: the one it created for a string or
    content blocks, the given message's otherwise. None for a run started by a verb
    that delivers no message (``retry``, ``regenerate``, ``approve``)."""
    _answer: Callable[[], OutputT] | None = field(default=None, repr=False, compare=False)
    """What :attr:`output` reads (None: the run asked for no output type)."""

    @property
    def output(self) -> OutputT:
        """The validated answer when the run asked for an ``output_type`` (else None).

        A run whose turn stopped at an approval wait before the answer returns without
        it: reading it raises :class:`~dsh_agent.OutputPendingError` until the waiting
        calls are decided and the turn, which keeps the run's options, has answered
        (then it is the answer; :class:`~dsh_agent.OutputValidationError` if the turn
        ended without a valid one)."""
        return _NO_OUTPUT if self._answer is None else self._answer()

    def usage(self, prices: PriceTable | None = None) -> UsageTotals:
        """What the run's events spent: requests, tokens, tool calls, and with a price
        table (``{"provider:model": ModelPrice(...)}``) their cost."""
        return usage_of(self.events, prices=prices)


__all__ = [
    "RunResult",
]
