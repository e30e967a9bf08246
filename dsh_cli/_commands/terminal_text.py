"""Keeping stored text from driving the terminal.

A session log holds text from users, models and tools. Printed raw, a stored
``ESC ] 52 ;`` would write the clipboard, a CSI sequence would move the cursor or
recolour the screen, and rich markup would be styled. :class:`SafeConsole` renders
everything as given (no markup, no highlighting) and replaces every C0/C1 control
character except newline and tab in the *text* it prints with a visible stand-in,
while the escape sequences rich itself emits for styles are left alone. JSON output
keeps its meaning: DEL and C1 characters are written as ``\\u`` escapes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment

_KEPT = {ord("\n"), ord("\t")}

_STAND_INS: dict[int, str] = {
    **{code: chr(0x2400 + code) for code in range(0x20) if code not in _KEPT},  # ␀..␟
    0x7F: "\u2421",  # ␡
    **{code: "\ufffd" for code in range(0x80, 0xA0)},
}
"""Each control character and the visible symbol printed instead (C0 as the Unicode
"control pictures", DEL as ␡, C1 as the replacement character)."""

_JSON_ESCAPES: dict[int, str] = {code: f"\\u{code:04x}" for code in (0x7F, *range(0x80, 0xA0))}
"""DEL and C1 as JSON escapes (JSON encoders already escape C0 but not these)."""


def neutralise(text: str) -> str:
    """``text`` with its control characters (except newline and tab) made visible."""
    return text.translate(_STAND_INS)


def escape_json_controls(json_text: str) -> str:
    """Encoded JSON with raw DEL and C1 characters written as ``\\u`` escapes: the
    same JSON value, but nothing a terminal would act on."""
    return json_text.translate(_JSON_ESCAPES)


class SafeConsole(Console):
    """A rich console that never interprets markup and never passes a control
    character of the printed text to the terminal."""

    def __init__(self, **options: Any) -> None:
        super().__init__(markup=False, highlight=False, **options)

    def render(
        self, renderable: RenderableType, options: ConsoleOptions | None = None
    ) -> Iterable[Segment]:
        for segment in super().render(renderable, options):
            if segment.control is None and not segment.text.isprintable():
                yield Segment(neutralise(segment.text), segment.style)
            else:
                yield segment


__all__ = [
    "SafeConsole",
    "escape_json_controls",
    "neutralise",
]
