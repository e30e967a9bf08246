"""One adapter over several models, tried in order: :class:`FallbackAdapter`.

A request is served by the adapter whose provider and model it names, so the log
says which model each attempt went to: the agent loop moves a failed step to the next
model (:meth:`FallbackAdapter.next_route`) by logging a ``request/header`` change
naming it before the next attempt, and ``reconstruct_requests`` rebuilds every attempt
exactly. The loop falls back only once its retry policy has given up on the model
(docs/decisions/2026-12-06-fallback-after-retries.md).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable

from dsh_llm._failure import LlmFailure
from dsh_llm._request import GenerateRequest, ModelAdapter
from dsh_llm._stream import StreamChunk
from dsh_llm.failure_codes import (
    QUOTA,
    RATE_LIMIT,
    SERVER,
    TIMEOUT,
    TRANSPORT,
)

DEFAULT_FALLBACK_CODES: frozenset[str] = frozenset({QUOTA, RATE_LIMIT, SERVER, TIMEOUT, TRANSPORT})
"""The failures another model may not share: overload, outage, quota."""


class FallbackAdapter:
    """Serves each request with the adapter whose ``provider`` and ``model`` it names
    (the first adapter serves any other request), and names the next model to try
    after a failure whose code is in ``on``.

    Every adapter must name its provider and model (an adapter built from a model
    string does), and no two the same pair; ``provider`` and ``model`` are the
    first's, which an ``AgentLoop`` starts with."""

    def __init__(
        self, adapters: Iterable[ModelAdapter], *, on: frozenset[str] = DEFAULT_FALLBACK_CODES
    ) -> None:
        self.adapters = tuple(adapters)
        if not self.adapters:
            raise ValueError("FallbackAdapter needs at least one adapter")
        self.routes = tuple(_route(index, adapter) for index, adapter in enumerate(self.adapters))
        """``(provider, model)`` of each adapter, in order."""
        if len(set(self.routes)) != len(self.routes):
            raise ValueError(
                f"FallbackAdapter: two adapters serve the same provider and model ({self.routes})"
            )
        self.on = frozenset(on)
        """The failure codes (:mod:`dsh_llm.failure_codes`) that move to the next model."""
        self.provider, self.model = self.routes[0]
        self._by_route = dict(zip(self.routes, self.adapters, strict=True))

    def serving(self, provider: str, model: str) -> ModelAdapter:
        """The adapter a request for ``provider`` and ``model`` goes to."""
        return self._by_route.get((provider, model), self.adapters[0])

    def next_route(self, provider: str, model: str, failure: LlmFailure) -> tuple[str, str] | None:
        """The provider and model to try after ``failure`` of a request to ``provider``
        and ``model``; None when the code is not one to fall back on or no model is
        left."""
        if failure.code not in self.on:
            return None
        try:
            index = self.routes.index((provider, model))
        except ValueError:
            index = 0
        return self.routes[index + 1] if index + 1 < len(self.routes) else None

    def stream(self, request: GenerateRequest) -> AsyncIterator[StreamChunk]:
        """The stream of the adapter serving ``request``."""
        return self.serving(request.provider, request.model).stream(request)


def _route(index: int, adapter: ModelAdapter) -> tuple[str, str]:
    provider, model = getattr(adapter, "provider", None), getattr(adapter, "model", None)
    if not (isinstance(provider, str) and provider and isinstance(model, str) and model):
        raise ValueError(
            f"FallbackAdapter: adapter {index} ({type(adapter).__name__}) names no provider "
            "and model; build it with model=... (or from a model string)"
        )
    return provider, model


__all__ = [
    "DEFAULT_FALLBACK_CODES",
    "FallbackAdapter",
]
