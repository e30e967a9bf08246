"""Real headless Chromium (Debian's ``chromium``, driven by Playwright for Python; no
browser download) and ``dsh serve`` in a real process, for the web chat's tests.

Without Chromium or Playwright the tests skip, except under ``CI=true``, where they
fail: CI must never pass by not opening the page (``.ci/run`` installs Chromium)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest
from service.workers import ROOT, child_env, stop
from web.server import free_port

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
AGENT = "tests.web_browser.agents:chat"

T = TypeVar("T")


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"the browser tests cannot run in CI: {reason}")
    pytest.skip(reason)


@contextmanager
def chromium() -> Iterator[Browser]:
    """One headless Chromium (share it: one per test module)."""
    if not CHROMIUM.exists():
        _unavailable(f"no {CHROMIUM} (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("Playwright is not installed (pip install -e '.[dev]')")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@dataclass(frozen=True, slots=True)
class Served:
    base: str
    """``http://127.0.0.1:<port>``"""
    said: list[str]
    """What ``dsh serve`` printed once it served (two lines: the store, the chat URL)."""


@contextmanager
def dsh_serve(*args: str, cwd: Path = ROOT) -> Iterator[Served]:
    """``dsh serve ARGS`` on a free 127.0.0.1 port, in its own process."""
    port = free_port()
    command = [sys.executable, "-m", "dsh_cli", "serve", "--port", str(port), *args]
    process = subprocess.Popen(command, cwd=cwd, env=child_env(), stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    said = [process.stdout.readline(), process.stdout.readline()]
    try:
        assert "serving" in said[0], f"dsh serve did not start: {said}"
        yield Served(f"http://127.0.0.1:{port}", said)
    finally:
        stop(process)


@dataclass(frozen=True, slots=True)
class Row:
    """One message as the page shows it."""

    role: str
    id: str
    text: str
    pending: bool
    live: bool


_ROWS = """() => [...document.querySelectorAll('#messages .msg, #outbox .msg')].map((e) => ({
  role: e.dataset.role, id: e.dataset.id, text: e.querySelector('.text').textContent,
  pending: e.classList.contains('pending'), live: e.classList.contains('live')}))"""


@dataclass
class Chat:
    """The chat page in one tab, read back from its DOM."""

    page: Page
    base: str
    errors: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))

    def open(self, fragment: str = "") -> None:
        self.page.goto(f"{self.base}/#{fragment}")

    def new_session(self) -> str:
        self.page.click("#new-session")
        # (polled: the page's CSP forbids the eval behind Playwright's wait_for_function)
        return self.until(self.session_id, "the new session")

    def session_id(self) -> str:
        sid: str = self.page.evaluate(
            "new URLSearchParams(location.hash.slice(1)).get('session') || ''"
        )
        return sid

    def until(self, check: Callable[[], T], what: str, timeout: float = 30) -> T:
        """The first true value of ``check()``, read every 50 ms."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = check()
            if value:
                return value
            self.page.wait_for_timeout(50)
        raise AssertionError(f"timed out waiting for {what}; the page shows {self.rows()}")

    def send(self, text: str) -> None:
        self.page.fill("#prompt", text)
        self.page.press("#prompt", "Enter")

    def rows(self) -> list[Row]:
        return [Row(**row) for row in self.page.evaluate(_ROWS)]

    def running(self) -> bool:
        running: bool = self.page.evaluate("document.body.classList.contains('running')")
        return running

    def wait(self, check: Callable[[list[Row]], T], what: str, timeout: float = 30) -> T:
        """The first true value of ``check(rows)``."""
        return self.until(lambda: check(self.rows()), what, timeout)

    def settled(self, answers: int = 1, last: str | None = None, timeout: float = 30) -> list[Row]:
        """The rows once ``answers`` answers (the last one ``last``, when given) are
        shown whole and no turn runs."""

        def done(rows: list[Row]) -> list[Row]:
            final = [r.text for r in rows if r.role == "assistant" and r.text and not r.live]
            quiet = not self.running() and not any(r.pending or r.live for r in rows)
            enough = len(final) >= answers and (last is None or final[-1] == last)
            return rows if enough and quiet else []

        return self.wait(done, f"{answers} answers, the last {last!r}", timeout)


def answers(rows: list[Row]) -> list[str]:
    return [r.text for r in rows if r.role == "assistant" and r.text]


def ids_and_texts(rows: list[Row]) -> list[tuple[str, str, str]]:
    return [(r.role, r.id, r.text) for r in rows]


def history(chat: Chat, sid: str, headers: dict[str, str] | None = None) -> list[Any]:
    """The session's messages as the API gives them (fetched by the page itself)."""
    script = "([url, h]) => fetch(url, {headers: h}).then((r) => r.json())"
    body = chat.page.evaluate(script, [f"{chat.base}/api/sessions/{sid}/messages", headers or {}])
    return [entry["message"] for entry in body["messages"]]
