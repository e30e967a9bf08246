"""Serving the app with Uvicorn: what ``dsh serve`` runs."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import uvicorn
from starlette.types import ASGIApp

SHUTDOWN_GRACE = 2
"""Seconds open streams get at shutdown before they are closed (a stream never ends
by itself)."""


async def run_server(
    app: ASGIApp,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    ready: Callable[[str], None] | None = None,
) -> None:
    """Serve ``app`` on ``host:port`` until cancelled or signalled (SIGINT, SIGTERM);
    call ``ready`` with the base URL once the socket listens."""
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=SHUTDOWN_GRACE,
    )
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    while not server.started and not serving.done():
        await asyncio.sleep(0.01)
    if server.started and ready is not None:
        ready(f"http://{host}:{port}")
    await serving
    if not server.started:
        raise OSError(f"cannot serve on {host}:{port} (see the log above)")


__all__ = ["SHUTDOWN_GRACE", "run_server"]
