"""The camelCase wire form: lossless round trips and clear rejection of bad input."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from dsh_llm import (
    HistoryAdapter,
    Message,
    MessageAdapter,
    UnknownSource,
    create_assistant_message,
    create_tool_result_message,
    create_user_message,
    freeze_message,
)


def _sample_messages() -> list[Message]:
    return [
        create_user_message(content="hello", source={"kind": "user", "rpcId": 7}),
        create_user_message(
            content=[{"type": "image", "mediaType": "image/png", "url": "https://x/y.png"}],
            source={
                "kind": "plugin",
                "plugin": "files",
                "form": {"kind": "snapshot", "sections": [{"name": "a", "text": "b"}]},
                "compactionId": "k1",
            },
        ),
        create_assistant_message(
            content=[
                {"type": "reasoning", "text": "think"},
                {"type": "tool-call", "id": "c1", "name": "add", "arguments": '{"a": 1}'},
            ],
            source={"provider": "p", "model": "m", "replayState": {"blob": [1, 2.5, None]}},
        ),
        create_tool_result_message(call_id="c1", content="2"),
    ]


def test_dump_uses_camel_case_and_omits_unset_optionals() -> None:
    message = create_tool_result_message(call_id="c1", content="ok")

    wire = message.model_dump(mode="json")

    assert wire == {
        "id": message.id,
        "role": "user",
        "content": [
            {
                "type": "tool-result",
                "toolCallId": "c1",
                "content": [{"type": "text", "text": "ok"}],
                "isError": False,
            }
        ],
        "source": {"kind": "tool", "callId": "c1"},
    }
    assert json.loads(message.model_dump_json()) == wire


def test_assistant_dump_writes_replay_state_as_plain_json() -> None:
    message = create_assistant_message(
        content="x", source={"provider": "p", "model": "m", "replayState": {"a": [1, {"b": 2}]}}
    )

    assert message.model_dump(mode="json")["source"] == {
        "kind": "model",
        "provider": "p",
        "model": "m",
        "replayState": {"a": [1, {"b": 2}]},
    }


@pytest.mark.parametrize("message", _sample_messages(), ids=lambda m: type(m).__name__)
def test_dump_then_freeze_gives_an_equal_message_with_the_same_id(message: Message) -> None:
    from_python = freeze_message(message.model_dump(mode="json"))
    from_json = MessageAdapter.validate_json(message.model_dump_json())

    assert from_python == message
    assert from_json == message
    assert type(from_json) is type(message)
    assert from_json.id == message.id


def test_history_round_trips_through_json() -> None:
    history = tuple(_sample_messages())

    restored = HistoryAdapter.validate_json(HistoryAdapter.dump_json(history))

    assert restored == history
    assert [m.id for m in restored] == [m.id for m in history]


def test_unknown_source_kind_round_trips_losslessly() -> None:
    wire = {
        "id": "m1",
        "role": "user",
        "content": [],
        "source": {"kind": "scheduler", "jobId": "j9", "when": {"at": [2026, 12]}},
    }

    message = freeze_message(wire)

    assert isinstance(message.source, UnknownSource)
    assert message.source.kind == "scheduler"
    assert message.model_dump(mode="json") == wire
    assert MessageAdapter.validate_json(json.dumps(wire)) == message


def _rejection(wire: dict[str, Any]) -> str:
    with pytest.raises(ValidationError) as caught:
        freeze_message(wire)
    return str(caught.value)


_USER = {"id": "m1", "role": "user", "content": [], "source": {"kind": "user"}}


def test_empty_id_is_rejected() -> None:
    assert "id" in _rejection({**_USER, "id": ""})


def test_id_with_control_characters_is_rejected() -> None:
    assert "id" in _rejection({**_USER, "id": "a\nb"})


def test_unknown_role_is_rejected() -> None:
    assert "role must be" in _rejection({**_USER, "role": "robot"})


def test_unknown_block_type_is_rejected() -> None:
    assert "'widget'" in _rejection({**_USER, "content": [{"type": "widget"}]})


def test_tool_result_naming_another_call_is_rejected() -> None:
    message = _rejection(
        {
            "id": "t1",
            "role": "user",
            "content": [{"type": "tool-result", "toolCallId": "c1", "content": []}],
            "source": {"kind": "tool", "callId": "c2"},
        }
    )
    assert "'c1'" in message
    assert "'c2'" in message


def test_tool_result_message_needs_exactly_one_tool_result_block() -> None:
    block = {"type": "tool-result", "toolCallId": "c1", "content": []}
    source = {"kind": "tool", "callId": "c1"}
    _rejection({"id": "t1", "role": "user", "content": [block, block], "source": source})
    _rejection({"id": "t1", "role": "user", "content": [], "source": source})


@pytest.mark.parametrize(
    ("bad_value", "expected"),
    [(float("nan"), "finite"), (float("inf"), "finite"), ({1: "x"}, "not a string")],
)
def test_non_json_replay_state_is_rejected(bad_value: object, expected: str) -> None:
    with pytest.raises(ValidationError, match=expected):
        create_assistant_message(
            content="x", source={"provider": "p", "model": "m", "replayState": {"v": bad_value}}
        )


def test_replay_state_with_a_python_object_is_rejected() -> None:
    with pytest.raises(ValidationError, match=r"\$\.v\[0\]: set is not a JSON value"):
        create_assistant_message(
            content="x", source={"provider": "p", "model": "m", "replayState": {"v": [set()]}}
        )


def test_cyclic_replay_state_is_rejected() -> None:
    cycle: list[object] = []
    cycle.append(cycle)
    with pytest.raises(ValidationError, match="cycle"):
        create_assistant_message(
            content="x", source={"provider": "p", "model": "m", "replayState": cycle}
        )


def test_model_source_on_a_user_message_is_rejected() -> None:
    message = _rejection(
        {**_USER, "source": {"kind": "model", "provider": "p", "model": "m"}},
    )
    assert "source" in message


def test_user_source_on_an_assistant_message_is_rejected() -> None:
    assert "source.kind" in _rejection({**_USER, "role": "assistant"})


def test_known_source_kind_with_a_wrong_shape_is_not_taken_for_an_unknown_kind() -> None:
    assert "source" in _rejection({**_USER, "source": {"kind": "plugin"}})


def test_missing_field_is_rejected() -> None:
    assert "content" in _rejection({"id": "m1", "role": "user", "source": {"kind": "user"}})


def _plugin_message(form: dict[str, Any]) -> dict[str, Any]:
    return {**_USER, "source": {"kind": "plugin", "plugin": "notes", "form": form}}


def test_unknown_plugin_form_kind_round_trips_with_its_fields() -> None:
    wire = _plugin_message({"kind": "digest", "items": [1, 2]})

    assert freeze_message(wire).model_dump(mode="json") == wire


def test_snapshot_form_needs_sections_and_notice_form_a_short_summary() -> None:
    assert "sections" in _rejection(_plugin_message({"kind": "snapshot"}))
    assert "summary" in _rejection(_plugin_message({"kind": "notice"}))
    assert "120" in _rejection(_plugin_message({"kind": "notice", "summary": "x" * 121}))
