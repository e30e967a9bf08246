"""Message suite: creating a message, a 1,000-message JSON round trip, and keeping
50,000 messages alive — dsh side by side with a hand-written frozen Pydantic model of
the same wire shape (the floor), langchain-core and pydantic-ai."""

from __future__ import annotations

import gc
import json
import uuid
from collections.abc import Callable
from typing import Annotated, Any, Literal

import uuid_utils
from _harness import CPU_CLOCK, Case, Options, Target, bytes_held, compare
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from pydantic.alias_generators import to_camel
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from dsh_llm import (
    HistoryAdapter,
    Message,
    create_assistant_message,
    create_tool_result_message,
    create_user_message,
)

SUITE = "messages"
HISTORY_LENGTH = 1_000
KEPT_MESSAGES = 50_000

# --- the floor: plain frozen Pydantic models of the same wire shape -------------------


class _Floor(BaseModel):
    model_config = ConfigDict(
        frozen=True, alias_generator=to_camel, validate_by_name=True, serialize_by_alias=True
    )


class FloorText(_Floor):
    type: Literal["text"] = "text"
    text: str


class FloorToolCall(_Floor):
    type: Literal["tool-call"] = "tool-call"
    id: str
    name: str
    arguments: str


class FloorToolResult(_Floor):
    type: Literal["tool-result"] = "tool-result"
    tool_call_id: str
    content: tuple[FloorText, ...]
    is_error: bool = False


FloorBlock = Annotated[FloorText | FloorToolCall | FloorToolResult, Field(discriminator="type")]


class FloorUserSource(_Floor):
    kind: Literal["user"] = "user"


class FloorToolSource(_Floor):
    kind: Literal["tool"] = "tool"
    call_id: str


class FloorModelSource(_Floor):
    kind: Literal["model"] = "model"
    provider: str
    model: str


class FloorUserMessage(_Floor):
    id: str
    role: Literal["user"]
    content: tuple[FloorBlock, ...]
    source: Annotated[FloorUserSource | FloorToolSource, Field(discriminator="kind")]


class FloorAssistantMessage(_Floor):
    id: str
    role: Literal["assistant"]
    content: tuple[FloorBlock, ...]
    source: FloorModelSource


FloorMessage = Annotated[FloorUserMessage | FloorAssistantMessage, Field(discriminator="role")]
FloorHistoryAdapter: TypeAdapter[tuple[FloorMessage, ...]] = TypeAdapter(tuple[FloorMessage, ...])
LangchainHistoryAdapter: TypeAdapter[list[AnyMessage]] = TypeAdapter(list[AnyMessage])


def _timed(
    subjects: dict[str, Callable[[], object]], *, number: int, repeats: int
) -> dict[str, float]:
    """The suite's timings: CPU time, as all of it is CPU-bound work."""
    return compare(subjects, number=number, repeats=repeats, clock=CPU_CLOCK)


def _uuid7() -> str:
    return str(uuid_utils.uuid7())


# --- one user message with a text block and an id ------------------------------------


def _create_dsh() -> object:
    return create_user_message(content="hello", source={"kind": "user"})


def _create_floor() -> object:
    return FloorUserMessage(
        id=_uuid7(), role="user", content=(FloorText(text="hello"),), source=FloorUserSource()
    )


def _create_langchain() -> object:
    return HumanMessage(content="hello", id=str(uuid.uuid4()))


def _create_pydantic_ai() -> object:
    return ModelRequest(parts=[UserPromptPart(content="hello")])


CREATORS: dict[str, Callable[[], object]] = {
    "dsh": _create_dsh,
    "floor (frozen pydantic)": _create_floor,
    "langchain-core": _create_langchain,
    "pydantic-ai": _create_pydantic_ai,
}

# --- a 1,000-message history: user, assistant + tool call, tool result, assistant -----


