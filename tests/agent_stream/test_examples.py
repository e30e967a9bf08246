"""The README's streaming and sync examples run as written, in a subprocess."""

from __future__ import annotations

from example_scripts import run_example


def test_streaming_ui_example_serves_ag_ui_with_the_stored_ids() -> None:
    lines = run_example("streaming_ui.py")

    assert lines[0] == "RUN_STARTED "
    assert lines[-2] == "RUN_FINISHED "
    stored = lines[-1].removeprefix("stored: ").split()
    assert stored[0] == "ui-msg-1"  # the UI's own id, kept
    on_wire = {line.split()[1] for line in lines[:-1] if len(line.split()) == 2}
    assert set(stored) <= on_wire  # every stored message was on the wire under its id


def test_sync_script_example_answers_from_a_script() -> None:
    assert run_example("sync_script.py") == ["Paris.", "Paris.", "About 2.1 million people."]
