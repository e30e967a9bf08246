"""Creation mints an id and detaches its input; import keeps the caller's id."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from dsh_llm import (
    AssistantMessage,
    FrozenDict,
    InputError,
    ModelSource,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolResultMessage,
    UnknownSource,
    UserMessage,
    UserSourceDict,
    create_assistant_message,
    create_message,
    create_system_message,
    create_tool_result_message,
    create_user_message,
    freeze_message,
)


def test_each_creation_mints_a_new_id() -> None:
    first = create_user_message(content="same", source={"kind": "user"})
    second = create_user_message(content="same", source={"kind": "user"})

    assert first.id != second.id
    assert first != second


def test_create_message_picks_the_class_from_the_role() -> None:
    user = create_message(role="user", content="hi", source={"kind": "user"})
    assistant = create_message(
        role="assistant", content="yo", source={"kind": "model", "provider": "p", "model": "m"}
    )
    system = create_message(role="system", content="be brief", source={"kind": "user"})

    assert type(user) is UserMessage
    assert type(assistant) is AssistantMessage
    assert type(system) is SystemMessage


def test_string_content_becomes_one_text_block() -> None:
    message = create_user_message(content="hello", source={"kind": "user"})

    assert message.content == (TextBlock(text="hello"),)


def test_assistant_creation_fixes_the_model_source_kind() -> None:
    message = create_assistant_message(
        content="answer", source={"provider": "deepseek", "model": "deepseek-chat"}
    )

    assert message.role == "assistant"
    assert message.source == ModelSource(provider="deepseek", model="deepseek-chat")


def test_assistant_creation_refuses_a_source_kind() -> None:
    with pytest.raises(TypeError, match="kind"):
        create_assistant_message(
            content="x", source={"kind": "model", "provider": "p", "model": "m"}
        )


def test_tool_result_creation_couples_block_and_source() -> None:
    message = create_tool_result_message(call_id="call-7", content="42", is_error=True)

    assert type(message) is ToolResultMessage
    assert message.role == "user"
    assert message.source.call_id == "call-7"
    assert message.content == (
        ToolResultBlock(call_id="call-7", content=(TextBlock(text="42"),), is_error=True),
    )


def test_system_message_creation() -> None:
    message = create_system_message(content="You are terse.")

    assert message.role == "system"
    assert message.content == (TextBlock(text="You are terse."),)


@pytest.mark.parametrize(
    ("create", "kwargs"),
    [
        (create_message, {"role": "user", "content": "x", "source": {"kind": "user"}}),
        (create_user_message, {"content": "x", "source": {"kind": "user"}}),
        (create_assistant_message, {"content": "x", "source": {"provider": "p", "model": "m"}}),
        (create_tool_result_message, {"call_id": "c", "content": "x"}),
        (create_system_message, {"content": "x"}),
    ],
)
def test_no_creation_helper_accepts_an_id(create: Any, kwargs: dict[str, Any]) -> None:
    with pytest.raises(TypeError, match="id"):
        create(id="chosen-by-caller", **kwargs)


def test_creation_detaches_caller_lists_and_dicts() -> None:
    replay: dict[str, Any] = {"cursor": [1, 2], "meta": {"k": "v"}}
    source: dict[str, Any] = {"provider": "p", "model": "m", "replayState": replay}
    blocks: list[Any] = [{"type": "text", "text": "a"}]

    message = create_assistant_message(content=blocks, source=source)
    replay["cursor"].append(3)
    replay["meta"]["k"] = "changed"
    blocks.append({"type": "text", "text": "b"})
    blocks[0]["text"] = "changed"
    source["model"] = "other"

    assert message.content == (TextBlock(text="a"),)
    assert message.source.model == "m"
    assert message.source.replay_state == {"cursor": (1, 2), "meta": {"k": "v"}}


def test_creation_detaches_extra_source_fields() -> None:
    extra = {"ids": [1]}
    message = create_user_message(content="x", source={"kind": "user", "rpc": extra})
    extra["ids"].append(2)

    assert message.source.model_extra == {"rpc": {"ids": (1,)}}


def test_import_keeps_the_callers_id() -> None:
    message = freeze_message(
        {"id": "fixture-1", "role": "user", "content": [], "source": {"kind": "user"}}
    )

    assert message.id == "fixture-1"


def test_import_accepts_attribute_names_as_well_as_wire_names() -> None:
    by_wire = freeze_message(
        {
            "id": "t1",
            "role": "user",
            "content": [{"type": "tool-result", "toolCallId": "c1", "content": []}],
            "source": {"kind": "tool", "callId": "c1"},
        }
    )
    by_attribute = freeze_message(
        {
            "id": "t1",
            "role": "user",
            "content": [{"type": "tool-result", "call_id": "c1", "content": []}],
            "source": {"kind": "tool", "call_id": "c1"},
        }
    )

    assert by_wire == by_attribute


def test_import_of_a_user_role_value_with_a_tool_source_is_a_tool_result() -> None:
    message = freeze_message(
        {
            "id": "t1",
            "role": "user",
            "content": [{"type": "tool-result", "toolCallId": "c1", "content": []}],
            "source": {"kind": "tool", "callId": "c1"},
        }
    )

    assert type(message) is ToolResultMessage


def test_import_refuses_a_message_without_an_id() -> None:
    with pytest.raises(ValidationError, match="id"):
        freeze_message({"role": "user", "content": [], "source": {"kind": "user"}})


def test_import_refuses_things_that_are_not_messages() -> None:
    with pytest.raises(TypeError, match="freeze_message"):
        freeze_message(["not", "a", "message"])  # type: ignore[arg-type]


def test_import_returns_a_validated_message_as_the_same_object() -> None:
    message = create_user_message(content="hi", source={"kind": "user"})

    assert freeze_message(message) is message


def test_import_detaches_the_mapping() -> None:
    wire: dict[str, Any] = {
        "id": "m1",
        "role": "user",
        "content": [{"type": "text", "text": "hi"}],
        "source": {"kind": "user", "tags": ["a"]},
    }
    message = freeze_message(wire)
    wire["content"].append({"type": "text", "text": "more"})
    wire["source"]["tags"].append("b")

    assert message.content == (TextBlock(text="hi"),)
    assert message.source.model_extra == FrozenDict(tags=("a",))


def test_messages_are_hashable_and_compare_by_value() -> None:
    wire = {
        "id": "m1",
        "role": "assistant",
        "content": [{"type": "tool-call", "id": "c1", "name": "f", "arguments": "{}"}],
        "source": {"kind": "model", "provider": "p", "model": "m", "replayState": {"a": [1]}},
    }
    first, second = freeze_message(wire), freeze_message(wire)

    assert first == second
    assert hash(first) == hash(second)
    assert len({first, second}) == 1
    assert first.content[0] == ToolCallBlock(call_id="c1", name="f", arguments="{}")


# --- typos are refused, naming what is wrong ----------------------------------------------


def test_a_misspelled_source_kind_is_refused_at_creation() -> None:
    with pytest.raises(InputError, match="unknown source kind 'usr'") as raised:
        create_user_message(content="hi", source={"kind": "usr"})
    assert raised.value.field == "source.kind"
    with pytest.raises(InputError, match="freeze_message"):
        create_message(role="user", content="hi", source={"kind": "future-x"})


def test_an_unknown_kind_is_created_from_an_explicit_model_or_imported() -> None:
    created = create_user_message(content="hi", source=UnknownSource(kind="future-x"))
    assert created.source.kind == "future-x"
    wire = {"id": "m-1", "role": "user", "content": [], "source": {"kind": "future-x"}}
    assert freeze_message(wire).source.kind == "future-x"


def test_a_typed_source_mapping_keeps_its_extra_fields_when_plain() -> None:
    typed: UserSourceDict = {"kind": "user"}
    assert create_user_message(content="hi", source=typed).source.kind == "user"
    extra = create_user_message(content="hi", source={"kind": "user", "rpcId": 3})
    assert extra.source.model_extra == {"rpcId": 3}
