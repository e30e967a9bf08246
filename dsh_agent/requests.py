"""Model requests from the log: the one builder, and their reconstruction.

Every model-visible input is in the session log, so each request the loop sent can be
rebuilt from the log alone: the latest ``request/header`` plus the surface fold of the
log prefix up to the attempt's first chunk. :func:`build_request` is the only place that
turns a header and a history into a :class:`GenerateRequest`; the loop uses it for live
requests and the reconstruction uses it too, so a difference found by
:func:`diff_requests` points at the log (or the derivation), never at two builders.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dsh_agent.errors import RequestReconstructionError
from dsh_llm._messages import Message
from dsh_llm._request import GenerateRequest, ToolSchema
from dsh_llm._stream import AbortedFinish, ErrorFinish, FinishChunk, StreamChunk
from dsh_session._log_state import LogState
from dsh_session.events import (
    AssistantChunkEvent,
    InboxSplicedEvent,
    Replace,
    RequestHeader,
    SessionEvent,
)


def build_request(header: RequestHeader, messages: Sequence[Message]) -> GenerateRequest:
    """The request for ``messages`` under ``header``: the config fields go to the top
    level beside ``system`` and ``tools``. Config fields a :class:`GenerateRequest` does
    not model (kept from a richer harness's header) are not sent. Messages that already
    are dsh values are not validated again."""
    config = header.config
    return GenerateRequest(
        provider=config.provider,
        model=config.model,
        messages=messages,
        system=header.system,
        tools=header.tools,
        max_tokens=config.max_tokens,
        temperature=config.temperature,
        top_p=config.top_p,
        stop=config.stop,
        reasoning_effort=config.reasoning_effort,
        prompt_cache=config.prompt_cache,
    )


def _header_at(state: LogState, seq: int) -> RequestHeader:
    """The header in force in the log folded into ``state``, for an attempt at ``seq``."""
    if state.request_header is None:
        raise RequestReconstructionError(f"no request/header precedes event {seq}", seq=seq)
    return state.request_header


def _fold(state: LogState, event: SessionEvent, index: int) -> None:
    """Validate ``event`` as the ``index``-th of the log and apply it to ``state``."""
    if event.seq != index:
        raise RequestReconstructionError(
            f"the log must start at seq 0 with no gap: event {index} has seq {event.seq}",
            seq=event.seq,
        )
    state.advance(event)


@dataclass(frozen=True)
class ModelAttempt:
    """One model attempt of the log, kept cheaply: its header and a view of the derived
    history it was sent with (views of one log share their storage, so keeping every
    attempt of a long log costs memory linear in the log)."""

    seq: int
    """The seq of the attempt's first ``assistant/chunk``."""
    header: RequestHeader
    messages: Sequence[Message]
    rewritten: bool
    """A surface replace (e.g. compaction) came since the previous attempt. When
    False, the previous attempt's messages are a prefix of these."""

    def request(self) -> GenerateRequest:
        """The request itself (this copies the history: O(len(messages)))."""
        return build_request(self.header, self.messages)


def reconstruct_attempts(events: Sequence[SessionEvent]) -> list[ModelAttempt]:
    """Find, from the log alone, every model attempt that produced at least one
    ``assistant/chunk`` (failed attempts included), in log order, in one pass.

    An attempt is a run of chunks of one step: it begins with a chunk and ends at the
    next event the loop writes for the step (an inbox splice does not count: a
    delivery may write one at any moment). The one exception is a retry, which may
    stream right after a failed attempt: a chunk after a ``finish {error|aborted}``
    begins a new attempt. A chunk after a successful finish does not (the loop stops
    reading at the first finish; such chunks only come from older or foreign writers)
    and stays part of the attempt it follows. Its request is the latest
    ``request/header`` plus the surface fold of the log before its first chunk. The
    log is validated as it is folded (``SessionValidationError`` names a bad event)."""
    state = LogState(events)
    attempts: list[ModelAttempt] = []
    attempt_open = False
    rewritten = False
    for index, event in enumerate(events):
        if isinstance(event, AssistantChunkEvent):
            if not attempt_open:
                header = _header_at(state, event.seq)
                messages = state.surface.messages()
                attempts.append(ModelAttempt(event.seq, header, messages, rewritten))
                rewritten = False
            attempt_open = not _failed_finish(event.data.chunk)
        elif not isinstance(event, InboxSplicedEvent):
            attempt_open = False
        _fold(state, event, index)
        rewritten = rewritten or isinstance(event.surface_op, Replace)
    return attempts


def reconstruct_requests(events: Sequence[SessionEvent]) -> list[GenerateRequest]:
    """Rebuild, from the log alone, every request that produced at least one
    ``assistant/chunk``, in log order (see :func:`reconstruct_attempts` for what an
    attempt is). Each request holds its own copy of the history, so the result grows
    with turns x history; :func:`reconstruct_attempts` stays linear in the log."""
    return [attempt.request() for attempt in reconstruct_attempts(events)]


def _failed_finish(chunk: StreamChunk) -> bool:
    return isinstance(chunk, FinishChunk) and isinstance(chunk.reason, ErrorFinish | AbortedFinish)


def reconstruct_request(events: Sequence[SessionEvent]) -> GenerateRequest:
    """The request that an attempt starting right after ``events`` would send, rebuilt
    from the log alone: what the loop's check mode compares a live request with."""
    state = LogState(events)
    for index, event in enumerate(events):
        _fold(state, event, index)
    return build_request(_header_at(state, len(events)), state.surface.messages())


_SCALAR_FIELDS = (
    "provider",
    "model",
    "system",
    "max_tokens",
    "temperature",
    "top_p",
    "stop",
    "reasoning_effort",
    "prompt_cache",
)


def diff_requests(live: GenerateRequest, rebuilt: GenerateRequest) -> list[str]:
    """Name every difference between a live request and its reconstruction, one line
    per differing field, tool or message (empty when they match). Identical objects
    are not compared further, so a matching request costs one pass of ``is`` checks."""
    differences = [
        f"{name}: live {getattr(live, name)!r} != rebuilt {getattr(rebuilt, name)!r}"
        for name in _SCALAR_FIELDS
        if getattr(live, name) != getattr(rebuilt, name)
    ]
    differences.extend(_tool_differences(live.tools or (), rebuilt.tools or ()))
    if len(live.messages) != len(rebuilt.messages):
        differences.append(
            f"messages: live has {len(live.messages)}, rebuilt has {len(rebuilt.messages)}"
        )
    for index, (message, rebuilt_message) in enumerate(
        zip(live.messages, rebuilt.messages, strict=False)
    ):
        if message is not rebuilt_message:
            differences.extend(_message_differences(index, message, rebuilt_message))
    return differences


def _tool_differences(live: Sequence[ToolSchema], rebuilt: Sequence[ToolSchema]) -> list[str]:
    differences = []
    if len(live) != len(rebuilt):
        differences.append(f"tools: live has {len(live)}, rebuilt has {len(rebuilt)}")
    for index, (schema, rebuilt_schema) in enumerate(zip(live, rebuilt, strict=False)):
        if schema != rebuilt_schema:
            differences.append(f"tools[{index}] ({schema.name!r}): differs from the rebuilt tool")
    return differences


def _message_differences(index: int, live: Message, rebuilt: Message) -> list[str]:
    if live.id != rebuilt.id:
        return [f"messages[{index}]: live id {live.id!r} != rebuilt id {rebuilt.id!r}"]
    return [
        f"messages[{index}] (id {live.id!r}): {key} differs"
        for key in ("role", "content", "source")
        if getattr(live, key) != getattr(rebuilt, key)
    ]


__all__ = [
    "ModelAttempt",
    "build_request",
    "diff_requests",
    "reconstruct_attempts",
    "reconstruct_request",
    "reconstruct_requests",
]
