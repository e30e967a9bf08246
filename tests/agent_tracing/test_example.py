"""examples/tracing.py runs as written: one span per turn, model request and tool call,
each at the seq of the event that opened it, and every id on a span names a logged
message."""

from __future__ import annotations

from example_scripts import run_example


def test_the_tracing_example_prints_spans_that_point_into_the_log() -> None:
    lines = run_example("tracing.py")
    assert [line.split(" log seq")[0].strip() for line in lines[:-1]] == [
        "invoke_agent weather-bot",
        "chat scripted",
        "execute_tool weather",
        "chat scripted",
    ]
    assert lines[-1] == "span ids in the log: True 3"
