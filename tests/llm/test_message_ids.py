"""Minted message ids: RFC 9562 UUIDv7, monotonic, unique across threads and forks,
and never running ahead of the clock under bursts."""

from __future__ import annotations

import itertools
import os
import threading
import time
import uuid

import pytest

from dsh_llm import create_user_message, new_message_id


def _timestamp_ms(message_id: str) -> int:
    return uuid.UUID(message_id).int >> 80


def test_created_message_has_a_valid_uuid7_id() -> None:
    message = create_user_message(content="hi", source={"kind": "user"})

    parsed = uuid.UUID(message.id)
    assert parsed.version == 7
    assert parsed.variant == uuid.RFC_4122
    assert str(parsed) == message.id


def test_ids_carry_the_current_time() -> None:
    before = time.time_ns() // 1_000_000
    message_id = new_message_id()
    after = time.time_ns() // 1_000_000

    assert before <= _timestamp_ms(message_id) <= after


def test_ids_are_strictly_increasing_within_a_process() -> None:
    ids = [new_message_id() for _ in range(50_000)]

    assert all(a < b for a, b in itertools.pairwise(ids))


def test_a_burst_of_200k_ids_stays_within_a_few_ms_of_the_clock() -> None:
    ids = [new_message_id() for _ in range(200_000)]
    now_ms = time.time_ns() // 1_000_000

    assert len(set(ids)) == len(ids)
    assert _timestamp_ms(ids[-1]) <= now_ms + 2


def test_ids_are_unique_across_threads() -> None:
    per_thread: list[list[str]] = [[] for _ in range(8)]
    start = threading.Barrier(len(per_thread))

    def mint(into: list[str]) -> None:
        start.wait()
        into.extend(new_message_id() for _ in range(20_000))

    threads = [threading.Thread(target=mint, args=(ids,)) for ids in per_thread]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    every_id = [message_id for ids in per_thread for message_id in ids]
    assert len(set(every_id)) == len(every_id)
    assert all(ids == sorted(ids) for ids in per_thread)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_ids_are_unique_across_a_fork() -> None:
    new_message_id()  # the generator has state before the fork
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: mint and report, then leave without running pytest teardown
        os.close(read_end)
        payload = "\n".join(new_message_id() for _ in range(10_000)).encode()
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(payload)
        os._exit(0)
    os.close(write_end)
    parent_ids = [new_message_id() for _ in range(10_000)]
    with os.fdopen(read_end, "rb") as pipe:
        child_ids = pipe.read().decode().split("\n")
    _, status = os.waitpid(pid, 0)

    assert os.waitstatus_to_exitcode(status) == 0
    assert len(child_ids) == 10_000
    assert set(child_ids).isdisjoint(parent_ids)
