"""What the Temporal tests read back: the stored log and its conversation, the requests
rebuilt from it, a session workflow's status, and the payloads in a workflow's history."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from cli.openai_server import FakeOpenAIServer
from google.protobuf.message import Message as ProtoMessage
from temporalio.api.common.v1 import Payload
from temporalio.client import Client, WorkflowHandle

from dsh_agent import reconstruct_requests
from dsh_agent.temporal import SessionStatus, SessionWorkflow
from dsh_llm import AssistantMessage, UserMessage
from dsh_llm.providers import adapter_for
from dsh_session import Session
from dsh_session.stores import open_store

PAYLOAD_BOUND = 4096
"""Every payload a durable agent puts in a workflow's history stays under this."""


async def stored_session(store_url: str, session_id: str) -> Session:
    store = open_store(store_url, mode="open")
    try:
        session, _ = await store.read(session_id)
    finally:
        await store.close()
    return session


async def assert_log_rebuilds_the_wire_requests(
    session: Session, server: FakeOpenAIServer, live: list[bytes]
) -> None:
    """Sending the requests rebuilt from the log alone puts the very bytes on the wire
    that the workers sent for the attempts the log recorded (``live``)."""
    rebuilt = reconstruct_requests(session.events)
    assert len(rebuilt) == len(live)
    adapter = adapter_for(f"openai-compatible:scripted-model@{server.base_url}")
    sent = len(server.raw_requests)
    for request in rebuilt:
        server.refusals_left = 1  # only the body matters: the server turns the call away
        async for _ in adapter.stream(request):
            pass
    assert server.raw_requests[sent:] == live


def payloads_in(message: ProtoMessage) -> Iterator[Payload]:
    """Every ``Payload`` inside a protobuf message, however deep."""
    if isinstance(message, Payload):
        yield message
        return
    for _, value in message.ListFields():
        values = value if isinstance(value, list | tuple) or hasattr(value, "extend") else [value]
        if hasattr(value, "items") and not isinstance(value, ProtoMessage):
            values = list(value.values())
        for item in values:
            if isinstance(item, ProtoMessage):
                yield from payloads_in(item)


async def history_payload_sizes(client: Client, workflow_id: str, run_id: str) -> list[int]:
    history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
    return [payload.ByteSize() for event in history.events for payload in payloads_in(event)]


async def wait_until(condition: Callable[[], bool], what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        await asyncio.sleep(0.05)


def exists(path: Path) -> Callable[[], bool]:
    return path.exists


def text_of(message: AssistantMessage | UserMessage) -> str:
    return "".join(getattr(block, "text", "") for block in message.content)


def assistant_texts(session: Session) -> list[str]:
    """The text of each assistant message in ``session``'s history (a tool step's is "")."""
    return [text_of(m) for m in session.derive_messages() if isinstance(m, AssistantMessage)]


def conversation(session: Session) -> list[tuple[str, str]]:
    """``session``'s user and assistant messages as (class name, text)."""
    return [
        (type(m).__name__, text_of(m))
        for m in session.derive_messages()
        if isinstance(m, AssistantMessage | UserMessage)
    ]


async def status_until(
    handle: WorkflowHandle[SessionWorkflow, None],
    done: Callable[[SessionStatus], bool],
    timeout: float = 60,
) -> SessionStatus:
    """The session workflow's status once ``done`` holds for it (queried every 0.1 s)."""
    deadline = time.monotonic() + timeout
    while True:
        status: SessionStatus = await handle.query(SessionWorkflow.status)
        if done(status):
            return status
        if time.monotonic() > deadline:
            raise AssertionError(f"the session never got there: {status}")
        await asyncio.sleep(0.1)


def idle_after(turns: int) -> Callable[[SessionStatus], bool]:
    return lambda status: status.state == "idle" and status.turns == turns


def awaiting_approval(status: SessionStatus) -> bool:
    return status.state == "awaiting-approval"
