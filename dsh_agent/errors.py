"""Error types of dsh_agent, rooted at :class:`dsh_llm.DshError`."""

from __future__ import annotations

from dsh_llm.errors import DshError
from dsh_llm.ids import MessageId


class AgentError(DshError):
    """Root of every error dsh_agent raises on purpose."""


class InboxError(AgentError):
    """An inbox change was refused (e.g. a message id already pending) or a stored
    ``agent/inbox/spliced`` event cannot be replayed. Nothing was written and the
    pending lists are unchanged. ``message_id`` / ``seq`` name what is at fault."""

    def __init__(
        self, message: str, *, message_id: MessageId | None = None, seq: int | None = None
    ) -> None:
        super().__init__(message)
        self.message_id = message_id
        self.seq = seq
