"""The HTTP status and message every refused request gets: a JSON body
``{"error": {"status": ..., "type": ..., "message": ...}}`` naming what is wrong.

:class:`_RequestProblem` is raised by the request parsing; the typed errors of the
store and the service are mapped here, so a handler just lets them propagate.
"""

from __future__ import annotations

from starlette.responses import JSONResponse

from dsh_agent.errors import DeliveryError, DeliveryRejectedError
from dsh_session.errors import (
    DeliveryConflictError,
    SessionConflictError,
    SessionNotFoundError,
    SessionValidationError,
)


class _RequestProblem(Exception):
    """A request the API refuses before touching the store (``status`` is a 4xx)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def problem_response(status: int, kind: str, message: str) -> JSONResponse:
    return JSONResponse(
        {"error": {"status": status, "type": kind, "message": message}}, status_code=status
    )


def status_of(error: Exception) -> int | None:
    """The 4xx status a refusal maps to; ``None``: not the client's fault (a 500)."""
    if isinstance(error, _RequestProblem):
        return error.status
    if isinstance(error, SessionNotFoundError):
        return 404
    if isinstance(error, DeliveryConflictError | SessionConflictError | DeliveryRejectedError):
        return 409
    if isinstance(error, DeliveryError):
        # refused before writing: an unknown session, or input that fails validation
        return 404 if isinstance(error.__cause__, SessionNotFoundError) else 400
    if isinstance(error, SessionValidationError):
        return 400  # e.g. a session id that could not safely name a file
    return None


__all__ = ["problem_response", "status_of"]  # and _RequestProblem, raised and caught here
