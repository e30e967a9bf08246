"""The HTTP API over :class:`~dsh_agent.RemoteAgent`: one handler per verb, each
parsing its request (``_bodies``), delivering through the store's mailbox and answering
with the delivery's receipt. A retried request with the same id returns the first
receipt (``RemoteAgent`` is idempotent on it); the typed refusals become 4xx answers in
``_app``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from dsh_agent._service._remote import RemoteAgent, connect
from dsh_agent.streaming._ag_ui import SSE_MEDIA_TYPE
from dsh_agent.web._bodies import (
    MESSAGE_FIELDS,
    flag,
    optional_str,
    policy_of,
    read_object,
    user_message,
)
from dsh_agent.web._forms import FORMS, FormName, wire_form
from dsh_agent.web._problems import _RequestProblem
from dsh_agent.web._relay import LiveRelay
from dsh_agent.web._stream import session_stream
from dsh_session._header import SessionId, validate_session_id
from dsh_session._mailbox._records import DeliveryReceipt
from dsh_session._session import Session
from dsh_session.errors import SessionNotFoundError
from dsh_session.stores import SessionStore

Handler = Callable[[Request], Awaitable[Response]]


def receipt_json(receipt: DeliveryReceipt) -> dict[str, Any]:
    return {
        "session_id": receipt.session_id,
        "delivery_id": receipt.delivery_id,
        "kind": receipt.kind,
        "arrival": receipt.arrival,
    }


@dataclass(frozen=True, slots=True)
class Api:
    """The handlers, over one store."""

    store: SessionStore
    max_body: int
    poll_interval: float
    relay: LiveRelay
    keepalive: float

    def routes(self) -> list[Route]:
        s = "/api/sessions/{session_id}"
        return [
            Route("/api/sessions", self.list_sessions, methods=["GET"]),
            Route("/api/sessions", self.create_session, methods=["POST"]),
            Route(s, self.delete_session, methods=["DELETE"]),
            Route(f"{s}/messages", self.history, methods=["GET"]),
            Route(f"{s}/messages", self._message("followup"), methods=["POST"]),
            Route(f"{s}/steer", self._message("steer"), methods=["POST"]),
            Route(f"{s}/inject", self._message("inject"), methods=["POST"]),
            Route(f"{s}/cancel", self.cancel, methods=["POST"]),
            Route(f"{s}/calls/{{call_id}}/approve", self.approve, methods=["POST"]),
            Route(f"{s}/calls/{{call_id}}/deny", self.deny, methods=["POST"]),
            Route(f"{s}/retry", self._again("retry"), methods=["POST"]),
            Route(f"{s}/regenerate", self._again("regenerate"), methods=["POST"]),
            Route(f"{s}/messages/{{message_id}}/edit", self.edit, methods=["POST"]),
            Route(f"{s}/deliveries/{{delivery_id}}", self.delivery, methods=["GET"]),
            Route(f"{s}/events", self.events, methods=["GET"]),
        ]

    # --- sessions ---------------------------------------------------------------------

    async def list_sessions(self, request: Request) -> Response:
        headers = await self.store.list_sessions()
        return JSONResponse({"sessions": [h.model_dump(mode="json") for h in headers]})

    async def create_session(self, request: Request) -> Response:
        """A new empty session; the client may mint its id (``{"id": ...}``)."""
        body = await read_object(request, ("id",), max_body=self.max_body)
        given = optional_str(body, "id")
        sid = None if given is None else validate_session_id(given)
        if sid is not None and await self._exists(sid):
            raise _RequestProblem(409, f"session {sid!r} already exists")
        session = Session.create(sid)
        self.store.attach(session)
        try:
            await self.store.flush(session)
        finally:
            self.store.detach(session)
        return JSONResponse(session.header.model_dump(mode="json"), status_code=201)

    async def delete_session(self, request: Request) -> Response:
        await self.store.delete(self._sid(request))
        return Response(status_code=204)

    async def history(self, request: Request) -> Response:
        """The session's messages in surface order, each with the seq of its event,
        and the forks made from it (an edit's branches)."""
        sid = self._sid(request)
        session, _ = await self.store.read(sid)
        messages = [
            {"seq": session.surface_seq_of(m.id), "message": m.model_dump(mode="json")}
            for m in session.derive_messages()
        ]
        forks = [h.id for h in await self.store.list_sessions() if h.parent_session == sid]
        return JSONResponse(
            {
                "session": session.header.model_dump(mode="json"),
                "seq": session.seq,
                "messages": messages,
                "forks": forks,
            }
        )

    async def _exists(self, sid: SessionId) -> bool:
        try:
            await self.store.read(sid)
        except SessionNotFoundError:
            return False
        return True

    # --- deliveries -------------------------------------------------------------------

    def _message(self, verb: str) -> Handler:
        async def deliver(request: Request) -> Response:
            body = await read_object(request, MESSAGE_FIELDS, max_body=self.max_body)
            message, policy = user_message(body), policy_of(body)
            async with self._agent(request) as agent:
                send = {"followup": agent.followup, "steer": agent.steer}.get(verb, agent.inject)
                return _receipt(await send(message, policy=policy))

        return deliver

    def _again(self, verb: str) -> Handler:
        async def deliver(request: Request) -> Response:
            body = await read_object(request, ("delivery_id", "policy"), max_body=self.max_body)
            key, policy = optional_str(body, "delivery_id"), policy_of(body)
            async with self._agent(request) as agent:
                send = agent.retry if verb == "retry" else agent.regenerate
                return _receipt(await send(policy=policy, delivery_id=key))

        return deliver

    async def cancel(self, request: Request) -> Response:
        body = await read_object(request, ("delivery_id", "keep_inbox"), max_body=self.max_body)
        key, keep = optional_str(body, "delivery_id"), flag(body, "keep_inbox")
        async with self._agent(request) as agent:
            return _receipt(await agent.cancel(keep_inbox=keep, delivery_id=key))

    async def approve(self, request: Request) -> Response:
        await read_object(request, (), max_body=self.max_body)
        async with self._agent(request) as agent:
            return _receipt(await agent.approve(request.path_params["call_id"]))

    async def deny(self, request: Request) -> Response:
        body = await read_object(request, ("reason",), max_body=self.max_body)
        async with self._agent(request) as agent:
            call_id = request.path_params["call_id"]
            return _receipt(await agent.deny(call_id, optional_str(body, "reason")))

    async def edit(self, request: Request) -> Response:
        """Change a prompt on a fork; the owner's answer (``GET .../deliveries/<id>``)
        names the fork once it runs."""
        allowed = ("content", "delivery_id", "policy")
        body = await read_object(request, allowed, max_body=self.max_body)
        if "content" not in body:
            raise _RequestProblem(400, "field 'content' is required")
        key, policy = optional_str(body, "delivery_id"), policy_of(body)
        async with self._agent(request) as agent:
            message_id = request.path_params["message_id"]
            receipt = await agent.edit(message_id, body["content"], policy=policy, delivery_id=key)
            return _receipt(receipt)

    async def delivery(self, request: Request) -> Response:
        """A delivery's receipt and, once given, the owner's answer."""
        key = request.path_params["delivery_id"]
        async with self._agent(request) as agent:
            await self.store.read(agent.id)  # an unknown session is a 404
            stored = await agent.mailbox.find(agent.id, key)
        if stored is None:
            raise _RequestProblem(404, f"session {agent.id!r} has no delivery {key!r}")
        answer = stored.answer
        return JSONResponse(
            {
                **receipt_json(stored.receipt()),
                "answer": None
                if answer is None
                else {"outcome": answer.outcome, "detail": answer.detail},
            }
        )

    # --- the stream -------------------------------------------------------------------

    async def events(self, request: Request) -> Response:
        """The session's stream (SSE) in the form ``?form=`` names (``ag-ui``, the
        default, or ``vercel-ai``), from after ``Last-Event-ID`` when given."""
        sid = self._sid(request)
        form = request.query_params.get("form", FORMS[0])
        if form not in FORMS:
            raise _RequestProblem(400, f"form must be one of {', '.join(FORMS)}, not {form!r}")
        await self.store.read(sid)  # an unknown session is a 404, before the stream
        last = request.headers.get("last-event-id")
        if last is not None and not last.isdigit():
            raise _RequestProblem(400, f"Last-Event-ID must be a log seq, not {last!r}")
        wire = wire_form(_form_name(form), sid)
        stream = session_stream(
            self.store,
            self.relay,
            sid,
            wire,
            after=None if last is None else int(last),
            poll_interval=self.poll_interval,
            keepalive=self.keepalive,
        )
        headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no", **wire.headers}
        return StreamingResponse(stream, media_type=SSE_MEDIA_TYPE, headers=headers)

    # --- helpers ----------------------------------------------------------------------

    def _sid(self, request: Request) -> SessionId:
        return validate_session_id(request.path_params["session_id"])

    def _agent(self, request: Request) -> RemoteAgent:
        return connect(self.store, self._sid(request))


def _form_name(form: str) -> FormName:
    return "vercel-ai" if form == "vercel-ai" else "ag-ui"


def _receipt(receipt: DeliveryReceipt) -> Response:
    return JSONResponse(receipt_json(receipt), status_code=202)


__all__ = ["Api", "receipt_json"]
