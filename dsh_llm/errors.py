"""Error types of dsh_llm; every dsh package roots its errors at :class:`DshError`."""

from __future__ import annotations


class DshError(Exception):
    """Root of every error dsh raises on purpose (malformed values raise pydantic's
    ``ValidationError`` instead)."""


class LlmError(DshError):
    """An error of the message vocabulary or of a model adapter."""
