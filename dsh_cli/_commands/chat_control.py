"""How what the user types and presses controls a chat agent, in both chat modes.

A typed line becomes a message the moment it is read (that is when it gets its id):
``/inject TEXT`` is context that does not wake the agent, ``/retry`` runs a failed
last turn again (no new message), anything else is a prompt,
which steers the running turn or, when the agent is idle, starts a new one. Ctrl-C
cancels the running turn, keeping what is pending (a steer or ``/inject`` context
typed before it reaches the model at the next turn); a second Ctrl-C (or one while
idle) asks to leave.
"""

from __future__ import annotations

from dsh_agent import AgentLoop, NothingToRetryError
from dsh_llm import create_user_message

INJECT = "/inject"
RETRY = "/retry"
EXIT_COMMANDS = frozenset({"/exit", "/quit"})
CONTEXT_PLUGIN = "dsh-chat"
"""The plugin name on the source of context added with ``/inject``."""


def deliver_line(agent: AgentLoop, line: str) -> str | None:
    """Hand one typed line to ``agent``; return a note for the user, if any."""
    text = line.strip()
    if not text:
        return None
    command, _, rest = text.partition(" ")
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
    "CONTEXT_PLUGIN",
    "EXIT_COMMANDS",
    "INJECT",
    "RETRY",
    "InterruptPolicy",
    "deliver_line",
]
