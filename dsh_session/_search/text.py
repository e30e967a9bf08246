"""Documents, tokens and snippets: the part of search that does not depend on a backend."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from dsh_llm._content import ContentBlock, ReasoningBlock, TextBlock, ToolCallBlock, ToolResultBlock
from dsh_llm._messages import Message
from dsh_session._surface_view import message_of
from dsh_session.events import LogEvent

_TOKEN = re.compile(r"[^\W_]+")
"""A token is a run of Unicode letters and digits (``_`` and punctuation separate)."""

_ASCII_SEPARATORS = bytes(c if chr(c).isalnum() else 0x20 for c in range(128)) + b" " * 128
"""For ASCII text, the same tokens by a byte translation: every byte that is not a
letter or digit becomes a space (four times faster than the expression; an append
tokenizes every message it indexes)."""

_SNIPPET_BEFORE = 8
_SNIPPET_AFTER = 16
"""Tokens of context a snippet keeps before its first match and after it."""


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One message a search found: where it is in which log, and a short excerpt."""

    session_id: str
    """The session whose log holds the message."""
    seq: int
    """The seq of the event that holds it (``user/message``, ``assistant/message`` or
    ``tool/result``); ``session.events[seq]`` after a load."""
    message_id: str
    """The message's id, the same in every log, request and fork that holds it."""
    role: str
    """The message's role (``user`` for prompts and tool results, ``assistant``)."""
    snippet: str
    """Words around the first match, matches marked ``[like this]``; backends build it
    alike, from the message's text."""


@dataclass(frozen=True, slots=True)
class SearchDocument:
    """What an index holds of one surface event: nothing the log does not hold."""

    session_id: str
    seq: int
    message_id: str
    role: str
    body: str
    """The message's text: text, reasoning, tool-call names and arguments, tool results."""

    @property
    def terms(self) -> str:
        """The body's tokens, space-separated: what the backends index."""
        return terms_of(self.body)


def tokens(text: str) -> list[str]:
    """The lowercase tokens of ``text``, in order."""
    return _TOKEN.findall(text.lower())


def terms_of(text: str) -> str:
    """``" ".join(tokens(text))``, the ASCII case by bytes."""
    if text.isascii():
        return " ".join(text.encode().lower().translate(_ASCII_SEPARATORS).decode().split())
    return " ".join(tokens(text))


def message_text(message: Message) -> str:
    """The searchable text of a message, one block a line."""
    return "\n".join(_block_texts(message.content))


def _block_texts(blocks: Iterable[ContentBlock]) -> Iterator[str]:
    for block in blocks:
        if isinstance(block, (TextBlock, ReasoningBlock)):
            yield block.text
        elif isinstance(block, ToolCallBlock):
            yield f"{block.name} {block.arguments}"
        elif isinstance(block, ToolResultBlock):
            yield from _block_texts(block.content)


def documents_of(session_id: str, events: Iterable[LogEvent]) -> list[SearchDocument]:
    """The documents of the surface events among ``events``."""
    found = []
    for event in events:
        message = message_of(event)
        if message is not None:
            found.append(
                SearchDocument(
                    session_id, event.seq, message.id, message.role, message_text(message)
                )
            )
    return found


def snippet(body: str, matches: Iterable[int]) -> str:
    """Words of ``body`` around the first of the token positions ``matches``, each
    matched token marked; the start of the body when nothing matched."""
    lowered = body.lower()
    spans = [(m.start(), m.end()) for m in _TOKEN.finditer(lowered)]
    marked = set(matches)
    if not spans:
        return ""
    first = min(marked, default=0)
    low, high = max(0, first - _SNIPPET_BEFORE), min(len(spans) - 1, first + _SNIPPET_AFTER)
    parts: list[str] = ["…" if low else body[: spans[0][0]]]
    cursor = spans[low][0]
    for position in range(low, high + 1):
        start, end = spans[position]
        parts.append(body[cursor:start])
        word = body[start:end]
        parts.append(f"[{word}]" if position in marked else word)
        cursor = end
    parts.append("…" if high < len(spans) - 1 else body[cursor:])
    return " ".join("".join(parts).split())


__all__ = [
    "SearchDocument",
    "SearchHit",
    "documents_of",
    "message_text",
    "snippet",
    "terms_of",
    "tokens",
]
