"""``dsh serve --token T``: the page is served to anyone (it holds no secret), every API
call needs the token, the printed URL carries it in the fragment, and the page sends it
from there (kept in the tab's sessionStorage, gone from the address bar)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from .agents import FILLER
from .browser import AGENT, Chat, Served, dsh_serve

if TYPE_CHECKING:
    from playwright.sync_api import Browser

TOKEN = "s3cret/+&="


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    db: Path = tmp_path_factory.mktemp("token") / "sessions.db"
    with dsh_serve("--store", f"sqlite:///{db}", "--agent", AGENT, "--token", TOKEN) as served:
        yield served


def test_the_api_needs_the_token_and_the_printed_url_carries_it(
    guarded: Served, browser: Browser
) -> None:
    assert httpx.get(f"{guarded.base}/api/sessions").status_code == 401
    assert httpx.get(f"{guarded.base}/").status_code == 200  # the page: no secret in it
    url = guarded.said[1].split("the chat is at ")[1].strip()
    assert url == f"{guarded.base}/#token=s3cret%2F%2B%26%3D"

    context = browser.new_context()
    try:
        chat = Chat(context.new_page(), guarded.base)
        chat.page.goto(url)
        sid = chat.new_session()
        assert "token" not in chat.page.url
        chat.send("hello")
        assert chat.settled()[1].text == f"You said: hello. {FILLER}"
        chat.page.reload()  # the token stays in the tab, not in the URL
        assert chat.settled()[1].text == f"You said: hello. {FILLER}"
        assert chat.errors == []
        listed = httpx.get(
            f"{guarded.base}/api/sessions", headers={"Authorization": f"Bearer {TOKEN}"}
        )
        assert sid in [s["id"] for s in listed.json()["sessions"]]
    finally:
        context.close()


def test_without_the_token_the_page_says_what_to_open(guarded: Served, browser: Browser) -> None:
    context = browser.new_context()
    try:
        chat = Chat(context.new_page(), guarded.base)
        chat.open()
        problem = chat.page.locator("#problem")
        problem.wait_for(state="visible")
        assert "needs a token" in problem.inner_text()
        assert chat.page.locator("#sessions li").count() == 0
    finally:
        context.close()
