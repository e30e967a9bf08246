"""What an owned run takes, written once for :func:`~dsh_agent.run`,
:func:`~dsh_agent.run_sync` and :meth:`SyncAgent.run <dsh_agent.SyncAgent.run>`: the
prompt type and the options. Each entry point declares ``output_type`` itself (its
overloads on it give ``RunResult[Model]``) and takes the rest as
``**options: Unpack[RunOptions]`` (``OutputRunOptions`` with an ``output_type``), so a new
option is one key here and one read in the run itself."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias, TypedDict

from dsh_agent._model_settings import ModelSettings
from dsh_llm._content import ContentBlock
from dsh_llm._create import create_user_message
from dsh_llm._messages import MESSAGE_TYPES, UserMessage
from dsh_llm.errors import InputError

__all__ = ["OutputRunOptions", "RunOptions", "RunPrompt"]

RunPrompt: TypeAlias = UserMessage | str | Sequence[ContentBlock | Mapping[str, Any]]
"""What a run sends as its followup: a created :class:`~dsh_llm.UserMessage`, or the
content of one (a string, or a sequence of content blocks or block mappings), from
which the run creates the message with the user as its source."""


class RunOptions(TypedDict, total=False):
    """The keyword options of every run."""

    settings: ModelSettings | None
    """Override the loop's model settings for this run's requests (default: none)."""
    instructions: str | None
    """Added to the system prompt of this run's requests, after the loop's system
    prompt and dynamic instructions (default: none)."""
    raise_on_error: bool
    """Raise :class:`~dsh_agent.TurnFailed` when the interval's last turn ended
    ``error`` (default True); False returns the failure in the result."""


class OutputRunOptions(RunOptions, total=False):
    """The options of a run that asks for an ``output_type``."""

    output_corrections: int
    """How many failed answers (an invalid ``final_result`` call, or none) the model may
    correct before :class:`~dsh_agent.OutputValidationError` is raised (default 2)."""


def user_prompt(prompt: RunPrompt, caller: str) -> UserMessage:
    """The message a run delivers for ``prompt``: the given ``UserMessage`` itself, or
    one created from text or content blocks with ``create_user_message`` (a producer,
    so a new id). Anything else raises :class:`~dsh_llm.errors.InputError` naming its
    type, before anything is sent or written. ``caller`` names the entry point."""
    if isinstance(prompt, UserMessage):
        return prompt
    if isinstance(prompt, str) or (
        isinstance(prompt, Sequence)
        and not isinstance(prompt, (bytes, bytearray, memoryview))
        and not isinstance(prompt, MESSAGE_TYPES)
    ):
        return create_user_message(prompt)
    raise InputError(
        f"{caller}() takes a prompt as a str, a sequence of content blocks or a "
        f"UserMessage, not {type(prompt).__name__}",
        field="message",
    )


def unknown_options(options: OutputRunOptions) -> list[str]:
    """The keywords in ``options`` no run takes (type checkers catch them; this is
    for callers that are not checked)."""
    known = OutputRunOptions.__required_keys__ | OutputRunOptions.__optional_keys__
    return sorted(set(options) - known)
