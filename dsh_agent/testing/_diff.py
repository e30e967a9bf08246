"""How a request today's code builds differs from the recorded one.

Messages are matched by what the model sees (role, content, source), not by id: the
assistant messages and tool results of a replay are new values with new ids, while the
prompts keep theirs. Only a checkpoint's ``compactionId`` and ``shadowedMessageIds``
are left out of the match, since they are minted anew for the same summary. The
differences are named as a reader would: messages added, removed or rewritten (with
both ids), and header fields (system prompt, tools, model settings).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from dsh_llm._messages import Message
from dsh_llm._request import GenerateRequest, ToolSchema
from dsh_session._search.text import message_text

_HEADER_FIELDS = (
    "provider",
    "model",
    "system",
    "max_tokens",
    "temperature",
    "top_p",
    "stop",
    "reasoning_effort",
)
_MINTED = ("compactionId", "shadowedMessageIds")
"""Source fields a replay mints anew for the same checkpoint."""
_SHOWN = 160
"""Characters of a differing value shown in a difference."""
_PREVIEW = 60
"""Characters of an added or removed message's text shown."""
_LISTED = 12
"""Message changes a difference's text lists (all are in ``messages``)."""


@dataclass(frozen=True, slots=True)
class MessageChange:
    """One message that differs between the recorded and the replayed request."""

    kind: Literal["added", "removed", "rewritten"]
    position: int
    """Its index in the replayed request (``added``, ``rewritten``) or the recorded
    one (``removed``)."""
    recorded_id: str | None
    live_id: str | None
    role: str
    detail: str = ""
    """``rewritten``: where the recorded and the live message part; else the start of
    the message's text."""

    def __str__(self) -> str:
        if self.kind == "added":
            return f"message added at {self.position}: {self.live_id} ({self.role}) {self.detail}"
        if self.kind == "removed":
            return (
                f"message removed at {self.position}: {self.recorded_id} ({self.role}) "
                f"{self.detail}"
            )
        return (
            f"message rewritten at {self.position}: recorded {self.recorded_id} -> "
            f"live {self.live_id} ({self.role}): {self.detail}"
        )


@dataclass(frozen=True, slots=True)
class RequestDifference:
    """The first replayed request that is not the recorded one."""

    request: int
    """The request's number, from 1, in the order the model received them."""
    recorded_seq: int | None
    """The seq of the recorded attempt's first chunk (``None``: not recorded at all)."""
    header: tuple[str, ...] = ()
    """Header fields that differ, one line each."""
    messages: tuple[MessageChange, ...] = ()
    problem: str = ""
    """A difference that is not one of the above (e.g. a request the recording lacks)."""

    @property
    def message_ids(self) -> tuple[str, ...]:
        """The ids of the messages that differ (recorded and live)."""
        ids = []
        for change in self.messages:
            ids += [i for i in (change.recorded_id, change.live_id) if i is not None]
        return tuple(ids)

    def __str__(self) -> str:
        where = "" if self.recorded_seq is None else f" (recorded at seq {self.recorded_seq})"
        lines = [f"request {self.request}{where} differs from the recording:"]
        if self.problem:
            lines.append(f"  {self.problem}")
        lines += [f"  {line}" for line in self.header]
        lines += [f"  {change}" for change in self.messages[:_LISTED]]
        if len(self.messages) > _LISTED:
            lines.append(f"  ... and {len(self.messages) - _LISTED} more message change(s)")
        return "\n".join(lines)


class RequestComparer:
    """Compares requests in order, keeping the fingerprints of the previous request's
    messages on each side: when a side's history only grew since (no surface replace
    came between), only the new messages are fingerprinted, so a long replay costs
    linear work per request in what is new, not in the whole history."""

    def __init__(self) -> None:
        self._recorded: list[str] = []
        self._live: list[str] = []

    def compare(
        self,
        number: int,
        recorded_seq: int,
        recorded: GenerateRequest,
        live: GenerateRequest,
        *,
        recorded_grew: bool,
        live_grew: bool,
    ) -> RequestDifference | None:
        """The difference, or ``None`` when the model would see the same request.
        ``*_grew``: that side's messages extend the previous request's (no replace)."""
        header = [*_field_lines(recorded, live), *_tool_lines(recorded.tools, live.tools)]
        self._recorded = _fingerprints(self._recorded, recorded.messages, grew=recorded_grew)
        self._live = _fingerprints(self._live, live.messages, grew=live_grew)
        messages = _message_changes(recorded.messages, live.messages, self._recorded, self._live)
        if not header and not messages:
            return None
        return RequestDifference(number, recorded_seq, tuple(header), tuple(messages))


