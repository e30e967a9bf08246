"""A tiny OpenAI-compatible chat server on 127.0.0.1, for driving ``dsh chat``.

It answers every ``POST .../chat/completions`` with a streamed reply, one word per
server-sent event, ``delay`` seconds apart, so a test can type or press Ctrl-C while
the reply streams. The reply depends only on the last user message: ``count to N``
is answered ``1 2 ... N``; ``call TOOL {JSON}`` requests a call of ``TOOL`` with those
arguments (id ``call-<request number>``), and the request after a tool result is
answered ``Tool said: <result>``; anything else is echoed as ``You said: <text>``. Every
request body is recorded. It runs in a thread, so a test can drive a subprocess
with ordinary blocking calls.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from cli.runner import Dsh

_COUNT = re.compile(r"count to (\d+)", re.IGNORECASE)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return " ".join(part.get("text", "") for part in content if isinstance(part, dict))


_CALL = re.compile(r"^call (\w+) (\{.*\})$")


def tool_call_in(body: dict[str, Any]) -> tuple[str, str] | None:
    """The tool call (name, arguments) the request asks for, if any."""
    messages = body.get("messages", [])
    if not messages or messages[-1].get("role") != "user":
        return None
    match = _CALL.match(_text_of(messages[-1]["content"]).strip())
    return (match.group(1), match.group(2)) if match else None


def reply_to(body: dict[str, Any]) -> str:
    """The reply the server streams for a request ``body``."""
    messages = body.get("messages", [])
    if messages and messages[-1].get("role") == "tool":
        return f"Tool said: {_text_of(messages[-1]['content'])}"
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    last = _text_of(users[-1]["content"]) if users else ""
    count = _COUNT.search(last)
    if count:
        return " ".join(str(number) for number in range(1, int(count.group(1)) + 1))
    return f"You said: {last}"


def _event(payload: object) -> bytes:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return f"data: {data}\n\n".encode()


def _chunk(model: str, delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return _event(
        {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [choice],
        }
    )


class FakeOpenAIServer(ThreadingHTTPServer):
    """The server; ``requests`` holds every JSON body received, in order."""

    daemon_threads = True

    def __init__(self, delay: float) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.delay = delay
        self.requests: list[dict[str, Any]] = []
        self.raw_requests: list[bytes] = []
        """The bodies of ``requests`` as the bytes received."""
        self.refusals_left = 0
        """How many of the next requests to refuse with ``refusal_status``."""
        self.refusal_status = 401
        """401 is not retried; 503 is."""

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: FakeOpenAIServer

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read their own output."""

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers["Content-Length"]))
        body = json.loads(raw)
        self.server.raw_requests.append(raw)
        self.server.requests.append(body)
        if self.path != "/v1/chat/completions" or self.server.refusals_left:
            refused = self.path == "/v1/chat/completions"
            self.server.refusals_left -= refused
            message = "refused as scripted" if refused else f"no route {self.path}"
            error = json.dumps({"error": {"message": message}}).encode()
            self.send_response(self.server.refusal_status if refused else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(error)))
            self.end_headers()
            self.wfile.write(error)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        model = body.get("model", "fake")
        call = tool_call_in(body)
        words = reply_to(body).split(" ") if call is None else []
        events = [_chunk(model, {"role": "assistant", "content": ""})]
        events += [
            _chunk(model, {"content": word if index == 0 else f" {word}"})
            for index, word in enumerate(words)
        ]
        if call is not None:
            function = {"name": call[0], "arguments": call[1]}
            number = len(self.server.requests)
            delta = {"index": 0, "id": f"call-{number}", "type": "function", "function": function}
            events.append(_chunk(model, {"tool_calls": [delta]}))
        events.append(_chunk(model, {}, "stop" if call is None else "tool_calls"))
        usage = {"prompt_tokens": 7, "completion_tokens": len(words), "total_tokens": 7}
        events.append(_event({"id": "chatcmpl-fake", "choices": [], "usage": usage}))
        events.append(_event("[DONE]"))
        try:
            for event in events:
                time.sleep(self.server.delay)
                self.wfile.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client cancelled the stream


@contextmanager
def fake_openai_server(delay: float = 0.0) -> Iterator[FakeOpenAIServer]:
    """Serve in a background thread for the duration of the block."""
    server = FakeOpenAIServer(delay)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def chat(dsh: Dsh, server: FakeOpenAIServer, lines: str, *options: str) -> tuple[str, str, int]:
    """``dsh chat`` piped against ``server``: (replies, notes, exit status)."""
    result = dsh.run(
        "chat",
        "--provider",
        "openai",
        "--model",
        "fake-model",
        "--base-url",
        server.base_url,
        "--api-key-env",
        "FAKE_API_KEY",
        *options,
        input=lines,
        env={"FAKE_API_KEY": "not-a-secret"},
    )
    return result.stdout, result.stderr, result.returncode
