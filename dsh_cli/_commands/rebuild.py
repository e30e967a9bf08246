"""Re-building every model request from a session log, for ``demo`` and ``sessions verify``.

Each request that produced output is rebuilt from the log alone
(:func:`~dsh_agent.requests.reconstruct_attempts`, in one pass and without copying any
history) and described by how it differs from the request before it: the splices that
turn the previous message-id list into this one (messages added at the end, or a range
rewritten by a surface replace such as compaction), its message count and a digest of
its full id list. Listing only the splices keeps ``sessions verify --json`` linear in
the log, where listing every request's ids would grow with turns x history. When the
requests actually sent are known (the demo records them), each is compared with its
rebuild.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from dsh_agent.requests import ModelAttempt, diff_requests, reconstruct_attempts
from dsh_llm import GenerateRequest, Message
from dsh_session import SessionEvent


@dataclass(frozen=True)
class Splice:
    """One change from the previous request's id list to the next: at position ``at``
    of the previous list, ``removed`` ids go and the ids ``added`` take their place
    (``removed == 0`` at the end of the list: messages appended)."""

    at: int
    removed: int
    added: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"at": self.at, "removed": self.removed, "added": list(self.added)}


def id_list_digest(ids: Sequence[str]) -> str:
    """The digest ``sessions verify --json`` gives of a request's full message-id list:
    SHA-256 (hex) of every id in UTF-8 followed by a newline byte (ids hold no control
    characters, so the encoding is unambiguous)."""
    digest = hashlib.sha256()
    for message_id in ids:
        digest.update(_id_bytes(message_id))
    return digest.hexdigest()


def _id_bytes(message_id: str) -> bytes:
    return message_id.encode("utf-8") + b"\n"


@dataclass(frozen=True)
class RebuiltRequest:
    """One request rebuilt from the log."""

    number: int
    """1-based position among the session's requests."""
    attempt: ModelAttempt
    """The attempt it was rebuilt from: header and history, without copying it."""
    splices: tuple[Splice, ...]
    """How the previous request's message-id list becomes this one's, in ascending
    ``at`` (for the first request: one splice adding every id)."""
    digest: str
    """:func:`id_list_digest` of this request's full message-id list."""
    differences: tuple[str, ...] | None
    """How the request actually sent differs from the rebuild (empty: identical);
    None when the sent request is not known."""

    @property
    def request(self) -> GenerateRequest:
        """The rebuilt request itself, built on demand (it copies the history)."""
        return self.attempt.request()

    @property
    def added(self) -> int:
        """Messages this request has that the previous one did not have in place."""
        return sum(len(splice.added) for splice in self.splices)

    @property
    def rewritten(self) -> int:
        """Messages of the previous request that are not in place any more."""
        return sum(splice.removed for splice in self.splices)

    def to_json(self) -> dict[str, Any]:
        config = self.attempt.header.config
        value: dict[str, Any] = {
            "number": self.number,
            "seq": self.attempt.seq,
            "provider": config.provider,
            "model": config.model,
            "messageCount": len(self.attempt.messages),
            "messageDigest": self.digest,
            "added": self.added,
            "rewritten": self.rewritten,
            "splices": [splice.to_json() for splice in self.splices],
        }
        if self.differences is not None:
            value["differences"] = list(self.differences)
        return value


def _splices(previous: ModelAttempt | None, current: ModelAttempt) -> tuple[Splice, ...]:
    """The splices from ``previous``'s messages to ``current``'s. Without a surface
    rewrite between them the previous history is a prefix of this one (at most one
    splice, at the end); after a rewrite the messages still present (the very same
    objects, in the same order) are matched in one pass over both lists."""
    after = current.messages
    if previous is None:
        return (Splice(0, 0, tuple(message.id for message in after)),) if after else ()
    before = previous.messages
    if not current.rewritten:
        grown = tuple(message.id for message in after[len(before) :])
        return (Splice(len(before), 0, grown),) if grown else ()
    return _matched_splices(before, after)


def _matched_splices(before: Sequence[Message], after: Sequence[Message]) -> tuple[Splice, ...]:
    position = {id(message): index for index, message in enumerate(before)}
    splices = []
    cursor = 0  # the first message of ``before`` not yet kept or removed
    pending: list[str] = []  # ids added since the last kept message
    for message in after:
        index = position.get(id(message), -1)
        if index < cursor:  # new here (or out of order: then listed again)
            pending.append(message.id)
            continue
        if index > cursor or pending:
            splices.append(Splice(cursor, index - cursor, tuple(pending)))
            pending = []
        cursor = index + 1
    if cursor < len(before) or pending:
        splices.append(Splice(cursor, len(before) - cursor, tuple(pending)))
    return tuple(splices)


class _RunningDigest:
    """:func:`id_list_digest` of each request in turn, in time linear in the ids added:
    plain growth only feeds the new ids; a rewrite starts again from the full list."""

    def __init__(self) -> None:
        self._digest = hashlib.sha256()

    def advance(self, current: ModelAttempt, splices: Sequence[Splice]) -> str:
        if current.rewritten:
            self._digest = hashlib.sha256()
            added: Sequence[str] = [message.id for message in current.messages]
        else:
            added = [message_id for splice in splices for message_id in splice.added]
        for message_id in added:
            self._digest.update(_id_bytes(message_id))
        return self._digest.hexdigest()


def rebuild_requests(
    events: Sequence[SessionEvent], sent: Sequence[GenerateRequest] | None = None
) -> list[RebuiltRequest]:
    """Rebuild every request of ``events``, in time and memory linear in the log;
    compare each with ``sent[i]`` when given. A request sent but missing from the log
    (or the reverse) is a difference too."""
    results = []
    previous: ModelAttempt | None = None
    running = _RunningDigest()
    for index, attempt in enumerate(reconstruct_attempts(events)):
        splices = _splices(previous, attempt)
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
                splices=splices,
                digest=running.advance(attempt, splices),
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


__all__ = [
    "FULL_TABLE_ROWS",
    "RebuiltRequest",
    "Splice",
    "id_list_digest",
    "print_differences",
    "rebuild_requests",
    "request_table",
]
