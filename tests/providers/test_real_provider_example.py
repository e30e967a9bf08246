"""The README's real-provider example runs as written, pointed at a local
DeepSeek-compatible server through its documented environment variables."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from pathlib import Path

import pytest

from providers.frames import CHAT_DONE, chat_chunk
from providers.http_stub import StubServer, json_reply, sse_reply

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "examples" / "real_provider.py"


async def test_example_answers_with_its_tool(stub: StubServer) -> None:
    call = {
        "index": 0,
        "id": "call_add",
        "type": "function",
        "function": {"name": "add", "arguments": '{"a": 1234, "b": 4321}'},
    }
    stub.script(
        sse_reply([chat_chunk({"tool_calls": [call]}, finish_reason="tool_calls"), CHAT_DONE]),
        sse_reply([chat_chunk({"content": "It is 5555."}, finish_reason="stop"), CHAT_DONE]),
    )
    environment = {
        **os.environ,
        "DEEPSEEK_API_KEY": "sk-test",
        "DEEPSEEK_BASE_URL": stub.url,
        "PYTHONPATH": str(ROOT),  # this checkout's packages, however they are installed
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(EXAMPLE),
        env=environment,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), 60)

    assert process.returncode == 0, stderr.decode()
    assert stdout.decode().strip() == "It is 5555."
    first, second = stub.requests
    assert first.path == "/chat/completions"
    assert first.headers["authorization"] == "Bearer sk-test"
    [schema] = first.body["tools"]
    assert schema["function"]["name"] == "add"
    assert schema["function"]["parameters"]["properties"]["a"]["type"] == "integer"
    tool_message = second.body["messages"][-1]
    assert tool_message["role"] == "tool"
    assert tool_message["content"] == "5555"


def test_the_readme_shows_the_example_as_it_is() -> None:
    code = EXAMPLE.read_text(encoding="utf-8")
    program = code[code.index("import asyncio") :]
    assert program in (ROOT / "README.md").read_text(encoding="utf-8")


async def _run_example(base_url: str) -> tuple[int | None, str, str]:
    environment = {
        **os.environ,
        "DEEPSEEK_API_KEY": "sk-test",
        "DEEPSEEK_BASE_URL": base_url,
        "PYTHONPATH": str(ROOT),
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(EXAMPLE),
        env=environment,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), 120)
    return process.returncode, stdout.decode(), stderr.decode()


async def test_example_exits_non_zero_with_one_line_when_the_call_fails(stub: StubServer) -> None:
    stub.script(json_reply(401, {"error": {"message": "bad key", "type": "auth_error"}}))

    status, stdout, stderr = await _run_example(stub.url)

    assert status == 1 and stdout == ""
    assert stderr.splitlines() == ["error: the model call failed (AUTH): HTTP 401: bad key"]


@pytest.mark.slow
async def test_example_exits_non_zero_with_one_line_when_the_server_is_unreachable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    status, stdout, stderr = await _run_example(f"http://127.0.0.1:{port}")  # ~15 s of retries

    assert status == 1 and stdout == ""
    [line] = stderr.splitlines()
    assert line.startswith("error: the model call failed (TRANSPORT): ")
