"""``dsh chat`` with piped input, end to end against llama.cpp's real server."""

from __future__ import annotations

from pathlib import Path

from cli.runner import Dsh

from real_llm.server import LlamaServer
from real_llm.tiny_model import PLAIN_REPLY


def test_piped_prompts_get_the_model_replies_and_are_stored(
    llama_server: LlamaServer, tmp_path: Path
) -> None:
    dsh = Dsh(tmp_path)

    result = dsh.run(
        "chat",
        "--provider",
        "openai",
        "--model",
        "tiny",
        "--base-url",
        llama_server.base_url,
        "--api-key-env",
        "LOCAL_KEY",
        input="hi\nhello again\n",
        env={"LOCAL_KEY": "none"},
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout == f"{PLAIN_REPLY}\n{PLAIN_REPLY}\n"
    (stored,) = dsh.json("sessions", "list")
    assert stored["turns"] == 2
