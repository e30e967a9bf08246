"""The owner's side of the mailbox: apply a session's entries to its loop, in arrival
order, and answer each one durably.

Message deliveries and decisions are applied, flushed, then answered; after a crash
between the flush and the answer the log already holds them (the message id, the
decision), so the next owner answers them without applying them again. The verbs that
carry no id of their own are at most once: cancel, retry and regenerate are answered
before their effect is flushed; edit is answered with its fork's id once the fork runs
(a crash before that answer forks again). The drain runs beside the loop's turns, so a
steer, injection or cancel reaches a running turn at its next step
(docs/decisions/2026-12-06-mailbox-and-ownership.md).
"""

from __future__ import annotations

import asyncio

from dsh_agent._engine.loop import AgentLoop
from dsh_agent._service._remote import KEEP_INBOX
from dsh_agent._service._session_state import logged_message
from dsh_agent.errors import AgentError
from dsh_llm import CallId
from dsh_llm._ids import MessageId
from dsh_session._approvals import approvals_since
from dsh_session._mailbox._base import Mailbox
from dsh_session._mailbox._records import MailboxAnswer, MailboxEntry, StoredEntry

APPLIED = MailboxAnswer("applied")


class MailboxDrain:
    """Applies the mailbox of ``loop``'s session to ``loop`` (its owner)."""

    def __init__(self, loop: AgentLoop, mailbox: Mailbox) -> None:
        self.loop = loop
        self.mailbox = mailbox

    async def drain(self) -> int:
        """Apply every unanswered entry, oldest first; return how many there were."""
        pending = await self.mailbox.pending(self.loop.id)
        for stored in pending:
            await self._apply(stored)
        return len(pending)

    async def serve(self, stop: asyncio.Event, *, timeout: float = 1.0) -> None:
        """Drain whenever the mailbox may have grown, until ``stop`` is set."""
        while not stop.is_set():
            await self.drain()
            await self.mailbox.wait(timeout)

    async def _apply(self, stored: StoredEntry) -> None:
        entry, loop = stored.entry, self.loop
        if loop.status == "running" and entry.kind not in ("cancel", "approve", "deny"):
            if entry.policy == "reject":
                await self._answer(entry, MailboxAnswer("refused", "a turn was running"))
                return
            if entry.policy == "interrupt":
                loop.cancel("user", keep_inbox=True)
                await loop.when_idle()
        try:
            answer: MailboxAnswer | None
            if entry.message is not None and entry.kind != "edit":
                answer = await self._deliver(entry)
            elif entry.call_id is not None:
                answer = await self._decide(entry, CallId(entry.call_id))
            else:
                answer = await self._run_verb(entry)
        except AgentError as error:
            answer = MailboxAnswer("refused", f"{type(error).__name__}: {error}")
        if answer is not None:
            await self._answer(entry, answer)

    async def _deliver(self, entry: MailboxEntry) -> MailboxAnswer:
        loop, message = self.loop, entry.message
        assert message is not None
        logged = logged_message(loop.session.events, message.id)
        if logged is not None:
            if logged == message:
                return APPLIED  # applied before the last owner could answer
            return MailboxAnswer("refused", f"message {message.id!r} is in the log already")
        if entry.kind == "inject":
            loop.inject(message)
        elif entry.kind == "steer" or entry.policy == "steer":
            loop.steer(message)
        else:
            loop.followup(message)
        await self._flush()
        return APPLIED

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
