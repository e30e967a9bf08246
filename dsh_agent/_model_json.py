"""JSON text written by a model, parsed within dsh's one nesting limit.

A model may send anything as a tool call's arguments. ``json.loads`` recurses once per
level, so 100k-deep arguments raise ``RecursionError``, and an integer too long to
convert raises a plain ``ValueError``; a value nested past
:data:`~dsh_llm._frozen_json.MAX_JSON_DEPTH` is one dsh refuses everywhere else. Every
such text is refused here with one error type that says which rule it broke.
"""

from __future__ import annotations

import json
from typing import Any

from dsh_llm._json_limits import MAX_JSON_DEPTH


class _ModelJsonError(ValueError):
    """JSON text from a model that dsh does not accept: not JSON, or nested deeper
    than ``MAX_JSON_DEPTH``; the message says which."""


def _too_deep() -> _ModelJsonError:
    return _ModelJsonError(
        f"the JSON nests deeper than MAX_JSON_DEPTH={MAX_JSON_DEPTH} levels of arrays and objects"
    )


def _nests_too_deep(value: object) -> bool:
    """Whether ``value`` (as ``json.loads`` returns it) holds an array or object more
    than ``MAX_JSON_DEPTH`` levels down, counting the value itself as level 1. The walk
    keeps its own stack: a value Python could parse is never too deep to measure."""
    pending: list[tuple[object, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > MAX_JSON_DEPTH:
            return True
        pending.extend((child, depth + 1) for child in children)
    return False


def parse_model_json(text: str) -> Any:
    """``json.loads(text)``, or :class:`_ModelJsonError`: never ``RecursionError``."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise _too_deep() from None
    except ValueError as error:  # JSONDecodeError, or an integer too long to convert
        raise _ModelJsonError(f"not valid JSON ({error})") from None
    if _nests_too_deep(value):
        raise _too_deep()
    return value


__all__ = [
    "parse_model_json",
]
