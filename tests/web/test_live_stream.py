"""The live overlay of ``dsh_agent.web`` in-process, through ASGI, on a real SQLite
store, with scripted models streaming one word per chunk: deltas arrive before the
commit and join to exactly the committed text; a second connection and a reconnect
mid-reply get the text so far once, then the deltas; a failed attempt is announced
before its retry streams; a later step's deltas never overtake the previous step's
durable groups; an idle stream gets keep-alive comments."""

from __future__ import annotations

import contextlib
import math
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from dsh_agent.web import create_app
from dsh_session import open_store
from dsh_session.stores import SessionStore

from . import live_agents
from .sse import Sse, ag_ui_texts, asgi_stream, ids_in_order, live_before_commit, of_type


@contextlib.asynccontextmanager
async def running_app(
    tmp_path: Path, factory: Any, **options: Any
) -> AsyncIterator[tuple[Starlette, httpx.AsyncClient, SessionStore]]:
    """The app over a SQLite store, its worker running, and a client for the API."""
    async with open_store(f"sqlite:///{tmp_path / 'sessions.db'}") as store:
        app = create_app(store, factory, poll_interval=0.05, **options)
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://app") as client:
                yield app, client, store


async def new_session(client: httpx.AsyncClient) -> str:
    created = await client.post("/api/sessions")
    assert created.status_code == 201, created.text
    sid: str = created.json()["id"]
    return sid


async def send(client: httpx.AsyncClient, sid: str, message_id: str, text: str) -> None:
    sent = await client.post(
        f"/api/sessions/{sid}/messages", json={"id": message_id, "content": text}
    )
    assert sent.status_code == 202, sent.text


async def committed(client: httpx.AsyncClient, sid: str) -> dict[str, str]:
    """Each assistant message of the history: its id and its text."""
    answer = await client.get(f"/api/sessions/{sid}/messages")
    texts: dict[str, str] = {}
    for item in answer.json()["messages"]:
        message = item["message"]
        if message["role"] == "assistant":
            blocks = message["content"]
            texts[message["id"]] = "".join(b["text"] for b in blocks if b["type"] == "text")
    return texts


def finished(count: int = 1) -> Any:
    return lambda events: len(of_type(events, "RUN_FINISHED")) >= count


def assistant_starts(events: list[Sse]) -> list[str]:
    return [
        e["messageId"] for e in of_type(events, "TEXT_MESSAGE_START") if e["role"] == "assistant"
    ]


def live_deltas(events: list[Sse]) -> int:
    return sum(1 for e in events if e.live and e.data["type"].endswith("CONTENT"))


async def test_deltas_arrive_before_the_commit_and_join_to_the_committed_text(
    tmp_path: Path,
) -> None:
    async with running_app(tmp_path, live_agents.streaming) as (app, client, _):
        sid = await new_session(client)
        async with asgi_stream(app, f"/api/sessions/{sid}/events") as stream:
            await send(client, sid, "u-1", "hi")
            events = await stream.until(finished())
        texts = await committed(client, sid)
    [(message_id, text)] = texts.items()
    assert text == live_agents.REPLY
    assert assistant_starts(events) == [message_id]  # the log's id, minted by the loop
    deltas = live_before_commit(events, message_id)
    assert len(deltas) == len(text.split())  # one per word, each before the commit
    assert "".join(deltas) == text
    assert ag_ui_texts(events)[message_id] == text  # the commit added nothing twice
    ids = ids_in_order(events)
    assert ids == sorted(set(ids))


async def test_a_second_connection_opened_mid_reply_sees_the_text_once(tmp_path: Path) -> None:
    async with running_app(tmp_path, live_agents.streaming) as (app, client, _):
        sid = await new_session(client)
        async with asgi_stream(app, f"/api/sessions/{sid}/events") as first:
            await send(client, sid, "u-1", "hi")
            await first.until(lambda events: live_deltas(events) >= 4)  # mid-reply
            async with asgi_stream(app, f"/api/sessions/{sid}/events") as second:
                late = await second.until(finished())
            early = await first.until(finished())
        texts = await committed(client, sid)
    [(message_id, text)] = texts.items()
    assert ag_ui_texts(early)[message_id] == text
    assert ag_ui_texts(late)[message_id] == text
    contents = [e for e in of_type(late, "TEXT_MESSAGE_CONTENT") if e["messageId"] == message_id]
    assert len(contents[0]["delta"].split()) >= 2  # the text so far, in one delta
    assert len(of_type(late, "TEXT_MESSAGE_START")) == 2  # the user's and the reply's


