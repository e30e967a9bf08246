"""``dsh serve`` over HTTP, in a real server process on SQLite, with the in-process
worker running scripted agents: the client's message id is the id in the log and on
the stream; retried POSTs deliver once; a stream resumed with ``Last-Event-ID`` goes on
exactly where it stopped; approvals arrive over HTTP; refusals are JSON 4xx."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from service.workers import worker

from dsh_session.events import UserMessageEvent
from dsh_session.stores import SqliteSessionStore

from .server import SseEvent, dsh_serve, read_events, run_finished


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "sessions.db"


def serve(db: Path, agent: str | None, *extra: str) -> Iterator[httpx.Client]:
    with dsh_serve(f"sqlite:///{db}", agent, *extra) as base, httpx.Client(base_url=base) as client:
        yield client


@pytest.fixture
def echo(db: Path) -> Iterator[httpx.Client]:
    yield from serve(db, "echo")


def new_session(client: httpx.Client) -> str:
    created = client.post("/api/sessions")
    assert created.status_code == 201, created.text
    sid: str = created.json()["id"]
    return sid


def history(client: httpx.Client, sid: str) -> dict[str, Any]:
    answer = client.get(f"/api/sessions/{sid}/messages")
    assert answer.status_code == 200, answer.text
    result: dict[str, Any] = answer.json()
    return result


def wait_for(check: Any, what: str, timeout: float = 30) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def roles(client: httpx.Client, sid: str) -> list[tuple[str, str]]:
    return [(m["message"]["role"], m["message"]["id"]) for m in history(client, sid)["messages"]]


def test_the_client_minted_id_is_the_id_in_the_log_and_on_the_stream(
    echo: httpx.Client, db: Path
) -> None:
    sid = new_session(echo)
    sent = echo.post(f"/api/sessions/{sid}/messages", json={"id": "client-1", "content": "hi"})
    assert sent.status_code == 202
    assert sent.json() == {"session_id": sid, "delivery_id": "client-1", "kind": "followup",
                           "arrival": 0}  # fmt: skip
    events = read_events(echo, f"/api/sessions/{sid}/events", until=run_finished(1))
    starts = [e.data for e in events if e.data["type"] == "TEXT_MESSAGE_START"]
    assert (starts[0]["role"], starts[0]["messageId"]) == ("user", "client-1")
    answer_id = starts[1]["messageId"]
    contents = [e.data["delta"] for e in events if e.data["type"] == "TEXT_MESSAGE_CONTENT"]
    assert contents == ["hi", "echo: hi"]
    assert roles(echo, sid) == [("user", "client-1"), ("assistant", answer_id)]
    assert logged_user_ids(db, sid) == ["client-1"]
    ids = [e.id for e in events if e.id is not None]
    assert ids == sorted(set(ids))  # log seqs, increasing, each once


def logged_user_ids(db: Path, sid: str) -> list[str]:
    """The user messages' ids in the stored log, read by a store of this process."""

    async def read() -> list[str]:
        async with SqliteSessionStore(db) as store:
            session, _ = await store.read(sid)
        return [e.data.id for e in session.events if isinstance(e, UserMessageEvent)]

    return asyncio.run(read())


def test_the_same_post_three_times_is_once_in_the_log(echo: httpx.Client, db: Path) -> None:
    sid = new_session(echo)
    body = {"message": {"id": "client-2", "role": "user", "source": {"kind": "user"},
                        "content": [{"type": "text", "text": "once"}]}}  # fmt: skip
    receipts = [echo.post(f"/api/sessions/{sid}/messages", json=body) for _ in range(3)]
    assert [r.status_code for r in receipts] == [202] * 3
    assert receipts[0].json() == receipts[1].json() == receipts[2].json()
    read_events(echo, f"/api/sessions/{sid}/events", until=run_finished(1))
    again = echo.post(f"/api/sessions/{sid}/messages", json=body)  # after it ran
    assert again.json() == receipts[0].json()
    time.sleep(0.5)  # a duplicate would start a second turn by now
    assert [r for r, _ in roles(echo, sid)] == ["user", "assistant"]
    assert logged_user_ids(db, sid) == ["client-2"]

    other = echo.post(f"/api/sessions/{sid}/messages", json={"id": "client-2", "content": "two"})
    assert other.status_code == 409
    message = other.json()["error"]["message"]
    assert "client-2" in message and "once" in message and "two" in message


