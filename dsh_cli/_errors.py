"""Error types of the ``dsh`` command line, rooted at :class:`dsh_llm.DshError`.

The command line is an application, not a library, so nothing here is exported: each
error ends a command with its message (see ``_commands/failures.py``). All of them are
defined here::

    dsh_llm.DshError
        ChatSetupError
        ToolSpecError
        SessionIdError
        UnreadableSessionError
        DeleteNotConfirmedError
"""

from __future__ import annotations

from dsh_llm.errors import DshError

__all__ = [
    "ChatSetupError",
    "DeleteNotConfirmedError",
    "SessionIdError",
    "ToolSpecError",
    "UnreadableSessionError",
]


class ChatSetupError(DshError):
    """``dsh chat`` cannot start with the options given (e.g. no API key)."""


class ToolSpecError(DshError):
    """``--tools`` does not name a sequence of tools."""


class SessionIdError(DshError):
    """An id given on the command line names no stored session, or is the start of
    several ids. ``given`` is what was typed, ``matches`` the ids it could mean."""

    def __init__(self, message: str, *, given: str, matches: tuple[str, ...]) -> None:
        super().__init__(message)
        self.given = given
        self.matches = matches


class UnreadableSessionError(DshError):
    """A stored session exists but cannot be loaded: its log is damaged or written in
    a format this version cannot read. The message names the session."""


class DeleteNotConfirmedError(DshError):
    """``dsh sessions delete`` was not confirmed: declined at the prompt, or run
    without a terminal to ask at and without ``--yes``. Nothing was deleted."""
