"""The request header an agent loop starts from, and the header of one run's overrides.

Everything a request depends on besides the history is in its header (config with the
model settings, system prompt, tool schemas), so building both here keeps the header
logged before each step the one the request was built from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import fields
from operator import attrgetter

from dsh_agent._model_settings import ModelSettings
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


HEADER_CACHE_SIZE = 64
"""Loop headers kept for reuse (oldest dropped first): see :func:`loop_header`."""

_settings_values = attrgetter(*(setting.name for setting in fields(ModelSettings)))
_headers: dict[tuple[object, ...], tuple[tuple[Tool, ...], RequestHeader]] = {}


def loop_header(
    *,
    provider: str,
    model: str,
    system: str | None,
    tools: Sequence[Tool],
    settings: ModelSettings,
) -> RequestHeader:
    """The header of a loop's requests, before any run overrides it.

    Loops built alike (e.g. one per conversation) share one header value instead of
    validating an equal one each time: the key is every input with its type (so a
    value that only compares equal, such as ``True`` for ``1``, is validated on its
    own) and each tool's identity (a tool's schema is fixed when it is built; the
    entry keeps the tools alive, so their ids are not reused while it exists)."""
    values = (provider, model, system, *_settings_values(settings))
    key = (*values, *map(type, values), *map(id, tools))
    try:
        cached = _headers.get(key)
    except TypeError:  # an unhashable setting: validation says what is wrong with it
        return _build_header(provider, model, system, tools, settings)
    if cached is not None:
        return cached[1]
    header = _build_header(provider, model, system, tools, settings)
    if len(_headers) >= HEADER_CACHE_SIZE:
        del _headers[next(iter(_headers))]
    _headers[key] = (tuple(tools), header)
    return header


def _build_header(
    provider: str, model: str, system: str | None, tools: Sequence[Tool], settings: ModelSettings
) -> RequestHeader:
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


def with_instructions(header: RequestHeader, *instructions: str | None) -> RequestHeader:
    """``header`` with ``instructions`` as further sections of its system prompt, in
    order (the header itself when there are none)."""
    sections = [section for section in (header.system, *instructions) if section]
    if len(sections) == (1 if header.system else 0):
        return header
    return RequestHeader(
        config=header.config,
        adapter_defaults=header.adapter_defaults,
        system=INSTRUCTIONS_SEPARATOR.join(sections),
        tools=header.tools,
    )


INSTRUCTIONS_SEPARATOR = "\n\n"
"""Between the sections of a system prompt: the loop's, then the dynamic
instructions', then the run's."""


__all__ = [
    "HEADER_CACHE_SIZE",
    "INSTRUCTIONS_SEPARATOR",
    "index_tools",
    "loop_header",
    "overridden",
    "with_instructions",
]
