"""bench/ on ``sys.path`` for these tests, as bench/run.py has it: the fast builder
of the scale suites' sessions (``bench/_bulk_logs.py``) is checked here."""

from __future__ import annotations

import sys
from pathlib import Path

_BENCH = str(Path(__file__).resolve().parents[2] / "bench")
if _BENCH not in sys.path:
    sys.path.append(_BENCH)
