"""The page's files ship in the wheel (hatchling packs the package directory), and the
installed package serves them from where it is installed."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from service.workers import ROOT

from dsh_agent.web._page import STATIC

FILES = ("index.html", "app.js", "style.css")


def test_the_page_files_are_package_resources() -> None:
    for name in FILES:
        assert (STATIC / name).is_file(), name
    html = (STATIC / "index.html").read_text()
    assert 'src="static/app.js"' in html and 'href="static/style.css"' in html


def test_the_built_wheel_holds_the_page(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path), str(ROOT)],
        check=True,
    )  # fmt: skip
    (wheel,) = tmp_path.glob("dsh_sdk-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in FILES:
        assert f"dsh_agent/web/static/{name}" in names
