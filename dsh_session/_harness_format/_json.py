"""JSON text exactly as JavaScript's ``JSON.stringify`` writes it for harness values.

Compact separators, non-ASCII kept literal. Values read from harness logs round-trip
byte-identically (integers stay integers, key order is insertion order). Known gaps,
unreachable from the harness's own output: JavaScript orders integer-like object keys
first and escapes lone surrogates; Python keeps insertion order and rejects them on UTF-8
encoding.
"""

from __future__ import annotations

import json
from typing import Any

from dsh_session.errors import HarnessCorruptError


def dumps_js(value: Any) -> str:
    """Serialize one JSON value the way ``JSON.stringify`` does (no spaces)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def loads_record(text: str | bytes, *, what: str, seq: int | None = None) -> Any:
    """Parse one stored JSON text; damage, including nesting past the parser's limit,
    is a :class:`HarnessCorruptError` naming ``what`` (never ``RecursionError``)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise HarnessCorruptError(f"{what} nests too deep to read", seq=seq) from None
    except ValueError as error:
        raise HarnessCorruptError(f"{what} is not valid JSON ({error})", seq=seq) from None


__all__ = [
    "dumps_js",
    "loads_record",
]
