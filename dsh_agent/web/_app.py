"""The ASGI app: the API's routes, the bearer token, the JSON refusals, and (given an
agent factory) an in-process :class:`~dsh_agent.Worker` that runs the turns."""

from __future__ import annotations

import contextlib
import hmac
import logging
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from http import HTTPStatus

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import Response

from dsh_agent._service._worker import SessionAgentFactory, Worker
from dsh_agent.errors import DeliveryError
from dsh_agent.web._bodies import DEFAULT_MAX_BODY
from dsh_agent.web._page import is_page_request, page_routes
from dsh_agent.web._problems import _RequestProblem, problem_response, status_of
from dsh_agent.web._relay import LiveRelay
from dsh_agent.web._routes import Api
from dsh_session.errors import SessionError
from dsh_session.stores import SessionStore

logger = logging.getLogger(__name__)

DEFAULT_KEEPALIVE = 15.0
"""Seconds an idle stream waits before it sends a keep-alive comment."""

REFUSALS = (_RequestProblem, DeliveryError, SessionError)
"""Answered where they are raised (Starlette re-raises what only ``Exception`` catches,
which would log a client's mistake as a server failure)."""


def create_app(
    store: SessionStore,
    agent_factory: SessionAgentFactory | None = None,
    *,
    token: str | None = None,
    max_body: int = DEFAULT_MAX_BODY,
    poll_interval: float = 0.1,
    keepalive: float = DEFAULT_KEEPALIVE,
    concurrency: int = 16,
) -> Starlette:
    """The HTTP API and live streams of ``store``'s sessions, as an ASGI app to serve
    or mount. With ``agent_factory`` the app runs a :class:`~dsh_agent.Worker` while it
    is up (its lifespan); without, ``dsh worker`` processes elsewhere run the turns.
    With ``token``, every request needs ``Authorization: Bearer <token>``. The caller
    owns ``store`` (opens and closes it).

    The streams send each reply's text live, chunk by chunk, when this app's worker runs
    the turn (turns run elsewhere arrive whole, at their commit), and an SSE comment
    after ``keepalive`` seconds without anything to send (docs/web-stream.md). The
    worker runs at most ``concurrency`` sessions' turns at once (``Worker``'s)."""
    if max_body < 1:
        raise ValueError(f"max_body must be at least 1 byte, not {max_body!r}")
    if not (math.isfinite(keepalive) and keepalive > 0):
        raise ValueError(f"keepalive must be a positive number of seconds, not {keepalive!r}")
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, not {concurrency!r}")
    relay = LiveRelay()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if agent_factory is None:
            yield
            return
        async with Worker(store, agent_factory, concurrency=concurrency, on_loop=relay.watch):
            yield

    api = Api(store, max_body, poll_interval, relay, keepalive)
    middleware = [] if token is None else [Middleware(BaseHTTPMiddleware, dispatch=_bearer(token))]
    return Starlette(
        routes=[*api.routes(), *page_routes()],
        middleware=middleware,
        exception_handlers={
            HTTPException: _http_error,
            **{kind: _refusal for kind in (*REFUSALS, Exception)},
        },
        lifespan=lifespan,
    )


def _bearer(token: str) -> Callable[[Request, RequestResponseEndpoint], Awaitable[Response]]:
    expected = f"Bearer {token}".encode()

    async def check(request: Request, call_next: RequestResponseEndpoint) -> Response:
        given = request.headers.get("authorization", "").encode()
        if not is_page_request(request) and not hmac.compare_digest(given, expected):
            return problem_response(
                401, "Unauthorized", "this server needs 'Authorization: Bearer <token>'"
            )
        return await call_next(request)

    return check


async def _http_error(request: Request, error: Exception) -> Response:
    """Starlette's own refusals (no such route, method not allowed), as JSON too."""
    assert isinstance(error, HTTPException)
    return problem_response(error.status_code, "HTTPException", error.detail)


async def _refusal(request: Request, error: Exception) -> Response:
    """A typed refusal as its 4xx; anything else as a 500 naming the error."""
    status = status_of(error)
    if status is None:
        logger.error("%s %s failed", request.method, request.url.path, exc_info=error)
        return problem_response(500, type(error).__name__, str(error))
    if isinstance(error, _RequestProblem):  # the request itself: named by its status
        return problem_response(status, HTTPStatus(status).phrase, error.message)
    return problem_response(status, type(error).__name__, str(error))


__all__ = ["DEFAULT_KEEPALIVE", "create_app"]
