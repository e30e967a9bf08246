"""Mailbox suite: what a worker's scan and an owner's drain cost as a service ages.

A worker asks its store's mailbox which sessions wait (``waiting``) every
``scan_interval`` (0.2 s) and an owner reads its session's unanswered deliveries
(``pending``) at every wake, for as long as the service runs, while every delivery
ever made stays in the mailbox (it is what makes a repeated delivery return its first
receipt). Both must cost what waits, not what was ever delivered:

- ``waiting`` with one session waiting among many sessions that each hold 20 answered
  deliveries: 10x the sessions, target at most 1.2x the cost;
- ``pending`` of a session holding one waiting delivery after 1,000 answered ones, against
  one after 10: target at most 1.2x.

SQLite (a mailbox file as beside a schema-17 database) and JSONL (a file per session)
on the CPU clock; PostgreSQL (a throwaway cluster) on the wall clock, as its server
does the work. The histories are written in bulk in each backend's own form.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
from _harness import CPU_CLOCK, WALL_CLOCK, Case, Options, Target, compare
from _postgres import schema, server

from dsh_session._header import SessionId
from dsh_session._mailbox._base import Mailbox
from dsh_session._mailbox._jsonl import JsonlMailbox
from dsh_session._mailbox._records import MailboxAnswer, MailboxEntry
from dsh_session._mailbox._sqlite import SqliteMailbox
from dsh_session.stores.postgres._mailbox import PostgresMailbox

SUITE = "mailbox_scan"
TARGET = 1.2
PER_SESSION = 20
HISTORIES = (10, 1_000)
"""Answered deliveries before the waiting one, for the ``pending`` case."""
APPLIED = MailboxAnswer("applied").dump()

Rows = list[tuple[str, int, str, str, str | None]]
"""session id, arrival, key, entry, answer: one delivery, as the tables hold it."""


def _rows(sessions: int) -> Rows:
    """Every session's answered history, one delivery waiting in the first session, and
    the two ``pending`` sessions."""
    rows: Rows = []
    for index in range(sessions):
        rows += _history(f"s{index:05d}", PER_SESSION)
    rows.append(_delivery("s00000", PER_SESSION, answered=False))
    for length in HISTORIES:
        rows += [*_history(f"h{length}", length), _delivery(f"h{length}", length, answered=False)]
    return rows


def _history(sid: str, length: int) -> Rows:
    return [_delivery(sid, arrival, answered=True) for arrival in range(length)]


def _delivery(sid: str, arrival: int, *, answered: bool) -> tuple[str, int, str, str, str | None]:
    key = f"d{arrival}"
    entry = MailboxEntry(SessionId(sid), key, "cancel", "enqueue", reason="user")
    return sid, arrival, key, entry.dump(), APPLIED if answered else None


def _sqlite(folder: Path, rows: Rows) -> SqliteMailbox:
    mailbox = SqliteMailbox(folder / "sessions.db.dsh-mailbox")
    with mailbox._db as db:
        db.execute("BEGIN")
        db.executemany("INSERT INTO dsh_mailbox VALUES (?, ?, ?, ?, ?)", rows)
    return mailbox


def _jsonl(folder: Path, rows: Rows) -> JsonlMailbox:
    def path_of(sid: SessionId) -> Path:
        return folder / "_no-cwd" / sid / "dsh-mailbox.jsonl"

    lines: dict[str, list[str]] = {}
    for sid, _, key, entry, answer in rows:
        put = json.dumps({"put": json.loads(entry), "session": sid}, separators=(",", ":"))
        lines.setdefault(sid, []).append(put)
        if answer is not None:
            lines[sid].append(json.dumps({"answer": key, **json.loads(answer)}))
    for sid, text in lines.items():
        path_of(SessionId(sid)).parent.mkdir(parents=True)
        path_of(SessionId(sid)).write_text("\n".join(text) + "\n")
    return JsonlMailbox(folder, path_of)


@contextmanager
def _postgres(dsn: str) -> Iterator[Callable[[str, Rows], Mailbox]]:
    def build(name: str, rows: Rows) -> Mailbox:
        where = schema(dsn, name)
        mailbox = PostgresMailbox(where, name)
        with psycopg.connect(where) as connection, connection.cursor() as cursor:
            with cursor.copy("COPY dsh_mailbox FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            cursor.execute("ANALYZE dsh_mailbox")
        return mailbox

    yield build


def _cases(name: str, build: Callable[[str, Rows], Mailbox], options: Options) -> list[Case]:
    few, many = (200, 2_000) if options.quick else (1_000, 10_000)
    clock = WALL_CLOCK if name == "PostgreSQL" else CPU_CLOCK
    small, large = build(f"mailbox_{few}", _rows(few)), build(f"mailbox_{many}", _rows(many))
    runner = asyncio.Runner()

    def call(work: Callable[[], object]) -> Callable[[], object]:
        return lambda: runner.run(work())  # type: ignore[arg-type]

    scan = compare(
        {
            f"{many:,} sessions": call(large.waiting),
            f"{few:,} sessions": call(small.waiting),
        },
        number=5,
        repeats=options.repeats(15),
        clock=clock,
    )
    short, long = (f"after {n:,} answered" for n in HISTORIES)
    drain = compare(
        {
            long: call(lambda: large.pending(SessionId(f"h{HISTORIES[1]}"))),
            short: call(lambda: large.pending(SessionId(f"h{HISTORIES[0]}"))),
        },
        number=20,
        repeats=options.repeats(15),
        clock=clock,
    )
    for mailbox in (small, large):
        runner.run(mailbox.close())
    runner.close()
    kind = "cpu" if clock is CPU_CLOCK else "wall"
    return [
        Case(
            SUITE,
            f"{name}: a worker's scan (waiting), one session waiting, {PER_SESSION} answered "
            "deliveries a session",
            "s",
            scan,
            targets=(Target(f"{few:,} sessions", TARGET, subject=f"{many:,} sessions"),),
            clock=kind,
        ),
        Case(
            SUITE,
            f"{name}: an owner's drain (pending), one delivery waiting",
            "s",
            drain,
            targets=(Target(short, TARGET, subject=long),),
            clock=kind,
        ),
    ]


def run(options: Options) -> list[Case]:
    """The mailbox suite's cases."""
    cases: list[Case] = []
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)

        def sqlite(name: str, rows: Rows) -> Mailbox:
            (root / name).mkdir()
            return _sqlite(root / name, rows)

        def jsonl(name: str, rows: Rows) -> Mailbox:
            return _jsonl(root / f"{name}-jsonl", rows)

        cases += _cases("SQLite", sqlite, options)
        cases += _cases("JSONL", jsonl, options)
    with server() as dsn, _postgres(dsn) as postgres:
        cases += _cases("PostgreSQL", postgres, options)
    return cases
