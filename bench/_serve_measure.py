"""One load run against one server, and what it measures (the serve-load bench).

:func:`measure` starts the server, runs one warm-up conversation, then ``sessions``
conversations of ``turns`` turns at once, and reads:

- per streamed delta, its arrival at the client minus the moment the scripted model
  emitted it in the server (``delta_delays``); per reply, the same for its last delta
  (``step_delays``: when the whole reply was there); per reply, the wait from posting
  the prompt to the first delta (``first_waits``, which includes any queueing);
- the server's CPU time over the load divided by the turns (``cpu_per_turn``);
- dsh only: its CPU time per second per open stream of an idle session, every
  session's stream open and its log replayed (``idle_stream_cpu``);
- its resident memory once the sessions are idle (``Load.settle`` seconds after the
  load, past the in-process worker's release of idle sessions) minus before the load,
  divided by the sessions (``rss_per_session``).

Every run is checked before it counts: each reply is its script's whole text, once;
for dsh, the prompt's id on the stream is the one the client minted, and the stored
history holds the same ids and texts as the stream (:class:`LoadCheckError`).
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
from _serve_clients import (
    Conversation,
    ConversationRun,
    arrivals,
    dsh_conversation,
    idle_streams,
    peer_conversation,
    talk,
)
from _serve_script import Script, read_emits
from _serve_servers import DSH, PEER, Server, serving

CLIENTS: dict[str, ConversationRun] = {DSH: dsh_conversation, PEER: peer_conversation}


@dataclass(frozen=True, slots=True)
class Load:
    """What one run asks of a server."""

    sessions: int
    turns: int
    stagger: float = 1.0
    """Each session starts after a seeded pause under this many seconds."""
    settle: float = 3.0
    """Seconds to wait before reading resident memory (past the in-process worker's
    release of sessions idle for 2 s)."""
    idle_window: float = 5.0
    """Seconds over which the CPU time of the idle sessions' open streams is read."""

    def time_bound(self, script: Script) -> float:
        """Seconds the load may take before it counts as stuck: generous on a loaded
        2-core machine, yet finite."""
        return 120 + self.sessions * self.turns * script.deltas * script.pace / 4


class LoadCheckError(AssertionError):
    """A load run's conversations are not what the script says (text missing or
    repeated, ids not the client's or not the log's)."""


@dataclass(frozen=True, slots=True)
class Measurement:
    kind: str
    sessions: int
    turns: int
    delta_delays: list[float]
    step_delays: list[float]
    first_waits: list[float]
    cpu_per_turn: float
    rss_per_session: float
    wall: float
    client_cpu: float
    """CPU seconds the client process spent over the load (it shares the machine)."""
    idle_stream_cpu: float
    """dsh only: server CPU seconds per second per open stream of an idle session (the
    peer keeps no stream between runs: 0)."""
    conversations: list[Conversation]
    histories: dict[str, list[tuple[str, str, str]]]
    """dsh only: each session's stored ``(role, id, text)`` after the load."""


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def measure(kind: str, script: Script, load: Load) -> Measurement:
    """One run of ``load`` against server ``kind``."""
    with (
        tempfile.TemporaryDirectory(prefix="dsh-serve-load-") as folder,
        serving(kind, script, Path(folder)) as server,
    ):
        return asyncio.run(_measure(server, script, load))


