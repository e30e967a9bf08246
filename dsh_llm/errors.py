"""Error types of dsh_llm; every dsh package roots its errors at :class:`DshError`.

Every public exception of dsh_llm is defined here::

    DshError
        LlmError
            InputError (also ValueError)
            AttachmentUnavailableError
        BaseUrlError (also ValueError)
        JsonValueError (also ValueError)
        MissingApiKeyError
        ModelStringError (also ValueError)

dsh_session, dsh_agent and dsh_cli each hold theirs in one module too
(``dsh_session.errors``, ``dsh_agent.errors``, ``dsh_cli._errors``), all under
:class:`DshError`.
"""

from __future__ import annotations

from dsh_llm._failure import LlmFailure

__all__ = [
    "AttachmentUnavailableError",
    "BaseUrlError",
    "DshError",
    "InputError",
    "JsonValueError",
    "LlmError",
    "MissingApiKeyError",
    "ModelStringError",
]


class DshError(Exception):
    """Root of every error dsh raises on purpose (malformed values raise pydantic's
    ``ValidationError`` instead)."""


class LlmError(DshError):
    """An error of the message vocabulary or of a model adapter. When it stands for a
    model failure, ``failure`` carries the provider-neutral facts, and a turn that ends
    because of it reports them instead of a generic ``UNKNOWN``."""

    def __init__(self, message: str, *, failure: LlmFailure | None = None) -> None:
        super().__init__(message)
        self.failure = failure


class InputError(LlmError, ValueError):
    """A value given to a creation helper or a test adapter was refused before anything
    was built: a misspelled key, or a source kind that creation does not know.
    ``field`` names the offending input (e.g. ``source.kind``, ``tool_calls[0].nme``)."""

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


class AttachmentUnavailableError(LlmError):
    """An adapter could not get an attachment's bytes to send: no reader is in effect
    (``reading_attachments``; the agent loop sets its store), the reader has none, or
    they do not hash to the reference. ``message_id`` and ``attachment_id`` name it;
    ``failure.code`` is ``ATTACHMENT_NOT_FOUND`` or ``ATTACHMENT_CORRUPT``."""

    def __init__(
        self, message: str, *, message_id: str, attachment_id: str, failure: LlmFailure
    ) -> None:
        super().__init__(message, failure=failure)
        self.message_id = message_id
        self.attachment_id = attachment_id


class BaseUrlError(DshError, ValueError):
    """A provider adapter was given a base URL it cannot use: no scheme, a scheme
    other than ``http``/``https``, no host, or text that is not a URL. Raised when the
    adapter is built, not at the first request. ``base_url`` is the value given;
    ``source`` where it came from (``base_url``, or the environment variable
    ``OPENAI_BASE_URL`` / ``ANTHROPIC_BASE_URL``)."""

    def __init__(self, message: str, *, base_url: object, source: str) -> None:
        super().__init__(message)
        self.base_url = base_url
        self.source = source


class JsonValueError(DshError, ValueError):
    """A value that is not lossless, storable JSON; the message names the path to it."""


class MissingApiKeyError(DshError):
    """A provider adapter was built for a remote endpoint with no API key: none was
    passed and the provider's environment variable is unset. ``variable`` names that
    variable (``DEEPSEEK_API_KEY``, ``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``);
    ``provider`` the provider. A server on this machine (127.0.0.0/8, ``localhost``,
    ``::1``) needs no key."""

    def __init__(self, message: str, *, variable: str, provider: str) -> None:
        super().__init__(message)
        self.variable = variable
        self.provider = provider


class ModelStringError(DshError, ValueError):
    """A model string (``"openai:gpt-4.1"``, ...) that is malformed or names a provider
    dsh does not know; the message lists the accepted forms."""
