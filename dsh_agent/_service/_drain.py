"""The owner's side of the mailbox: apply a session's entries to its loop, in arrival
order, and answer each one durably.

A followup or steer is spliced into the inbox and flushed, and answered only once it
has entered the conversation (its ``user/message`` is durable) or was discarded by a
cancel: so input a crashed owner took in but never ran keeps its session in the
mailbox's waiting set, and the next owner runs it: from the restored inbox when it is
pending there, spliced in again when a crash cut the turn off between its claim and
its ``user/message``. An injection (which wakes nothing) and a decision are
answered once flushed; after a crash before the answer the log already holds them,
so the next owner answers them without applying them again. The verbs that
carry no id of their own are at most once: cancel, retry and regenerate are answered
before their effect is flushed; edit is answered with its fork's id once the fork runs
(a crash before that answer forks again). The drain runs beside the loop's turns, so a
steer, injection or cancel reaches a running turn at its next step
(docs/decisions/2026-12-06-mailbox-and-ownership.md).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Final, Literal

from dsh_agent._engine.loop import AgentLoop
from dsh_agent._service._remote import KEEP_INBOX
from dsh_agent._service._session_state import inbox_fate, logged_message
from dsh_agent.errors import AgentError
from dsh_llm import CallId
from dsh_llm._ids import MessageId
from dsh_llm._messages import UserMessage
from dsh_session._approvals import approvals_since
from dsh_session._mailbox._base import Mailbox
from dsh_session._mailbox._records import MailboxAnswer, MailboxEntry
from dsh_session.events import UserMessageEvent

APPLIED = MailboxAnswer("applied")

_WAITING: Final = "waiting"
"""A delivered message still pending in the inbox: answered once it enters."""


class MailboxDrain:
    """Applies the mailbox of ``loop``'s session to ``loop`` (its owner)."""

    def __init__(
        self,
        loop: AgentLoop,
        mailbox: Mailbox,
        on_loop: Callable[[AgentLoop], None] | None = None,
    ) -> None:
        self.loop = loop
        self.mailbox = mailbox
        self.on_loop = on_loop
        """Called with the loop of each fork an edit makes (the worker's ``on_loop``)."""
        self._loaded = loop.session.seq
        """Events before this seq were written by an earlier owner (build the drain
        right after the load, before the loop starts a turn)."""

    async def drain(self) -> int:
        """Apply or settle every unanswered entry, oldest first; return how many were
        acted on (input still waiting in the inbox for its turn is not counted)."""
        acted = 0
        for stored in await self.mailbox.pending(self.loop.id):
            acted += await self._apply(stored.entry)
        return acted

    async def serve(self, stop: asyncio.Event, *, timeout: float = 1.0) -> None:
        """Drain whenever the mailbox may have grown, until ``stop`` is set."""
        while not stop.is_set():
            await self.drain()
            await self.mailbox.wait(timeout)

    async def _apply(self, entry: MailboxEntry) -> bool:
        loop = self.loop
        answer: MailboxAnswer | None
        if entry.message is not None and entry.kind != "edit":
            settled = await self._settled(entry, entry.message)
            if settled == _WAITING:
                return False
            if isinstance(settled, MailboxAnswer):
                await self._answer(entry, settled)
                return True
        if loop.status == "running" and entry.kind not in ("cancel", "approve", "deny"):
            if entry.policy == "reject":
                await self._answer(entry, MailboxAnswer("refused", "a turn was running"))
                return True
            if entry.policy == "interrupt":
                loop.cancel("user", keep_inbox=True)
                await loop.when_idle()
        try:
            if entry.message is not None and entry.kind != "edit":
                answer = await self._deliver(entry, entry.message)
            elif entry.call_id is not None:
                answer = await self._decide(entry, CallId(entry.call_id))
            else:
                answer = await self._run_verb(entry)
        except AgentError as error:
            answer = MailboxAnswer("refused", f"{type(error).__name__}: {error}")
        if answer is not None:
            await self._answer(entry, answer)
        return True

    async def _settled(
        self, entry: MailboxEntry, message: UserMessage
    ) -> MailboxAnswer | Literal["waiting"] | None:
        """The answer a message delivery has earned already, :data:`_WAITING` while it
        is pending in the inbox, or ``None`` when it must be applied: never spliced
        in, or claimed by a turn that a crash cut off before the message entered."""
        events = self.loop.session.events
        logged = logged_message(events, message.id)
        if logged is None:
            return None
        if logged != message:
            return MailboxAnswer("refused", f"message {message.id!r} is in the log already")
        if any(isinstance(e, UserMessageEvent) and e.data.id == message.id for e in events):
            await self._flush()  # durable before it is answered
            return APPLIED  # it entered the conversation
        fate, seq = inbox_fate(events, message.id) or ("claimed", 0)
        if fate == "pending":
            return APPLIED if entry.kind == "inject" else _WAITING
        if fate == "canceled":
            return MailboxAnswer("applied", "discarded (a cancel cleared the inbox) before it ran")
        if seq >= self._loaded:
            return _WAITING  # claimed by this owner's turn, entering it now
        return None  # an earlier owner's turn claimed it and was cut off: deliver again

    async def _deliver(self, entry: MailboxEntry, message: UserMessage) -> MailboxAnswer | None:
        loop = self.loop
        if entry.kind == "inject":
            loop.inject(message)
        elif entry.kind == "steer" or entry.policy == "steer":
            loop.steer(message)
        else:
            loop.followup(message)
        await self._flush()
        return APPLIED if entry.kind == "inject" else None  # else once it has entered

    async def _decide(self, entry: MailboxEntry, call_id: CallId) -> MailboxAnswer:
        loop = self.loop
        record = approvals_since(loop.session.events, 0).get(call_id)
        if record is not None and record.decided is not None:
            return APPLIED  # decided once: by an earlier delivery or the owner itself
        if entry.kind == "approve":
            await loop.approve(call_id)
        else:
            await loop.deny(call_id, entry.reason)
        return APPLIED

    async def _run_verb(self, entry: MailboxEntry) -> MailboxAnswer | None:
        """Cancel, retry, regenerate or edit; ``None`` when answered already."""
        loop = self.loop
        if entry.kind == "cancel":
            await self._answer(entry, APPLIED)  # at most once: a cancel has no id to find
            loop.cancel("user", keep_inbox=entry.target_id == KEEP_INBOX)
            await self._flush()
            return None
        await loop.when_idle()  # retry, regenerate and edit start from an idle agent
        if entry.kind == "edit":
            assert entry.message is not None and entry.target_id is not None
            branch = await loop.edit(MessageId(entry.target_id), entry.message.content)
            if self.on_loop is not None:
                self.on_loop(branch)  # its first turn has begun, its model call not yet
            await branch.when_idle()
            await branch.aclose()
            return MailboxAnswer("applied", f"fork {branch.id}")
        if entry.kind == "retry":
            loop.retry()  # refused before writing anything, or started in memory
        else:
            loop.regenerate()
        await self._answer(entry, APPLIED)  # before the flush: at most once
        await self._flush()
        return None

    async def _answer(self, entry: MailboxEntry, answer: MailboxAnswer) -> None:
        await self.mailbox.answer(self.loop.id, entry.key, answer)

    async def _flush(self) -> None:
        store = self.loop.config.store
        if store is not None:
            await store.flush(self.loop.session)


__all__ = ["MailboxDrain"]
