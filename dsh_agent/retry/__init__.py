"""Durable retries of failed model attempts (the harness's ``llm-retry``): the policy,
the backoff, the sequence as the log records it, and the logged wait."""

from dsh_agent.retry._policy import RetryPolicy

__all__ = ["RetryPolicy"]
