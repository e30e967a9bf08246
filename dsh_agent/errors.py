"""Error types of dsh_agent, rooted at :class:`dsh_llm.DshError`."""

from __future__ import annotations

from dsh_llm._ids import MessageId
from dsh_llm.errors import DshError


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


class SessionInUseError(AgentError):
    """An agent loop was built over a :class:`~dsh_session.Session` object that another
    live loop still drives; nothing was written. ``session_id`` names the session.
    Close the other loop (``await loop.aclose()``, or leave its ``async with``) first."""

    def __init__(self, message: str, *, session_id: str) -> None:
        super().__init__(message)
        self.session_id = session_id


class AgentClosedError(AgentError):
    """A closed agent loop was asked to deliver, cancel or change its inbox; nothing
    was written. ``session_id`` names the session it drove."""

    def __init__(self, message: str, *, session_id: str) -> None:
        super().__init__(message)
        self.session_id = session_id


class StreamOverflowError(AgentError):
    """An update stream's consumer fell more than ``limit`` updates behind, so the stream
    stopped observing rather than grow without bound or drop updates silently. The
    updates buffered before were all delivered; ``seq`` is the first session event the
    stream did not turn into an update: reload the session from its store and resume
    from there. The agent itself was not affected."""

    def __init__(self, message: str, *, session_id: str, seq: int, limit: int) -> None:
        super().__init__(message)
        self.session_id = session_id
        self.seq = seq
        self.limit = limit


class NothingToRetryError(AgentError):
    """``agent.retry()`` was called but the last turn did not fail (it completed, was
    blocked or cancelled, or no turn has ended yet); nothing was written."""