def test_a_stream_resumed_with_last_event_id_goes_on_exactly(db: Path) -> None:
    for client in serve(db, "pausing"):
        sid = new_session(client)
        path = f"/api/sessions/{sid}/events"
        client.post(f"{path.removesuffix('/events')}/messages",
                    json={"id": "p-1", "content": "pause please"})  # fmt: skip

        def after_the_tool_call(event: SseEvent) -> bool:
            return event.data["type"] == "TOOL_CALL_END" and event.id is not None

        first = read_events(client, path, until=after_the_tool_call)  # mid-reply: the tool runs
        assert first[-1].id is not None
        rest = read_events(client, path, until=run_finished(1), last_event_id=first[-1].id)
        whole = read_events(client, path, until=run_finished(1))
        assert [e.data for e in first + rest] == [e.data for e in whole]
        assert [e.id for e in first + rest] == [e.id for e in whole]
        texts = [e.data["delta"] for e in whole if e.data["type"] == "TEXT_MESSAGE_CONTENT"]
        assert texts == ["pause please", "saw: pause please"]
        assert rest[0].data["type"] == "TOOL_CALL_RESULT"  # the tool ran after the cut


def test_a_call_waiting_for_approval_is_approved_over_http(db: Path) -> None:
    for client in serve(db, "asks_approval"):
        sid = new_session(client)
        client.post(f"/api/sessions/{sid}/messages", json={"id": "a-1", "content": "look up"})
        path = f"/api/sessions/{sid}/events"

        def asked(event: SseEvent) -> bool:
            return event.data.get("name") == "dsh.approval-asked"

        waiting = read_events(client, path, until=asked)[-1].data["value"]
        assert waiting["toolCallName"] == "lookup"
        call_id = waiting["toolCallId"]
        approve = f"/api/sessions/{sid}/calls/{call_id}/approve"
        receipts = [client.post(approve) for _ in range(2)]
        assert [r.status_code for r in receipts] == [202, 202]
        assert receipts[0].json() == receipts[1].json()
        assert receipts[0].json()["delivery_id"] == f"decision:{call_id}"
        events = read_events(client, path, until=run_finished(1))
        results = [e.data for e in events if e.data["type"] == "TOOL_CALL_RESULT"]
        assert [(r["toolCallId"], r["content"]) for r in results] == [(call_id, "value of k")]
        deny = client.post(f"/api/sessions/{sid}/calls/{call_id}/deny", json={"reason": "no"})
        assert deny.status_code == 409  # decided once, whoever sends it


def test_refusals_are_json_and_write_nothing(echo: httpx.Client) -> None:
    sid = new_session(echo)
    post = f"/api/sessions/{sid}/messages"
    unknown = "/api/sessions/01a248f7-0000-7000-8000-000000000000"
    cases = [
        (echo.post(f"{unknown}/messages", json={"id": "x", "content": "hi"}), 404, "not in"),
        (echo.get(f"{unknown}/events"), 404, "no session"),
        (echo.get("/api/sessions/..%5Cetc%20x/messages"), 400, "[A-Za-z0-9._-]"),
        (echo.post(post, content=b'{"id": "x",'), 400, "not valid JSON"),
        (echo.post(post, content=b"[1]"), 400, "JSON object"),
        (echo.post(post, json={"id": "x", "content": "hi", "colour": 1}), 400, "colour"),
        (echo.post(post, json={"content": "hi"}), 400, "'id' and 'content'"),
        (echo.post(post, json={"id": "x", "content": [{"type": "nope"}]}), 400, "invalid"),
        (echo.post(post, json={"id": "x", "content": "hi", "policy": "now"}), 400, "policy"),
        (echo.post(post, content=b"x" * (2 << 20)), 413, "limit"),
        (echo.get("/api/nowhere"), 404, "Not Found"),
        (echo.get(f"/api/sessions/{sid}/events", headers={"Last-Event-ID": "x"}), 400, "seq"),
    ]
    for response, status, words in cases:
        assert response.status_code == status, response.text
        error = response.json()["error"]
        assert error["status"] == status and words in error["message"], error
    assert history(echo, sid)["messages"] == []


def test_a_token_is_needed_when_set(db: Path) -> None:
    for client in serve(db, "echo", "--token", "s3cret"):
        refused = client.get("/api/sessions")
        assert refused.status_code == 401
        assert "Bearer" in refused.json()["error"]["message"]
        client.headers["Authorization"] = "Bearer s3cret"
        assert client.get("/api/sessions").status_code == 200


