"""The ``ToolErrorInfo.code`` values: why a ``tool/result`` is an error, in one place.

The model never sees a code (it reads the result's text); a code is for programs that
read the log: a UI marking results crash repair wrote, a trace's ``error.type``, a
policy deciding what to retry. Crash repair's two codes are the TypeScript harness's
own, so a repaired log reads the same whichever side repaired it. Codes are plain
strings, and a reader must accept any code: another writer may use its own.

This is the one module that spells them: ``dsh_session`` writes two of them (crash
repair), ``dsh_agent`` the others, and both import them from here. The model's own
failure codes (``LlmFailure.code``) are in :mod:`dsh_llm.failure_codes`.
"""

from __future__ import annotations

__all__ = [
    "ABORTED_BEFORE_DISPATCH",
    "TOOL_APPROVAL_DENIED",
    "TOOL_ARGUMENTS_INVALID",
    "TOOL_CALL_LIMIT_EXCEEDED",
    "TOOL_CANCELLED",
    "TOOL_ERROR",
    "TOOL_FAILED",
    "TOOL_NOT_FOUND",
    "TOOL_NOT_STARTED",
    "TOOL_OUTCOME_UNKNOWN",
]

TOOL_FAILED = "TOOL_FAILED"
"""The handler raised; the error's class name is ``ToolErrorInfo.name``."""
TOOL_NOT_FOUND = "TOOL_NOT_FOUND"
"""The model called a tool the agent does not have; nothing ran."""
TOOL_ARGUMENTS_INVALID = "TOOL_ARGUMENTS_INVALID"
"""The arguments were not JSON, or did not validate against the tool's schema; the
handler never saw them."""
TOOL_CANCELLED = "TOOL_CANCELLED"
"""The call was running when the turn was cancelled; any output it returned is kept
behind a notice."""
TOOL_APPROVAL_DENIED = "TOOL_APPROVAL_DENIED"
"""A person denied the call (``agent.deny``); it never ran."""
TOOL_NOT_STARTED = "TOOL_NOT_STARTED"
"""The call was never started: crash repair found no ``tool/call`` for it, or the loop
failed before it ran. Running it again is safe."""
TOOL_OUTCOME_UNKNOWN = "TOOL_OUTCOME_UNKNOWN"
"""Crash repair found a ``tool/call`` but no result: the call may have had its
effects. Never rerun blindly."""
ABORTED_BEFORE_DISPATCH = "ABORTED_BEFORE_DISPATCH"
"""The turn was cancelled before the call started; it never ran."""
TOOL_ERROR = "TOOL_ERROR"
"""Never written to the log: the ``error.type`` a trace gives a result the tool itself
marked as an error (``ToolOutput(is_error=True)``), which carries no code."""
TOOL_CALL_LIMIT_EXCEEDED = "TOOL_CALL_LIMIT_EXCEEDED"
"""The agent's tool call limit (``UsageLimits.tool_calls_limit``) refused the call
before it started; it never ran, and the turn ended with ``USAGE_LIMIT_EXCEEDED``."""
