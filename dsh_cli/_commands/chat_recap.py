"""What a resumed chat at a terminal shows first: the last few exchanges.

An exchange is a human prompt and everything after it in the model-visible history
(steers, tool calls and results, answers), so the user sees where the conversation
stood before typing into it. ``dsh sessions show`` has the whole log.
"""

from __future__ import annotations

from rich.text import Text

from dsh_cli._commands.render import TranscriptPrinter
from dsh_llm import Message, UserMessage, UserSource
from dsh_session import Session

RECAP_EXCHANGES = 3
"""How many of the last exchanges a resumed chat shows."""


def recent_exchanges(session: Session, count: int = RECAP_EXCHANGES) -> list[Message]:
    """The messages of the last ``count`` exchanges of ``session``'s history."""
    history = session.derive_messages()
    prompts = [
        index
        for index, message in enumerate(history)
        if isinstance(message, UserMessage) and isinstance(message.source, UserSource)
    ]
    if not prompts:
        return []
    return list(history[prompts[-min(count, len(prompts))] :])


def print_recap(printer: TranscriptPrinter, session: Session) -> None:
    """Print the last exchanges, between two rules; nothing for an empty history."""
    messages = recent_exchanges(session)
    if not messages:
        return
    shown = sum(isinstance(m, UserMessage) and isinstance(m.source, UserSource) for m in messages)
    printer.print_line(
        Text(f"── the last {shown} exchange(s) of session {session.id} ──", style="dim")
    )
    for message in messages:
        printer.print_message(message)
    printer.print_line(Text("── (dsh sessions show has the whole log) ──", style="dim"))


__all__ = [
    "RECAP_EXCHANGES",
    "print_recap",
    "recent_exchanges",
]
