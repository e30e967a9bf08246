"""Regenerate and edit: new answers and changed prompts that never reuse an identity.

*Regenerate* keeps the last human prompt and asks for a new answer. Everything on the
surface after that prompt (the last reply and its tool exchange) leaves derived history
through one surface replace: an ``assistant/message`` with empty content (which projects
to no message) whose ``surfaceOp`` shadows that range and whose ``sourceEventSeqs`` cite
every shadowed event. It is written as the first event of the new turn's first step,
so the raw log keeps the old answer, and one event is either durable or absent.

*Edit* changes a past prompt. The new text is a new message with a new id whose
``source.editOf`` names the old one; the conversation continues on a fork of the
session cut just before the old prompt's turn, so the original branch stays intact
and every other id stays what it was on both branches.

See docs/decisions/2026-12-03-regenerate-and-edit.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dsh_agent._agent import Agent
from dsh_agent.errors import BranchError
from dsh_llm._create import ContentInput, create_assistant_message, create_user_message
from dsh_llm._ids import MessageId
from dsh_llm._messages import AssistantMessage, Message, ToolResultMessage, UserMessage
from dsh_llm._sources import UserSource
from dsh_session._header import SessionHeader, new_session_id, now_ms
from dsh_session._session import Session
from dsh_session._surface import project
from dsh_session._surface_view import message_of
from dsh_session.events import (
    AssistantMessageData,
    AssistantMessageEvent,
    Replace,
    SessionEvent,
    StepStartEvent,
    TurnEndEvent,
    TurnStartEvent,
    UserMessageEvent,
)

if TYPE_CHECKING:
    from dsh_session.stores import SessionStore


def is_prompt(message: Message | None) -> bool:
    """Whether ``message`` is a human prompt (``source.kind == "user"``)."""
    return isinstance(message, UserMessage) and isinstance(message.source, UserSource)


def check_idle(session: Session, running: bool, pending: int, what: str) -> None:
    """Refuse ``what`` while a turn runs or input is pending: either would interleave
    with the new branch or answer."""
    if running:
        raise BranchError(
            f"cannot {what} while session {session.id!r} is running a turn; wait for it "
            "to end (when_idle) or cancel it first"
        )
    if pending:
        raise BranchError(
            f"cannot {what}: {pending} message(s) are pending in the inbox of session "
            f"{session.id!r} and would join the new turn; deliver or clear them first"
        )


# --- regenerate -------------------------------------------------------------------------


def answer_to_last_prompt(session: Session) -> tuple[int, ...]:
    """The surface seqs after the last human prompt: the answer a regenerate shadows.
    Empty when the prompt has no answer in derived history yet, e.g. its turn failed or
    an earlier regenerate was cut by a crash. Raises :class:`BranchError` when there is
    no prompt at all."""
    nodes = session.surface_seqs()
    events = session.events
    for position in range(len(nodes) - 1, -1, -1):
        if is_prompt(message_of(events[nodes[position]])):
            answer = nodes[position + 1 :]
            if not any(project(events[seq]) is not None for seq in answer):
                return ()  # only empty nodes: shadowing them would change nothing
            return answer
    raise BranchError(f"nothing to regenerate: session {session.id!r} has no prompt in its history")


@dataclass(frozen=True)
class Regeneration:
    """The prelude of a regenerate turn: at the start of the turn's first step, shadow
    the answer to the last prompt with one empty ``assistant/message`` replace."""

    session: Session
    provider: str
    model: str

    def __call__(self, turn: int, step: int) -> None:
        answer = answer_to_last_prompt(self.session)  # as the log stands now
        if answer:
            shadow_answer(self.session, turn, step, answer, self.provider, self.model)


def shadow_answer(
    session: Session,
    turn: int,
    step: int,
    answer: Sequence[int],
    provider: str,
    model: str,
) -> AssistantMessageEvent:
    """Append the replace taking the surface nodes ``answer`` (consecutive surface
    seqs) off the surface; the raw log keeps them."""
    tombstone = create_assistant_message(content=(), source={"provider": provider, "model": model})
    event = session.append(
        "assistant/message",
        AssistantMessageData(turn=turn, step=step, message=tombstone),
        surface_op=Replace(start=answer[0], end=answer[-1]),
        source_event_seqs=answer,
    )
    assert isinstance(event, AssistantMessageEvent)
    return event


def is_regeneration(event: SessionEvent) -> bool:
    """Whether ``event`` is a regenerate's replace (an empty assistant message that
    shadows a surface range), for transcripts."""
    return (
        isinstance(event, AssistantMessageEvent)
        and isinstance(event.surface_op, Replace)
        and not event.data.message.content
    )


# --- edit -------------------------------------------------------------------------------


@dataclass(frozen=True)
class EditPlan:
    """Where an edit's branch starts and what its first turn receives."""

    original: UserMessage
    """The prompt being edited."""
    boundary: int
    """The last seq the branch keeps (-1: none): the event before the prompt's turn."""
    earlier: tuple[UserMessage, ...]
    """Messages that entered the same step before the prompt; they enter again with
    the edit (their ids never reached the branch's surface)."""

    def edited(self, content: ContentInput) -> UserMessage:
        """The edit: a new prompt, with a new id, whose source names the original."""
        return create_user_message(content=content, source=UserSource(edit_of=self.original.id))


