"""Id suite: the cost of minting one UUIDv7 string and how far each generator's
timestamps run ahead of the clock in a burst — the figures behind
docs/decisions/2026-12-02-uuidv7-generator.md.

Besides ``uuid_utils`` (what dsh uses) and ``uuid6``, it measures two pure-Python
generators written here only for comparison: the RFC 9562 counter method, and the
floor any pure-Python generator pays (a lock, ``time.time_ns`` and the formatting).
"""

from __future__ import annotations

import secrets
import threading
import time
import uuid
from collections.abc import Callable

import uuid6
from _harness import CPU_CLOCK, Case, Options, compare

from dsh_llm import new_message_id

SUITE = "ids"
BURST = 200_000


def _format(value: int) -> str:
    text = f"{value:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


class CounterMethodUuid7:
    """RFC 9562 §6.2 method 1: a 42-bit counter (12 bits of rand_a + 30 of rand_b),
    reseeded with its top bit clear each new millisecond and incremented within one;
    only its overflow (over 2**41 ids in a millisecond) may borrow the next one."""

    _VERSION = 0x7 << 76
    _VARIANT = 0b10 << 62

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last_ms = -1
        self._counter = 0

    def __call__(self) -> str:
        with self._lock:
            now_ms = time.time_ns() // 1_000_000
            if now_ms > self._last_ms:
                self._last_ms = now_ms
                self._counter = secrets.randbits(41)
            else:
                self._counter += 1
                if self._counter >> 42:
                    self._last_ms += 1
                    self._counter = secrets.randbits(41)
            timestamp, counter = self._last_ms, self._counter
        value = (
            timestamp << 80
            | self._VERSION
            | (counter >> 30) << 64
            | self._VARIANT
            | (counter & 0x3FFFFFFF) << 32
            | secrets.randbits(32)
        )
        return _format(value)


_floor_lock = threading.Lock()


def _pure_python_floor() -> str:
    """What every pure-Python generator pays at least: a lock, the clock, formatting."""
    with _floor_lock:
        now = time.time_ns()
    return _format(now << 64)


GENERATORS: dict[str, Callable[[], str]] = {
    "uuid_utils (dsh)": new_message_id,
    "uuid6.uuid7": lambda: str(uuid6.uuid7()),
    "pure-Python counter method": CounterMethodUuid7(),
    "pure-Python floor (lock+time_ns+format)": _pure_python_floor,
    "uuid.uuid4 (no time order)": lambda: str(uuid.uuid4()),
}


def _timestamp_ms(text: str) -> int:
    return uuid.UUID(text).int >> 80


def _burst_drift_ms(generate: Callable[[], str]) -> float:
    """How far ahead of the clock the last id of a burst of BURST ids is, in ms."""
    ids = [generate() for _ in range(BURST)]
    now_ms = time.time_ns() // 1_000_000
    assert len(set(ids)) == BURST and ids == sorted(ids), "ids must be unique and ordered"
    return float(max(0, _timestamp_ms(ids[-1]) - now_ms))


def run(options: Options) -> list[Case]:
    """The id suite's cases. The burst runs first: uuid6 keeps its drift for the
    rest of the process, so it must start from a fresh state."""
    drift = {
        name: _burst_drift_ms(generate)
        for name, generate in GENERATORS.items()
        if not name.startswith(("uuid.uuid4", "pure-Python floor"))
    }
    cost = compare(GENERATORS, number=20_000, repeats=options.repeats(20), clock=CPU_CLOCK)
    return [
        Case(SUITE, "mint one UUIDv7 string", "s", cost, clock="cpu"),
        Case(SUITE, f"timestamp ahead of the clock after a {BURST:,}-id burst", "ms", drift),
    ]
