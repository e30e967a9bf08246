"""The live overlay through a real ``dsh serve`` process (Uvicorn, SQLite, its
in-process worker running a model that streams one word per chunk): a reply streams
token by token in both wire forms with the log's ids; a second connection and a
``Last-Event-ID`` reconnect mid-reply lose and repeat nothing; an idle stream gets
keep-alive comments."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from . import live_agents
from .server import dsh_serve
from .sse import Sse, ag_ui_texts, http_stream, of_type

AGENT = "tests.web.live_agents:streaming"


@pytest.fixture
def client(tmp_path: Path) -> Iterator[httpx.Client]:
    url = f"sqlite:///{tmp_path / 'sessions.db'}"
    with dsh_serve(url, AGENT, "--keepalive", "0.3") as base, httpx.Client(base_url=base) as c:
        yield c


def new_session(client: httpx.Client) -> str:
    created = client.post("/api/sessions")
    assert created.status_code == 201, created.text
    sid: str = created.json()["id"]
    return sid


def send(client: httpx.Client, sid: str, message_id: str, text: str) -> None:
    sent = client.post(f"/api/sessions/{sid}/messages", json={"id": message_id, "content": text})
    assert sent.status_code == 202, sent.text


def answers(client: httpx.Client, sid: str) -> dict[str, str]:
    texts: dict[str, str] = {}
    for item in client.get(f"/api/sessions/{sid}/messages").json()["messages"]:
        message = item["message"]
        if message["role"] == "assistant":
            texts[message["id"]] = "".join(b["text"] for b in message["content"])
    return texts


def read(stream: Iterator[Sse], until: Callable[[Sse], bool]) -> list[Sse]:
    """Events (comments left out) up to and including the first for which ``until``."""
    events: list[Sse] = []
    for event in stream:
        if event.comment is None:
            events.append(event)
            if until(event):
                return events
    raise AssertionError(f"the stream ended: {[e.data for e in events]}")


def is_type(kind: str) -> Callable[[Sse], bool]:
    return lambda event: isinstance(event.data, dict) and event.data["type"] == kind


def reply_deltas(events: list[Sse], message_id: str) -> list[Sse]:
    contents = [e for e in events if e.data["type"] == "TEXT_MESSAGE_CONTENT"]
    return [e for e in contents if e.data["messageId"] == message_id]


def test_a_reply_streams_token_by_token_in_both_forms(client: httpx.Client) -> None:
    sid = new_session(client)
    events = f"/api/sessions/{sid}/events"
    with client.stream("GET", f"{events}?form=vercel-ai", timeout=30) as vercel_response:
        assert vercel_response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    ag_ui = http_stream(client, events)
    vercel = http_stream(client, f"{events}?form=vercel-ai")
    send(client, sid, "u-1", "hi")
    got = read(ag_ui, is_type("RUN_FINISHED"))
    parts = read(vercel, is_type("data-dsh-turn-end"))
    [(message_id, text)] = answers(client, sid).items()
    assert text == live_agents.REPLY
    deltas = reply_deltas(got, message_id)
    assert len(deltas) == len(text.split())  # one per chunk
    end = next(e for e in got if e.data == {"type": "TEXT_MESSAGE_END", "messageId": message_id})
    assert end.id is not None and all(d.id is None for d in deltas)
    assert end.at - deltas[0].at > 0.2  # the first word long before the commit
    assert ag_ui_texts(got)[message_id] == text
    data = [p.data for p in parts]
    assert [p["messageId"] for p in data if p["type"] == "start"] == [message_id]
    assert {p["id"] for p in data if p["type"].startswith("text-")} == {message_id}
    assert [p["id"] for p in data if p["type"] == "data-dsh-user-message"] == ["u-1"]
    assert "".join(p["delta"] for p in data if p["type"] == "text-delta") == text
    assert len([p for p in data if p["type"] == "text-delta"]) == len(text.split())


def test_a_second_connection_and_a_reconnect_mid_reply(client: httpx.Client) -> None:
    sid = new_session(client)
    events = f"/api/sessions/{sid}/events"
    first = http_stream(client, events)
    send(client, sid, "u-1", "hi")
    seen: list[Sse] = []
    while len([e for e in seen if e.data["type"] == "TEXT_MESSAGE_CONTENT"]) < 4:
        seen += read(first, lambda e: True)  # the user's text and three words
    last = max(e.id for e in seen if e.id is not None)
    second = http_stream(client, events)  # a second tab
    again = http_stream(client, events, {"Last-Event-ID": str(last)})  # a reconnect
    tab = read(second, is_type("RUN_FINISHED"))
    resumed = read(again, is_type("RUN_FINISHED"))
    rest = read(first, is_type("RUN_FINISHED"))
    [(message_id, text)] = answers(client, sid).items()
    for events_seen in (seen + rest, tab, resumed, seen + resumed):
        assert ag_ui_texts(events_seen)[message_id] == text
    assert all(e.id > last for e in resumed if e.id is not None)
    assert [e["messageId"] for e in of_type(resumed, "TEXT_MESSAGE_START")] == [message_id]
    assert len(reply_deltas(tab, message_id)[0].data["delta"].split()) >= 3  # the text so far


def test_an_idle_stream_gets_keep_alive_comments(client: httpx.Client) -> None:
    sid = new_session(client)
    comments: list[Sse] = []
    for event in http_stream(client, f"/api/sessions/{sid}/events"):
        assert event.comment == "keep-alive", event
        comments.append(event)
        if len(comments) == 3:
            break
    gaps = [b.at - a.at for a, b in itertools.pairwise(comments)]
    assert all(0.2 < gap < 2 for gap in gaps), gaps


def test_a_failed_attempt_then_its_retry(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'sessions.db'}"
    agent = "tests.web.live_agents:fails_then_answers"
    with dsh_serve(url, agent) as base, httpx.Client(base_url=base) as client:
        sid = new_session(client)
        stream = http_stream(client, f"/api/sessions/{sid}/events")
        send(client, sid, "u-1", "hi")
        got = read(stream, is_type("RUN_FINISHED"))
        [(answer_id, text)] = answers(client, sid).items()
    starts = [e["messageId"] for e in of_type(got, "TEXT_MESSAGE_START")]
    failed_id = starts[1]  # after the user's
    assert starts == ["u-1", failed_id, answer_id]
    [failed] = [e for e in of_type(got, "CUSTOM") if e["name"] == "dsh.message-failed"]
    assert failed["value"]["messageId"] == failed_id
    assert ag_ui_texts(got) == {"u-1": "hi", failed_id: live_agents.FAILED_TEXT, answer_id: text}
    assert len(reply_deltas(got, failed_id)) == len(live_agents.FAILED_TEXT.split())
