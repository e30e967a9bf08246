"""``dsh chat`` at a terminal: talk while the model works.

Input is read from the terminal with the event loop's reader, so lines arrive while
a reply streams; each becomes a steer of the running turn (or a new turn when the
agent is idle). Ctrl-C goes through :class:`~.chat_control.InterruptPolicy`; Ctrl-D
leaves once the running turn has ended.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import signal
import sys

from rich.console import Console
from rich.text import Text

from dsh_agent.commands.chat_control import EXIT_COMMANDS, InterruptPolicy, deliver_line
from dsh_agent.commands.failures import one_line
from dsh_agent.commands.render import TranscriptPrinter
from dsh_agent.loop import AgentLoop
from dsh_agent.notifications import Notification, StatusChanged
from dsh_llm.errors import DshError

HELP_TEXT = (
    "Type a message and press Enter. While the model answers, what you type steers "
    "the running turn. /inject TEXT adds context without starting a turn. Ctrl-C "
    "cancels the turn; Ctrl-C again, Ctrl-D or /exit leaves."
)


class TerminalChat:
    """One interactive chat over ``agent``, printing to ``console``."""

    def __init__(self, agent: AgentLoop, console: Console) -> None:
        self._agent = agent
        self._console = console
        self._printer = TranscriptPrinter(console, live=True)
        self._interrupts = InterruptPolicy(agent)
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""
        self._leaving = asyncio.Event()
        self._end_of_input = False

    async def run(self) -> int:
        """Chat until the user leaves; a running turn is cancelled on the way out,
        unless the user ended the input (then it is allowed to finish)."""
        agent = self._agent
        loop = asyncio.get_running_loop()
        fd = sys.stdin.fileno()
        unsubscribe_log = agent.session.subscribe(self._printer)
        unsubscribe_agent = agent.subscribe(self._on_notification)
        loop.add_reader(fd, self._on_readable, fd)
        loop.add_signal_handler(signal.SIGINT, self._on_interrupt)
        self._note(HELP_TEXT)
        self._prompt()
        try:
            await self._leaving.wait()
            if agent.status == "running" and not self._end_of_input:
                agent.cancel("user")
            await agent.when_idle()
        finally:
            loop.remove_signal_handler(signal.SIGINT)
            loop.remove_reader(fd)
            unsubscribe_agent()
            unsubscribe_log()
            self._console.print()
        return 0

    def _on_readable(self, fd: int) -> None:
        data = os.read(fd, 4096)
        if not data:  # end of input stays readable: stop watching it
            asyncio.get_running_loop().remove_reader(fd)
            self._end_of_input = True
            self._leaving.set()
            return
        self._pending += self._decoder.decode(data)
        while "\n" in self._pending:
            line, self._pending = self._pending.split("\n", 1)
            self._on_line(line)

    def _on_line(self, line: str) -> None:
        if line.strip() in EXIT_COMMANDS:
            self._leaving.set()
            return
        if line.strip() == "/help":
            self._note(HELP_TEXT)
            return
        try:
            note = deliver_line(self._agent, line)
        except DshError as error:
            self._printer.note(f"error: {one_line(error)}", "red")
            return
        if note is not None:
            self._note(note)

    def _on_interrupt(self) -> None:
        if self._interrupts.press():
            self._leaving.set()
        else:
            self._note("cancelling the turn; press Ctrl-C again to leave")

    def _on_notification(self, notification: Notification) -> None:
        if isinstance(notification, StatusChanged) and notification.status == "idle":
            self._prompt()

    def _prompt(self) -> None:
        if not self._leaving.is_set():
            self._console.print(Text("you › ", style="bold cyan"), end="")

    def _note(self, text: str) -> None:
        self._printer.note(text)
