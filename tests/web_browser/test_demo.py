"""``dsh serve --demo`` (the README's one command after the install): the demo's
offline assistant on a local store, in a real process; the chat's main states reached
in the browser and saved as screenshots (what docs/web.md shows)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest
from service.workers import ROOT, child_env

from .browser import dsh_serve
from .screenshots import SHOTS, take_screenshots

if TYPE_CHECKING:
    from playwright.sync_api import Browser

PNG = b"\x89PNG\r\n\x1a\n"


def test_the_demo_serves_the_chat_on_a_local_store(tmp_path: Path, browser: Browser) -> None:
    with dsh_serve("--demo", cwd=tmp_path) as served:
        assert served.said[0].startswith("dsh serve: serving sqlite:///dsh.db at ")
        assert served.said[1].strip() == f"dsh serve: the chat is at {served.base}/"
        page = httpx.get(f"{served.base}/")
        assert page.status_code == 200 and "<title>dsh chat</title>" in page.text
        assert "script-src 'self'" in page.headers["content-security-policy"]
        shots = take_screenshots(browser, served.base, tmp_path)
    assert [p.name for p in shots] == [f"{name}.png" for name in SHOTS]
    assert all(p.read_bytes().startswith(PNG) and p.stat().st_size > 10_000 for p in shots)
    assert (tmp_path / "dsh.db").exists()  # the local store, where `dsh sessions` looks


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        ([], "give --agent module:factory, --demo or --no-worker"),
        (["--demo", "--no-worker"], "give only one of --demo, --no-worker"),
        (["--agent", "tests.web_browser.agents:chat"], "give --store URL"),
    ],
)
def test_who_runs_the_turns_is_said_once(args: list[str], complaint: str) -> None:
    command = [sys.executable, "-m", "dsh_cli", "serve", *args]
    done = subprocess.run(command, cwd=ROOT, env=child_env(), capture_output=True, text=True)
    assert done.returncode != 0
    assert complaint in done.stderr
