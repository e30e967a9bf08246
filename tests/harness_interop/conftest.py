"""bench/ on ``sys.path`` for these tests, as bench/run.py has it: they run the harness
through bench/_harness_peer.py's checked environment (``HarnessTools``, the ``tools``
fixture)."""

from __future__ import annotations

import sys
from pathlib import Path

_BENCH = str(Path(__file__).resolve().parents[2] / "bench")
if _BENCH not in sys.path:
    sys.path.append(_BENCH)


import pytest  # noqa: E402  # after bench/ is on sys.path
from _harness_peer import SKIPPED, HarnessTools  # noqa: E402


@pytest.fixture(scope="module")
def tools() -> HarnessTools:
    found = HarnessTools.from_environment()  # a half-set environment is an error
    if found is None:
        pytest.skip(SKIPPED)
    return found