def _fingerprints(previous: list[str], messages: Sequence[Message], *, grew: bool) -> list[str]:
    if grew and len(messages) >= len(previous):
        previous.extend(_fingerprint(m) for m in messages[len(previous) :])
        return previous
    return [_fingerprint(m) for m in messages]


def _fingerprint(message: Message) -> str:
    """What the model sees of a message: everything but its id and minted fields."""
    data = message.model_dump(mode="json", by_alias=True, exclude_none=True)
    data.pop("id")
    source = data.get("source")
    if isinstance(source, dict):
        for name in _MINTED:
            source.pop(name, None)
    return json.dumps(data, sort_keys=True, ensure_ascii=False)


def _message_changes(
    recorded: Sequence[Message], live: Sequence[Message], old: list[str], new: list[str]
) -> list[MessageChange]:
    if old == new:
        return []
    changes: list[MessageChange] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        paired = 0
        while (
            tag == "replace"
            and paired < min(i2 - i1, j2 - j1)
            and _same_kind(recorded[i1 + paired], live[j1 + paired])
        ):
            paired += 1
        for k in range(paired):
            before, after = recorded[i1 + k], live[j1 + k]
            changes.append(
                MessageChange(
                    "rewritten",
                    j1 + k,
                    before.id,
                    after.id,
                    after.role,
                    _content_detail(old[i1 + k], new[j1 + k]),
                )
            )
        for i in range(i1 + paired, i2):
            message = recorded[i]
            changes.append(
                MessageChange("removed", i, message.id, None, message.role, _preview(message))
            )
        for j in range(j1 + paired, j2):
            message = live[j]
            changes.append(
                MessageChange("added", j, None, message.id, message.role, _preview(message))
            )
    return changes


def _same_kind(recorded: Message, live: Message) -> bool:
    """Whether a recorded and a live message at one place read as one message changed
    (same role and source kind), rather than one removed and another added."""
    return recorded.role == live.role and recorded.source.kind == live.source.kind


def _preview(message: Message) -> str:
    text = " ".join(message_text(message).split())
    return repr(text if len(text) <= _PREVIEW else text[:_PREVIEW] + "…")


def _field_lines(recorded: GenerateRequest, live: GenerateRequest) -> list[str]:
    return [
        f"{name}: recorded {_short(getattr(recorded, name))} != live {_short(getattr(live, name))}"
        for name in _HEADER_FIELDS
        if getattr(recorded, name) != getattr(live, name)
    ]


def _tool_lines(
    recorded: Sequence[ToolSchema] | None, live: Sequence[ToolSchema] | None
) -> list[str]:
    old = {tool.name: tool for tool in recorded or ()}
    new = {tool.name: tool for tool in live or ()}
    lines = [f"tool removed: {name!r}" for name in old if name not in new]
    lines += [f"tool added: {name!r}" for name in new if name not in old]
    for name in old.keys() & new.keys():
        before, after = old[name], new[name]
        if before.description != after.description:
            lines.append(
                f"tool {name!r}: description recorded {_short(before.description)} "
                f"!= live {_short(after.description)}"
            )
        if before.parameters != after.parameters:
            lines.append(
                f"tool {name!r}: parameters recorded {_short(_json(before.parameters))} "
                f"!= live {_short(_json(after.parameters))}"
            )
    if not lines and [t.name for t in recorded or ()] != [t.name for t in live or ()]:
        lines.append("tools: the same tools in another order")
    return sorted(lines)


def _json(value: object) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _content_detail(old: str, new: str) -> str:
    """Where two fingerprints part, with some context."""
    start = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), 0)
    low = max(0, start - 40)
    return f"recorded {_short(old[low:])} != live {_short(new[low:])}"


def _short(value: object) -> str:
    text = value if isinstance(value, str) else repr(value)
    shown = text if len(text) <= _SHOWN else text[:_SHOWN] + "…"
    return repr(shown) if isinstance(value, str) else shown


__all__ = [
    "MessageChange",
    "RequestComparer",
    "RequestDifference",
]
