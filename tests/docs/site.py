"""Where the documentation site's sources are, and the runnable examples in them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
DOCS = REPOSITORY / "docs"
_BLOCK = re.compile(r"^<!-- runnable -->\n```python\n(.*?)^```", re.DOTALL | re.MULTILINE)
_MARKER = re.compile(r"^<!-- runnable -->$", re.MULTILINE)


@dataclass(frozen=True)
class Example:
    """One code block marked runnable: where it is, and its code."""

    page: str
    line: int
    code: str

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


def runnable_examples() -> list[Example]:
    """Every block marked ``<!-- runnable -->`` in the site's pages."""
    examples = []
    for path in sorted(DOCS.rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        for match in _BLOCK.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            examples.append(Example(str(path.relative_to(REPOSITORY)), line, match.group(1)))
    return examples


def markers() -> int:
    """How many lines of the pages are a runnable marker (each must precede a python
    block; a marker quoted inside a line is prose, not a marker)."""
    return sum(
        len(_MARKER.findall(path.read_text(encoding="utf-8"))) for path in DOCS.rglob("*.md")
    )
