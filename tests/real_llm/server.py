"""Start and stop a real llama.cpp server over the scripted tiny model."""

from __future__ import annotations

import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from real_llm.tiny_model import write_tiny_model

SERVE = Path(__file__).with_name("serve.py")
CONTEXT_TOKENS = 2048
"""Small enough that a long prompt overflows it, large enough for a tool round trip."""


@dataclass
class LlamaServer:
    """A running ``serve.py`` child process and the OpenAI-compatible URL it answers."""

    process: subprocess.Popen[str]
    base_url: str

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start_llama_server(directory: Path) -> LlamaServer:
    """Write the model into ``directory`` and start a server on a free local port;
    returns once it answers ``/health``. A server that dies first fails with its log."""
    model = directory / "tiny-chat.gguf"
    write_tiny_model(model)
    port = _free_port()
    log = directory / "server.log"
    with log.open("w") as log_file:
        process = subprocess.Popen(
            [sys.executable, str(SERVE), str(model), str(port), str(CONTEXT_TOKENS)],
            stdout=subprocess.PIPE,
            stderr=log_file,
            text=True,
        )
    assert process.stdout is not None
    line = process.stdout.readline()  # serve.py exits rather than wait forever
    if not line.startswith("LISTENING"):
        process.kill()
        process.wait()
        raise RuntimeError(f"llama.cpp server did not start: {log.read_text()[-2000:]}")
    return LlamaServer(process, f"http://127.0.0.1:{port}/v1")
