"""``dsh demo``: the whole SDK in one offline run.

A real :class:`~dsh_agent.AgentLoop` over a real store talks to the demo's
scripted assistant (two tools, a steer while a tool runs, injected context, a
follow-up turn). The conversation is printed as it streams; then the durable log is
summarized, one prompt is followed by id through inbox, log, history and request, and
every request is re-built from the log and compared with the request actually sent.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from rich.console import Console
from rich.table import Table
from rich.text import Text

from dsh_agent import AgentLoop, LiveUpdate, MessageClaimed, MessageQueued
from dsh_cli._commands.demo_assistant import DEMO_TOOLS, demo_model
from dsh_cli._commands.output import stdout_console
from dsh_cli._commands.rebuild import (
    RebuiltRequest,
    print_differences,
    rebuild_requests,
    request_table,
)
from dsh_cli._commands.render import TranscriptPrinter, describe_reason, speaker
from dsh_cli._commands.storage import DEFAULT_STORE_URL, add_store_argument
from dsh_cli._commands.store_option import shown_store, store_for
from dsh_llm import GenerateRequest, Message, UserMessage, create_user_message
from dsh_llm.testing import FunctionAdapter
from dsh_session import (
    Session,
    SessionEvent,
    ToolCallEvent,
    TurnEndEvent,
    UserMessageEvent,
)

HELP = "run an offline demo conversation and show what the durable log holds"

PROVIDER = "demo"
MODEL = "weather-and-sums"
SYSTEM = "You are a concise assistant with a weather tool and a calculator."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_argument(parser)
    parser.add_argument(
        "--delay",
        type=float,
        default=0.03,
        metavar="SECONDS",
        help="pause before each streamed chunk (default 0.03; 0 runs at full speed)",
    )


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_demo(args.store, args.delay))


@dataclass
class _Recorder:
    """What the demo observes live: inbox insertions and the first tool call."""

    inserted: list[UserMessage] = field(default_factory=list)
    claimed: list[UserMessage] = field(default_factory=list)
    tool_started: asyncio.Event = field(default_factory=asyncio.Event)

    def notification(self, notification: LiveUpdate) -> None:
        if isinstance(notification, MessageQueued):
            self.inserted.append(notification.message)
        elif isinstance(notification, MessageClaimed):
            self.claimed.append(notification.message)

    def event(self, event: SessionEvent) -> None:
        if isinstance(event, ToolCallEvent):
            self.tool_started.set()


async def _until_a_tool_runs(agent: AgentLoop, recorder: _Recorder) -> None:
    """Wait for the first tool call, or for the turn to end without one."""
    waiters = {
        asyncio.ensure_future(recorder.tool_started.wait()),
        asyncio.ensure_future(agent.when_idle()),
    }
    _, pending = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    for waiter in pending:
        waiter.cancel()


async def _converse(agent: AgentLoop, recorder: _Recorder) -> UserMessage:
    """Play the scripted conversation; return the first prompt (followed in the summary)."""
    prompt = create_user_message(content="What's the weather in Paris?", source={"kind": "user"})
    agent.followup(prompt)
    await _until_a_tool_runs(agent, recorder)
    # The weather tool is running: this steer joins the turn at its next step.
    agent.steer(create_user_message(content="Also, what is 21 * 2?", source={"kind": "user"}))
    await agent.when_idle()
    # Context that does not wake the agent; it rides along with the next prompt.
    agent.inject(
        create_user_message(
            content="The user is planning a trip.", source={"kind": "plugin", "plugin": "demo"}
        )
    )
    agent.followup(create_user_message(content="How about Tokyo?", source={"kind": "user"}))
    await agent.when_idle()
    return prompt


@dataclass(frozen=True)
class _Conversation:
    """What the demo's conversation left behind, for the report."""

    session: Session
    prompt: UserMessage
    """The first prompt, followed by id through every representation."""
    recorder: _Recorder
    sent: Sequence[GenerateRequest]
    """The requests the adapter received, in order."""


async def _demo(store_url: str, delay: float) -> int:
    console = stdout_console()
    conversation = await _hold_conversation(store_url, delay, console)
    console.print()
    return _report(console, conversation, store_url)


async def _hold_conversation(store_url: str, delay: float, console: Console) -> _Conversation:
    """Run the conversation through a real loop and store, printing it as it streams."""
    adapter = FunctionAdapter(demo_model, delay=delay)
    session = Session.create()
    # The agent is closed before the store (the nesting says so), Ctrl-C included:
    # the cancelled turn's end is flushed while the store is still open.
    async with (
        store_for(store_url, "create") as store,
        AgentLoop(
            session=session,
            adapter=adapter,
            provider=PROVIDER,
            model=MODEL,
            system=SYSTEM,
            tools=DEMO_TOOLS,
            store=store,
        ) as agent,
    ):
        recorder = _Recorder()
        agent.subscribe(recorder.notification)
        session.subscribe(recorder.event)
        session.subscribe(TranscriptPrinter(console, live=True))
        prompt = await _converse(agent, recorder)
    return _Conversation(session, prompt, recorder, adapter.requests)


