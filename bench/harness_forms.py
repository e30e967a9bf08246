"""Harness-forms suite: what writing and reading the TypeScript harness's forms costs.

- Reading a 100k-event session (parse, validate, repair check, derive) from each
  JSONL form: the harness's defaults that dsh now writes (zstd frames, packed chunk
  rows), plain packed, plain unpacked, and the flat ``<id>.jsonl`` dsh wrote before
  (dsh's figure until now); from SQLite: the harness's schema 17 (dsh's new default)
  and dsh's own layout 1. ``read`` is used, so no repeat writes anything.
- Durable flush of batches of 10 and 100 events in each write form.
- Bytes on disk of the 100k-event session in each form.

The workload is a streamed agent: each turn a tool step and an answer step, each
step's text arriving as 40 deltas (runs the harness packs into one row).
"""

from __future__ import annotations

import asyncio
import gc
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from _harness import Case, Options, Target, compare
from session import _FlushSubject, _time_flushes

from dsh_llm import (
    TextBlock,
    ToolCallBlock,
    create_assistant_message,
    create_tool_result_message,
    create_user_message,
)
from dsh_session._session import Session
from dsh_session.stores import (
    JsonlSessionStore,
    SessionStore,
    SqliteSessionStore,
)
from dsh_session.stores._codec import dump_event
from dsh_session.stores._sqlite_layout_one import create_layout_one

SUITE = "harness_forms"
MODEL = {"provider": "bench", "model": "scripted"}
DELTAS = 40

JSONL_FORMS: dict[str, dict[str, Any]] = {
    "zstd, packed (new default)": {},
    "plain, packed": {"compression": "none"},
    "plain, unpacked": {"compression": "none", "pack_chunks": False},
}


def _step(session: Session, turn: int, step: int, tool_call: str | None) -> Iterator[None]:
    for index in range(DELTAS):
        chunk = {"type": "text-delta", "index": 0, "text": f"tok{index} "}
        session.append("assistant/chunk", {"turn": turn, "step": step, "chunk": chunk})
        yield
    content: list[Any] = [TextBlock(text=" ".join(f"tok{i}" for i in range(DELTAS)))]
    if tool_call is not None:
        content.append(ToolCallBlock(call_id=tool_call, name="grep", arguments='{"pattern": "x"}'))
    message = create_assistant_message(content=content, source=MODEL)
    session.append("assistant/message", {"turn": turn, "step": step, "message": message})
    yield


