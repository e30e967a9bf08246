"""Full-text search over session logs: what every backend shares.

A *document* is one surface event (``user/message``, ``assistant/message``,
``tool/result``): its message's text, cut into lowercase tokens here, in Python, so
every backend indexes and matches exactly the same tokens (``text.py``). A query is
parsed once, here, into a small tree every backend compiles: to an FTS5 expression
(SQLite), a ``tsquery`` (PostgreSQL) or a matcher (the scan of JSONL and memory stores;
``query.py``). docs/decisions/2026-12-06-search-index.md says what is guaranteed
across backends.
"""

from dsh_session._search.query import SearchQuery, parse_query
from dsh_session._search.text import SearchDocument, SearchHit, documents_of, snippet

__all__ = [
    "SearchDocument",
    "SearchHit",
    "SearchQuery",
    "documents_of",
    "parse_query",
    "snippet",
]
