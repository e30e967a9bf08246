"""``/regenerate`` and ``/edit`` in ``dsh chat``, in both chat modes.

``/regenerate`` asks for a new answer to the last prompt. ``/edit TEXT`` changes the
last prompt, ``/edit @ID TEXT`` the prompt whose id starts or ends with ID (the
transcript shows the end of each id); the chat then continues on the new branch, a
fork of the session, and the original stays stored as it was.
"""

from __future__ import annotations

from dataclasses import dataclass

from dsh_agent import AgentLoop, BranchError
from dsh_agent._engine.branching import is_prompt
from dsh_cli._commands.render import short_id
from dsh_llm import Message

REGENERATE = "/regenerate"
EDIT = "/edit"
EDIT_USAGE = "usage: /edit TEXT (the last prompt) or /edit @ID TEXT (the prompt with that id)"
HELP = (
    "/regenerate asks for a new answer to the last prompt; /edit TEXT changes the last "
    "prompt and /edit @ID TEXT another one, continuing on a new branch of the session."
)


@dataclass(frozen=True)
class Branched:
    """What a branching command did: the agent the chat goes on with (a new one after
    ``/edit``) and a note for the user."""

    agent: AgentLoop
    note: str


def is_branch_command(text: str) -> bool:
    return text.strip().partition(" ")[0] in (REGENERATE, EDIT)


async def run_branch_command(agent: AgentLoop, text: str) -> Branched:
    """Run ``/regenerate`` or ``/edit`` on ``agent``. A refusal raises
    :class:`~dsh_agent.BranchError` (or ``InputError`` for bad text) and
    changes nothing. After an edit the old agent is closed: the chat moves on."""
    command, _, rest = text.strip().partition(" ")
    if command == REGENERATE:
        if rest.strip():
            raise BranchError("usage: /regenerate (it takes no text)")
        agent.regenerate()
        return Branched(agent, "regenerating the answer to the last prompt")
    target, content = _edit_arguments(agent, rest.strip())
    branch = await agent.edit(target.id, content)
    await agent.aclose()
    note = (
        f"edited prompt [{short_id(target.id)}] on a new branch: session {branch.id}, "
        f"forked from {agent.id} (which keeps the original)"
    )
    return Branched(branch, note)


def _edit_arguments(agent: AgentLoop, rest: str) -> tuple[Message, str]:
    if rest.startswith("@"):
        fragment, _, content = rest[1:].partition(" ")
        target = find_prompt(agent, fragment.lstrip("…"))
    else:
        content = rest
        prompts = _prompts(agent)
        if not prompts:
            raise BranchError("nothing to edit: this session has no prompt yet")
        target = prompts[-1]
    if not content.strip():
        raise BranchError(EDIT_USAGE)
    return target, content.strip()


def find_prompt(agent: AgentLoop, fragment: str) -> Message:
    """The prompt in derived history whose id starts or ends with ``fragment``."""
    if not fragment:
        raise BranchError(EDIT_USAGE)
    matches = [
        message
        for message in _prompts(agent)
        if message.id.startswith(fragment) or message.id.endswith(fragment)
    ]
    if not matches:
        raise BranchError(f"no prompt in this session's history has an id like {fragment!r}")
    if len(matches) > 1:
        raise BranchError(f"{fragment!r} matches {len(matches)} prompts; give more of the id")
    return matches[0]


def _prompts(agent: AgentLoop) -> list[Message]:
    return [message for message in agent.session.derive_messages() if is_prompt(message)]


__all__ = [
    "EDIT",
    "EDIT_USAGE",
    "HELP",
    "REGENERATE",
    "Branched",
    "find_prompt",
    "is_branch_command",
    "run_branch_command",
]