async def test_a_reconnect_mid_reply_with_last_event_id_loses_and_repeats_nothing(
    tmp_path: Path,
) -> None:
    async with running_app(tmp_path, live_agents.streaming) as (app, client, _):
        sid = await new_session(client)
        async with asgi_stream(app, f"/api/sessions/{sid}/events") as first:
            await send(client, sid, "u-1", "hi")
            before = list(await first.until(lambda events: live_deltas(events) >= 3))
        last = ids_in_order(before)[-1]  # the user message's group
        headers = {"Last-Event-ID": str(last)}
        async with asgi_stream(app, f"/api/sessions/{sid}/events", headers) as second:
            after = await second.until(finished())
        texts = await committed(client, sid)
    [(message_id, text)] = texts.items()
    assert all(i > last for i in ids_in_order(after))  # nothing durable twice
    assert not [e for e in of_type(after, "TEXT_MESSAGE_START") if e["role"] == "user"]
    assert ag_ui_texts(after)[message_id] == text  # restarted once, then the rest
    starts = [e for e in of_type(after, "TEXT_MESSAGE_START") if e["messageId"] == message_id]
    assert len(starts) == 1
    # what the page shows: the first connection's text, restarted by the second
    assert ag_ui_texts(before + after)[message_id] == text


async def test_a_failed_attempt_is_dropped_before_its_retry_streams(tmp_path: Path) -> None:
    async with running_app(tmp_path, live_agents.fails_then_answers) as (app, client, _):
        sid = await new_session(client)
        async with asgi_stream(app, f"/api/sessions/{sid}/events") as stream:
            await send(client, sid, "u-1", "hi")
            events = await stream.until(finished())
        texts = await committed(client, sid)
    [(answer_id, text)] = texts.items()
    assert text == live_agents.REPLY
    failed_id, retried_id = assistant_starts(events)
    assert retried_id == answer_id and failed_id != answer_id  # the failed id never commits
    assert "".join(live_before_commit(events, failed_id)) == live_agents.FAILED_TEXT
    data = [e.data for e in events]
    failed = [
        i for i, d in enumerate(data) if d["type"] == "CUSTOM" and d["name"] == "dsh.message-failed"
    ]
    assert len(failed) == 1 and data[failed[0]]["value"]["messageId"] == failed_id
    assert events[failed[0]].id is not None  # from the log: resumable like the rest
    end = {"type": "TEXT_MESSAGE_END", "messageId": failed_id}
    ends = [i for i, d in enumerate(data) if d == end]
    first_retry = next(i for i, d in enumerate(data) if d.get("messageId") == retried_id)
    retry = next(i for i, d in enumerate(data) if d.get("name") == "dsh.retry")
    assert ends[0] < failed[0] < retry < first_retry  # closed, dropped, retried
    assert data[retry]["value"]["code"] == "SERVER"
    assert ag_ui_texts(events)[retried_id] == text


async def test_a_later_step_does_not_overtake_the_previous_steps_commit(tmp_path: Path) -> None:
    # follow() polls every second here: step 2 streams long before step 1's commit,
    # tool call and result are read from the log
    async with open_store(f"sqlite:///{tmp_path / 'sessions.db'}") as store:
        app = create_app(store, live_agents.tool_then_answer, poll_interval=1.0)
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://app") as client:
                sid = await new_session(client)
                async with asgi_stream(app, f"/api/sessions/{sid}/events") as stream:
                    await send(client, sid, "u-1", "look it up")
                    events = await stream.until(finished())
                texts = await committed(client, sid)
    (first_id, first_text), (second_id, second_text) = texts.items()
    assert (first_text, second_text) == ("let me look", live_agents.REPLY)
    data = [e.data for e in events]
    result = next(i for i, d in enumerate(data) if d["type"] == "TOOL_CALL_RESULT")
    first_end = data.index({"type": "TEXT_MESSAGE_END", "messageId": first_id})
    second_start = next(i for i, d in enumerate(data) if d.get("messageId") == second_id)
    assert first_end < result < second_start
    assert len(live_before_commit(events, second_id)) >= 2  # still streamed live
    assert ag_ui_texts(events)[second_id] == second_text


async def test_an_idle_stream_gets_keep_alive_comments(tmp_path: Path) -> None:
    async with running_app(tmp_path, live_agents.streaming, keepalive=0.2) as (app, client, _):
        sid = await new_session(client)
        async with asgi_stream(app, f"/api/sessions/{sid}/events") as stream:
            await stream.until(lambda events: len(events) >= 2, timeout=5)
            await send(client, sid, "u-1", "hi")
            events = await stream.until(finished())
    idle = events[:2]  # an empty session: nothing but comments, 0.2 s apart
    assert [e.comment for e in idle] == ["keep-alive", "keep-alive"]
    assert idle[1].at - idle[0].at > 0.1
    assert ag_ui_texts(events)[assistant_starts(events)[0]] == live_agents.REPLY


@pytest.mark.parametrize("keepalive", [0, -1, math.inf, math.nan])
def test_keepalive_must_be_a_positive_number_of_seconds(tmp_path: Path, keepalive: float) -> None:
    with pytest.raises(ValueError, match="keepalive must be a positive number"):
        create_app(None, keepalive=keepalive)  # type: ignore[arg-type]


@pytest.mark.parametrize("concurrency", [0, -3])
def test_the_workers_concurrency_must_be_at_least_one(concurrency: int) -> None:
    with pytest.raises(ValueError, match="concurrency must be at least 1"):
        create_app(None, concurrency=concurrency)  # type: ignore[arg-type]


