"""The web chat's main states as PNGs, for docs/web.md: a reply streaming, a call
asking for approval, the branch switcher after an edit, and the message ids shown.
Taken from ``dsh serve --demo`` in headless Chromium.

    PYTHONPATH=tests python -m web_browser.screenshots    # writes docs/web/*.png
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from .browser import Chat, chromium, dsh_serve

if TYPE_CHECKING:
    from playwright.sync_api import Browser

SHOTS = ("chat-streaming", "approval-asked", "branches", "ids-shown")
"""The files written, ``<name>.png``."""

DOCS = Path(__file__).resolve().parents[2] / "docs" / "web"


def take_screenshots(browser: Browser, base: str, out: Path) -> list[Path]:
    context = browser.new_context(viewport={"width": 1100, "height": 640})
    try:
        chat = Chat(context.new_page(), base)
        chat.open()
        chat.new_session()
        shot = {name: out / f"{name}.png" for name in SHOTS}

        chat.send("What's the weather in Paris and in Tokyo?")
        chat.until(chat.running, "the turn to run")
        chat.wait(lambda rows: any(r.role == "tool" for r in rows), "a tool result")
        chat.page.screenshot(path=shot["chat-streaming"])
        both = "Paris: 17 °C, light rain; Tokyo: 24 °C, clear skies"
        chat.settled(last=f"Here is what I found: {both}.")

        chat.send("And what is 6 * 7?")
        chat.page.wait_for_selector(".call .approve")
        chat.page.screenshot(path=shot["approval-asked"])
        chat.page.click(".call .approve")
        chat.settled(last="Here is what I found: 6 * 7 = 42.")

        prompt = chat.rows()[0]
        chat.page.click(f".msg[data-id='{prompt.id}'] .edit")
        chat.page.fill(".edit-text", "What's the weather in Lisbon?")
        chat.page.click(".save-edit")
        chat.page.wait_for_selector(".branch-at")
        chat.settled(last="Here is what I found: Lisbon: 21 °C, sunny.")
        chat.page.screenshot(path=shot["branches"])

        chat.page.check("#show-ids")
        chat.page.screenshot(path=shot["ids-shown"])
        assert chat.errors == [], chat.errors
        return [shot[name] for name in SHOTS]
    finally:
        context.close()


def main() -> None:
    DOCS.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory() as scratch,
        chromium() as browser,
        dsh_serve("--demo", "--store", f"sqlite:///{scratch}/demo.db") as served,
    ):
        for path in take_screenshots(browser, served.base, DOCS):
            print(path)


if __name__ == "__main__":
    main()
