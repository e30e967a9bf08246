"""The serve-load bench's harness against a real ``dsh serve`` process: many sessions
at once, each streaming its scripted replies over SSE. Not timed (the figures are the
bench's): what is checked is that every session got every reply whole, once, with the
client's prompt ids and the log's reply ids on the stream."""

from __future__ import annotations

import pytest
from _serve_clients import Conversation, Reply
from _serve_measure import Load, LoadCheckError, Measurement, check, measure
from _serve_script import Script
from _serve_servers import DSH

SCRIPT = Script(deltas=8, pace=0.01)
TURNS = 2


def run_load(sessions: int) -> Measurement:
    return measure(DSH, SCRIPT, Load(sessions, TURNS, stagger=0.2, settle=0.5, idle_window=0.5))


def assert_whole(result: Measurement, sessions: int) -> None:
    assert [c.session_id for c in result.conversations] == [
        f"load-{n:03d}" for n in range(1, sessions + 1)
    ]
    for conversation in result.conversations:
        sid = conversation.session_id
        replies = conversation.replies
        assert [r.text for r in replies] == [SCRIPT.reply(r.prompt) for r in replies]
        assert [r.user_id for r in replies] == [f"{sid}.u{t}" for t in range(1, TURNS + 1)]
        stored = result.histories[sid]
        assert [(role, mid) for role, mid, _ in stored] == [
            pair for r in replies for pair in (("user", r.user_id), ("assistant", r.message_id))
        ]
        assert [text for _, _, text in stored] == [
            text for r in replies for text in (r.prompt, r.text)
        ]
    ids = [mid for h in result.histories.values() for _, mid, _ in h]
    assert len(ids) == len(set(ids)) == sessions * TURNS * 2
    turns = sessions * TURNS
    assert (len(result.step_delays), len(result.first_waits)) == (turns, turns)
    assert len(result.delta_delays) == turns * SCRIPT.deltas


def test_five_sessions_each_get_every_reply_whole_with_dshs_ids() -> None:
    assert_whole(run_load(5), 5)


@pytest.mark.slow
def test_two_hundred_sessions_each_get_every_reply_whole_with_dshs_ids() -> None:
    assert_whole(run_load(200), 200)


def test_the_check_refuses_missing_or_repeated_text_and_foreign_ids() -> None:
    def conversation(chunks: list[str], user_id: str = "load-001.u1") -> Conversation:
        reply = Reply("s001-t1", 0.0, user_id, "answer-1", [(0.0, c) for c in chunks])
        return Conversation("load-001", [reply])

    tokens = SCRIPT.tokens("s001-t1")
    stored = [("user", "load-001.u1", "s001-t1"), ("assistant", "answer-1", "".join(tokens))]
    check([conversation(tokens)], {"load-001": stored}, SCRIPT, 1, dsh=True)  # whole: passes
    for bad, words in (
        (conversation(tokens[:-1]), "text"),
        (conversation([*tokens, tokens[-1]]), "text"),
        (conversation(tokens, user_id="minted-by-server"), "prompt's id"),
    ):
        with pytest.raises(LoadCheckError, match=words):
            check([bad], {"load-001": stored}, SCRIPT, 1, dsh=True)
    renamed = [stored[0], ("assistant", "other-id", stored[1][2])]
    with pytest.raises(LoadCheckError, match="stored"):
        check([conversation(tokens)], {"load-001": renamed}, SCRIPT, 1, dsh=True)
