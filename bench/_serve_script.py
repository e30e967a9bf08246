"""The scripted conversation of the serve-load bench, the same for both servers.

Every reply is ``DELTAS`` text deltas, one every ``PACE`` seconds, each a token that
names its prompt and its index (``s007-t2.05 ``), so the client can tell from the text
alone which deltas it has and whether any is missing or repeated. The model writes the
moment it emits each delta (``time.perf_counter()``, the system-wide monotonic clock on
Linux, so comparable across processes) to the file ``EMITS_ENV`` names: the client
joins it with the moment the delta arrived. The servers read the settings from their
environment (``settings_env``).

``paced`` is the dsh agent factory (``dsh serve --agent _serve_script:paced``); the
pydantic-ai peer's stream function is in ``_serve_peer.py``.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

from dsh_agent import AgentLoop
from dsh_llm import (
    BlockEndChunk,
    BlockStartChunk,
    FinishChunk,
    GenerateRequest,
    StopFinish,
    StreamChunk,
    TextBlock,
    TextDeltaChunk,
    TokenUsage,
    UsageChunk,
    UserMessage,
)
from dsh_session import Session
from dsh_session.stores import SessionStore

DELTAS_ENV = "DSH_BENCH_SERVE_DELTAS"
PACE_ENV = "DSH_BENCH_SERVE_PACE"
EMITS_ENV = "DSH_BENCH_SERVE_EMITS"


@dataclass(frozen=True, slots=True)
class Script:
    """How every reply streams: ``deltas`` deltas, ``pace`` seconds apart."""

    deltas: int = 20
    pace: float = 0.02

    def settings_env(self, emits: str) -> dict[str, str]:
        """The environment a server process reads the script from."""
        return {DELTAS_ENV: str(self.deltas), PACE_ENV: repr(self.pace), EMITS_ENV: emits}

    @classmethod
    def from_env(cls) -> Script:
        return cls(int(os.environ[DELTAS_ENV]), float(os.environ[PACE_ENV]))

    def tokens(self, prompt: str) -> list[str]:
        """The deltas of the reply to ``prompt``, in order."""
        return [f"{prompt}.{index:02d} " for index in range(self.deltas)]

    def reply(self, prompt: str) -> str:
        return "".join(self.tokens(prompt))

    async def paced(self, prompt: str) -> AsyncIterator[str]:
        """The reply's deltas at the script's pace, each logged as it is emitted."""
        for index, token in enumerate(self.tokens(prompt)):
            await asyncio.sleep(self.pace)
            _log_emit(prompt, index)
            yield token


def prompt_of(session: int, turn: int) -> str:
    """The text of session ``session``'s ``turn``-th prompt (both from 1)."""
    return f"s{session:03d}-t{turn}"


_emits_fd: list[int] = []


def _log_emit(prompt: str, index: int) -> None:
    """One line ``prompt index seconds`` in the emit log (one ``write`` call: lines of
    concurrent replies never interleave)."""
    if not _emits_fd:
        _emits_fd.append(os.open(os.environ[EMITS_ENV], os.O_WRONLY | os.O_APPEND | os.O_CREAT))
    os.write(_emits_fd[0], f"{prompt} {index} {time.perf_counter()!r}\n".encode())


def read_emits(path: str) -> dict[tuple[str, int], float]:
    """``(prompt, delta index) -> emit time`` from an emit log (the first emit of
    each, should a reply ever be generated twice)."""
    emits: dict[tuple[str, int], float] = {}
    with open(path, encoding="utf-8") as log:
        for prompt, index, seconds in _fields(log):
            emits.setdefault((prompt, int(index)), float(seconds))
    return emits


def _fields(lines: Iterator[str]) -> Iterator[list[str]]:
    for line in lines:
        fields = line.split()
        if len(fields) == 3:
            yield fields


class PacedModel:
    """dsh's side of the script: answers the last prompt in the script's deltas."""

    def __init__(self, script: Script) -> None:
        self.script = script

    async def stream(self, request: GenerateRequest) -> AsyncIterator[StreamChunk]:
        prompt = _last_prompt(request)
        yield BlockStartChunk(index=0, block_type="text")
        async for token in self.script.paced(prompt):
            yield TextDeltaChunk(index=0, text=token)
        yield BlockEndChunk(index=0, block=TextBlock(text=self.script.reply(prompt)))
        yield UsageChunk(usage=TokenUsage(input_tokens=1, output_tokens=self.script.deltas))
        yield FinishChunk(reason=StopFinish())


def _last_prompt(request: GenerateRequest) -> str:
    for message in reversed(request.messages):
        if isinstance(message, UserMessage):
            block = message.content[0]
            return block.text if isinstance(block, TextBlock) else ""
    return ""


def paced(session: Session, store: SessionStore) -> AgentLoop:
    """The agent ``dsh serve`` runs in the bench (``--agent _serve_script:paced``)."""
    adapter = PacedModel(Script.from_env())
    return AgentLoop(session=session, adapter=adapter, provider="bench", model="paced", store=store)
