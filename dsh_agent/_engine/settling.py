"""Waiting for tasks to settle, at the cost of one future.

``asyncio.wait`` builds sets, a counter and a timeout path for each call; the loop
waits twice a tool turn (for its driver task, for a running tool call) and needs
none of that. The wait has ``asyncio.wait``'s meaning: cancelling the waiter
cancels none of the tasks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from typing import Any


async def until_one_done(tasks: Collection[asyncio.Future[Any]]) -> None:
    """Return once one of ``tasks`` is done (at once when one already is)."""
    if any(task.done() for task in tasks):
        return
    waiter = asyncio.get_running_loop().create_future()

    def wake(_: object) -> None:
        if not waiter.done():
            waiter.set_result(None)

    for task in tasks:
        task.add_done_callback(wake)
    try:
        await waiter
    finally:
        for task in tasks:
            task.remove_done_callback(wake)


__all__ = [
    "until_one_done",
]
