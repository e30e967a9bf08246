"""Attribute and span names: the OpenTelemetry GenAI semantic conventions, plus dsh's own
``dsh.*`` keys that link each span to the log entries it corresponds to."""

from __future__ import annotations

from typing import Final

OPERATION: Final = "gen_ai.operation.name"
PROVIDER: Final = "gen_ai.provider.name"
CONVERSATION_ID: Final = "gen_ai.conversation.id"
AGENT_NAME: Final = "gen_ai.agent.name"
REQUEST_MODEL: Final = "gen_ai.request.model"
REQUEST_MAX_TOKENS: Final = "gen_ai.request.max_tokens"
RESPONSE_MODEL: Final = "gen_ai.response.model"
RESPONSE_ID: Final = "gen_ai.response.id"
FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
CACHE_READ_TOKENS: Final = "gen_ai.usage.cache_read.input_tokens"
TOOL_NAME: Final = "gen_ai.tool.name"
TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
TOOL_TYPE: Final = "gen_ai.tool.type"
ERROR_TYPE: Final = "error.type"

# Opt-in content (``include_content=True``): JSON text, as the conventions allow.
SYSTEM_INSTRUCTIONS: Final = "gen_ai.system_instructions"
INPUT_MESSAGES: Final = "gen_ai.input.messages"
OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
TOOL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
TOOL_RESULT: Final = "gen_ai.tool.call.result"

SESSION_ID: Final = "dsh.session.id"
TURN: Final = "dsh.turn"
STEP: Final = "dsh.step"
START_SEQ: Final = "dsh.event.seq"
"""The seq of the event that opened the span (``turn/start``, ``step/start`` or
``llm/retry-started``, ``tool/call``)."""
END_SEQ: Final = "dsh.event.end_seq"
"""The seq of the event that closed it (``turn/end``, the attempt's last event,
``tool/result``)."""
INPUT_MESSAGE_IDS: Final = "dsh.request.message_ids"
"""The ``MessageId`` of every message the request carried, in request order."""
OUTPUT_MESSAGE_ID: Final = "dsh.response.message_id"
"""The ``MessageId`` of the assistant message the request produced (if one was kept)."""
TURN_INPUT_MESSAGE_IDS: Final = "dsh.turn.input_message_ids"
"""The ids of the user messages that entered the surface during the turn."""
RESULT_MESSAGE_ID: Final = "dsh.tool_result.message_id"
"""The ``MessageId`` of the tool result message committed for the call."""
TURN_END_REASON: Final = "dsh.turn.end_reason"
FAILURE_CODE: Final = "dsh.failure.code"
INTERRUPTED: Final = "dsh.interrupted"

__all__ = [
    "AGENT_NAME",
    "CACHE_READ_TOKENS",
    "CONVERSATION_ID",
    "END_SEQ",
    "ERROR_TYPE",
    "FAILURE_CODE",
    "FINISH_REASONS",
    "INPUT_MESSAGES",
    "INPUT_MESSAGE_IDS",
    "INPUT_TOKENS",
    "INTERRUPTED",
    "OPERATION",
    "OUTPUT_MESSAGES",
    "OUTPUT_MESSAGE_ID",
    "OUTPUT_TOKENS",
    "PROVIDER",
    "REQUEST_MAX_TOKENS",
    "REQUEST_MODEL",
    "RESPONSE_ID",
    "RESPONSE_MODEL",
    "RESULT_MESSAGE_ID",
    "SESSION_ID",
    "START_SEQ",
    "STEP",
    "SYSTEM_INSTRUCTIONS",
    "TOOL_ARGUMENTS",
    "TOOL_CALL_ID",
    "TOOL_NAME",
    "TOOL_RESULT",
    "TOOL_TYPE",
    "TURN",
    "TURN_END_REASON",
    "TURN_INPUT_MESSAGE_IDS",
]
