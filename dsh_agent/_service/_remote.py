"""Deliver to a session another process owns: :func:`connect` and :class:`RemoteAgent`.

Each verb validates what it was given, reads the session from the store (so an
unknown, deleted or corrupt session is refused before anything is written), finds an
earlier delivery with the same id (in the mailbox, or the message already in the log
or inbox: the client's id is the idempotency key), and otherwise makes one mailbox
entry durable; it returns the :class:`~dsh_session._mailbox._records.DeliveryReceipt`
once the entry is durable. The owner applies it (``_drain.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from types import TracebackType
from typing import Self

from dsh_agent._service._log_updates import DeliveryRefused, LogTranslator, RemoteUpdate
from dsh_agent._service._session_state import StoredState
from dsh_agent.errors import DeliveryError, DeliveryRejectedError
from dsh_llm import ContentInput, create_user_message
from dsh_llm._create import freeze_message
from dsh_llm._messages import UserMessage
from dsh_session._header import SessionId, validate_session_id
from dsh_session._mailbox._base import Mailbox
from dsh_session._mailbox._open import open_mailbox
from dsh_session._mailbox._records import (
    POLICIES,
    DeliveryKind,
    DeliveryPolicy,
    DeliveryReceipt,
    MailboxEntry,
    new_key,
    now_ms,
)
from dsh_session.errors import (
    DeliveryConflictError,
    SessionCorruptError,
    SessionFormatError,
    SessionNotFoundError,
)
from dsh_session.stores import SessionStore

KEEP_INBOX = "keep-inbox"
"""A cancel entry's ``target_id`` when the pending input stays."""

IDLE_POLL = 0.05
"""Seconds between looks at the log and mailbox while :meth:`RemoteAgent.wait_idle` waits."""


def connect(store: SessionStore, session_id: str) -> RemoteAgent:
    """A handle that delivers to session ``session_id`` of ``store`` from any process;
    the session's owner (a :class:`~dsh_agent.Worker`, or any loop that drains its
    mailbox) applies what it delivers. Close it (``async with``) when done."""
    return RemoteAgent(store, validate_session_id(session_id))


