"""Re-building every model request from a session log, for ``demo`` and ``sessions verify``.

Each request that produced output is rebuilt from the log alone
(:func:`~dsh_agent.requests.reconstruct_attempts`, in one pass and without copying any
history) and described by how it grew from the request before it: messages added at
the end, and messages of the previous request that are no longer in place (a surface
rewrite such as compaction). When the requests
actually sent are known (the demo records them), each is compared with its rebuild.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from dsh_agent.requests import ModelAttempt, diff_requests, reconstruct_attempts
from dsh_llm.request import GenerateRequest
from dsh_session.events import SessionEvent


@dataclass(frozen=True)
class RebuiltRequest:
    """One request rebuilt from the log."""

    number: int
    """1-based position among the session's requests."""
    attempt: ModelAttempt
    """The attempt it was rebuilt from: header and history, without copying it."""
    added: int
    """Messages at the end that the previous request did not have."""
    rewritten: int
    """Messages of the previous request that are not in place any more."""
    differences: tuple[str, ...] | None
    """How the request actually sent differs from the rebuild (empty: identical);
    None when the sent request is not known."""

    @property
    def request(self) -> GenerateRequest:
        """The rebuilt request itself, built on demand (it copies the history)."""
        return self.attempt.request()

    def to_json(self) -> dict[str, Any]:
        config = self.attempt.header.config
        value: dict[str, Any] = {
            "number": self.number,
            "provider": config.provider,
            "model": config.model,
            "messages": [message.id for message in self.attempt.messages],
            "added": self.added,
            "rewritten": self.rewritten,
        }
        if self.differences is not None:
            value["differences"] = list(self.differences)
        return value


def _kept(previous: ModelAttempt | None, current: ModelAttempt) -> int:
    """How many messages of the previous request begin this one, in place. Without a
    surface rewrite between them the previous history is a prefix of this one, so
    only a rewrite costs a comparison (up to the first message not in place)."""
    if previous is None:
        return 0
    if not current.rewritten:
        return len(previous.messages)
    kept = 0
    for before, after in zip(previous.messages, current.messages, strict=False):
        if before is not after:
            break
        kept += 1
    return kept


def rebuild_requests(
    events: Sequence[SessionEvent], sent: Sequence[GenerateRequest] | None = None
) -> list[RebuiltRequest]:
    """Rebuild every request of ``events``, in time and memory linear in the log;
    compare each with ``sent[i]`` when given. A request sent but missing from the log
    (or the reverse) is a difference too."""
    results = []
    previous: ModelAttempt | None = None
    for index, attempt in enumerate(reconstruct_attempts(events)):
        kept = _kept(previous, attempt)
        differences: tuple[str, ...] | None = None
        if sent is not None:
            differences = (
                tuple(diff_requests(sent[index], attempt.request()))
                if index < len(sent)
                else ("the log holds a request that was never sent",)
            )
        results.append(
            RebuiltRequest(
                number=index + 1,
                attempt=attempt,
                added=len(attempt.messages) - kept,
                rewritten=(len(previous.messages) if previous else 0) - kept,
                differences=differences,
            )
        )
        previous = attempt
    return results


FULL_TABLE_ROWS = 40
"""Up to this many requests, the table has one row per request."""


def request_table(rebuilt: Sequence[RebuiltRequest]) -> Table:
    """The rebuilt requests as a table; a "sent" column appears when they were compared.
    Beyond :data:`FULL_TABLE_ROWS` requests, each run of unremarkable requests (that
    only added messages, with the same model, and matched what was sent) between the
    remarkable ones (the first, the last, a rewrite, a difference) is one row: the
    table stays readable, and cheap to render for a session of thousands of turns."""
    compared = any(item.differences is not None for item in rebuilt)
    table = Table(title="requests rebuilt from the log", title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("model")
    table.add_column("messages", justify="right")
    table.add_column("added", justify="right")
    table.add_column("rewritten", justify="right")
    if compared:
        table.add_column("vs. request sent")
    rows = [[item] for item in rebuilt] if len(rebuilt) <= FULL_TABLE_ROWS else _runs(rebuilt)
    for run in rows:
        first, last = run[0], run[-1]
        config = first.attempt.header.config
        row = [
            str(first.number) if len(run) == 1 else f"{first.number}-{last.number}",
            f"{config.provider}/{config.model}",
            _span(len(first.attempt.messages), len(last.attempt.messages)),
            f"+{sum(item.added for item in run)}",
            str(first.rewritten) if first.rewritten else "",
        ]
        if compared:
            row.append("DIFFERENT" if any(item.differences for item in run) else "identical")
        table.add_row(*row)
    return table


def _runs(rebuilt: Sequence[RebuiltRequest]) -> list[list[RebuiltRequest]]:
    """Consecutive requests grouped: a remarkable request alone, the others by model."""
    runs: list[list[RebuiltRequest]] = []
    joinable = False  # the last run is of unremarkable requests
    for index, item in enumerate(rebuilt):
        remarkable = index in (0, len(rebuilt) - 1) or bool(item.rewritten or item.differences)
        if not remarkable and joinable and _same_model(runs[-1][-1], item):
            runs[-1].append(item)
        else:
            runs.append([item])
        joinable = not remarkable
    return runs


def _same_model(one: RebuiltRequest, other: RebuiltRequest) -> bool:
    first, second = one.attempt.header.config, other.attempt.header.config
    return (first.provider, first.model) == (second.provider, second.model)


def _span(first: int, last: int) -> str:
    return str(first) if first == last else f"{first}-{last}"


def print_differences(console: Console, rebuilt: Sequence[RebuiltRequest]) -> None:
    """One line per difference between a sent request and its rebuild."""
    for item in rebuilt:
        for difference in item.differences or ():
            console.print(Text(f"request {item.number}: {difference}", style="red"))
