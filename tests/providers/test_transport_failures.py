"""Issue 27, item 6: transport failures that say what happened.

A failed call names the endpoint's URL (never its credentials or query) and the
cause found under the SDK's "Connection error.": connection refused, DNS, TLS, a
connect timeout, a first-chunk timeout, a connection reset mid-stream. Every server
here is a real socket on 127.0.0.1; the one unresolvable host is under ``.invalid``,
which fails to resolve without a network. Each test runs against both adapters
through their official clients.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

from dsh_agent import AgentLoop, RetryPolicy, TurnFailed, run
from dsh_llm import (
    ErrorFinish,
    FinishChunk,
    GenerateRequest,
    LlmFailure,
    ModelAdapter,
    create_user_message,
)
from dsh_llm.providers import (
    AnthropicAdapter,
    GeminiAdapter,
    OpenAIChatAdapter,
    OpenAIResponsesAdapter,
    adapter_for,
)
from dsh_session import Session
from providers.frames import chat_chunk, message_start, responses_created
from providers.gemini_frames import gemini_chunk
from providers.http_stub import Reply, StubServer, sse_reply, unaccepting_port

AdapterFactory = Callable[..., ModelAdapter]


def openai_adapter(base: str, **options: Any) -> ModelAdapter:
    return OpenAIChatAdapter(base_url=f"{base}/v1", api_key="k", **options)


def anthropic_adapter(base: str, **options: Any) -> ModelAdapter:
    return AnthropicAdapter(base_url=base, api_key="k", **options)


def responses_adapter(base: str, **options: Any) -> ModelAdapter:
    return OpenAIResponsesAdapter(base_url=f"{base}/v1", api_key="k", **options)


def gemini_adapter(base: str, **options: Any) -> ModelAdapter:
    return GeminiAdapter(base_url=base, api_key="k", **options)


def ollama_adapter(base: str, **options: Any) -> ModelAdapter:
    return adapter_for("ollama:m", base_url=f"{base}/v1", **options)


PATH = {
    openai_adapter: "/v1/chat/completions",
    anthropic_adapter: "/v1/messages",
    responses_adapter: "/v1/responses",
    gemini_adapter: "/v1beta/models/m:streamGenerateContent",
    ollama_adapter: "/v1/chat/completions",
}
FIRST_FRAME = {
    openai_adapter: chat_chunk({"content": "Hel"}),
    anthropic_adapter: message_start(),
    responses_adapter: responses_created(),
    gemini_adapter: gemini_chunk({"text": "Hel"}),
    ollama_adapter: chat_chunk({"content": "Hel"}),
}


@pytest.fixture(
    params=[openai_adapter, anthropic_adapter, responses_adapter, gemini_adapter, ollama_adapter],
    ids=["openai", "anthropic", "responses", "gemini", "ollama"],
)
def make_adapter(request: pytest.FixtureRequest) -> AdapterFactory:
    factory: AdapterFactory = request.param
    return factory


async def failure(adapter: ModelAdapter) -> LlmFailure:
    question = create_user_message("hi")
    request = GenerateRequest(provider="p", model="m", messages=(question,))
    chunks = [item async for item in adapter.stream(request)]
    last = chunks[-1]
    assert isinstance(last, FinishChunk)
    assert isinstance(last.reason, ErrorFinish)
    return last.reason.failure


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
def full_backlog() -> Iterator[int]:
    """A port whose connections hang in connect (:func:`unaccepting_port`)."""
    with unaccepting_port() as port:
        yield port


@pytest.fixture
async def plain_http_server() -> AsyncIterator[int]:
    """A server that answers every connection at once in plain HTTP: what a client
    expecting TLS meets at an http:// server."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    yield server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()


@pytest.fixture
async def hang_up_server() -> AsyncIterator[int]:
    """A server that reads each request and closes the connection unanswered."""

    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.close()

    server = await asyncio.start_server(hang_up, "127.0.0.1", 0)
    yield server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()


