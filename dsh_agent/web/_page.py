"""The web chat page: static files shipped in the package (``static/``: HTML, plain
JavaScript and CSS, no build step), served at ``/`` beside the API.

The page holds no secret, so it is served without the bearer token (a browser cannot
send a header when it opens a URL); the page reads the token from the URL fragment
``#token=...`` and sends it on every API call. Its Content-Security-Policy allows only
its own script and the API next to it: even text that escaped into HTML could run no
script.
"""

from __future__ import annotations

from importlib.resources import files

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

STATIC = files("dsh_agent.web") / "static"
"""The page's files, wherever the package is installed."""

PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


def is_page_request(request: Request) -> bool:
    """Whether ``request`` asks for the page or one of its files (served without the
    token), wherever the app is mounted."""
    path = request.url.path.removeprefix(request.scope.get("root_path", ""))
    return path in ("", "/") or path.startswith("/static/")


async def index(request: Request) -> Response:
    html = (STATIC / "index.html").read_bytes()
    return Response(html, media_type="text/html; charset=utf-8", headers=PAGE_HEADERS)


def page_routes() -> list[BaseRoute]:
    """``/`` (the page) and ``/static/*`` (its script and stylesheet)."""
    static = StaticFiles(packages=[("dsh_agent.web", "static")])
    return [Route("/", index, methods=["GET"]), Mount("/static", app=static)]


__all__ = ["PAGE_HEADERS", "STATIC", "index", "is_page_request", "page_routes"]