async def _measure(server: Server, script: Script, load: Load) -> Measurement:
    run, sessions, turns = CLIENTS[server.kind], load.sessions, load.turns
    await talk(server.url, run, script, sessions=1, turns=1, stagger=0, first=0)  # warm-up
    await asyncio.sleep(load.settle)
    rss_before, cpu_before = server.rss_bytes(), server.cpu_seconds()
    started, client_before = time.perf_counter(), time.process_time()
    bound = load.time_bound(script)
    talking = talk(server.url, run, script, sessions=sessions, turns=turns, stagger=load.stagger)
    try:
        conversations = await asyncio.wait_for(talking, bound)
    except TimeoutError:
        raise TimeoutError(
            f"{sessions} sessions x {turns} turns against {server.kind} took over {bound:.0f} s"
        ) from None
    cpu, wall = server.cpu_seconds() - cpu_before, time.perf_counter() - started
    client_cpu = time.process_time() - client_before
    await asyncio.sleep(load.settle)
    rss = server.rss_bytes() - rss_before
    idle_cpu = 0.0
    if server.kind == DSH:
        idle_cpu = await _idle_stream_cpu(server, conversations, load.idle_window)
    histories = await _histories(server, conversations) if server.kind == DSH else {}
    check(conversations, histories, script, turns, dsh=server.kind == DSH)
    emits = read_emits(str(server.emits))
    delta_delays, step_delays, first_waits = [], [], []
    for conversation in conversations:
        for reply in conversation.replies:
            times = arrivals(reply, script)
            emitted = [emits[(reply.prompt, index)] for index in range(script.deltas)]
            delta_delays += [arrived - emit for arrived, emit in zip(times, emitted, strict=True)]
            step_delays.append(times[-1] - emitted[-1])
            first_waits.append(times[0] - reply.sent)
    return Measurement(
        server.kind,
        sessions,
        turns,
        delta_delays,
        step_delays,
        first_waits,
        cpu / (sessions * turns),
        rss / sessions,
        wall,
        client_cpu,
        idle_cpu,
        conversations,
        histories,
    )


async def _idle_stream_cpu(
    server: Server, conversations: list[Conversation], window: float
) -> float:
    async with idle_streams(server.url, conversations):
        before = server.cpu_seconds()
        await asyncio.sleep(window)
        spent = server.cpu_seconds() - before
    return spent / window / len(conversations)


async def _histories(
    server: Server, conversations: list[Conversation]
) -> dict[str, list[tuple[str, str, str]]]:
    histories: dict[str, list[tuple[str, str, str]]] = {}
    async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
        for conversation in conversations:
            sid = conversation.session_id
            answer = await client.get(f"/api/sessions/{sid}/messages")
            answer.raise_for_status()
            histories[sid] = [
                (m["message"]["role"], m["message"]["id"], m["message"]["content"][0]["text"])
                for m in answer.json()["messages"]
            ]
    return histories


def check(
    conversations: list[Conversation],
    histories: dict[str, list[tuple[str, str, str]]],
    script: Script,
    turns: int,
    *,
    dsh: bool,
) -> None:
    """Refuse a run whose replies are not their scripts' whole texts, once each, or
    (``dsh``) whose ids on the stream are not the client's and the log's."""
    problems: list[str] = []
    for conversation in conversations:
        sid = conversation.session_id
        if len(conversation.replies) != turns:
            problems.append(f"{sid}: {len(conversation.replies)} replies, not {turns}")
        expected: list[tuple[str, str, str]] = []
        for turn, reply in enumerate(conversation.replies, start=1):
            if reply.text != script.reply(reply.prompt):
                problems.append(f"{sid} turn {turn}: the reply's text is {reply.text!r}")
            if not reply.message_id:
                problems.append(f"{sid} turn {turn}: the reply had no message id")
            if dsh and reply.user_id != f"{sid}.u{turn}":
                problems.append(f"{sid} turn {turn}: the prompt's id is {reply.user_id!r}")
            expected += [
                ("user", f"{sid}.u{turn}", reply.prompt),
                ("assistant", reply.message_id, script.reply(reply.prompt)),
            ]
        if dsh and histories.get(sid) != expected:
            problems.append(f"{sid}: stored {histories.get(sid)}, streamed {expected}")
    if problems:
        shown = "\n  ".join(problems[:10])
        raise LoadCheckError(f"{len(problems)} problem(s) in the load run:\n  {shown}")
