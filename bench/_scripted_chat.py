"""A scripted OpenAI-compatible chat server on 127.0.0.1 for bench/temporal.py: the
same answers whether the client streams or not, so dsh (streaming) and pydantic-ai
(non-streaming inside Temporal activities) talk to the same model.

The last user message ``call TOOL {JSON}`` is answered with one call of TOOL; a tool
result with ``Tool said: <result>``; anything else with ``You said: <text>``. The bytes
of every request body are counted."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_CALL = re.compile(r"^call (\w+) (\{.*\})$")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return " ".join(part.get("text", "") for part in content or () if isinstance(part, dict))


def _answer(body: dict[str, Any], number: int) -> dict[str, Any]:
    """The assistant message for a request: ``content`` or one ``tool_calls`` entry."""
    last = body["messages"][-1]
    if last["role"] == "tool":
        return {"role": "assistant", "content": f"Tool said: {_text(last['content'])}"}
    match = _CALL.match(_text(last["content"]).strip())
    if match is None:
        return {"role": "assistant", "content": f"You said: {_text(last['content'])}"}
    call = {"name": match.group(1), "arguments": match.group(2)}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": f"call-{number}", "type": "function", "function": call}],
    }


class ScriptedChatServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests = 0
        self.request_bytes = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ScriptedChatServer

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.requests += 1
        self.server.request_bytes += len(raw)
        body = json.loads(raw)
        message = _answer(body, self.server.requests)
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        usage = {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
        base = {"id": "chatcmpl-scripted", "created": 0, "model": body.get("model", "m")}
        if not body.get("stream"):
            reply = {
                **base,
                "object": "chat.completion",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": usage,
            }
            self._send(200, "application/json", json.dumps(reply).encode())
            return
        delta: dict[str, Any] = {"role": "assistant", "content": message.get("content") or ""}
        if message.get("tool_calls"):
            delta["tool_calls"] = [{"index": 0, **message["tool_calls"][0]}]
        chunks = [
            {**base, "object": "chat.completion.chunk", "choices": [c]}
            for c in (
                {"index": 0, "delta": delta, "finish_reason": None},
                {"index": 0, "delta": {}, "finish_reason": finish},
            )
        ]
        chunks.append({**base, "object": "chat.completion.chunk", "choices": [], "usage": usage})
        events = b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks)
        self._send(200, "text/event-stream", events + b"data: [DONE]\n\n")

    def _send(self, status: int, kind: str, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@contextmanager
def scripted_chat_server() -> Iterator[ScriptedChatServer]:
    server = ScriptedChatServer()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