def _report(console: Console, conversation: _Conversation, store_url: str) -> int:
    """Print what the log holds; the status is 1 if a turn failed or a request differs."""
    session = conversation.session
    _print_log_summary(console, session, store_url)
    rebuilt = rebuild_requests(session.events, conversation.sent)
    _print_identity(console, conversation, rebuilt)
    matched = _print_rebuilds(console, rebuilt, conversation.sent)
    completed = _print_unfinished_turns(console, session)
    store_option = "" if store_url == DEFAULT_STORE_URL else f" --store {shown_store(store_url)}"
    console.print(
        Text(
            f"next: dsh sessions show {session.id}{store_option}\n"
            f"      dsh sessions verify {session.id}{store_option}",
            style="dim",
        )
    )
    return 0 if matched and completed else 1


def _print_log_summary(console: Console, session: Session, store_url: str) -> None:
    console.rule(Text("the durable log", style="bold"))
    console.print(
        f"session {session.id} in {shown_store(store_url)}: {session.seq} events, "
        f"{session.last_turn} turns"
    )
    table = Table(title="model-visible history (derived from the log)", title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("from", no_wrap=True)
    table.add_column("message id", no_wrap=True)
    for index, message in enumerate(session.derive_messages(), start=1):
        source = "assistant" if message.role == "assistant" else speaker(message)
        table.add_row(str(index), source, message.id)
    console.print(table)


def _holding(messages: Sequence[Message], prompt: UserMessage) -> list[Message]:
    return [message for message in messages if message.id == prompt.id]


def _print_identity(
    console: Console, conversation: _Conversation, rebuilt: Sequence[RebuiltRequest]
) -> None:
    """Follow the prompt by id through every representation, and show that Python
    hands around the very same object."""
    prompt, session = conversation.prompt, conversation.session
    places: list[tuple[str, list[Message]]] = [
        ("inbox (inserted)", _holding(conversation.recorder.inserted, prompt)),
        ("inbox (claimed)", _holding(conversation.recorder.claimed, prompt)),
    ]
    places += [
        (f"log (seq {event.seq})", [event.data])
        for event in session.events
        if isinstance(event, UserMessageEvent) and event.data.id == prompt.id
    ]
    places += [
        (f"history (#{index})", [message])
        for index, message in enumerate(session.derive_messages(), start=1)
        if message.id == prompt.id
    ]
    for label, requests in (
        ("requests sent", conversation.sent),
        ("requests rebuilt", [item.request for item in rebuilt]),
    ):
        found = [(n, _holding(r.messages, prompt)) for n, r in enumerate(requests, start=1)]
        numbers = [n for n, held in found if held]
        span = f"#{numbers[0]}-#{numbers[-1]}" if numbers else "none"
        places.append((f"{label} ({span})", [m for _, held in found for m in held]))
    table = Table(title=f"one prompt, one value: {prompt.id}", title_justify="left")
    table.add_column("where", no_wrap=True)
    table.add_column("message id", no_wrap=True)
    table.add_column("same object")
    for where, values in places:
        same = bool(values) and all(value is prompt for value in values)
        table.add_row(where, prompt.id if values else "-", "yes" if same else "NO")
    console.print(table)


def _print_rebuilds(
    console: Console, rebuilt: Sequence[RebuiltRequest], sent: Sequence[GenerateRequest]
) -> bool:
    """The rebuilt requests and their comparison; True when every one matched."""
    console.print(request_table(rebuilt))
    print_differences(console, rebuilt)
    mismatched = sum(1 for item in rebuilt if item.differences) + max(0, len(sent) - len(rebuilt))
    if mismatched:
        console.print(Text(f"✗ {mismatched} request(s) differ from their rebuild", style="red"))
        return False
    console.print(
        Text.assemble(
            ("✓ ", "green"),
            f"all {len(rebuilt)} requests sent were re-built identically from the log alone",
        )
    )
    return True


def _print_unfinished_turns(console: Console, session: Session) -> bool:
    """Name every turn that did not complete; True when all did."""
    unfinished = [
        event.data
        for event in session.events
        if isinstance(event, TurnEndEvent) and event.data.reason.kind != "completed"
    ]
    for end in unfinished:
        console.print(Text(f"✗ turn {end.turn}: {describe_reason(end.reason)}", style="red"))
    return not unfinished


__all__ = [
    "HELP",
    "MODEL",
    "PROVIDER",
    "SYSTEM",
    "add_arguments",
    "run",
]