def plan_edit(session: Session, message_id: MessageId | str) -> EditPlan:
    """Check that ``message_id`` names a human prompt in derived history that began its
    turn (entered its first step), and find where the branch is cut."""
    seq = session.surface_seq_of(message_id)
    if seq is None:
        raise BranchError(
            f"message {message_id!r} is not in the history of session {session.id!r}; "
            "only a prompt in the current history can be edited"
        )
    events = session.events
    event = events[seq]
    message = message_of(event)
    if not isinstance(event, UserMessageEvent) or not is_prompt(message):
        assert message is not None
        raise BranchError(
            f"message {message_id!r} (event {seq}) is {_describe(message)}; only a human "
            "prompt can be edited (regenerate() asks for a new answer instead)"
        )
    if event.surface_op != "append":
        raise BranchError(
            f"message {message_id!r} was rewritten on the surface by event {seq}; only a "
            "prompt as it was delivered can be edited"
        )
    assert isinstance(message, UserMessage)
    return _cut_before_turn(session, events, seq, message)


def _describe(message: Message) -> str:
    if isinstance(message, AssistantMessage):
        return "an assistant message"
    if isinstance(message, ToolResultMessage):
        return "a tool result"
    return f"context (source kind {message.source.kind!r}), not a human prompt"


def _cut_before_turn(
    session: Session, events: Sequence[SessionEvent], seq: int, message: UserMessage
) -> EditPlan:
    earlier: list[UserMessage] = []
    for index in range(seq - 1, -1, -1):
        event = events[index]
        if isinstance(event, UserMessageEvent) and event.surface_op == "append":
            earlier.append(event.data)
        elif isinstance(event, StepStartEvent) and event.data.step != 1:
            raise BranchError(
                f"message {message.id!r} entered step {event.data.step} of turn "
                f"{event.data.turn} (it steered a running turn); only a prompt that began "
                "a turn can be edited"
            )
        elif isinstance(event, TurnStartEvent):
            return EditPlan(message, index - 1, tuple(reversed(earlier)))
        elif isinstance(event, TurnEndEvent):
            break
    # Delivered between turns (e.g. imported): the branch starts right before it.
    return EditPlan(message, seq - 1, ())


def fork_before(session: Session, boundary: int) -> Session:
    """A fork of ``session`` keeping its events ``0..boundary`` (none when -1)."""
    if boundary >= 0:
        return session.fork(boundary)
    header = SessionHeader(
        id=new_session_id(),
        created_at=now_ms(),
        cwd=session.header.cwd,
        parent_session=session.id,
    )
    return Session.create(header=header, seed=())


async def start_branch(
    branch: Agent, store: SessionStore | None, plan: EditPlan, edited: UserMessage
) -> None:
    """Make the fork durable, then send the edit (after the messages that entered its
    step before the original) as the branch's next turn. On failure the branch loop is
    closed, so its session is not left claimed."""
    try:
        if store is not None:
            await store.flush(branch.session)
        for message in plan.earlier:
            branch.inject(message)
        branch.followup(edited)
    except BaseException:
        await branch.aclose()
        raise


__all__ = [
    "EditPlan",
    "Regeneration",
    "answer_to_last_prompt",
    "check_idle",
    "fork_before",
    "is_prompt",
    "is_regeneration",
    "plan_edit",
    "shadow_answer",
    "start_branch",
]
