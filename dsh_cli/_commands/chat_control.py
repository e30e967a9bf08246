"""How what the user types and presses controls a chat agent, in both chat modes.

A typed line becomes a message the moment it is read (that is when it gets its id):
``/inject TEXT`` is context that does not wake the agent, ``/retry`` runs a failed
last turn again (no new message), any other line starting with ``/`` that is not one
of :data:`COMMANDS` is refused here and never reaches the model (``//`` sends a
message that starts with ``/``), and anything else is a prompt, which steers the
running turn or, when the agent is idle, starts a new one. Ctrl-C
cancels the running turn, keeping what is pending (a steer or ``/inject`` context
typed before it reaches the model at the next turn); a second Ctrl-C (or one while
idle) asks to leave.
"""

from __future__ import annotations

from dsh_agent import AgentLoop, NothingToRetryError
from dsh_cli._errors import ChatCommandError
from dsh_llm import create_user_message

INJECT = "/inject"
RETRY = "/retry"
HELP_COMMAND = "/help"
EXIT_COMMANDS = frozenset({"/exit", "/quit"})
COMMANDS = (
    "/inject TEXT",
    "/retry",
    "/regenerate",
    "/edit [@ID] TEXT",
    "/approve CALL",
    "/deny CALL [REASON]",
    "/help",
    "/exit",
)
"""Every chat command, as the refusal of an unknown one lists them."""
LITERAL_SLASH = "//"
"""A line starting with this is a message starting with one ``/``, not a command."""
CONTEXT_PLUGIN = "dsh-chat"
"""The plugin name on the source of context added with ``/inject``."""


def deliver_line(agent: AgentLoop, line: str) -> str | None:
    """Hand one typed line to ``agent``; return a note for the user, if any. A line
    that looks like a command this chat does not know raises
    :class:`~dsh_cli._errors.ChatCommandError` and sends nothing."""
    text = line.strip()
    if not text:
        return None
    command, _, rest = text.partition(" ")
    if command == HELP_COMMAND:
        return commands_note()
    if text.startswith(LITERAL_SLASH):
        text = text[1:]
    elif command.startswith("/") and command not in (INJECT, RETRY):
        raise ChatCommandError(f"unknown command {command}; nothing was sent. {commands_note()}")
    if command == INJECT:
        if not rest.strip():
            return "usage: /inject TEXT"
        agent.inject(
            create_user_message(
                content=rest.strip(), source={"kind": "plugin", "plugin": CONTEXT_PLUGIN}
            )
        )
        return "context added without starting a turn; the model sees it at its next step"
    if command == RETRY:
        return _retry(agent)
    message = create_user_message(content=text, source={"kind": "user"})
    if agent.status == "running":
        agent.steer(message)
        return "steering the running turn"
    agent.followup(message)
    if agent.pending_approvals:
        return "kept for when the tool call waiting for approval is decided"
    return None


def commands_note() -> str:
    """The commands, and how to send a message that starts with ``/``."""
    return (
        f"the commands are {', '.join(COMMANDS)}; start a message with {LITERAL_SLASH} "
        "to send text that begins with /"
    )


def _retry(agent: AgentLoop) -> str:
    if agent.status == "running":
        return "a turn is running: /retry runs a failed turn again once the agent is idle"
    try:
        agent.retry()
    except NothingToRetryError as error:
        return str(error)
    return "running the failed turn again"


class InterruptPolicy:
    """Ctrl-C while a turn runs cancels it; another Ctrl-C, or one while idle, means
    leave. :meth:`press` says which happened."""

    def __init__(self, agent: AgentLoop) -> None:
        self._agent = agent
        self._cancelled_turn: int | None = None

    def press(self) -> bool:
        """Handle one Ctrl-C; return True when the user wants to leave."""
        agent = self._agent
        turn = agent.session.open_turn
        if agent.status != "running" or turn is None or turn == self._cancelled_turn:
            return True
        self._cancelled_turn = turn
        agent.cancel("user", keep_inbox=True)
        return False


__all__ = [
    "COMMANDS",
    "CONTEXT_PLUGIN",
    "EXIT_COMMANDS",
    "HELP_COMMAND",
    "INJECT",
    "LITERAL_SLASH",
    "RETRY",
    "InterruptPolicy",
    "commands_note",
    "deliver_line",
]
