"""Why a model call failed, as a value: :class:`LlmFailure`. A leaf below
:mod:`dsh_llm.errors`, whose :class:`~dsh_llm.errors.LlmError` carries one."""

from __future__ import annotations

from dsh_llm._json_limits import JSON_INT_MAX, JSON_INT_MIN, NonNegativeInt
from dsh_llm._model import DshModel, optional
from dsh_llm._storable_text import storable_text


class LlmFailure(DshModel):
    """Why a model call failed, in provider-neutral terms."""

    message: str
    code: str
    """A stable code, one of the harness's canonical ones in :mod:`dsh_llm.failure_codes`
    (e.g. ``RATE_LIMIT``, ``SERVER``, ``UNKNOWN``); any string is accepted on read."""
    status: int | None = optional(ge=JSON_INT_MIN, le=JSON_INT_MAX)
    """The HTTP status, when there was one."""
    provider_retry_after_ms: NonNegativeInt | None = optional()
    """How long the provider asked to wait before retrying."""
    request_id: str | None = optional()
    """The provider's request id, for support tickets."""

    @classmethod
    def from_exception(cls, error: BaseException) -> LlmFailure:
        """The failure an exception stands for, so that an adapter's or model function's
        crash can end its stream as ``finish {error}``: an :class:`LlmError` keeps the
        failure it carries; anything else is code ``UNKNOWN``."""
        # An LlmError carries its failure; read it by attribute so that this leaf
        # module need not import dsh_llm.errors (which imports it).
        carried = getattr(error, "failure", None)
        if isinstance(carried, LlmFailure):
            return carried
        return cls(message=describe_exception(error), code="UNKNOWN")


def describe_exception(error: BaseException, *, with_type: bool = True) -> str:
    """``Type: detail`` of any exception (``Type`` alone when it has no detail; the
    detail alone, or ``Type`` when there is none, without ``with_type``), safe to show
    and to store whatever the exception does: a ``str()`` that raises is described as
    such, and a lone surrogate becomes U+FFFD. Every place that formats an exception
    it did not raise itself (a tool's, a handler's, a summarizer's, a policy's) uses
    this, so reporting a failure cannot fail."""
    name = type(error).__name__
    try:
        detail = str(error)
    except Exception as raised:  # a foreign __str__ may raise anything
        text = f"{name} (its str() raised {type(raised).__name__})"
    else:
        shown = f"{name}: {detail}" if detail else name
        text = shown if with_type else detail or name
    return storable_text(text)


__all__ = [
    "LlmFailure",
    "describe_exception",
]