def _turns(session: Session) -> Iterator[None]:
    """Append whole streamed turns forever, yielding after each event."""
    while True:
        turn = session.last_turn + 1
        session.append("turn/start", {"turn": turn})
        session.append("step/start", {"turn": turn, "step": 1})
        prompt = create_user_message(content=f"question {turn}", source={"kind": "user"})
        session.append("user/message", prompt)
        if session.request_header is None:
            session.append("request/header", {"header": {"config": MODEL}, "reason": "initial"})
        yield
        yield from _step(session, turn, 1, f"call-{turn}")
        call = session.append(
            "tool/call",
            {"turn": turn, "step": 1, "call_id": f"call-{turn}", "name": "grep", "arguments": "{}"},
        )
        result = create_tool_result_message(call_id=f"call-{turn}", content="match " * 20)
        session.append(
            "tool/result",
            {"turn": turn, "step": 1, "message": result},
            source_event_seqs=[call.seq],
        )
        session.append("step/end", {"turn": turn, "step": 1})
        session.append("step/start", {"turn": turn, "step": 2})
        yield
        yield from _step(session, turn, 2, None)
        session.append("step/end", {"turn": turn, "step": 2})
        session.append("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
        yield


def _long_session(events: int, session_id: str) -> Session:
    session = Session.create(session_id)
    appender = _turns(session)
    while session.seq < events or session.open_turn is not None:
        next(appender)
    return session


def _flat_file(directory: Path, session: Session) -> None:
    """The flat ``<id>.jsonl`` of dsh before the harness layout (header, one event a
    line), which the JSONL store still reads."""
    header = session.header.__pydantic_serializer__.to_json(session.header)
    lines = b"".join(dump_event(event) + b"\n" for event in session.events)
    (directory / f"{session.id}.jsonl").write_bytes(
        b'{"type":"session",' + header[1:] + b"\n" + lines
    )


def _size(path: Path) -> float:
    return float(
        sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
        if path.is_dir()
        else path.stat().st_size
    )


def _read_cases(options: Options, directory: Path) -> list[Case]:
    events = 20_000 if options.quick else 100_000
    session = _long_session(events, "long")
    jsonl: dict[str, Path] = {}
    with asyncio.Runner() as runner:
        for name, form in JSONL_FORMS.items():
            jsonl[name] = directory / f"jsonl-{len(jsonl)}"
            store: SessionStore = JsonlSessionStore(jsonl[name], **form)
            store.attach(session)
            runner.run(store.close())
        jsonl["flat <id>.jsonl (dsh until now)"] = directory / "jsonl-flat"
        jsonl["flat <id>.jsonl (dsh until now)"].mkdir()
        _flat_file(jsonl["flat <id>.jsonl (dsh until now)"], session)
        sqlite = {
            "schema 17 (new default)": directory / "harness.db",
            "dsh layout 1 (dsh until now)": directory / "dsh.db",
        }
        create_layout_one(sqlite["dsh layout 1 (dsh until now)"])
        for path in sqlite.values():
            store = SqliteSessionStore(path)  # a new file: schema 17; else its layout
            store.attach(session)
            runner.run(store.close())
        n = session.seq
        del session
        gc.collect()

        def read_with(store: SessionStore) -> Callable[[], object]:
            def read() -> object:
                loaded, _ = runner.run(store.read("long"))
                return loaded.derive_messages()

            return read

        repeats = options.repeats(5)
        jsonl_values = compare(
            {name: read_with(JsonlSessionStore(path, mode="read")) for name, path in jsonl.items()},
            number=1,
            repeats=repeats,
        )
        sqlite_values = compare(
            {
                "schema 17 (new default)": read_with(
                    SqliteSessionStore(sqlite["schema 17 (new default)"], mode="read")
                ),
                "dsh layout 1 (dsh until now)": read_with(
                    SqliteSessionStore(sqlite["dsh layout 1 (dsh until now)"], mode="read")
                ),
            },
            number=1,
            repeats=repeats,
        )
    name = f"read a {n // 1000}k-event session (parse, validate, repair check, derive)"
    sizes = {f"JSONL {k}": _size(p) for k, p in jsonl.items()}
    sizes |= {f"SQLite {k}": _size(p) for k, p in sqlite.items()}
    return [
        Case(
            SUITE,
            f"{name}, JSONL",
            "s",
            jsonl_values,
            targets=(
                Target(
                    "flat <id>.jsonl (dsh until now)", 1.5, subject="zstd, packed (new default)"
                ),
            ),
        ),
        Case(
            SUITE,
            f"{name}, SQLite",
            "s",
            sqlite_values,
            targets=(
                Target("dsh layout 1 (dsh until now)", 1.5, subject="schema 17 (new default)"),
            ),
        ),
        Case(SUITE, f"bytes on disk of the {n // 1000}k-event session", "bytes", sizes),
    ]


async def _dsh_flush(store: SessionStore, size: int) -> _FlushSubject:
    session = Session.create()
    store.attach(session)
    await store.flush(session)
    events = _turns(session)

    def prepare() -> None:
        start = session.seq
        while session.seq < start + size:
            next(events)

    return _FlushSubject(prepare, lambda: store.flush(session))


async def _flush_cases(options: Options, directory: Path) -> list[Case]:
    cases = []
    for size in (10, 100):
        folder = directory / f"flush-{size}"
        stores: dict[str, SessionStore] = {
            f"JSONL {name}": JsonlSessionStore(folder / f"jsonl-{i}", **form)
            for i, (name, form) in enumerate(JSONL_FORMS.items())
        }
        stores["SQLite schema 17"] = SqliteSessionStore(folder / "harness.db")
        create_layout_one(folder / "dsh.db")
        stores["SQLite dsh layout 1"] = SqliteSessionStore(folder / "dsh.db")
        subjects = {name: await _dsh_flush(store, size) for name, store in stores.items()}
        values = await _time_flushes(subjects, batches=100 if options.quick else 400)
        for store in stores.values():
            await store.close()
        cases.append(
            Case(
                SUITE,
                f"durable flush, batches of ~{size} streamed events",
                "s",
                values,
                targets=(
                    Target(
                        "JSONL plain, unpacked", 1.5, subject="JSONL zstd, packed (new default)"
                    ),
                ),
                notes="per batch, serialization, packing and compression inside the timed part",
            )
        )
    return cases


def run(options: Options) -> list[Case]:
    with tempfile.TemporaryDirectory(prefix="dsh-bench-forms-") as name:
        directory = Path(name)
        cases = _read_cases(options, directory)
        cases += asyncio.run(_flush_cases(options, directory))
    return cases
