"""Search without an index: read each log in turn and match its documents.

What JSONL and in-memory stores search with, and any store whose index is missing or
behind while it is opened read-only. Logs are read one session at a time and only the
best ``limit`` hits are kept, so memory stays that of one log.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Sequence

from dsh_session._search.query import SearchQuery
from dsh_session._search.text import SearchDocument, SearchHit, documents_of, snippet, tokens
from dsh_session.events import LogEvent


def hit_of(query: SearchQuery, document: SearchDocument) -> SearchHit:
    """The hit for a document an index found (its snippet built here, like the scan's)."""
    matched = query.positions(tokens(document.body))
    return SearchHit(
        document.session_id,
        document.seq,
        document.message_id,
        document.role,
        snippet(document.body, matched),
    )


def scan_logs(
    logs: Iterable[tuple[str, Sequence[LogEvent]]],
    query: SearchQuery,
    *,
    role: str | None,
    limit: int,
) -> list[SearchHit]:
    """The best ``limit`` matches among the logs' documents: ranked by the share of the
    message's tokens that match (so a short message all about the query comes first),
    ties by session id and seq."""
    best: list[tuple[float, tuple[int, ...], int, SearchDocument, set[int]]] = []
    for session_id, events in logs:
        for document in documents_of(session_id, events):
            if role is not None and document.role != role:
                continue
            terms = tokens(document.body)
            matched = query.positions(terms)
            if not matched:
                continue
            score = len(matched) / math.sqrt(len(terms))
            # a min-heap of the kept hits: the worst (lowest score, then latest) on top
            entry = (score, _negated(session_id), -document.seq, document, matched)
            if len(best) < limit:
                heapq.heappush(best, entry)
            elif entry[:3] > best[0][:3]:
                heapq.heapreplace(best, entry)
    ranked = sorted(best, key=lambda kept: kept[:3], reverse=True)
    return [
        SearchHit(d.session_id, d.seq, d.message_id, d.role, snippet(d.body, matched))
        for _, _, _, d, matched in ranked
    ]


def _negated(text: str) -> tuple[int, ...]:
    """A key that orders strings backwards (so that, among equal scores, the heap drops
    the later session first)."""
    return (*(-ord(char) for char in text), 1)


__all__ = [
    "hit_of",
    "scan_logs",
]
