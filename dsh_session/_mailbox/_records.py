"""What a mailbox holds: delivery requests (entries), the owner's answers, receipts.

An entry is stored as one JSON object; its ``key`` is the idempotency key: the message
id for the message kinds (the client minted it), ``decision:<call id>`` for approve and
deny (a call is decided once, whoever asks), and a client-chosen or random delivery id
for the other verbs. Two entries with one key are one delivery: equal content gives
the first receipt back, different content is refused (``DeliveryConflictError``).
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from typing import Any, Literal, get_args

from dsh_llm._messages import MessageAdapter, UserMessage
from dsh_session._header import SessionId

DeliveryKind = Literal[
    "followup", "steer", "inject", "cancel", "approve", "deny", "retry", "regenerate", "edit"
]
"""What a delivery asks the owner to do: one of the agent's verbs."""

DeliveryPolicy = Literal["enqueue", "steer", "interrupt", "reject"]
"""What a delivery does when it arrives while a turn runs (dsh's answer to
double-texting): wait for the next turn, enter the next step, cancel the running turn
(keeping its pending input) and run after it, or be refused."""

DeliveryOutcome = Literal["applied", "refused"]

MESSAGE_KINDS: frozenset[str] = frozenset({"followup", "steer", "inject"})
DECISION_KINDS: frozenset[str] = frozenset({"approve", "deny"})
KINDS: frozenset[str] = frozenset(get_args(DeliveryKind))
POLICIES: frozenset[str] = frozenset(get_args(DeliveryPolicy))


@dataclass(frozen=True, slots=True)
class MailboxEntry:
    """One delivery request, as the client made it."""

    session_id: SessionId
    key: str
    kind: DeliveryKind
    policy: DeliveryPolicy
    message: UserMessage | None = None
    """The frozen message of ``followup``/``steer``/``inject`` and ``edit``'s new text."""
    call_id: str | None = None
    """The call ``approve``/``deny`` decide."""
    reason: str | None = None
    """``deny``'s reason, ``cancel``'s cause."""
    target_id: str | None = None
    """The prompt ``edit`` changes."""
    arrived_at: int = 0
    """Milliseconds since the epoch when the client made it."""

    def content(self) -> str:
        """What must be equal for a repeated delivery to be the same one."""
        return json.dumps(
            [
                self.kind,
                None if self.message is None else self.message.model_dump(mode="json"),
                self.call_id,
                self.reason,
                self.target_id,
            ],
            sort_keys=True,
        )

    def dump(self) -> str:
        return json.dumps(
            {
                "key": self.key,
                "kind": self.kind,
                "policy": self.policy,
                "message": None if self.message is None else self.message.model_dump(mode="json"),
                "call_id": self.call_id,
                "reason": self.reason,
                "target_id": self.target_id,
                "arrived_at": self.arrived_at,
            },
            separators=(",", ":"),
        )

    @classmethod
    def load(cls, session_id: SessionId, text: str | bytes) -> MailboxEntry:
        data: dict[str, Any] = json.loads(text)
        raw = data.get("message")
        message = None if raw is None else MessageAdapter.validate_python(raw)
        if message is not None and not isinstance(message, UserMessage):
            raise ValueError(f"mailbox entry {data.get('key')!r} holds a non-user message")
        if data["kind"] not in KINDS or data["policy"] not in POLICIES:
            raise ValueError(f"mailbox entry {data.get('key')!r} has an unknown kind or policy")
        return cls(
            session_id=session_id,
            key=data["key"],
            kind=data["kind"],
            policy=data["policy"],
            message=message,
            call_id=data.get("call_id"),
            reason=data.get("reason"),
            target_id=data.get("target_id"),
            arrived_at=int(data.get("arrived_at", 0)),
        )


def new_key() -> str:
    """A delivery id for a verb that carries no id of its own."""
    return f"delivery-{uuid.uuid4()}"


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True, slots=True)
class DeliveryReceipt:
    """Proof that a delivery is durable: equal for every repetition of one delivery."""

    session_id: SessionId
    delivery_id: str
    """The idempotency key (the message id for a message)."""
    kind: DeliveryKind
    arrival: int | None
    """Its place in the session's mailbox (``None``: the message was already in the
    session's log or inbox, put there without the mailbox)."""


@dataclass(frozen=True, slots=True)
class StoredEntry:
    """An entry where the mailbox keeps it, with the owner's answer once given."""

    entry: MailboxEntry
    arrival: int
    answer: MailboxAnswer | None = None

    def receipt(self) -> DeliveryReceipt:
        entry = self.entry
        return DeliveryReceipt(entry.session_id, entry.key, entry.kind, self.arrival)


@dataclass(frozen=True, slots=True)
class MailboxAnswer:
    """What the owner did with an entry: applied it, or refused it (``detail`` says
    why, e.g. an approval for a call that does not wait)."""

    outcome: DeliveryOutcome
    detail: str = ""

    def dump(self) -> str:
        return json.dumps({"outcome": self.outcome, "detail": self.detail})

    @classmethod
    def load(cls, text: str | bytes) -> MailboxAnswer:
        data = json.loads(text)
        if data["outcome"] not in ("applied", "refused"):
            raise ValueError(f"unknown mailbox answer outcome {data['outcome']!r}")
        return cls(data["outcome"], str(data.get("detail", "")))


__all__ = [
    "DECISION_KINDS",
    "KINDS",
    "MESSAGE_KINDS",
    "POLICIES",
    "DeliveryKind",
    "DeliveryOutcome",
    "DeliveryPolicy",
    "DeliveryReceipt",
    "MailboxAnswer",
    "MailboxEntry",
    "StoredEntry",
    "new_key",
    "now_ms",
]
