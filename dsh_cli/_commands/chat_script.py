"""``dsh chat`` when standard input is not a terminal: one prompt per line.

Each line is run to idle before the next is read, and the reply is written to
standard output as it streams, ending with a newline; notes and failures go to
standard error. So a chat can be scripted (``printf 'hi\\n' | dsh chat ...``) and the
exit status says whether every turn completed (and every command line, ``/approve``,
``/deny``, ``/edit``, an unknown ``/command``, was accepted). Calls left waiting for
approval are listed after each line.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import TextIO

from dsh_agent import AgentLoop
from dsh_cli._commands.chat_approvals import decide_line, pending_note
from dsh_cli._commands.chat_branching import is_branch_command, run_branch_command
from dsh_cli._commands.chat_control import EXIT_COMMANDS, InterruptPolicy, deliver_line
from dsh_cli._commands.failures import one_line
from dsh_cli._commands.render import describe_reason, describe_retry
from dsh_llm import DshError, TextDeltaChunk
from dsh_session import AssistantChunkEvent, SessionEvent, TurnEndEvent
from dsh_session.events import LlmRetryEvent


class _ReplyWriter:
    """Writes streamed reply text to ``out``, a newline ending each reply that printed
    text; says on ``errors`` why a turn did not complete, and counts such turns."""

    def __init__(self, out: TextIO, errors: TextIO) -> None:
        self._out = out
        self._errors = errors
        self._mid_line = False
        self.failed_turns = 0

    def __call__(self, event: SessionEvent) -> None:
        if isinstance(event, AssistantChunkEvent) and isinstance(event.data.chunk, TextDeltaChunk):
            self._out.write(event.data.chunk.text)
            self._out.flush()
            self._mid_line = True
        elif isinstance(event, LlmRetryEvent):
            self._end_line()  # a failed attempt's streamed prefix stays on its own line
            self._errors.write(f"dsh: {describe_retry(event)}\n")
        elif isinstance(event, TurnEndEvent):
            self._end_line()
            reason = event.data.reason
            if reason.kind not in ("completed", "max-tokens"):
                self.failed_turns += 1
                self._errors.write(f"dsh: turn {event.data.turn} {describe_reason(reason)}\n")

    def _end_line(self) -> None:
        if self._mid_line:
            self._out.write("\n")
            self._out.flush()
            self._mid_line = False


async def _until_idle(agent: AgentLoop, interrupts: InterruptPolicy) -> bool:
    """Wait for the running turn(s) to end, Ctrl-C cancelling; True when the user
    pressed Ctrl-C to leave."""
    leaving = False

    def on_interrupt() -> None:
        nonlocal leaving
        leaving = interrupts.press() or leaving

    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, on_interrupt)
    try:
        await agent.when_idle()
    finally:
        loop.remove_signal_handler(signal.SIGINT)
    return leaving


async def chat_from_lines(agent: AgentLoop, lines: TextIO) -> int:
    """Run every line of ``lines`` to idle; the status is 1 if a turn did not complete
    or a ``/regenerate`` or ``/edit`` was refused. Lines are read on the event loop's
    thread: the agent is idle while we wait for one, and Ctrl-C there stops the command
    at once. After ``/edit`` the chat goes on with the new branch's agent."""
    first = agent
    writer = _ReplyWriter(sys.stdout, sys.stderr)
    unsubscribe = agent.session.subscribe(writer)
    interrupts = InterruptPolicy(agent)
    refused = 0
    try:
        while line := lines.readline():
            if line.strip() in EXIT_COMMANDS:
                break
            if is_branch_command(line):
                try:
                    branched = await run_branch_command(agent, line)
                except DshError as error:
                    refused += 1
                    sys.stderr.write(f"dsh: error: {one_line(error)}\n")
                    continue
                if branched.agent is not agent:
                    unsubscribe()
                    agent = branched.agent
                    unsubscribe = agent.session.subscribe(writer)
                    interrupts = InterruptPolicy(agent)
                note: str | None = branched.note
            else:
                try:
                    note = await decide_line(agent, line, answers=False)
                    if note is None:
                        note = deliver_line(agent, line)
                except DshError as error:
                    refused += 1
                    note = f"error: {one_line(error)}"
            if note is not None:
                sys.stderr.write(f"dsh: {note}\n")
            if await _until_idle(agent, interrupts):
                break
            waiting = pending_note(agent.pending_approvals)
            if waiting is not None:
                sys.stderr.write(f"dsh: {waiting}\n")
    finally:
        unsubscribe()
        if agent is not first:  # a branch /edit moved to: this chat's to close
            await agent.aclose()
    return 1 if writer.failed_turns or refused else 0


__all__ = [
    "chat_from_lines",
]
