"""Error types of the ``dsh`` command line, rooted at :class:`dsh_llm.DshError`.

The command line is an application, not a library, so nothing here is exported: each
error ends a command with its message (see ``_commands/failures.py``). All of them are
defined here::

    dsh_llm.DshError
        ChatSetupError
        ChatCommandError
        StoreOptionError
        ToolSpecError
        SessionIdError
        UnreadableSessionError
        DeleteNotConfirmedError
"""

from __future__ import annotations

from dsh_llm.errors import DshError

__all__ = [
    "ChatCommandError",
    "ChatSetupError",
    "DeleteNotConfirmedError",
    "SessionIdError",
    "StoreOptionError",
    "ToolSpecError",
    "UnreadableSessionError",
]


class ChatSetupError(DshError):
    """``dsh chat`` cannot start with the options given (e.g. no API key)."""


class ChatCommandError(DshError):
    """A line typed into ``dsh chat`` starts with ``/`` but names no chat command;
    nothing was sent to the model."""


class StoreOptionError(DshError):
    """``--store`` names no usable store (a bad URL, a missing extra, a missing store),
    or a store failure, reworded to name the store as the user typed it."""


class ToolSpecError(DshError):
    """``--tools`` or ``--deps`` does not name what it should: a tool or a sequence
    of tools, or a function that makes the tools' dependencies."""


class SessionIdError(DshError):
    """An id given on the command line names no stored session (one that is the
    start of several is :class:`~dsh_session.AmbiguousSessionIdError`)."""


class UnreadableSessionError(DshError):
    """A stored session exists but cannot be loaded: its log is damaged or written in
    a format this version cannot read. The message names the session."""


class DeleteNotConfirmedError(DshError):
    """``dsh sessions delete`` ran without a terminal to ask at and without ``--yes``.
    Nothing was deleted."""
