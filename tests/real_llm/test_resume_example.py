"""examples/resume.py against llama.cpp's real server: two runs of the program, two
processes, one conversation in ./agent.db."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from dsh_llm import UserMessage
from dsh_session import SqliteSessionStore
from real_llm.server import LlamaServer
from real_llm.tiny_model import AFTER_TOOL_REPLY

ROOT = Path(__file__).resolve().parents[2]


def _run(cwd: Path, server: LlamaServer, prompt: str) -> str:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "resume.py"), prompt],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "DSH_MODEL": f"openai-compatible:tiny@{server.base_url}",
        },
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_each_run_resumes_the_conversation(llama_server: LlamaServer, tmp_path: Path) -> None:
    assert _run(tmp_path, llama_server, "please calc 2+3") == AFTER_TOOL_REPLY
    assert _run(tmp_path, llama_server, "and again") == AFTER_TOOL_REPLY  # calc is in history

    async def prompts() -> list[str]:
        async with SqliteSessionStore(tmp_path / "agent.db", mode="read") as store:
            session, _ = await store.read("chat-1")
        return [
            block.text
            for message in session.derive_messages()
            if isinstance(message, UserMessage)
            for block in message.content
            if block.type == "text"
        ]

    assert asyncio.run(prompts()) == ["please calc 2+3", "and again"]
