"""``until_one_done`` waits as ``asyncio.wait(FIRST_COMPLETED)`` does: it returns
once one task is done, and cancelling the waiter cancels none of the tasks."""

from __future__ import annotations

import asyncio

import pytest

from dsh_agent._engine.settling import until_one_done


async def test_returns_once_one_task_is_done_and_leaves_no_callback() -> None:
    gates = [asyncio.Event(), asyncio.Event()]
    tasks = [asyncio.ensure_future(gate.wait()) for gate in gates]
    waiting = asyncio.ensure_future(until_one_done(tasks))
    await asyncio.sleep(0)
    assert not waiting.done()
    gates[1].set()
    await asyncio.wait_for(waiting, 1)
    assert [task.done() for task in tasks] == [False, True]
    await until_one_done(tasks)  # one is done already: at once
    gates[0].set()
    await tasks[0]
    assert all(task._callbacks in (None, []) for task in tasks)


async def test_cancelling_the_waiter_cancels_no_task() -> None:
    gate = asyncio.Event()
    task = asyncio.ensure_future(gate.wait())
    waiting = asyncio.ensure_future(until_one_done((task,)))
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert not task.cancelled() and not task.done()
    gate.set()
    assert await task is True
