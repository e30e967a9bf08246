"""MkDocs hook: list every decision note on ``decisions/index.md``, newest first.

Notes are added by many hands; generating the list at build time means a new note is
on the site without anyone editing the index, and no note can be left off it.
"""

from __future__ import annotations

from typing import Any

from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

INDEX = "decisions/index.md"
MARKER = "<!-- decision-notes -->"


def _title(markdown: str, fallback: str) -> str:
    for line in markdown.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return fallback


def on_page_markdown(markdown: str, /, *, page: Page, config: Any, files: Files) -> str:
    """Replace the marker on the index with one link per note."""
    if page.file.src_uri != INDEX:
        return markdown
    if MARKER not in markdown:
        raise ValueError(f"{INDEX} lost its {MARKER} marker")
    notes = sorted(
        (f for f in files.documentation_pages() if f.src_uri.startswith("decisions/20")),
        key=lambda f: f.src_uri,
        reverse=True,
    )
    lines = []
    for note in notes:
        name = note.src_uri.removeprefix("decisions/")
        title = _title(note.content_string, name)
        lines.append(f"- [{title}]({name}) ({name[:10]})")
    return markdown.replace(MARKER, "\n".join(lines))
