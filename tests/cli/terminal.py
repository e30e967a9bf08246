"""Driving a command through a pseudo-terminal, as a person at a keyboard would.

The child gets the terminal as its controlling terminal, so the line discipline does
what a real one does: it echoes input, delivers a line on Enter, and turns Ctrl-C
(``\\x03``) into SIGINT for the child.
"""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import termios
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import pyte

_ESCAPE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\r")


def _become_terminal_owner() -> None:
    """In the child, after ``setsid``: make standard input its controlling terminal."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Terminal:
    """A child process on a pseudo-terminal, with ``expect``-style reading."""

    def __init__(self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str]) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 160, 0, 0))
        self.process = subprocess.Popen(
            list(argv),
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
            preexec_fn=_become_terminal_owner,
        )
        os.close(slave)
        self._master = master
        self.output = ""
        """Everything the child printed so far, without terminal escape codes."""
        self._searched = 0
        self._screen = pyte.Screen(160, 50)
        self._screen_stream = pyte.ByteStream(self._screen)

    def screen(self) -> list[str]:
        """The lines on the terminal's screen now, as a terminal would show them
        (a program that redraws a line shows only its last drawing)."""
        return [line.rstrip() for line in self._screen.display]

    def expect_screen(self, text: str, timeout: float = 20.0) -> str:
        """Wait until a screen line contains ``text``; return that line."""
        deadline = time.monotonic() + timeout
        while True:
            found = [line for line in self.screen() if text in line]
            if found:
                return found[-1]
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._read(remaining):
                screen = "\n".join(self.screen())
                raise AssertionError(f"{text!r} is not on the screen:\n{screen}")

    def expect(self, text: str, timeout: float = 20.0) -> None:
        """Wait until ``text`` appears in output not yet matched; fail after ``timeout``."""
        deadline = time.monotonic() + timeout
        while (found := self.output.find(text, self._searched)) < 0:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._read(remaining):
                raise AssertionError(f"{text!r} did not appear; output so far:\n{self.output}")
        self._searched = found + len(text)

    def read_more(self, timeout: float = 20.0) -> None:
        """Wait for the child to print something more; fail after ``timeout``."""
        if not self._read(timeout):
            screen = "\n".join(self.screen())
            raise AssertionError(f"nothing more was printed; the screen:\n{screen}")

    def type(self, keys: str) -> None:
        """Send keystrokes (``\\r`` is Enter, ``\\x03`` is Ctrl-C)."""
        os.write(self._master, keys.encode())

    def wait(self, timeout: float = 20.0) -> int:
        """Wait for the child to exit, collecting the rest of its output."""
        deadline = time.monotonic() + timeout
        while self.process.poll() is None and time.monotonic() < deadline:
            self._read(0.1)
        while self._read(0.1):
            pass
        return self.process.wait(timeout=max(0.0, deadline - time.monotonic()))

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        os.close(self._master)

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self._master], [], [], timeout)
        if not ready:
            return False
        try:
            data = os.read(self._master, 65536)
        except OSError:  # the child closed the terminal
            return False
        self._screen_stream.feed(data)
        self.output += _ESCAPE.sub("", data.decode("utf-8", errors="replace"))
        return bool(data)