class RemoteAgent:
    """The agent's verbs, for a session this process does not own. Every verb returns
    a receipt once the request is durable in the store; delivering the same message
    (same id, equal content) again returns the first receipt and changes nothing."""

    def __init__(self, store: SessionStore, session_id: SessionId) -> None:
        self.store = store
        self.id = session_id
        self._mailbox: Mailbox | None = None

    @property
    def mailbox(self) -> Mailbox:
        if self._mailbox is None:
            self._mailbox = open_mailbox(self.store)
        return self._mailbox

    async def aclose(self) -> None:
        if self._mailbox is not None:
            mailbox, self._mailbox = self._mailbox, None
            await mailbox.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # --- the verbs --------------------------------------------------------------------

    async def followup(
        self, message: UserMessage, *, policy: DeliveryPolicy = "enqueue"
    ) -> DeliveryReceipt:
        """Queue ``message`` for a turn of its own (``policy`` says what happens while a
        turn runs: ``enqueue`` waits for the next turn, ``steer`` enters its next step,
        ``interrupt`` cancels it keeping its pending input, ``reject`` refuses)."""
        return await self._deliver_message("followup", message, policy)

    async def steer(
        self, message: UserMessage, *, policy: DeliveryPolicy = "enqueue"
    ) -> DeliveryReceipt:
        """Put ``message`` into the running turn's next step (or start a turn)."""
        return await self._deliver_message("steer", message, policy)

    async def inject(
        self, message: UserMessage, *, policy: DeliveryPolicy = "enqueue"
    ) -> DeliveryReceipt:
        """Put ``message`` into the next step without starting a turn."""
        return await self._deliver_message("inject", message, policy)

    async def cancel(
        self, *, keep_inbox: bool = False, delivery_id: str | None = None
    ) -> DeliveryReceipt:
        """Abort the running turn with cause ``user`` (clearing pending input unless
        ``keep_inbox``); an idle session only has its pending input cleared."""
        return await self._deliver(
            MailboxEntry(
                self.id,
                delivery_id or new_key(),
                "cancel",
                "enqueue",
                target_id=KEEP_INBOX if keep_inbox else None,
                arrived_at=now_ms(),
            )
        )

    async def approve(self, call_id: str) -> DeliveryReceipt:
        """Let the waiting call ``call_id`` run; decided once, whoever sends it."""
        return await self._decide("approve", call_id, None)

    async def deny(self, call_id: str, reason: str | None = None) -> DeliveryReceipt:
        """Refuse the waiting call ``call_id`` (the model sees ``reason``)."""
        return await self._decide("deny", call_id, reason)

    async def retry(
        self, *, policy: DeliveryPolicy = "enqueue", delivery_id: str | None = None
    ) -> DeliveryReceipt:
        """Run the failed last turn again (the owner refuses it when none failed)."""
        return await self._verb("retry", policy, delivery_id)

    async def regenerate(
        self, *, policy: DeliveryPolicy = "enqueue", delivery_id: str | None = None
    ) -> DeliveryReceipt:
        """Answer the last prompt again."""
        return await self._verb("regenerate", policy, delivery_id)

    async def edit(
        self,
        message_id: str,
        content: ContentInput,
        *,
        policy: DeliveryPolicy = "enqueue",
        delivery_id: str | None = None,
    ) -> DeliveryReceipt:
        """Change prompt ``message_id`` to ``content`` on a fork of the session (the
        owner's answer names the fork)."""
        message = self._valid(lambda: create_user_message(content))
        return await self._deliver(
            MailboxEntry(
                self.id,
                delivery_id or new_key(),
                "edit",
                _policy(policy, self.id),
                message=message,
                target_id=message_id,
                arrived_at=now_ms(),
            )
        )

    # --- reading ------------------------------------------------------------------------

    async def updates(
        self, *, from_seq: int = 0, poll_interval: float = 0.1
    ) -> AsyncIterator[RemoteUpdate]:
        """The session's typed updates from the log, from ``from_seq`` on, as the owner
        makes them durable, and each delivery the owner refused; until the caller stops
        iterating. Resumable: pass the ``seq`` after the last update seen."""
        queue: asyncio.Queue[RemoteUpdate | BaseException] = asyncio.Queue()
        tasks = [
            asyncio.create_task(self._log_updates(queue, from_seq, poll_interval)),
            asyncio.create_task(self._refusals(queue, poll_interval)),
        ]
        try:
            while True:
                item = await queue.get()
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def _log_updates(
        self, queue: asyncio.Queue[RemoteUpdate | BaseException], from_seq: int, poll: float
    ) -> None:
        translator = LogTranslator()  # reads from seq 0 to know the turn and step
        try:
            async for event in self.store.follow(self.id, poll_interval=poll):
                update = translator.translate(event)
                if update is not None and event.seq >= from_seq:
                    queue.put_nowait(update)
        except Exception as error:
            queue.put_nowait(error)

    async def _refusals(
        self, queue: asyncio.Queue[RemoteUpdate | BaseException], poll: float
    ) -> None:
        """Report each refused delivery once. An answer never changes once given, so each
        look reads from the oldest entry still unanswered at the last one (a long-lived
        session's answered history is read once, not at every poll)."""
        seen: set[str] = set()
        start = 0
        try:
            while True:
                stored_entries = await self.mailbox.entries(self.id, from_arrival=start)
                for stored in stored_entries:
                    answer, key = stored.answer, stored.entry.key
                    if answer is not None and answer.outcome == "refused" and key not in seen:
                        seen.add(key)
                        queue.put_nowait(DeliveryRefused(key, stored.entry.kind, answer.detail))
                unanswered = (s.arrival for s in stored_entries if s.answer is None)
                last = stored_entries[-1].arrival + 1 if stored_entries else start
                start = next(unanswered, last)
                await asyncio.sleep(poll)
        except Exception as error:
            queue.put_nowait(error)

    async def wait_idle(self, *, poll_interval: float = IDLE_POLL) -> None:
        """Return once the owner has answered every delivery and the session runs no
        turn and holds no pending followup (a turn waiting for approval counts as
        idle, and so does injected input waiting for a turn)."""
        while True:
            state = await self._read()
            if not await self.mailbox.pending(self.id) and not (
                state.turn_running() or state.has_pending_input()
            ):
                return
            await asyncio.sleep(poll_interval)

    # --- delivery -----------------------------------------------------------------------

    async def _deliver_message(
        self, kind: DeliveryKind, message: UserMessage, policy: DeliveryPolicy
    ) -> DeliveryReceipt:
        frozen = self._valid(lambda: _user_message(message))
        entry = MailboxEntry(
            self.id, frozen.id, kind, _policy(policy, self.id), message=frozen, arrived_at=now_ms()
        )
        return await self._deliver(entry)

    async def _decide(
        self, kind: DeliveryKind, call_id: str, reason: str | None
    ) -> DeliveryReceipt:
        entry = MailboxEntry(
            self.id, f"decision:{call_id}", kind, "enqueue", call_id=call_id, reason=reason
        )
        return await self._deliver(entry)

    async def _verb(
        self, kind: DeliveryKind, policy: DeliveryPolicy, delivery_id: str | None
    ) -> DeliveryReceipt:
        entry = MailboxEntry(
            self.id, delivery_id or new_key(), kind, _policy(policy, self.id), arrived_at=now_ms()
        )
        return await self._deliver(entry)

    async def _deliver(self, entry: MailboxEntry) -> DeliveryReceipt:
        state = await self._read()
        earlier = await self.mailbox.find(self.id, entry.key)
        if earlier is None and entry.message is not None and entry.kind != "edit":
            logged = state.logged_message(entry.key)
            if logged is not None:  # put there without the mailbox (an in-process send)
                if logged != entry.message:
                    raise DeliveryConflictError(
                        self.id, entry.key, logged.model_dump_json(), entry.content()
                    )
                return DeliveryReceipt(self.id, entry.key, entry.kind, None)
        if earlier is None and entry.policy == "reject" and state.turn_running():
            raise DeliveryRejectedError(
                f"session {self.id!r} is running a turn and {entry.kind} {entry.key!r} was "
                "sent with policy='reject'; nothing was written",
                session_id=self.id,
            )
        stored = await self.mailbox.put(entry)  # equal content: the first; else refused
        return stored.receipt()

    async def _read(self) -> StoredState:
        """The session as stored, validated; refusals become :class:`DeliveryError`."""
        try:
            session, report = await self.store.read(self.id)
        except SessionNotFoundError as error:
            raise DeliveryError(
                f"session {self.id!r} is not in {self.store!r} (never created, or deleted); "
                "nothing was delivered",
                session_id=self.id,
            ) from error
        except (SessionCorruptError, SessionFormatError) as error:
            raise DeliveryError(
                f"session {self.id!r} cannot be read ({error}); nothing was delivered",
                session_id=self.id,
            ) from error
        return StoredState.of(session, report)

    def _valid(self, make: Callable[[], UserMessage]) -> UserMessage:
        try:
            return make()
        except (ValueError, TypeError) as error:  # pydantic's ValidationError is a ValueError
            raise DeliveryError(
                f"invalid message for session {self.id!r}: {error}; nothing was delivered",
                session_id=self.id,
            ) from error


def _user_message(message: UserMessage) -> UserMessage:
    frozen = freeze_message(message)
    if type(frozen) is not UserMessage:
        raise TypeError(f"deliveries carry user messages, not {type(frozen).__name__}")
    return frozen


def _policy(policy: str, session_id: SessionId) -> DeliveryPolicy:
    if policy not in POLICIES:
        raise DeliveryError(
            f"policy must be one of {sorted(POLICIES)}, not {policy!r} (session {session_id!r})",
            session_id=session_id,
        )
    return policy  # type: ignore[return-value]


__all__ = ["KEEP_INBOX", "RemoteAgent", "connect"]
