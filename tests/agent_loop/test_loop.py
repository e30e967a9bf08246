"""The loop around the model (SPEC §4.3, §4.6): turn numbering, request headers, turn
end reasons, adapter failures, tool failures, request reconstruction and the check
mode, and the checkpoint flushes to an attached store."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from dsh_agent import AgentError, AgentLoop, ModelSettings, reconstruct_requests, tool
from dsh_llm import (
    MAX_JSON_DEPTH,
    GenerateRequest,
    LlmFailure,
    MaxTokensFinish,
    Message,
    StreamChunk,
    TextDeltaChunk,
    ToolSchema,
)
from dsh_llm.testing import ScriptedAdapter, reply
from dsh_session import (
    ErrorReason,
    MaxTokensReason,
    RequestHeader,
    RequestHeaderData,
    Session,
    StoreError,
    TurnEndData,
    TurnStartData,
)
from dsh_session.stores import MemorySessionStore, SqliteSessionStore

from .support import AgentFactory, fixed


@tool
async def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


def turn_ends(agent: AgentLoop) -> list[object]:
    return [e.data.reason for e in agent.session.events if e.type == "turn/end"]


class RaisingAdapter:
    """An adapter that breaks its contract: it raises instead of finishing with an error."""

    def __init__(self) -> None:
        self.requests: list[GenerateRequest] = []

    async def stream(self, request: GenerateRequest) -> AsyncIterator[StreamChunk]:
        self.requests.append(request)
        yield TextDeltaChunk(index=0, text="half")
        raise ConnectionResetError("socket closed")


async def test_turn_numbers_continue_from_the_log(session: Session) -> None:
    for turn in (1, 2):
        session.append("turn/start", TurnStartData(turn=turn))
        session.append("turn/end", TurnEndData(turn=turn, reason={"kind": "completed"}))
    agent = AgentLoop(session=session, adapter=ScriptedAdapter(["ok"]), provider="p", model="m")

    agent.followup(fixed("m1", "hi"))
    await agent.when_idle()

    assert [e.data.turn for e in session.events if e.type == "turn/start"] == [1, 2, 3]


async def test_the_request_carries_the_header_and_the_history(make_agent: AgentFactory) -> None:
    adapter = ScriptedAdapter(["ok"])
    agent = make_agent(
        adapter, system="Be brief.", tools=[add], model_settings=ModelSettings(max_tokens=256)
    )

    agent.followup(fixed("m1", "hi"))
    await agent.when_idle()

    (request,) = adapter.requests
    assert (request.provider, request.model, request.system) == ("test", "test-model", "Be brief.")
    assert request.max_tokens == 256
    assert request.tools == (add.schema(),)
    assert isinstance(request.tools[0], ToolSchema)
    assert [m.id for m in request.messages] == ["m1"]


async def test_a_new_loop_over_a_logged_header_records_a_resume(session: Session) -> None:
    header = RequestHeader(config={"provider": "p", "model": "m"})
    session.append("request/header", RequestHeaderData(header=header, reason="initial"))
    agent = AgentLoop(session=session, adapter=ScriptedAdapter(["a", "b"]), provider="p", model="m")

    agent.followup(fixed("m1", "hi"))
    agent.followup(fixed("m2", "again"))
    await agent.when_idle()

    reasons = [e.data.reason for e in session.events if e.type == "request/header"]
    assert reasons == ["initial", "resume"]  # logged once per loop instance


async def test_max_tokens_is_sticky_for_the_rest_of_the_turn(make_agent: AgentFactory) -> None:
    truncated = reply(text="cut off", finish=MaxTokensFinish())
    agent = make_agent(ScriptedAdapter([truncated, "fine"]))

    agent.followup(fixed("m1", "hi"))
    agent.inject(fixed("i1", "forces a second step"))
    await agent.when_idle()

    assert [e.data.step for e in agent.session.events if e.type == "step/start"] == [1, 2]
    assert turn_ends(agent) == [MaxTokensReason()]


async def test_tool_calls_of_a_truncated_answer_are_dropped(make_agent: AgentFactory) -> None:
    truncated = reply(
        text="let me add",
        tool_calls=[{"call_id": "c1", "name": "add", "arguments": {"a": 1}}],
        finish=MaxTokensFinish(),
    )
    agent = make_agent(ScriptedAdapter([truncated]), tools=[add])

    agent.followup(fixed("m1", "hi"))
    await agent.when_idle()

    assert not any(e.type == "tool/call" for e in agent.session.events)
    assert turn_ends(agent) == [MaxTokensReason()]


async def test_a_failed_model_call_ends_the_turn_with_its_failure(
    make_agent: AgentFactory,
) -> None:
    failure = LlmFailure(message="rate limited", code="RATE_LIMIT", status=429)
    agent = make_agent(ScriptedAdapter([failure, "never"]))

    agent.followup(fixed("m1", "hi"))
    queued = fixed("m2", "queued")
    agent.followup(queued)
    await agent.when_idle()

    assert turn_ends(agent) == [ErrorReason(error=failure)]
    types = [e.type for e in agent.session.events]
    assert "assistant/message" not in types
    assert types[-3:] == ["assistant/chunk", "step/end", "turn/end"]
    assert agent.inbox.next_turn == (queued,)  # an error stops the driver


async def test_an_adapter_that_raises_is_logged_as_a_terminal_error_chunk(
    make_agent: AgentFactory,
) -> None:
    adapter = RaisingAdapter()
    agent = make_agent(adapter)

    agent.followup(fixed("m1", "hi"))
    await agent.when_idle()

    chunks = [e.data.chunk for e in agent.session.events if e.type == "assistant/chunk"]
    assert chunks[-1].type == "finish" and chunks[-1].reason.kind == "error"
    assert chunks[-1].reason.failure == LlmFailure(
        message="ConnectionResetError: socket closed", code="UNKNOWN"
    )
    assert turn_ends(agent) == [ErrorReason(error=chunks[-1].reason.failure)]
    assert reconstruct_requests(agent.session.events) == adapter.requests


async def test_tool_problems_become_error_results_and_the_turn_goes_on(
    make_agent: AgentFactory,
) -> None:
    calls = reply(
        tool_calls=[
            {"call_id": "c1", "name": "missing"},
            {"call_id": "c2", "name": "add", "arguments": "{not json"},
            {"call_id": "c3", "name": "add", "arguments": {"a": 2, "b": 3}},
        ]
    )
    agent = make_agent(ScriptedAdapter([calls, "done"]), tools=[add])

    agent.followup(fixed("m1", "hi"))
    await agent.when_idle()

    results = [e.data for e in agent.session.events if e.type == "tool/result"]
    assert [r.error.code if r.error else None for r in results] == [
        "TOOL_NOT_FOUND",
        "TOOL_ARGUMENTS_INVALID",
        None,
    ]
    assert turn_ends(agent)[0].kind == "completed"  # type: ignore[attr-defined]


async def test_arguments_nested_past_the_limit_are_an_error_result_that_is_stored(
    tmp_path: Path,
) -> None:
    deep = '{"a": ' * 100_000 + "1" + "}" * 100_000
    calls = reply(tool_calls=[{"call_id": "c1", "name": "add", "arguments": deep}])
    async with SqliteSessionStore(tmp_path / "deep.db") as store:
        agent = AgentLoop(
            session=Session.create(),
            adapter=ScriptedAdapter([calls, "done"]),
            provider="p",
            model="m",
            tools=[add],
            store=store,
            check_requests=True,
        )
        agent.followup(fixed("m1", "hi"))
        await agent.when_idle()
        (result,) = [e.data for e in agent.session.events if e.type == "tool/result"]
        assert result.error is not None and result.error.code == "TOOL_ARGUMENTS_INVALID"
        assert f"MAX_JSON_DEPTH={MAX_JSON_DEPTH}" in result.message.model_dump_json()
        assert turn_ends(agent)[0].kind == "completed"  # type: ignore[attr-defined]
        session_id = agent.id
        await agent.aclose()
    async with SqliteSessionStore(tmp_path / "deep.db") as store:
        stored, _ = await store.read(session_id)
    assert stored.events == agent.session.events


async def test_every_request_is_reconstructable_from_the_log(make_agent: AgentFactory) -> None:
    adapter = ScriptedAdapter(
        [
            reply(tool_calls=[{"call_id": "c1", "name": "add", "arguments": {"a": 1, "b": 2}}]),
            "3",
            "ok",
        ]
    )
    agent = make_agent(adapter, tools=[add], system="math")

    agent.followup(fixed("m1", "1+2?"))
    agent.followup(fixed("m2", "thanks"))
    await agent.when_idle()

    rebuilt = reconstruct_requests(agent.session.events)
    assert rebuilt == adapter.requests
    assert len(rebuilt) == 3


async def test_a_header_changed_by_another_writer_is_logged_again(
    make_agent: AgentFactory,
) -> None:
    @tool
    async def meddle() -> str:
        """Write a foreign header into the log, as another writer might."""
        foreign = RequestHeader(config={"provider": "other", "model": "other-model"})
        agent.session.append("request/header", RequestHeaderData(header=foreign, reason="change"))
        return "meddled"

    adapter = ScriptedAdapter([reply(tool_calls=[{"call_id": "c1", "name": "meddle"}]), "done"])
    agent = make_agent(adapter, tools=[meddle])

    agent.followup(fixed("m1", "hi"))
    await agent.when_idle()

    headers = [e.data for e in agent.session.events if e.type == "request/header"]
    assert [(h.reason, h.header.config.provider) for h in headers] == [
        ("initial", "test"),
        ("change", "other"),
        ("change", "test"),
    ]
    assert [r.provider for r in adapter.requests] == ["test", "test"]
    assert turn_ends(agent)[0].kind == "completed"  # type: ignore[attr-defined]


class StaleHistorySession(Session):
    """A session whose derivation cache went stale after the first request: the bug
    the check mode exists to catch."""

    __slots__ = ("stale",)

    def derive_messages(self) -> Sequence[Message]:
        current = super().derive_messages()
        if not hasattr(self, "stale"):
            self.stale = current
        return self.stale


async def test_check_mode_refuses_a_request_the_log_cannot_explain() -> None:
    adapter = ScriptedAdapter(["first", "never"])
    agent = AgentLoop(
        session=StaleHistorySession.create(),
        adapter=adapter,
        provider="p",
        model="m",
        check_requests=True,
    )

    agent.followup(fixed("m1", "hi"))
    await agent.when_idle()
    agent.followup(fixed("m2", "again"))
    await agent.when_idle()

    first, second = turn_ends(agent)
    assert first.kind == "completed"  # type: ignore[attr-defined]
    assert isinstance(second, ErrorReason)
    assert second.error.code == "INVALID_REQUEST"
    assert "messages: live has 1, rebuilt has 3" in second.error.message
    assert len(adapter.requests) == 1  # the mismatching request was not sent
    assert [e.type for e in agent.session.events][-2:] == ["step/end", "turn/end"]


def test_a_session_with_an_open_turn_is_refused(session: Session) -> None:
    session.append("turn/start", TurnStartData(turn=1))

    with pytest.raises(AgentError, match="turn 1 open"):
        AgentLoop(session=session, adapter=ScriptedAdapter([]), provider="p", model="m")


def test_tool_names_must_be_unique(session: Session) -> None:
    with pytest.raises(ValueError, match="'add'"):
        AgentLoop(
            session=session, adapter=ScriptedAdapter([]), provider="p", model="m", tools=[add, add]
        )


async def test_when_idle_inside_the_agents_own_turn_is_refused(make_agent: AgentFactory) -> None:
    @tool
    async def wait_for_myself() -> str:
        """Deadlock on purpose."""
        await agent.when_idle()
        return "unreachable"

    agent = make_agent(
        ScriptedAdapter([reply(tool_calls=[{"call_id": "c1", "name": "wait_for_myself"}]), "ok"]),
        tools=[wait_for_myself],
    )
    agent.followup(fixed("m1", "hi"))
    await agent.when_idle()

    (result,) = [e.data for e in agent.session.events if e.type == "tool/result"]
    assert result.error is not None and result.error.code == "TOOL_FAILED"


class RecordingStore(MemorySessionStore):
    """Notes the last event type at each flush, to show where the checkpoints are."""

    def __init__(self) -> None:
        super().__init__()
        self.checkpoints: list[str] = []

    async def flush(self, session: Session) -> None:
        self.checkpoints.append(session.events[-1].type)
        await super().flush(session)


async def test_the_loop_flushes_at_its_checkpoints(make_agent: AgentFactory) -> None:
    store = RecordingStore()
    adapter = ScriptedAdapter(
        [reply(tool_calls=[{"call_id": "c1", "name": "add", "arguments": {"a": 1, "b": 1}}]), "2"]
    )
    agent = make_agent(adapter, tools=[add], store=store)

    agent.followup(fixed("m1", "1+1?"))
    await agent.when_idle()

    assert store.checkpoints == [
        "agent/inbox/spliced",  # pre-step of step 1 (after the claim)
        "request/header",  # before the stream opens
        "tool/call",  # before the tool body runs
        "step/end",  # pre-step of step 2
        "step/start",  # before the stream of step 2
        "turn/end",  # the turn ended
    ]


async def test_resume_from_a_store_restores_pending_input_and_continues(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    pending = fixed("p1", "left for later")
    async with SqliteSessionStore(path) as store:
        first = AgentLoop(
            session=Session.create(),
            adapter=ScriptedAdapter(["ok"]),
            provider="p",
            model="m",
            store=store,
        )
        first.followup(fixed("m1", "hi"))
        await first.when_idle()
        first.inbox.append("next-turn", pending)
        session_id = first.id

    async with SqliteSessionStore(path) as store:
        session = await store.load(session_id)
        adapter = ScriptedAdapter(["resumed"])
        second = AgentLoop(
            session=session,
            adapter=adapter,
            provider="p",
            model="m",
            store=store,
            check_requests=True,
        )
        assert [m.id for m in second.inbox.next_turn] == ["p1"]
        assert second.status == "idle"

        second.followup(fixed("m2", "and this"))
        await second.when_idle()

    turns = [e.data.turn for e in session.events if e.type == "turn/start"]
    assert turns == [1, 2, 3]
    entered = [e.data.id for e in session.events if e.type == "user/message"]
    assert entered == ["m1", "p1", "m2"]
    reasons = [e.data.reason for e in session.events if e.type == "request/header"]
    assert reasons == ["initial", "resume"]
    assert [m.id for m in adapter.requests[-1].messages if m.role == "user"] == ["m1", "p1", "m2"]


class FailsOnceBeforeTools(MemorySessionStore):
    """A store whose flush before the first tool body fails once."""

    def __init__(self) -> None:
        super().__init__()
        self.failed = False

    async def flush(self, session: Session) -> None:
        if not self.failed and session.events[-1].type == "tool/call":
            self.failed = True
            raise StoreError("disk full")
        await super().flush(session)


async def test_a_failed_flush_before_a_tool_leaves_every_call_answered(
    make_agent: AgentFactory,
) -> None:
    ran: list[int] = []

    @tool
    async def record(n: int) -> str:
        """Record ``n``."""
        ran.append(n)
        return "recorded"

    calls = reply(
        tool_calls=[
            {"call_id": "c1", "name": "record", "arguments": {"n": 1}},
            {"call_id": "c2", "name": "record", "arguments": {"n": 2}},
        ]
    )
    adapter = ScriptedAdapter([calls, "retrying later"])
    agent = make_agent(adapter, tools=[record], store=FailsOnceBeforeTools())

    agent.followup(fixed("m1", "record twice"))
    await agent.when_idle()

    assert ran == []
    results = [e.data for e in agent.session.events if e.type == "tool/result"]
    assert [(r.message.content[0].call_id, r.error and r.error.code) for r in results] == [
        ("c1", "TOOL_NOT_STARTED"),
        ("c2", "TOOL_NOT_STARTED"),
    ]
    (reason,) = turn_ends(agent)
    assert isinstance(reason, ErrorReason) and "disk full" in reason.error.message

    agent.followup(fixed("m2", "try again"))
    await agent.when_idle()
    assert turn_ends(agent)[-1].kind == "completed"  # type: ignore[attr-defined]
    history = adapter.requests[-1].messages  # every call is paired with its result
    assert [type(m).__name__ for m in history] == [
        "UserMessage",
        "AssistantMessage",
        "ToolResultMessage",
        "ToolResultMessage",
        "UserMessage",
    ]
