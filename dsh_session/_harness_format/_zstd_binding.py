"""The zstd binding: the standard library's ``compression.zstd`` (Python 3.14+), else
its official backport ``backports.zstd`` (see docs/decisions/2026-12-02-zstd-binding.md)."""

from __future__ import annotations

import sys

if sys.version_info >= (3, 14):
    from compression import zstd
else:
    from backports import zstd

__all__ = ["zstd"]
