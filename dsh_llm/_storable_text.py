"""Text made storable: UTF-16 surrogate halves joined, lone ones replaced by U+FFFD.

UTF-8 cannot encode a lone surrogate, so no store could write text holding one. Such
text comes from the wire (a JSON string may spell a character as two escaped halves,
split across deltas) and from foreign exceptions (``os.fsdecode`` of a non-UTF-8 path).
A leaf module, so that the provider adapters and :mod:`dsh_llm._failure` share it.
"""

from __future__ import annotations

import re

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")


def storable_text(text: str) -> str:
    """``text`` with each surrogate pair joined into its character and each lone
    surrogate replaced by U+FFFD."""
    if _SURROGATE.search(text) is None:
        return text
    # UTF-16 is where the halves belong: encoding them there and decoding back
    # pairs what pairs and replaces what does not.
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


__all__ = ["REPLACEMENT", "storable_text"]