def _dsh_history(length: int) -> tuple[Message, ...]:
    history: list[Message] = []
    for turn in range(length // 4):
        call_id = f"call-{turn}"
        history += (
            create_user_message(content=f"question {turn}", source={"kind": "user"}),
            create_assistant_message(
                content=[
                    {"type": "text", "text": "let me look that up"},
                    {"type": "tool-call", "id": call_id, "name": "search", "arguments": '{"q": 1}'},
                ],
                source={"provider": "deepseek", "model": "deepseek-chat"},
            ),
            create_tool_result_message(call_id=call_id, content=f"result {turn}"),
            create_assistant_message(
                content=f"answer {turn}", source={"provider": "deepseek", "model": "deepseek-chat"}
            ),
        )
    return tuple(history)


def _floor_history(dsh: tuple[Message, ...]) -> tuple[Any, ...]:
    return FloorHistoryAdapter.validate_json(HistoryAdapter.dump_json(dsh))


def _langchain_history(length: int) -> list[AnyMessage]:
    history: list[AnyMessage] = []
    for turn in range(length // 4):
        call_id = f"call-{turn}"
        history += (
            HumanMessage(content=f"question {turn}", id=str(uuid.uuid4())),
            AIMessage(
                content="let me look that up",
                tool_calls=[{"name": "search", "args": {"q": 1}, "id": call_id}],
                id=str(uuid.uuid4()),
            ),
            ToolMessage(content=f"result {turn}", tool_call_id=call_id, id=str(uuid.uuid4())),
            AIMessage(content=f"answer {turn}", id=str(uuid.uuid4())),
        )
    return history


def _pydantic_ai_history(length: int) -> list[ModelMessage]:
    history: list[ModelMessage] = []
    for turn in range(length // 4):
        call_id = f"call-{turn}"
        history += (
            ModelRequest(parts=[UserPromptPart(content=f"question {turn}")]),
            ModelResponse(
                parts=[
                    TextPart(content="let me look that up"),
                    ToolCallPart(tool_name="search", args='{"q": 1}', tool_call_id=call_id),
                ]
            ),
            ModelRequest(
                parts=[
                    ToolReturnPart(
                        tool_name="search", content=f"result {turn}", tool_call_id=call_id
                    )
                ]
            ),
            ModelResponse(parts=[TextPart(content=f"answer {turn}")]),
        )
    return history


def _round_trip_cases(options: Options) -> list[Case]:
    dsh = _dsh_history(HISTORY_LENGTH)
    floor = _floor_history(dsh)
    langchain = _langchain_history(HISTORY_LENGTH)
    pydantic_ai = _pydantic_ai_history(HISTORY_LENGTH)
    assert HistoryAdapter.validate_json(HistoryAdapter.dump_json(dsh)) == dsh
    assert json.loads(FloorHistoryAdapter.dump_json(floor)) == json.loads(
        HistoryAdapter.dump_json(dsh)
    ), "the floor must have exactly the dsh wire shape"

    encoded = {
        "dsh": HistoryAdapter.dump_json(dsh),
        "floor (frozen pydantic)": FloorHistoryAdapter.dump_json(floor),
        "langchain-core": LangchainHistoryAdapter.dump_json(langchain),
        "pydantic-ai": ModelMessagesTypeAdapter.dump_json(pydantic_ai),
    }
    dumpers: dict[str, Callable[[], object]] = {
        "dsh": lambda: HistoryAdapter.dump_json(dsh),
        "floor (frozen pydantic)": lambda: FloorHistoryAdapter.dump_json(floor),
        "langchain-core": lambda: LangchainHistoryAdapter.dump_json(langchain),
        "pydantic-ai": lambda: ModelMessagesTypeAdapter.dump_json(pydantic_ai),
    }
    loaders: dict[str, Callable[[], object]] = {
        "dsh": lambda: HistoryAdapter.validate_json(encoded["dsh"]),
        "floor (frozen pydantic)": lambda: FloorHistoryAdapter.validate_json(
            encoded["floor (frozen pydantic)"]
        ),
        "langchain-core": lambda: LangchainHistoryAdapter.validate_json(encoded["langchain-core"]),
        "pydantic-ai": lambda: ModelMessagesTypeAdapter.validate_json(encoded["pydantic-ai"]),
    }
    repeats = options.repeats(20)
    dump = _timed(dumpers, number=3, repeats=repeats)
    load = _timed(loaders, number=3, repeats=repeats)
    both = {name: dump[name] + load[name] for name in dump}
    history = f"{HISTORY_LENGTH} messages"
    return [
        Case(SUITE, f"dump a {history} history to JSON", "s", dump, clock="cpu"),
        Case(SUITE, f"load a {history} history from JSON", "s", load, clock="cpu"),
        Case(
            SUITE,
            f"JSON round trip of a {history} history",
            "s",
            both,
            targets=(Target("floor (frozen pydantic)", 1.25), Target("pydantic-ai", 1 / 3)),
            notes="dump + load",
            clock="cpu",
        ),
    ]


def _creation_case(options: Options) -> Case:
    values = _timed(CREATORS, number=2_000, repeats=options.repeats(40))
    return Case(
        SUITE,
        "create a one-text-block user message with its id",
        "s",
        values,
        targets=(Target("langchain-core", 1.0), Target("floor (frozen pydantic)", 1.3)),
        notes="pydantic-ai's ModelRequest has no id",
        clock="cpu",
    )


def _keep_cases(options: Options) -> list[Case]:
    def keep(create: Callable[[], object]) -> Callable[[], list[object]]:
        return lambda: [create() for _ in range(KEPT_MESSAGES)]

    times = _timed(
        {name: keep(create) for name, create in CREATORS.items()},
        number=1,
        repeats=options.repeats(8),
    )
    sizes, tracked = {}, {}
    for name, create in CREATORS.items():
        held, count = bytes_held(keep(create))
        sizes[name] = held / count
        tracked[name] = _tracked_per_item(keep(create))
    kept = f"{KEPT_MESSAGES:,} messages"
    return [
        Case(SUITE, f"create and keep {kept} (gc on)", "s", times, clock="cpu"),
        Case(
            SUITE,
            "bytes held per kept message",
            "bytes",
            sizes,
            targets=(Target("langchain-core", 1.0),),
            notes="tracemalloc",
        ),
        Case(
            SUITE,
            "tracked objects per kept message",
            "objects",
            tracked,
            notes="what the cyclic collector walks: gc.get_objects() growth",
        ),
    ]


def _tracked_per_item(build: Callable[[], list[object]]) -> float:
    """How many more objects the cyclic collector tracks per item while the list
    ``build`` returns is alive (each one is walked by every full collection)."""
    gc.collect()
    before = len(gc.get_objects())
    items = build()
    gc.collect()
    tracked = len(gc.get_objects()) - before - 1  # the list itself
    return tracked / len(items)


def run(options: Options) -> list[Case]:
    """The message suite's cases."""
    return [_creation_case(options), *_round_trip_cases(options), *_keep_cases(options)]
