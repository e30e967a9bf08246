"""A reload in the middle of a turn, and a second tab, show the same messages with the
same ids as the tab that sent them, and as the history API: no text twice."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .agents import FILLER
from .browser import Chat, Row, Served, history, ids_and_texts

if TYPE_CHECKING:
    from playwright.sync_api import Browser


def _text_once(rows: list[Row]) -> None:
    ids = [r.id for r in rows]
    assert len(ids) == len(set(ids)), ids
    for row in rows:
        assert row.text.count("You said") <= 1 and row.text.count(FILLER) <= 1, row


def test_a_reload_mid_turn_and_a_second_tab_show_the_same_messages(
    chat: Chat, browser: Browser, server: Served
) -> None:
    chat.open()
    sid = chat.new_session()
    second = browser.new_context()
    try:
        _reload_and_compare(chat, Chat(second.new_page(), server.base), sid)
    finally:
        second.close()


def _reload_and_compare(chat: Chat, other: Chat, sid: str) -> None:
    chat.send("first")
    chat.settled()
    other.open(f"session={sid}")  # idle: it streams from after the history's last event
    other.settled()
    chat.send("pause, then answer")
    other.until(other.running, "the second tab to see the turn start")
    # mid-turn: the tool runs (0.8 s), then the reply streams (a word per 60 ms)
    chat.wait(lambda rows: any(r.role == "tool" for r in rows), "the tool to end", 15)
    chat.page.reload()
    chat.send("and this")  # a steer into the running turn, from the reloaded tab
    final = f"You said: first | pause, then answer | and this. {FILLER}"
    rows = chat.settled(last=final)
    seen = other.settled(last=final)
    _text_once(rows)
    assert ids_and_texts(seen) == ids_and_texts(rows)
    assert [m["id"] for m in history(chat, sid)] == [r.id for r in rows]
    assert [r.text for r in rows if r.role == "user"] == ["first", "pause, then answer", "and this"]
    assert [r.text for r in rows if r.role == "tool"] == ["waited 0.8"]

    chat.page.reload()  # after the turn: read back from the history alone
    assert ids_and_texts(chat.settled(last=final)) == ids_and_texts(rows)
    assert other.errors == []
