"""The public surface of an agent, as a Protocol: what callers, ``run()`` and pre-step
handlers may rely on, whatever the implementation (today :class:`AgentLoop`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from dsh_agent._cancellation import CancelCauseInput
from dsh_agent._notifications import AgentStatus, InboxTarget, NotificationObserver
from dsh_llm import CallId
from dsh_llm._ids import MessageId
from dsh_llm._messages import UserMessage
from dsh_session._header import SessionId

if TYPE_CHECKING:
    from dsh_agent._prestep import PreStepHandler
    from dsh_agent.approvals._gate import PendingApproval
    from dsh_agent.inbox import Inbox
    from dsh_agent.streaming._stream import UpdateStream
    from dsh_llm import ContentInput
    from dsh_session._session import Session


class Agent(Protocol):
    """An agent: deliveries into a durable inbox, turns logged to a session."""

    @property
    def session(self) -> Session:
        """The session the agent logs to."""
        ...

    @property
    def inbox(self) -> Inbox:
        """The pending input (``next_turn`` / ``next_step``)."""
        ...

    @property
    def id(self) -> SessionId:
        """The agent's identity (its session's id)."""
        ...

    @property
    def status(self) -> AgentStatus: ...

    def send(self, message: UserMessage, target: InboxTarget, wakeup: bool) -> None:
        """Deliver the caller's message (its id kept) to ``target``; wake if asked."""
        ...

    def followup(self, message: UserMessage) -> None:
        """``send(message, "next-turn", True)``."""
        ...

    def steer(self, message: UserMessage) -> None:
        """``send(message, "next-step", True)``."""
        ...

    def inject(self, message: UserMessage) -> None:
        """``send(message, "next-step", False)``."""
        ...

    def retry(self) -> None:
        """Run the failed last turn again over the same history (no new input);
        raises ``NothingToRetryError`` when the last turn did not fail."""
        ...

    def cancel(self, cause: CancelCauseInput = "user", *, keep_inbox: bool = False) -> None:
        """Abort the running turn; unless ``keep_inbox``, discard what is pending."""
        ...

    async def when_idle(self) -> None:
        """Wait until the agent is quiescent."""
        ...

    async def aclose(self) -> None:
        """Abort a running turn (cause ``disposed``), make the log durable and give
        the session back; later deliveries raise ``AgentClosedError``."""
        ...

    @property
    def closed(self) -> bool:
        """True once :meth:`aclose` was called."""
        ...

    def subscribe(self, observer: NotificationObserver) -> Callable[[], None]:
        """Observe live notifications; returns the unsubscribe function."""
        ...

    def stream(
        self, message: UserMessage, *, max_pending: int = ..., merge_deltas: bool = ...
    ) -> UpdateStream:
        """Send ``message`` as a followup and iterate the typed updates until idle."""
        ...

    def on_pre_step(self, handler: PreStepHandler) -> Callable[[], None]:
        """Add a pre-step handler; returns the function that removes it."""
        ...

    # --- branching and approvals -----------------------------------------------------------

    def regenerate(self) -> None:
        """Start a turn that answers the last prompt again (the old answer leaves the
        surface; the raw log keeps it); raises ``BranchError`` when it cannot."""
        ...

    async def edit(self, message_id: MessageId | str, content: ContentInput) -> Agent:
        """Send ``content`` in place of the prompt ``message_id`` (a new message with a
        new id) on a fork of the session; returns the branch's running agent."""
        ...

    @property
    def pending_approvals(self) -> tuple[PendingApproval, ...]:
        """The tool calls waiting for a person's decision, in model order."""
        ...

    async def approve(self, call_id: CallId) -> None:
        """Let the waiting call ``call_id`` run once; durable when this returns."""
        ...

    async def deny(self, call_id: CallId, reason: str | None = None) -> None:
        """Refuse the waiting call ``call_id`` (the model gets an error result naming
        ``reason``); durable when this returns."""
        ...