async def test_an_unknown_form_is_a_400_naming_the_forms(tmp_path: Path) -> None:
    async with running_app(tmp_path, live_agents.streaming) as (_, client, _store):
        sid = await new_session(client)
        answer = await client.get(f"/api/sessions/{sid}/events?form=sse")
    assert answer.status_code == 400
    assert "ag-ui, vercel-ai" in answer.json()["error"]["message"]


async def test_without_a_worker_here_a_reply_arrives_whole(tmp_path: Path) -> None:
    from dsh_agent import Worker

    async with open_store(f"sqlite:///{tmp_path / 'sessions.db'}") as store:
        app = create_app(store)  # turns run by a worker of its own (another process's)
        transport = httpx.ASGITransport(app=app)
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(transport=transport, base_url="http://app") as client,
            Worker(store, live_agents.streaming, scan_interval=0.05),
        ):
            sid = await new_session(client)
            async with asgi_stream(app, f"/api/sessions/{sid}/events") as stream:
                await send(client, sid, "u-1", "hi")
                events = await stream.until(finished())
    [message_id] = assistant_starts(events)
    assert live_before_commit(events, message_id) == []
    assert ag_ui_texts(events)[message_id] == live_agents.REPLY


def reasoning_texts(events: list[Sse]) -> dict[str, str]:
    texts: dict[str, str] = {}
    for data in (e.data for e in events if e.comment is None):
        if data["type"] == "REASONING_MESSAGE_START":
            texts[data["messageId"]] = ""
        elif data["type"] == "REASONING_MESSAGE_CONTENT":
            texts[data["messageId"]] += data["delta"]
    return texts


async def test_reasoning_streams_live_then_the_text(tmp_path: Path) -> None:
    async with running_app(tmp_path, live_agents.reasons) as (app, client, _):
        sid = await new_session(client)
        async with asgi_stream(app, f"/api/sessions/{sid}/events") as first:
            await send(client, sid, "u-1", "hi")
            await first.until(lambda events: live_deltas(events) >= 3)  # mid-reasoning
            async with asgi_stream(app, f"/api/sessions/{sid}/events") as second:
                late = await second.until(finished())
            early = await first.until(finished())
        [(message_id, text)] = (await committed(client, sid)).items()
    for events in (early, late):
        assert reasoning_texts(events) == {f"{message_id}.reasoning": live_agents.REASONING}
        assert ag_ui_texts(events)[message_id] == text == live_agents.REPLY
    live_reasoning = [e for e in early if e.live and e.data["type"] == "REASONING_MESSAGE_CONTENT"]
    assert len(live_reasoning) == len(live_agents.REASONING.split())


async def test_a_cancel_mid_reply_keeps_the_streamed_prefix_under_its_id(tmp_path: Path) -> None:
    async with running_app(tmp_path, live_agents.streaming) as (app, client, _):
        sid = await new_session(client)
        async with asgi_stream(app, f"/api/sessions/{sid}/events") as stream:
            await send(client, sid, "u-1", "hi")
            await stream.until(lambda events: live_deltas(events) >= 3)
            canceled = await client.post(f"/api/sessions/{sid}/cancel", json={})
            assert canceled.status_code == 202, canceled.text
            events = await stream.until(finished())
        [(message_id, text)] = (await committed(client, sid)).items()
    assert live_agents.REPLY.startswith(text) and len(text.split()) < 12  # cut short
    assert ag_ui_texts(events)[message_id] == text
    assert [e["messageId"] for e in of_type(events, "TEXT_MESSAGE_END")] == ["u-1", message_id]
    assert not [e for e in of_type(events, "CUSTOM") if e["name"] == "dsh.message-failed"]


async def test_the_first_reply_of_an_edits_fork_streams_live(tmp_path: Path) -> None:
    async with running_app(tmp_path, live_agents.slow_streaming) as (app, client, _):
        sid = await new_session(client)
        async with asgi_stream(app, f"/api/sessions/{sid}/events") as stream:
            await send(client, sid, "u-1", "hi")
            await stream.until(finished())
        edited = await client.post(
            f"/api/sessions/{sid}/messages/u-1/edit", json={"content": "hey"}
        )
        assert edited.status_code == 202, edited.text
        fork = None
        while fork is None:  # the fork exists once the owner applies the edit
            forks = (await client.get(f"/api/sessions/{sid}/messages")).json()["forks"]
            fork = forks[0] if forks else None
        async with asgi_stream(app, f"/api/sessions/{fork}/events") as stream:
            events = await stream.until(finished())
        texts = await committed(client, fork)
        before = await committed(client, sid)
    [reply_id] = [i for i in texts if i not in before]
    assert texts[reply_id] == live_agents.REPLY
    assert live_before_commit(events, reply_id)  # the fork's loop is watched by the relay
    assert ag_ui_texts(events)[reply_id] == live_agents.REPLY  # nothing twice