async def test_nothing_listening_is_connection_refused_naming_the_url(
    make_adapter: AdapterFactory,
) -> None:
    port = free_port()

    reported = await failure(make_adapter(f"http://127.0.0.1:{port}"))

    assert reported.code == "TRANSPORT"
    assert reported.message.startswith(
        f"could not connect to http://127.0.0.1:{port}{PATH[make_adapter]}: connection refused ("
    )
    assert reported.message.endswith("; is the server running?")


async def test_a_host_that_does_not_resolve_is_a_dns_failure(
    make_adapter: AdapterFactory,
) -> None:
    reported = await failure(make_adapter("http://llm.nowhere.invalid:8080"))

    assert reported.code == "TRANSPORT"
    assert reported.message.startswith(
        f"could not connect to http://llm.nowhere.invalid:8080{PATH[make_adapter]}: "
        "DNS resolution failed ("
    )


async def test_https_to_a_plain_http_server_is_a_tls_failure(
    make_adapter: AdapterFactory, plain_http_server: int
) -> None:
    reported = await failure(make_adapter(f"https://127.0.0.1:{plain_http_server}"))

    assert reported.code == "TRANSPORT"
    assert reported.message.startswith(
        f"could not connect to https://127.0.0.1:{plain_http_server}{PATH[make_adapter]}: "
        "TLS failure ("
    )
    assert "is it a plain http:// server?" in reported.message


async def test_a_connection_that_is_never_accepted_ends_at_the_connect_timeout(
    make_adapter: AdapterFactory, full_backlog: int
) -> None:
    started = time.monotonic()

    reported = await failure(make_adapter(f"http://127.0.0.1:{full_backlog}", connect_timeout=0.3))

    assert reported.code == "TIMEOUT"
    assert reported.message == (
        f"could not connect to http://127.0.0.1:{full_backlog}{PATH[make_adapter]}: "
        "connect timeout: no connection within 0.3 s (connect_timeout)"
    )
    assert time.monotonic() - started < 10  # the bound fired, not the SDK's own


async def test_a_server_that_accepts_and_never_answers_ends_at_the_first_chunk_timeout(
    stub: StubServer, make_adapter: AdapterFactory
) -> None:
    stub.script(Reply(stall=True))  # accepts, reads the request, sends nothing

    reported = await failure(make_adapter(stub.url, first_chunk_timeout=0.3))

    assert reported.code == "TIMEOUT"
    assert reported.message == (
        f"first-chunk timeout: the provider at {stub.url}{PATH[make_adapter]} sent no "
        "response within 0.3 s of the request (first_chunk_timeout)"
    )
    assert len(stub.requests) == 1  # the SDK did not try again behind dsh's back


async def test_headers_and_then_nothing_ends_at_the_first_chunk_timeout(
    stub: StubServer, make_adapter: AdapterFactory
) -> None:
    stub.script(sse_reply([], then="hold"))

    reported = await failure(make_adapter(stub.url, first_chunk_timeout=0.3))

    assert reported.code == "TIMEOUT"
    assert reported.message.startswith("first-chunk timeout: ")
    assert f"{stub.url}{PATH[make_adapter]}" in reported.message


async def test_silence_after_the_first_chunk_ends_at_the_idle_timeout(
    stub: StubServer, make_adapter: AdapterFactory
) -> None:
    stub.script(sse_reply([FIRST_FRAME[make_adapter]], then="hold"))

    reported = await failure(make_adapter(stub.url, idle_timeout=0.3))

    assert reported.code == "TIMEOUT"
    assert reported.message == (
        f"idle timeout: the provider at {stub.url}{PATH[make_adapter]} sent no data for "
        "0.3 s (idle_timeout; keep-alive comments do not count)"
    )


async def test_a_connection_reset_mid_stream_says_so(
    stub: StubServer, make_adapter: AdapterFactory
) -> None:
    stub.script(sse_reply([FIRST_FRAME[make_adapter]], then="reset"))

    reported = await failure(make_adapter(stub.url))

    assert reported.code == "TRANSPORT"
    assert reported.message.startswith(
        f"the stream from {stub.url}{PATH[make_adapter]} broke off before the model "
        "finished: connection reset ("
    )


