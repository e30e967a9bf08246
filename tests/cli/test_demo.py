"""``dsh demo``: an offline conversation through the real loop, then the log's story."""

from __future__ import annotations

import re

from cli.runner import DemoRun, Dsh


def test_demo_streams_a_tool_using_conversation_with_a_steer(demo: DemoRun) -> None:
    transcript = demo.output.split("the durable log")[0]
    for expected in (
        "What's the weather in Paris?",
        '→ weather({"city": "Paris"})',
        "← Paris: 17 °C, light rain",
        "Also, what is 21 * 2?",  # the steer sent while the weather tool ran
        "← 21 * 2 = 42",
        "Here is what I found: Paris: 17 °C, light rain; 21 * 2 = 42.",
        "context · demo",
        "How about Tokyo?",
        "Here is what I found: Tokyo: 24 °C, clear skies.",
    ):
        assert expected in transcript
    # the steer joined turn 1 (before its final answer), not a turn of its own
    turn_1 = transcript.split("turn 2")[0]
    assert "Also, what is 21 * 2?" in turn_1
    assert (demo.directory / "dsh.db").is_file()


def _identity_rows(demo: DemoRun) -> tuple[str, list[str]]:
    """The followed prompt's id and the rows of the demo's identity table."""
    match = re.search(r"one prompt, one value: (\S+)", demo.output)
    assert match is not None
    table = demo.output[match.end() :].split("requests rebuilt from the log")[0]
    return match.group(1), [line for line in table.splitlines() if match.group(1) in line]


def test_demo_follows_the_prompt_id_through_inbox_log_history_and_requests(
    demo: DemoRun,
) -> None:
    prompt_id, rows = _identity_rows(demo)
    places = (
        "inbox (inserted)",
        "inbox (claimed)",
        "log (seq",
        "history (#1)",
        "requests sent (#1-#5)",
        "requests rebuilt (#1-#5)",
    )
    for place in places:
        row = next((row for row in rows if place in row), None)
        assert row is not None, f"no row for {place}"
        assert row.rstrip(" │").endswith("yes"), row
    events = Dsh(demo.directory).json("sessions", "show", demo.session_id)
    first_prompt = next(event for event in events if event["type"] == "user/message")
    assert first_prompt["data"]["id"] == prompt_id


def test_demo_rebuilds_every_request_from_the_log_identically(demo: DemoRun) -> None:
    events = Dsh(demo.directory).json("sessions", "show", demo.session_id)
    answers = [event for event in events if event["type"] == "assistant/message"]
    assert len(answers) == 5
    assert "all 5 requests sent were re-built identically from the log alone" in demo.output
    assert "DIFFERENT" not in demo.output
    # full ids are printed in the summary: every message of the history is listed
    ids = [event["data"]["message"]["id"] for event in answers]
    assert all(message_id in demo.output for message_id in ids)


def test_demo_writes_to_the_store_it_is_given(dsh: Dsh) -> None:
    result = dsh.run("demo", "--delay", "0", "--store", "jsonl:///logs")
    assert result.returncode == 0, result.stderr
    files = list((dsh.cwd / "logs").glob("_no-cwd/*/session.jsonl.zstd"))  # harness layout
    assert len(files) == 1
    assert f"dsh sessions show {files[0].parent.name} --store jsonl:///logs" in result.stdout
    assert not (dsh.cwd / "dsh.db").exists()
