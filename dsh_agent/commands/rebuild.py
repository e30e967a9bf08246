"""Re-building every model request from a session log, for ``demo`` and ``sessions verify``.

Each request that produced output is rebuilt from the log alone
(:func:`~dsh_agent.requests.reconstruct_requests`) and described by how it grew from
the request before it: messages added at the end, and messages of the previous request
that are no longer in place (a surface rewrite such as compaction). When the requests
actually sent are known (the demo records them), each is compared with its rebuild.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from dsh_agent.requests import diff_requests, reconstruct_requests
from dsh_llm.request import GenerateRequest
from dsh_session.events import SessionEvent


@dataclass(frozen=True)
class RebuiltRequest:
    """One request rebuilt from the log."""

    number: int
    """1-based position among the session's requests."""
    request: GenerateRequest
    added: int
    """Messages at the end that the previous request did not have."""
    rewritten: int
    """Messages of the previous request that are not in place any more."""
    differences: tuple[str, ...] | None
    """How the request actually sent differs from the rebuild (empty: identical);
    None when the sent request is not known."""

    def to_json(self) -> dict[str, Any]:
        request = self.request
        value: dict[str, Any] = {
            "number": self.number,
            "provider": request.provider,
            "model": request.model,
            "messages": [message.id for message in request.messages],
            "added": self.added,
            "rewritten": self.rewritten,
        }
        if self.differences is not None:
            value["differences"] = list(self.differences)
        return value


def _kept_prefix(previous: Sequence[object], current: Sequence[object]) -> int:
    kept = 0
    for before, after in zip(previous, current, strict=False):
        if before is not after:
            break
        kept += 1
    return kept


def rebuild_requests(
    events: Sequence[SessionEvent], sent: Sequence[GenerateRequest] | None = None
) -> list[RebuiltRequest]:
    """Rebuild every request of ``events``; compare each with ``sent[i]`` when given.
    A request sent but missing from the log (or the reverse) is a difference too."""
    rebuilt = reconstruct_requests(events)
    results = []
    previous: tuple[object, ...] = ()
    for index, request in enumerate(rebuilt):
        kept = _kept_prefix(previous, request.messages)
        differences: tuple[str, ...] | None = None
        if sent is not None:
            differences = (
                tuple(diff_requests(sent[index], request))
                if index < len(sent)
                else ("the log holds a request that was never sent",)
            )
        results.append(
            RebuiltRequest(
                number=index + 1,
                request=request,
                added=len(request.messages) - kept,
                rewritten=len(previous) - kept,
                differences=differences,
            )
        )
        previous = request.messages
    return results


def request_table(rebuilt: Sequence[RebuiltRequest]) -> Table:
    """The rebuilt requests as a table; a "sent" column appears when they were compared."""
    compared = any(item.differences is not None for item in rebuilt)
    table = Table(title="requests rebuilt from the log", title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("model")
    table.add_column("messages", justify="right")
    table.add_column("added", justify="right")
    table.add_column("rewritten", justify="right")
    if compared:
        table.add_column("vs. request sent")
    for item in rebuilt:
        row = [
            str(item.number),
            f"{item.request.provider}/{item.request.model}",
            str(len(item.request.messages)),
            f"+{item.added}",
            str(item.rewritten) if item.rewritten else "",
        ]
        if compared:
            row.append("identical" if not item.differences else "DIFFERENT")
        table.add_row(*row)
    return table


def print_differences(console: Console, rebuilt: Sequence[RebuiltRequest]) -> None:
    """One line per difference between a sent request and its rebuild."""
    for item in rebuilt:
        for difference in item.differences or ():
            console.print(Text(f"request {item.number}: {difference}", style="red"))
