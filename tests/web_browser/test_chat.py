"""The web chat in real headless Chromium against ``dsh serve``: a reply streams in, a
steer sent while it streams changes the next step, a call waiting for approval is
approved and another denied from the page, a stored ``<script>`` is shown as text, and
a send whose answer is lost is retried under the same id and delivered once."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .agents import FILLER
from .browser import Chat, Row, answers, history

if TYPE_CHECKING:
    from playwright.sync_api import Route

_RECORD_TEXTS = """() => {
  window.seenTexts = [];
  new MutationObserver(() => {
    for (const e of document.querySelectorAll('#messages .msg-assistant .text')) {
      const seen = window.seenTexts;
      if (seen[seen.length - 1] !== e.textContent) seen.push(e.textContent);
    }
  }).observe(document.getElementById('messages'), {subtree: true, childList: true,
                                                   characterData: true});
}"""


def test_a_reply_appears_token_by_token(chat: Chat) -> None:
    chat.open()
    chat.new_session()
    chat.page.evaluate(_RECORD_TEXTS)
    chat.send("count slowly")
    final = answers(chat.settled(answers=1))[0]
    assert final == f"You said: count slowly. {FILLER}"
    seen: list[str] = chat.page.evaluate("window.seenTexts")
    growing = [text for text in seen if text and text != final]
    assert len(growing) >= 3, f"the reply did not grow in steps: {seen}"
    assert all(final.startswith(text) for text in growing)
    assert [len(text) for text in growing] == sorted({len(text) for text in growing})


def test_a_steer_sent_mid_reply_enters_the_next_step(chat: Chat) -> None:
    chat.open()
    chat.new_session()
    chat.send("count slowly")
    # the prompt entered the log and the turn runs: its reply is streaming
    chat.wait(lambda rows: chat.running() and rows and not rows[0].pending, "the turn to run")
    assert chat.page.inner_text("#send") == "Steer"
    chat.send("and then stop")
    rows = chat.settled(answers=2)
    assert [(r.role, r.text) for r in rows] == [
        ("user", "count slowly"),
        ("assistant", f"You said: count slowly. {FILLER}"),
        ("user", "and then stop"),
        ("assistant", f"You said: count slowly | and then stop. {FILLER}"),
    ]


def _tool_rows(rows: list[Row]) -> list[str]:
    return [r.text for r in rows if r.role == "tool"]


def test_a_call_is_approved_and_another_denied_from_the_page(chat: Chat) -> None:
    chat.open()
    sid = chat.new_session()
    chat.send("look up k")
    chat.page.wait_for_selector(".call .approve")
    assert chat.page.inner_text(".call .call-name") == "lookup"
    assert chat.page.inner_text(".call .call-args") == '{"key": "k"}'
    chat.page.click(".call .approve")
    rows = chat.settled(answers=1)
    assert _tool_rows(rows) == ["value of k"]
    assert answers(rows) == ["The lookup said: value of k"]
    assert chat.page.locator(".approve").count() == 0

    chat.send("look up j")
    chat.page.wait_for_selector(".call .deny")
    chat.page.click(".call .deny")
    rows = chat.settled(answers=2)
    denied = _tool_rows(rows)[1]
    assert "denied in the web chat" in denied
    assert answers(rows)[1] == f"The lookup said: {denied}"
    assert chat.page.locator(".approve, .deny").count() == 0
    assert [m["id"] for m in history(chat, sid)] == [r.id for r in rows]


def test_a_stored_script_is_shown_as_text(chat: Chat) -> None:
    hostile = '<script>window.pwned = 1</script><img src="x" onerror="window.pwned = 2">'
    chat.open()
    chat.new_session()
    chat.send(hostile)
    rows = chat.settled(answers=1)
    assert rows[0].text == hostile
    assert answers(rows) == [f"You said: {hostile}. {FILLER}"]
    chat.page.reload()  # now read back from the history API
    rows = chat.settled(answers=1)
    assert rows[0].text == hostile
    assert chat.page.locator("#messages script, #messages img").count() == 0
    assert chat.page.evaluate("window.pwned") is None


def test_a_send_whose_answer_is_lost_is_retried_once_with_the_same_id(chat: Chat) -> None:
    posted: list[str] = []

    def lose_the_first_answer(route: Route) -> None:
        if route.request.method != "POST":
            route.fallback()
            return
        body = route.request.post_data_json
        assert body is not None
        posted.append(body["id"])
        if len(posted) == 1:
            route.fetch()  # the server gets it and answers; the page never sees the answer
            route.abort("connectionreset")
        else:
            route.fallback()

    chat.open()
    sid = chat.new_session()
    chat.page.route("**/api/sessions/*/messages", lose_the_first_answer)
    chat.send("once")
    rows = chat.settled()
    assert [(r.role, r.text) for r in rows] == [
        ("user", "once"),
        ("assistant", f"You said: once. {FILLER}"),
    ]
    assert posted == [rows[0].id, rows[0].id]  # tried again, with the id minted first
    assert [m["id"] for m in history(chat, sid)] == [r.id for r in rows]
