"""Error types of dsh_llm; every dsh package roots its errors at :class:`DshError`."""

from __future__ import annotations

from dsh_llm._stream import FailureCarrier, LlmFailure


class DshError(Exception):
    """Root of every error dsh raises on purpose (malformed values raise pydantic's
    ``ValidationError`` instead)."""


class LlmError(DshError, FailureCarrier):
    """An error of the message vocabulary or of a model adapter. When it stands for a
    model failure, ``failure`` carries the provider-neutral facts, and a turn that ends
    because of it reports them instead of a generic ``UNKNOWN``."""

    def __init__(self, message: str, *, failure: LlmFailure | None = None) -> None:
        super().__init__(message)
        self.failure = failure


class InputError(LlmError, ValueError):
    """A value given to a creation helper or a test adapter was refused before anything
    was built: a misspelled key, or a source kind that creation does not know.
    ``field`` names the offending input (e.g. ``source.kind``, ``tool_calls[0].nme``)."""

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field
