"""bench/ on ``sys.path`` for these tests, as bench/run.py has it: they run the
serve-load bench's harness (its dsh half; the peer is the bench's alone)."""

from __future__ import annotations

import sys
from pathlib import Path

_BENCH = str(Path(__file__).resolve().parents[2] / "bench")
if _BENCH not in sys.path:
    sys.path.append(_BENCH)
