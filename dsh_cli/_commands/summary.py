"""A session in one line: what ``sessions list`` shows and the demo's summary starts with."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dsh_cli._commands.render import message_preview
from dsh_llm import UserMessage, UserSource
from dsh_session import Session, SessionHeader


@dataclass(frozen=True)
class SessionSummary:
    """Counts and the first prompt of one session."""

    header: SessionHeader
    turns: int
    """Turns started in the log (a fork counts its parent's)."""
    messages: int
    """Messages in the model-visible history."""
    events: int
    first_prompt: str
    """The start of the first human prompt, or an empty string."""

    def to_json(self) -> dict[str, Any]:
        """The summary in the CLI's JSON output: full ids, camelCase keys."""
        value: dict[str, Any] = {
            "id": self.header.id,
            "createdAt": self.header.created_at,
            "turns": self.turns,
            "messages": self.messages,
            "events": self.events,
            "firstPrompt": self.first_prompt,
        }
        if self.header.parent_session is not None:
            value["parentSession"] = self.header.parent_session
            value["seedLength"] = self.header.seed_length
        return value


PROMPT_PREVIEW_WIDTH = 60
"""How much of the first prompt a summary keeps by default."""


def summarize(
    session: Session, *, prompt_width: int | None = PROMPT_PREVIEW_WIDTH
) -> SessionSummary:
    """Summarize ``session`` from its derived history and its log; the first prompt's
    first line is cut at ``prompt_width`` characters (``None``: kept whole)."""
    history = session.derive_messages()
    prompt = next(
        (
            message
            for message in history
            if isinstance(message, UserMessage) and isinstance(message.source, UserSource)
        ),
        None,
    )
    return SessionSummary(
        header=session.header,
        turns=session.last_turn,
        messages=len(history),
        events=session.seq,
        first_prompt="" if prompt is None else message_preview(prompt, prompt_width),
    )


__all__ = [
    "PROMPT_PREVIEW_WIDTH",
    "SessionSummary",
    "summarize",
]
