"""A small corpus of conversations, the same on every backend, built through the public
Session API: prompts, tool calls and results, answers."""

from __future__ import annotations

from session_stores.scenarios import answer, open_turn, request_tools, run_tool

from dsh_session import Session
from dsh_session.stores import SessionStore

CONVERSATIONS = (
    ("Where did the quick brown fox go?", "The fox jumped over the lazy dog."),
    ("Tell me about databases.", "SQLite has full-text search: FTS5 ranks by BM25."),
    ("What is PostgreSQL's text search?", "It stores a tsvector and looks it up in a GIN index."),
    ("Which dog breeds are lazy?", "Bulldogs and basset hounds are famously lazy."),
    ("Résumé tips, please", "Keep the résumé short; one page for the first job."),
    ("Count to three", "one two three"),
)
"""(prompt, answer) of each session's one turn; the first turn also calls a tool."""


def build_sessions() -> list[Session]:
    """One session per conversation (the first with a tool step), not stored yet."""
    sessions = []
    for number, (prompt, reply) in enumerate(CONVERSATIONS):
        session = Session.create()
        turn = open_turn(session, prompt)
        if number == 0:
            request_tools(session, turn, 1, ["call-fox"])
            run_tool(session, turn, 1, "call-fox", "the fox is in the forest")
            session.append("step/end", {"turn": turn, "step": 1})
            session.append("step/start", {"turn": turn, "step": 2})
            answer(session, turn, 2, reply)
        else:
            answer(session, turn, 1, reply)
        sessions.append(session)
    return sessions


async def store_all(store: SessionStore, sessions: list[Session]) -> None:
    """Write each session to ``store`` (the same events, ids and all, on every store)."""
    for session in sessions:
        copy = Session.from_log(session.header, session.events)
        store.attach(copy)
        await store.flush(copy)
        store.detach(copy)


__all__ = ["CONVERSATIONS", "build_sessions", "store_all"]