async def test_a_connection_closed_mid_body_says_so(
    stub: StubServer, make_adapter: AdapterFactory
) -> None:
    stub.script(sse_reply([FIRST_FRAME[make_adapter]], then="cut"))

    reported = await failure(make_adapter(stub.url))

    assert reported.code == "TRANSPORT"
    assert reported.message.startswith(
        f"the stream from {stub.url}{PATH[make_adapter]} broke off before the model "
        "finished: connection closed by the server ("
    )


async def test_a_connection_closed_before_the_response_says_so(
    make_adapter: AdapterFactory, hang_up_server: int
) -> None:
    reported = await failure(make_adapter(f"http://127.0.0.1:{hang_up_server}"))

    assert reported.code == "TRANSPORT"
    assert reported.message.startswith(
        f"the connection to http://127.0.0.1:{hang_up_server}{PATH[make_adapter]} broke off "
        "before the response: connection closed by the server ("
    )


async def test_credentials_and_query_in_the_base_url_are_never_shown(
    make_adapter: AdapterFactory,
) -> None:
    port = free_port()
    adapter = make_adapter(f"http://user:s3cret@127.0.0.1:{port}")

    reported = await failure(adapter)

    assert f"http://127.0.0.1:{port}{PATH[make_adapter]}" in reported.message
    assert "s3cret" not in reported.message and "user" not in reported.message


async def test_a_run_against_a_dead_server_says_where_and_why(
    make_adapter: AdapterFactory,
) -> None:
    port = free_port()
    agent = AgentLoop(
        session=Session.create(),
        adapter=make_adapter(f"http://127.0.0.1:{port}"),
        provider="p",
        model="m",
        retry=RetryPolicy(max_retries=1, initial_delay_ms=1, max_delay_ms=1, jitter_ratio=0),
    )

    with pytest.raises(TurnFailed) as raised:
        await run(agent, "anyone there?")
    await agent.aclose()

    assert str(raised.value).startswith(
        f"the model call failed (TRANSPORT): could not connect to "
        f"http://127.0.0.1:{port}{PATH[make_adapter]}: connection refused"
    )


@pytest.mark.parametrize("name", ["connect_timeout", "first_chunk_timeout", "idle_timeout"])
@pytest.mark.parametrize("value", [0, -1.0, float("inf"), float("nan")])
def test_a_timeout_that_is_not_positive_finite_seconds_is_refused(
    make_adapter: AdapterFactory, name: str, value: float
) -> None:
    with pytest.raises(ValueError, match=name):
        make_adapter("http://127.0.0.1:1", **{name: value})


def test_a_timeout_that_is_not_a_number_is_refused(make_adapter: AdapterFactory) -> None:
    with pytest.raises(TypeError, match="first_chunk_timeout"):
        make_adapter("http://127.0.0.1:1", first_chunk_timeout="10")


def test_the_connect_timeout_reaches_the_client_the_adapter_builds(
    make_adapter: AdapterFactory,
) -> None:
    if make_adapter is gemini_adapter:
        pytest.skip(
            "google-genai sends its own per-request timeout, so GeminiAdapter sets the "
            "timeouts on each request of its HTTP client: the connect and read timeout "
            "tests check them"
        )
    adapter: Any = make_adapter("http://127.0.0.1:1", connect_timeout=2.5, timeout=30)

    assert (adapter.client.timeout.connect, adapter.client.timeout.read) == (2.5, 30)


async def test_a_model_strings_adapter_takes_the_timeouts(stub: StubServer) -> None:
    stub.script(Reply(stall=True))
    adapter = adapter_for(f"openai-compatible:m@{stub.url}/v1", first_chunk_timeout=0.3)

    reported = await failure(adapter)

    assert reported.code == "TIMEOUT"
    assert "within 0.3 s of the request (first_chunk_timeout)" in reported.message
