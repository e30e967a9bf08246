"""replace_content changes a message's representation: same id, role and source."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from dsh_llm import (
    TextBlock,
    ToolResultBlock,
    ToolResultMessage,
    create_assistant_message,
    create_tool_result_message,
    create_user_message,
    replace_content,
)


def test_keeps_id_role_and_source_and_takes_the_new_content() -> None:
    original = create_user_message(content="long text", source={"kind": "user", "rpcId": 3})

    rewritten = replace_content(original, "short")

    assert rewritten.id == original.id
    assert rewritten.role == original.role
    assert rewritten.source is original.source
    assert rewritten.content == (TextBlock(text="short"),)
    assert original.content == (TextBlock(text="long text"),)


def test_keeps_the_message_type() -> None:
    assistant = create_assistant_message(content="a", source={"provider": "p", "model": "m"})

    assert type(replace_content(assistant, "b")) is type(assistant)


def test_tool_result_rewrite_for_the_same_call_is_accepted() -> None:
    result = create_tool_result_message(call_id="c1", content="x" * 1000)
    elided = ToolResultBlock(call_id="c1", content=(TextBlock(text="[elided]"),))

    rewritten = replace_content(result, [elided])

    assert type(rewritten) is ToolResultMessage
    assert rewritten.id == result.id
    assert rewritten.content == (elided,)


def test_tool_result_rewrite_naming_another_call_is_rejected() -> None:
    result = create_tool_result_message(call_id="c1", content="x")
    other = ToolResultBlock(call_id="c2", content=())

    with pytest.raises(ValidationError, match="'c2'"):
        replace_content(result, [other])


def test_tool_result_rewrite_must_stay_one_tool_result_block() -> None:
    result = create_tool_result_message(call_id="c1", content="x")
    block = result.content[0]

    with pytest.raises(ValidationError):
        replace_content(result, [block, block])


def test_a_string_rewrites_a_tool_results_inner_content_and_keeps_its_block() -> None:
    result = create_tool_result_message(call_id="c1", content="long output", is_error=True)

    pruned = replace_content(result, "short")

    assert (pruned.id, pruned.source, type(pruned)) == (result.id, result.source, type(result))
    (block,) = pruned.content
    assert (block.call_id, block.is_error) == ("c1", True)
    assert block.content == (TextBlock(text="short"),)


def test_plain_blocks_rewrite_a_tool_results_inner_content() -> None:
    result = create_tool_result_message(call_id="c1", content="x")

    pruned = replace_content(result, [{"type": "text", "text": "a"}, TextBlock(text="b")])

    assert pruned.content[0].content == (TextBlock(text="a"), TextBlock(text="b"))


def test_new_content_is_validated() -> None:
    message = create_user_message(content="x", source={"kind": "user"})

    with pytest.raises(ValidationError, match="'nope'"):
        replace_content(message, [{"type": "nope"}])