def test_sessions_are_created_listed_and_deleted(echo: httpx.Client) -> None:
    sid = "01a248f7-1111-7000-8000-000000000001"
    assert echo.post("/api/sessions", json={"id": sid}).status_code == 201
    assert echo.post("/api/sessions", json={"id": sid}).status_code == 409
    assert sid in [s["id"] for s in echo.get("/api/sessions").json()["sessions"]]
    assert echo.delete(f"/api/sessions/{sid}").status_code == 204
    assert echo.delete(f"/api/sessions/{sid}").status_code == 404
    assert sid not in [s["id"] for s in echo.get("/api/sessions").json()["sessions"]]


def answer_of(client: httpx.Client, sid: str, key: str) -> str:
    def answered() -> str | None:
        answer = client.get(f"/api/sessions/{sid}/deliveries/{key}").json()["answer"]
        return None if answer is None else f"{answer['outcome']}: {answer['detail']}"

    result: str = wait_for(answered, f"the answer to {key}")
    return result


def test_regenerate_and_edit_over_http(echo: httpx.Client) -> None:
    sid = new_session(echo)
    echo.post(f"/api/sessions/{sid}/messages", json={"id": "e-1", "content": "first"})
    read_events(echo, f"/api/sessions/{sid}/events", until=run_finished(1))
    again = echo.post(f"/api/sessions/{sid}/regenerate", json={"delivery_id": "g-1"})
    assert again.status_code == 202
    assert answer_of(echo, sid, "g-1") == "applied: "
    events = read_events(echo, f"/api/sessions/{sid}/events", until=run_finished(2))
    answers = [e.data["messageId"] for e in events if e.data.get("role") == "assistant"]
    assert len(answers) == len(set(answers)) == 2  # the regenerated answer has its own id

    edited = {"content": "second", "delivery_id": "d-1"}
    edit = echo.post(f"/api/sessions/{sid}/messages/e-1/edit", json=edited)
    assert edit.status_code == 202
    fork = answer_of(echo, sid, "d-1").removeprefix("applied: fork ")
    assert history(echo, sid)["forks"] == [fork]
    forked = wait_for(
        lambda: len(history(echo, fork)["messages"]) == 2 and history(echo, fork),
        "the fork's answer",
    )
    texts = [m["message"]["content"][0]["text"] for m in forked["messages"]]
    assert texts == ["second", "echo: second"]
    assert forked["session"]["parentSession"] == sid


def test_without_a_worker_a_dsh_worker_process_runs_the_turns(db: Path) -> None:
    for client in serve(db, None):
        sid = new_session(client)
        client.post(f"/api/sessions/{sid}/messages", json={"id": "w-1", "content": "hi"})
        time.sleep(0.5)
        assert [r for r, _ in roles(client, sid)] == []  # no one runs the turn yet
        with worker(f"sqlite:///{db}", "echo"):
            events = read_events(client, f"/api/sessions/{sid}/events", until=run_finished(1))
        texts = [e.data["delta"] for e in events if e.data["type"] == "TEXT_MESSAGE_CONTENT"]
        assert texts == ["hi", "echo: hi"]


def test_steer_and_cancel_over_http(db: Path) -> None:
    for client in serve(db, "pausing"):
        sid = new_session(client)
        base, path = f"/api/sessions/{sid}", f"/api/sessions/{sid}/events"

        def tool_running(count: int) -> Any:
            seen = [0]

            def check(event: SseEvent) -> bool:
                seen[0] += event.data["type"] == "TOOL_CALL_END"
                return seen[0] >= count

            return check

        client.post(f"{base}/messages", json={"id": "s-1", "content": "pause first"})
        read_events(client, path, until=tool_running(1))
        steered = client.post(f"{base}/steer", json={"id": "s-2", "content": "and this"})
        assert steered.status_code == 202
        events = read_events(client, path, until=run_finished(1))
        texts = [e.data["delta"] for e in events if e.data["type"] == "TEXT_MESSAGE_CONTENT"]
        assert texts[-1] == "saw: pause first | and this"  # entered the running turn's next step

        client.post(f"{base}/messages", json={"id": "s-3", "content": "pause again"})
        read_events(client, path, until=tool_running(2))
        assert client.post(f"{base}/cancel", json={"delivery_id": "c-1"}).status_code == 202
        events = read_events(client, path, until=run_finished(2))
        ends = [e.data["value"]["reason"] for e in events if e.data.get("name") == "dsh.turn-end"]
        assert ends == ["completed", "aborted"]
        assert events[-1].data["outcome"] == {"type": "cancelled"}
