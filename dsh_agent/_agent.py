"""The public surface of an agent, as a Protocol: what callers, ``run()`` and pre-step
handlers may rely on, whatever the implementation (today :class:`AgentLoop`), with the
types a pre-step handler sees and returns (they name the agent, and the agent takes
the handlers, so they live together).

Built from public leaf types only: nothing here imports the engine
(:mod:`dsh_agent._engine`), so no module of the package reaches back to itself through
this one (``tests/agent_loop/test_no_import_cycles.py``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeAlias

from dsh_agent._cancellation import CancelCauseInput
from dsh_agent._live_updates import AgentStatus, InboxTarget, LiveUpdateObserver
from dsh_llm import CallId
from dsh_llm._ids import MessageId
from dsh_llm._messages import UserMessage
from dsh_session._header import SessionId

if TYPE_CHECKING:  # annotations only: importing a subpackage runs its __init__ first
    from dsh_agent._run_options import RunPrompt
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

    def subscribe(self, observer: LiveUpdateObserver) -> Callable[[], None]:
        """Observe live updates; returns the unsubscribe function."""
        ...

    def updates(
        self, *, until_idle: bool = ..., max_pending: int = ..., merge_deltas: bool = ...
    ) -> UpdateStream:
        """Iterate the typed updates of everything the agent does from this call on
        (``until_idle``: until it is next idle), whatever verb starts the work."""
        ...

    def stream(
        self, message: RunPrompt, *, max_pending: int = ..., merge_deltas: bool = ...
    ) -> UpdateStream:
        """Send ``message`` (a ``UserMessage``, or text or content blocks from which one
        is created) as a followup and iterate the typed updates until idle."""
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


# --- pre-step handlers (see dsh_agent._prestep) ---------------------------------------


@dataclass(frozen=True, slots=True)
class PreStep:
    """What a pre-step handler sees: the claimed batch of a proposed step."""

    agent: Agent
    """The agent whose step this is."""
    messages: tuple[UserMessage, ...]
    """The claimed messages, next-step items first: the caller's very objects."""
    turn: int
    step: int


@dataclass(frozen=True, slots=True)
class Enter:
    """Open the step with ``messages`` as its complete batch, in order. Rewrite a
    message with ``replace_content`` (same id); add context as a newly created
    ``UserMessage`` (new id)."""

    messages: Sequence[UserMessage] = ()

    def __post_init__(self) -> None:
        messages = tuple(self.messages)
        for index, message in enumerate(messages):
            if not isinstance(message, UserMessage):
                raise TypeError(
                    f"Enter.messages[{index}] must be a UserMessage, not {type(message).__name__}"
                )
        object.__setattr__(self, "messages", messages)


@dataclass(frozen=True, slots=True)
class Reject:
    """Open no step: the turn ends ``blocked`` and the claimed batch is dropped."""


PreStepDecision: TypeAlias = Enter | Reject


class CallNext(Protocol):
    """Runs the rest of the waterfall, with ``step`` or the current one."""

    def __call__(self, step: PreStep | None = None, /) -> Awaitable[PreStepDecision]: ...


PreStepHandler: TypeAlias = Callable[[PreStep, CallNext], Awaitable[PreStepDecision]]
"""``async def handler(step, call_next) -> Enter | Reject``."""

__all__ = [
    "Agent",
    "CallNext",
    "Enter",
    "PreStep",
    "PreStepDecision",
    "PreStepHandler",
    "Reject",
]
