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


def dumps_js(value: Any) -> str:
    """Serialize one JSON value the way ``JSON.stringify`` does (no spaces)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
