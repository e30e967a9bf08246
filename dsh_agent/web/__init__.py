"""dsh_agent.web: the agent as a web service (the ``web`` extra: Starlette, Uvicorn).

``create_app(store, agent_factory)`` is an ASGI app serving an HTTP API over
:class:`~dsh_agent.RemoteAgent` (sessions; send, steer, cancel, approve, deny, retry,
regenerate, edit, each idempotent on the id the client minted) and each session's
live stream over Server-Sent Events (AG-UI, or the Vercel AI SDK UI message stream),
resumable with ``Last-Event-ID`` (event ids are log seqs), with each reply's text live
when the app's own worker runs the turn. ``dsh serve`` runs it with
:func:`run_server`. See docs/web-stream.md and docs/decisions/2026-12-06-dsh-serve.md.
"""

from dsh_agent.web._app import create_app
from dsh_agent.web._server import run_server

__all__ = ["create_app", "run_server"]
