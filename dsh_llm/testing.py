"""Model adapters for tests and benchmarks: no network, realistic chunk streams.

- :class:`ScriptedAdapter` plays back one scripted response per request, in order.
- :class:`FunctionAdapter` asks a function (sync or async) for each response.

A response is one of:

- a ``str`` — the model says this text;
- a :class:`Reply` (build it with :func:`reply`) — text, reasoning and tool calls;
- an :class:`~dsh_llm._stream.LlmFailure` — the call fails with ``finish {error}``;
- an ``Exception`` — raised when the response is due (it becomes ``finish {error}``);
- a sequence of stream chunks (or chunk mappings), played back exactly as given; an
  ``Exception`` in the sequence is raised at that point (a stream failing midway).

Both adapters record every request in ``.requests``, can sleep ``delay`` seconds
before each chunk (so a test can cancel mid-stream), and turn any exception — from
the function, the script or the conversion — into a terminal ``finish {error}``
chunk, as a real adapter must. Cancellation is never converted: it propagates.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import math
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from dsh_llm._content import ReasoningBlock, TextBlock, ToolCallBlock
from dsh_llm._failure import LlmFailure
from dsh_llm._frozen_json import FrozenJson, freeze_json
from dsh_llm._request import GenerateRequest
from dsh_llm._stream import (
    BlockEndChunk,
    BlockStartChunk,
    ErrorFinish,
    FinishChunk,
    FinishReason,
    ReasoningDeltaChunk,
    StopFinish,
    StreamChunk,
    StreamChunkAdapter,
    TextDeltaChunk,
    TokenUsage,
    ToolCallDeltaChunk,
    ToolCallsFinish,
    UsageChunk,
)
from dsh_llm.errors import InputError

ToolCallInput: TypeAlias = ToolCallBlock | Mapping[str, Any]
"""A tool call in a :func:`reply`: a block, or ``{"name", "arguments"?, "call_id"?}`` where
``arguments`` is a JSON object or its raw text and a missing id is assigned as
``call-<n>`` (numbered per adapter)."""

_TOOL_CALL_KEYS = frozenset({"name", "arguments", "call_id"})

logger = logging.getLogger("dsh_llm.testing")


def _checked_call(index: int, call: ToolCallInput) -> ToolCallInput:
    """``call`` if it is a block or a mapping with a ``name`` and only known keys;
    a misspelled key would otherwise surface much later as a missing name."""
    if isinstance(call, ToolCallBlock):
        return call
    where = f"tool_calls[{index}]"
    unknown = sorted(str(key) for key in call if key not in _TOOL_CALL_KEYS)
    if unknown:
        raise InputError(
            f"{where} has unknown key {unknown[0]!r} (a tool call takes "
            f"{', '.join(sorted(_TOOL_CALL_KEYS))})",
            field=f"{where}.{unknown[0]}",
        )
    if not isinstance(call.get("name"), str) or not call["name"]:
        raise InputError(f"{where} needs a non-empty 'name'", field=f"{where}.name")
    return call


@dataclass(frozen=True, kw_only=True)
class Reply:
    """A model response described by what it says rather than by its chunks."""

    text: str | None = None
    reasoning: str | None = None
    tool_calls: tuple[ToolCallInput, ...] = ()
    usage: TokenUsage | None = None
    """Reported usage; by default a rough estimate (4 characters per output token)."""
    finish: FinishReason | None = None
    """By default ``tool-calls`` when there are calls, else ``stop``."""
    replay_state: FrozenJson | None = None


def reply(
    *,
    text: str | None = None,
    reasoning: str | None = None,
    tool_calls: Iterable[ToolCallInput] = (),
    usage: TokenUsage | None = None,
    finish: FinishReason | None = None,
    replay_state: object = None,
) -> Reply:
    """Describe a response: reasoning first, then text, then the tool calls. A tool
    call mapping with an unknown key or no name raises :class:`~dsh_llm.errors.InputError`."""
    return Reply(
        text=text,
        reasoning=reasoning,
        tool_calls=tuple(_checked_call(i, call) for i, call in enumerate(tool_calls)),
        usage=usage,
        finish=finish,
        replay_state=None if replay_state is None else freeze_json(replay_state),
    )


ScriptedChunk: TypeAlias = StreamChunk | Mapping[str, Any] | Exception
"""One element of a raw chunk response: a chunk, its wire mapping, or an error to raise."""

Response: TypeAlias = str | Reply | LlmFailure | Exception | Sequence[ScriptedChunk]
"""Anything an adapter of this module can play back for one request."""

ModelFunction: TypeAlias = Callable[[GenerateRequest], Response | Awaitable[Response]]
"""What :class:`FunctionAdapter` calls for each request."""

_WORD = re.compile(r"\s*\S+\s*|\s+")


class _PlaybackAdapter:
    """Records requests, obtains a response, and streams it chunk by chunk."""

    def __init__(self, *, delay: float = 0.0) -> None:
        self.delay = delay
        """Seconds to sleep before each chunk (0: never yield control)."""
        self.requests: list[GenerateRequest] = []
        """Every request received, in order."""
        self._calls_minted = 0

    async def _respond(self, request: GenerateRequest) -> Response:
        raise NotImplementedError

    async def stream(self, request: GenerateRequest) -> AsyncIterator[StreamChunk]:
        """Stream the response for ``request``; failures end in ``finish {error}``."""
        self.requests.append(request)
        try:
            response = await self._respond(request)
            for item in self._chunks(response):
                if self.delay > 0:
                    await asyncio.sleep(self.delay)
                if isinstance(item, Exception):
                    raise item
                yield item
        except Exception as error:  # an adapter's failure is a terminal finish, not a raise
            yield FinishChunk(reason=ErrorFinish(failure=LlmFailure.from_exception(error)))

    def _chunks(self, response: Response) -> Iterable[StreamChunk | Exception]:
        if isinstance(response, str):
            return self._reply_chunks(Reply(text=response))
        if isinstance(response, Reply):
            return self._reply_chunks(response)
        if isinstance(response, LlmFailure):
            return (FinishChunk(reason=ErrorFinish(failure=response)),)
        if isinstance(response, Exception):
            raise response
        return (
            item if isinstance(item, Exception) else StreamChunkAdapter.validate_python(item)
            for item in response
        )

    def _reply_chunks(self, response: Reply) -> list[StreamChunk]:
        chunks: list[StreamChunk] = []
        index = 0
        if response.reasoning is not None:
            chunks += _text_block_chunks(index, ReasoningBlock(text=response.reasoning))
            index += 1
        if response.text is not None:
            chunks += _text_block_chunks(index, TextBlock(text=response.text))
            index += 1
        calls = [self._tool_call(call) for call in response.tool_calls]
        for call_index, call in enumerate(calls, start=index):
            chunks += (
                BlockStartChunk(index=call_index, block_type="tool-call"),
                ToolCallDeltaChunk(
                    index=call_index,
                    call_id=call.call_id,
                    name=call.name,
                    arguments_delta=call.arguments,
                ),
                BlockEndChunk(index=call_index, block=call),
            )
        usage = response.usage or TokenUsage(
            input_tokens=0, output_tokens=_estimate_tokens(response, calls)
        )
        finish = response.finish or (ToolCallsFinish() if calls else StopFinish())
        chunks.append(UsageChunk(usage=usage))
        chunks.append(FinishChunk(reason=finish, replay_state=response.replay_state))
        return chunks

    def _tool_call(self, call: ToolCallInput) -> ToolCallBlock:
        if isinstance(call, ToolCallBlock):
            return call
        arguments = call.get("arguments", {})
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        call_id = call.get("call_id")
        if call_id is None:
            self._calls_minted += 1
            call_id = f"call-{self._calls_minted}"
        return ToolCallBlock(call_id=call_id, name=call["name"], arguments=arguments)


def _text_block_chunks(index: int, block: TextBlock | ReasoningBlock) -> list[StreamChunk]:
    """block-start, one delta per word, block-end: what a streaming provider sends."""
    delta = TextDeltaChunk if isinstance(block, TextBlock) else ReasoningDeltaChunk
    return [
        BlockStartChunk(index=index, block_type=block.type),
        *(delta(index=index, text=word) for word in _WORD.findall(block.text)),
        BlockEndChunk(index=index, block=block),
    ]


def _estimate_tokens(response: Reply, calls: Sequence[ToolCallBlock]) -> int:
    characters = len(response.text or "") + len(response.reasoning or "")
    characters += sum(len(call.name) + len(call.arguments) for call in calls)
    return math.ceil(characters / 4)


class ScriptedAdapter(_PlaybackAdapter):
    """Plays back ``responses`` in order, one per request. A request beyond the
    script ends in ``finish {error}`` naming the request number."""

    def __init__(self, responses: Iterable[Response], *, delay: float = 0.0) -> None:
        super().__init__(delay=delay)
        self._script = list(responses)

    @property
    def remaining(self) -> int:
        """How many scripted responses have not been played yet."""
        return len(self._script) - len(self.requests)

    async def _respond(self, request: GenerateRequest) -> Response:
        number = len(self.requests)
        if number > len(self._script):
            raise LookupError(
                f"request #{number} has no scripted response (the script holds {len(self._script)})"
            )
        return self._script[number - 1]


class FunctionAdapter(_PlaybackAdapter):
    """Asks ``fn(request)`` — a plain or async function — for each response."""

    def __init__(self, fn: ModelFunction, *, delay: float = 0.0) -> None:
        super().__init__(delay=delay)
        self._fn = fn

    async def _respond(self, request: GenerateRequest) -> Response:
        try:
            response = self._fn(request)
            if inspect.isawaitable(response):
                return await response
            return response
        except Exception:
            # It still becomes ``finish {error}``; the traceback is logged, as the real
            # adapters log what they could not handle (a returned exception is scripted).
            logger.warning("the FunctionAdapter's function raised", exc_info=True)
            raise


__all__ = [
    "FunctionAdapter",
    "ModelFunction",
    "Reply",
    "Response",
    "ScriptedAdapter",
    "ScriptedChunk",
    "ToolCallInput",
    "reply",
]
