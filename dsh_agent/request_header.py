"""The request header an agent loop starts from, and the header of one run's overrides.

Everything a request depends on besides the history is in its header (config with the
model settings, system prompt, tool schemas), so building both here keeps the header
logged before each step the one the request was built from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from dsh_agent.model_settings import ModelSettings
from dsh_agent.tools import Tool
from dsh_session.events import RequestConfig, RequestHeader


def index_tools(tools: Iterable[Tool]) -> dict[str, Tool]:
    """The tools by name; two with one name raise ``ValueError``."""
    indexed: dict[str, Tool] = {}
    for offered in tools:
        if offered.name in indexed:
            raise ValueError(f"two tools are named {offered.name!r}; tool names must be unique")
        indexed[offered.name] = offered
    return indexed


def loop_header(
    *,
    provider: str,
    model: str,
    system: str | None,
    tools: Sequence[Tool],
    settings: ModelSettings,
) -> RequestHeader:
    """The header of a loop's requests, before any run overrides it."""
    return RequestHeader(
        config=settings.applied_to(RequestConfig(provider=provider, model=model)),
        system=system or None,
        tools=tuple(offered.schema() for offered in tools) or None,
    )


def overridden(
    header: RequestHeader,
    tools: Mapping[str, Tool],
    settings: ModelSettings | None,
    extra: Iterable[Tool],
) -> tuple[RequestHeader, dict[str, Tool]]:
    """``header`` and ``tools`` with ``settings`` over the config and the ``extra``
    tools offered besides (a clashing name raises ``ValueError``)."""
    extra = tuple(extra)
    merged = index_tools((*tools.values(), *extra))
    config = (settings or ModelSettings()).applied_to(header.config)
    schemas = (*(header.tools or ()), *(offered.schema() for offered in extra))
    changed = RequestHeader(
        config=config,
        adapter_defaults=header.adapter_defaults,
        system=header.system,
        tools=schemas or None,
    )
    return changed, merged
