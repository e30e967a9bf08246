"""Properties over generated messages: the wire round trip is lossless and keeps the
id, and a created value never changes whatever happens to the caller's input."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_llm import HistoryAdapter, MessageAdapter, create_message, freeze_message
from dsh_llm._sources import KNOWN_SOURCE_KINDS, UnknownSource

_TEXT = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=20)
_KEY = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=6).map(
    lambda key: f"x{key}"
)
_CALL_ID = st.text(alphabet="abcdefghij0123456789-_", min_size=1, max_size=12)
_MESSAGE_ID = st.text(
    alphabet=st.characters(exclude_categories=["Cs", "Cc"]), min_size=1, max_size=40
)

_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_TEXT, children, max_size=4),
    max_leaves=12,
)


_LEAF_BLOCK = st.one_of(
    st.builds(lambda text: {"type": "text", "text": text}, _TEXT),
    st.builds(lambda text: {"type": "reasoning", "text": text}, _TEXT),
    st.builds(
        lambda url, width: (
            {"type": "image", "mediaType": "image/png", "url": url}
            | ({} if width is None else {"width": width})
        ),
        _TEXT,
        st.none() | st.integers(min_value=1, max_value=4096),
    ),
    st.builds(
        lambda call_id, name, arguments: {
            "type": "tool-call",
            "id": call_id,
            "name": name,
            "arguments": arguments,
        },
        _CALL_ID,
        _TEXT,
        _TEXT,
    ),
)


def _with_tool_results(
    inner: st.SearchStrategy[dict[str, Any]],
) -> st.SearchStrategy[dict[str, Any]]:
    tool_result = st.builds(
        lambda call_id, content, is_error: {
            "type": "tool-result",
            "toolCallId": call_id,
            "content": content,
            "isError": is_error,
        },
        _CALL_ID,
        st.lists(inner, max_size=3),
        st.booleans(),
    )
    return _LEAF_BLOCK | tool_result


_BLOCK = st.recursive(_LEAF_BLOCK, _with_tool_results, max_leaves=8)
_CONTENT = st.lists(_BLOCK, max_size=5)
_EXTRA = st.dictionaries(_KEY, _JSON, max_size=3)

_USER_SOURCE = st.one_of(
    st.builds(lambda extra: {"kind": "user", **extra}, _EXTRA),
    st.builds(
        lambda plugin, summary, extra: {
            "kind": "plugin",
            "plugin": plugin,
            "form": {"kind": "notice", "summary": summary},
            **extra,
        },
        _TEXT.filter(bool),
        st.text(max_size=120, alphabet="abc xyz"),
        _EXTRA,
    ),
    st.builds(
        lambda kind, extra: {"kind": kind, **extra},
        _KEY.map(lambda key: f"future-{key}"),
        _EXTRA,
    ),
)
_MODEL_SOURCE = st.builds(
    lambda replay: (
        {"kind": "model", "provider": "p", "model": "m"}
        | ({} if replay is None else {"replayState": replay})
    ),
    st.none() | _JSON,
)


@st.composite
def _wire_messages(draw: st.DrawFn) -> dict[str, Any]:
    message_id = draw(_MESSAGE_ID)
    role = draw(st.sampled_from(["user", "assistant", "system", "tool-result"]))
    if role == "tool-result":
        call_id = draw(_CALL_ID)
        block = {
            "type": "tool-result",
            "toolCallId": call_id,
            "content": draw(_CONTENT),
            "isError": draw(st.booleans()),
        }
        source = {"kind": "tool", "callId": call_id}
        return {"id": message_id, "role": "user", "content": [block], "source": source}
    source = draw(_MODEL_SOURCE if role == "assistant" else _USER_SOURCE)
    return {"id": message_id, "role": role, "content": draw(_CONTENT), "source": source}


@given(_wire_messages())
def test_json_round_trip_is_lossless_and_keeps_the_id(wire: dict[str, Any]) -> None:
    message = freeze_message(wire)

    assert message.model_dump(mode="json") == wire
    restored = MessageAdapter.validate_json(message.model_dump_json())
    assert restored == message
    assert restored.id == wire["id"]
    assert type(restored) is type(message)


@given(st.lists(_wire_messages(), max_size=6))
def test_history_round_trip_is_lossless(wires: list[dict[str, Any]]) -> None:
    history = tuple(freeze_message(wire) for wire in wires)

    assert HistoryAdapter.validate_json(HistoryAdapter.dump_json(history)) == history


def _scramble(value: Any) -> None:
    """Mutate every mutable container of a plain JSON value in place."""
    if isinstance(value, dict):
        for item in value.values():
            _scramble(item)
        value["xmutated"] = True
    elif isinstance(value, list):
        for item in value:
            _scramble(item)
        value.append("mutated")


@settings(max_examples=50)
@given(_wire_messages())
def test_created_value_never_changes_when_the_input_does(wire: dict[str, Any]) -> None:
    content, source = copy.deepcopy(wire["content"]), copy.deepcopy(wire["source"])
    if source["kind"] not in KNOWN_SOURCE_KINDS:  # creation takes an unknown kind as a model
        source = UnknownSource.model_validate(source)
    message = create_message(role=wire["role"], content=content, source=source)
    snapshot = message.model_dump(mode="json")

    _scramble(content)
    _scramble(source)

    assert snapshot == wire | {"id": message.id}
    assert message.model_dump(mode="json") == snapshot
    assert freeze_message(message) is message


@settings(max_examples=50)
@given(_wire_messages())
def test_imported_value_never_changes_when_the_input_does(wire: dict[str, Any]) -> None:
    message = freeze_message(wire)
    snapshot = copy.deepcopy(wire)

    _scramble(wire)

    assert message.model_dump(mode="json") == snapshot
    assert freeze_message(message) is message
