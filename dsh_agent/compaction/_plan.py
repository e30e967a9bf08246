"""Which surface positions a summary may replace: whole units from the head.

A cut between two positions is *balanced* when no tool call before it has its result
after it; a summary range always ends at a balanced cut, so a call never loses its
result. The range starts at the head and leaves a recent tail worth at least
``retain_tokens`` (and always at least one position) verbatim.
"""

from __future__ import annotations

from collections.abc import Callable

from dsh_llm import CallId
from dsh_llm._content import ToolCallBlock
from dsh_session._surface_view import SurfaceView
from dsh_session.events import AssistantMessageEvent, ToolResultEvent


def balanced_cuts(view: SurfaceView) -> list[bool]:
    """``cuts[i]``: whether the cut before position ``i`` is balanced (``len + 1``
    entries). A call whose result is not on the surface constrains nothing."""
    requested: dict[CallId, int] = {}
    crossing = [0] * (len(view) + 1)  # difference array of the calls open at each cut
    for node in view:
        event = node.event
        if isinstance(event, AssistantMessageEvent):
            for block in event.data.message.content:
                if isinstance(block, ToolCallBlock):
                    requested[block.call_id] = node.position
        elif isinstance(event, ToolResultEvent):
            call = requested.pop(event.data.message.source.call_id, None)
            if call is not None:  # open for the cuts after the call, up to the result
                crossing[call + 1] += 1
                crossing[node.position + 1] -= 1
    cuts, open_calls = [], 0
    for delta in crossing:
        open_calls += delta
        cuts.append(open_calls == 0)
    return cuts


def plan_summary(view: SurfaceView, price: Callable[[int], int], retain_tokens: int) -> int | None:
    """How many head positions to summarize (at least one), or ``None`` when no
    balanced cut leaves the retained tail and something before it."""
    keep_from = len(view)
    kept = 0
    while keep_from > 0:
        keep_from -= 1
        kept += price(view[keep_from].seq)
        if kept >= retain_tokens:
            break
    cuts = balanced_cuts(view)
    while keep_from > 0 and not cuts[keep_from]:
        keep_from -= 1
    return keep_from or None


__all__ = [
    "balanced_cuts",
    "plan_summary",
]
