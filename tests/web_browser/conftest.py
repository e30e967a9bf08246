"""One Chromium and one ``dsh serve`` (the scripted chat agent, on SQLite) per test
module; each test gets its own browser context (its own tab storage)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from .browser import AGENT, Chat, Served, chromium, dsh_serve

if TYPE_CHECKING:  # Playwright is imported when a browser starts
    from playwright.sync_api import Browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    db = tmp_path_factory.mktemp("web-browser") / "sessions.db"
    with dsh_serve("--store", f"sqlite:///{db}", "--agent", AGENT) as served:
        yield served


@pytest.fixture
def chat(browser: Browser, server: Served) -> Iterator[Chat]:
    context = browser.new_context(viewport={"width": 1100, "height": 760})
    opened = Chat(context.new_page(), server.base)
    try:
        yield opened
        assert opened.errors == [], f"the page raised: {opened.errors}"
    finally:
        context.close()
