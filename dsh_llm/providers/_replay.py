"""Provider replay state: what an adapter must send back about its own earlier output.

An adapter puts a small JSON object, tagged with its ``format``, in the finish chunk;
the assembler stores it in the assistant message's ``source.replayState``. On later
requests the adapter sends it back only when the message came from the very provider
and model being called and carries the adapter's own format: another model's
signatures or reasoning would be rejected, or worse, misread.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dsh_llm._messages import AssistantMessage
from dsh_llm._request import GenerateRequest


def own_replay_state(
    message: AssistantMessage, request: GenerateRequest, replay_format: str
) -> Mapping[str, Any] | None:
    """The message's replay state if this adapter may replay it to this request."""
    source = message.source
    state = source.replay_state
    if (
        source.provider != request.provider
        or source.model != request.model
        or not isinstance(state, Mapping)
        or state.get("format") != replay_format
    ):
        return None
    return state


__all__ = [
    "own_replay_state",
]
