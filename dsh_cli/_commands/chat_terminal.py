"""``dsh chat`` at a terminal: talk while the model works.

prompt_toolkit owns the terminal: the input line stays at the bottom, and everything
the chat prints goes above it (``patch_stdout``), so what the user types is never
mixed into a streamed reply. The reply's unfinished line is shown just above the
input line until it ends (:class:`HeldLine`), and the prompt reads ``steer ›`` while
a turn runs. Each line the user enters becomes a
steer of the running turn, or a new turn when the agent is idle; while a tool call
waits for approval the prompt asks about it (y/n, :mod:`.chat_approvals`). Ctrl-C goes through
:class:`~.chat_control.InterruptPolicy`; Ctrl-D leaves once the running turn has ended.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable

from prompt_toolkit import PromptSession
from prompt_toolkit.formatted_text import ANSI, FormattedText, StyleAndTextTuples
from prompt_toolkit.patch_stdout import patch_stdout
from rich.text import Text

from dsh_agent import AgentLoop, LiveUpdate, StatusUpdate
from dsh_cli._commands.chat_approvals import ask_prompt, decide_line
from dsh_cli._commands.chat_branching import HELP as BRANCH_HELP
from dsh_cli._commands.chat_branching import is_branch_command, run_branch_command
from dsh_cli._commands.chat_control import (
    EXIT_COMMANDS,
    HELP_COMMAND,
    InterruptPolicy,
    commands_note,
    deliver_line,
)
from dsh_cli._commands.chat_recap import print_recap
from dsh_cli._commands.failures import one_line
from dsh_cli._commands.render import TranscriptPrinter, note_text
from dsh_cli._commands.terminal_text import SafeConsole
from dsh_llm import DshError

HELP_TEXT = (
    "Type a message and press Enter. While the model answers, what you type steers "
    "the running turn. /inject TEXT adds context without starting a turn. A tool call "
    "waiting for approval is asked about: y runs it, n [REASON] refuses it (or /approve "
    f"CALL, /deny CALL [REASON]). {BRANCH_HELP} Ctrl-C cancels the turn (keeping what "
    "is pending); Ctrl-C again, Ctrl-D or /exit leaves. /help lists the commands; "
    "// starts a message that begins with /."
)
PROMPT = "you › "
STEER_PROMPT = "steer › "
"""The prompt while a turn runs: what is entered then steers that turn."""


class HeldLine(io.StringIO):
    """The chat console's file: complete lines go on to standard output (above the
    prompt, under ``patch_stdout``); the unfinished last line is held in :attr:`held`
    for the prompt to show, since text written above a prompt without its newline
    would be painted over. After :meth:`release` everything passes straight through."""

    def __init__(self, on_change: Callable[[], None]) -> None:
        super().__init__()
        self.held = ""
        self._on_change = on_change
        self._holding = True

    def write(self, text: str) -> int:
        if not self._holding:
            sys.stdout.write(text)
            return len(text)
        done, newline, rest = (self.held + text).rpartition("\n")
        if newline:
            sys.stdout.write(done + newline)
            sys.stdout.flush()
        self.held = rest
        self._on_change()
        return len(text)

    def flush(self) -> None:
        if not self._holding:
            sys.stdout.flush()

    def isatty(self) -> bool:
        return sys.__stdout__ is not None and sys.__stdout__.isatty()

    def write_above(self, lines: str) -> None:
        """Write complete ``lines`` above the held line, which stays held: a note
        that comes while a reply streams goes above it, and the reply goes on on its
        own line under its one label."""
        sys.stdout.write(lines)
        sys.stdout.flush()
        self._on_change()

    def release(self) -> None:
        """Stop holding: write the held text and pass everything through from now on."""
        self._holding = False
        held, self.held = self.held, ""
        self.write(held)
        self.flush()


class TerminalChat:
    """One interactive chat over ``agent`` on the process's terminal."""

    def __init__(self, agent: AgentLoop, *, recap: bool = False) -> None:
        self._agent = agent
        self._recap = recap
        self._prompt: PromptSession[str] = PromptSession(erase_when_done=True)
        self._out = HeldLine(self._prompt.app.invalidate)
        self._console = SafeConsole(file=self._out, soft_wrap=True)
        self._printer = TranscriptPrinter(self._console, live=True)
        self._interrupts = InterruptPolicy(agent)
        self._unsubscribe: tuple[Callable[[], None], ...] = ()

    async def run(self) -> int:
        """Chat until the user leaves; a running turn is cancelled on the way out,
        unless the user ended the input (then it is allowed to finish). Pending
        input is kept in the session's durable inbox either way."""
        first = self._agent
        self._observe(first)
        try:
            with patch_stdout(raw=True):
                if self._recap:
                    print_recap(self._printer, first.session)
                self._printer.note(HELP_TEXT)
                end_of_input = await self._read_lines()
                self._out.release()
                agent = self._agent
                if agent.status == "running" and not end_of_input:
                    agent.cancel("user", keep_inbox=True)
                await agent.when_idle()
                self._printer.print_line(Text())
                self._note_pending()
        finally:
            self._stop_observing()
            if self._agent is not first:  # a branch /edit moved to: this chat's to close
                await self._agent.aclose()
        return 0

    def _observe(self, agent: AgentLoop) -> None:
        """Print ``agent``'s session and follow its status (a new agent after /edit)."""
        self._agent = agent
        self._interrupts = InterruptPolicy(agent)
        self._unsubscribe = (
            agent.session.subscribe(self._printer),
            agent.subscribe(self._on_notification),
        )

    def _stop_observing(self) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()

    async def _read_lines(self) -> bool:
        """Hand each entered line to the agent until the user leaves; True when the
        user ended the input (Ctrl-D)."""
        while True:
            try:
                line = await self._prompt.prompt_async(self._message)
            except KeyboardInterrupt:
                if self._interrupts.press():
                    return False
                self._aside("cancelling the turn; press Ctrl-C again to leave")
                continue
            except EOFError:
                return True
            if line.strip() in EXIT_COMMANDS:
                return False
            if is_branch_command(line):
                await self._branch(line)
            else:
                await self._on_line(line)

    def _message(self) -> FormattedText:
        """The prompt: the reply's unfinished line, if any, above ``you ›``."""
        fragments: StyleAndTextTuples = []
        if self._out.held:
            fragments += [*ANSI(self._out.held).__pt_formatted_text__(), ("", "\n")]
        running = self._agent.status == "running"
        question = None if running else ask_prompt(self._agent.pending_approvals)
        if question is not None:
            fragments.append(("bold ansiyellow", question))
        else:
            fragments.append(("bold ansicyan", STEER_PROMPT if running else PROMPT))
        return FormattedText(fragments)

    def _on_notification(self, notification: LiveUpdate) -> None:
        if isinstance(notification, StatusUpdate):
            self._prompt.app.invalidate()  # the prompt says whether a turn runs

    async def _on_line(self, line: str) -> None:
        """Deliver ``line``; it is not echoed here (the input line is erased when
        entered), since the transcript shows each message when the model gets it."""
        if line.strip() == HELP_COMMAND:
            self._aside(f"{HELP_TEXT} ({commands_note()})")
            return
        try:
            note = await decide_line(self._agent, line, answers=True)
            if note is None:
                note = deliver_line(self._agent, line)
        except DshError as error:
            self._aside(f"error: {one_line(error)}", "red")
            return
        if note is not None:
            self._aside(note)

    async def _branch(self, line: str) -> None:
        """Run ``/regenerate`` or ``/edit``; after an edit, follow the new branch."""
        try:
            branched = await run_branch_command(self._agent, line)
        except DshError as error:
            self._aside(f"error: {one_line(error)}", "red")
            return
        if branched.agent is not self._agent:
            self._stop_observing()
            self._observe(branched.agent)
        self._aside(branched.note)

    def _aside(self, text: str, style: str = "dim") -> None:
        """What the chat says about the user's input: above the reply's unfinished
        line while one streams (the reply is not cut), else a note of its own."""
        if not self._out.held:
            self._printer.note(text, style)
            return
        with self._console.capture() as captured:
            self._console.print(note_text(text, style))
        self._out.write_above(captured.get())

    def _note_pending(self) -> None:
        inbox = self._agent.inbox
        count = len(inbox.next_step) + len(inbox.next_turn)
        if count:
            self._printer.note(
                f"{count} pending message(s) kept in session {self._agent.id}; the model "
                f"sees them at its next turn (dsh chat --session {self._agent.id})",
                "yellow",
            )


__all__ = [
    "HELP_TEXT",
    "PROMPT",
    "STEER_PROMPT",
    "HeldLine",
    "TerminalChat",
]
