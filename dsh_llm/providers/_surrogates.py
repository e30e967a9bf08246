"""Wire text made storable: UTF-16 surrogate halves joined or replaced.

A JSON string may spell a character outside the BMP as two escaped UTF-16 halves
(``"\\ud83d\\ude00"``), and a server may put the halves in two consecutive deltas.
Python's ``json`` turns each lonely half into a lone surrogate, which UTF-8 cannot
encode, so no store could write the text. Every string an adapter takes from the
wire passes through here: a pair split across deltas is joined into its character,
and a half without its partner becomes U+FFFD.
"""

from __future__ import annotations

from dsh_llm._storable_text import REPLACEMENT, storable_text


def _is_high_surrogate(character: str) -> bool:
    return "\ud800" <= character <= "\udbff"


class SurrogateJoiner:
    """Makes the deltas of one streamed field storable, holding back a high
    surrogate that ends a delta until the next delta shows whether its low half
    follows."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, delta: str) -> str:
        """The storable text of ``delta``, preceded by any half held back before."""
        text, self._held = self._held + delta, ""
        if text and _is_high_surrogate(text[-1]):
            text, self._held = text[:-1], text[-1]
        return storable_text(text)

    def flush(self) -> str:
        """What the field still owes at its end: U+FFFD for a held high half."""
        held, self._held = self._held, ""
        return REPLACEMENT if held else ""


__all__ = ["SurrogateJoiner"]
