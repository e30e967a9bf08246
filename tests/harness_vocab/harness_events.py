"""One wire event of every harness type dsh added to its vocabulary, in the key order
the harness writes (shapes from docs/harness-format.md §9)."""

from __future__ import annotations

from typing import Any, get_args

from dsh_session import ForeignEventType

FAILURE = {"message": "429 from provider", "code": "RATE_LIMIT", "status": 429}

TYPED_WIRE: list[dict[str, Any]] = [
    {"type": "compaction/start", "data": {"compactionId": "c1", "turn": None}},
    {"type": "compaction/start", "data": {"compactionId": "c2", "sourceCommandId": "k", "turn": 3}},
    {
        "type": "compaction/summary",
        "data": {
            "compactionId": "c1",
            "summary": [{"type": "text", "text": "so far"}],
            "rawOutput": [{"type": "text", "text": "so far"}],
            "llmStreamCall": True,
            "shadowedRange": {"start": 4, "end": 9},
            "shadowedSeqs": [4, 9],
            "shadowedTokenCount": 120,
            "provider": "mock",
            "model": "m",
            "maxTokens": 8192,
            "usage": {"inputTokens": 10, "outputTokens": 11},
        },
    },
    {
        "type": "compaction/prune",
        "data": {
            "shadowedRange": {"start": 2, "end": 2},
            "shadowedSeqs": [2],
            "shadowedTokenCount": 7,
        },
    },
    {"type": "compaction/end", "data": {"compactionId": "c1", "turn": None, "error": "boom"}},
    {
        "type": "llm/retry",
        "data": {
            "retryId": "r1",
            "turn": 1,
            "step": 1,
            "provider": "deepseek",
            "mode": "normal",
            "policyKey": "default",
            "retry": 1,
            "maxRetries": 3,
            "delayMs": 500,
            "failure": FAILURE,
        },
    },
    {
        "type": "llm/retry",
        "data": {
            "retryId": "r2",
            "turn": 1,
            "step": 1,
            "provider": "deepseek",
            "mode": "always",
            "policyKey": "network",
            "retry": 7,
            "delayMs": 1250.5,
            "failure": FAILURE,
        },
    },
    {"type": "llm/retry-started", "data": {"retryId": "r1", "turn": 1, "step": 1, "retry": 1}},
    {
        "type": "approval/asked",
        "data": {"id": "a1", "toolName": "bash", "callId": "c", "reason": "rm"},
    },
    {"type": "approval/decided", "data": {"id": "a1", "outcome": "allowed-once"}},
    {"type": "approval/policy", "data": {"policy": "never", "source": "delegation"}},
]

FOREIGN_WIRE: list[dict[str, Any]] = [
    {"type": kind, "data": {"kept": [kind, 1, None, {"nested": True}]}}
    for kind in get_args(ForeignEventType)
]
"""One foreign event per type: dsh keeps any JSON payload of these as it is."""
