"""A typed function's parameters as a Pydantic arguments model and a JSON Schema.

Each plain or keyword-only parameter becomes a field: its annotation (``Annotated[...,
Field(...)]`` included), its default (a ``Field(...)`` default is merged into the field,
so the tool receives the field's default value, never the ``FieldInfo``), and, when no
``Field`` says otherwise, the description the docstring gives it. A parameter annotated
``ToolContext`` (or ``ToolContext[Deps]``) receives the call's context instead.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, get_origin, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.fields import FieldInfo

from dsh_agent._tool_context import ToolContext
from dsh_agent._tool_schema.docstrings import parse_docstring

_PLAIN_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


@dataclass(frozen=True, slots=True)
class ToolSignature:
    """How to validate a call's arguments for one function, and what the model sees."""

    description: str
    """The docstring's prose (its argument sections go into the schema instead)."""
    parameters: dict[str, Any]
    """The JSON Schema of the arguments object."""
    context_parameter: str | None
    """The parameter that receives the :class:`ToolContext`, if any."""
    _model: type[BaseModel]
    _names: Mapping[str, str]
    """Field key -> parameter name (fields get neutral keys, see below)."""

    def arguments(self, raw: dict[str, Any]) -> dict[str, Any]:
        """The validated keyword arguments for the function; raises ``ValidationError``."""
        parsed = self._model.model_validate(raw)
        return {name: getattr(parsed, key) for key, name in self._names.items()}


def is_context_annotation(annotation: object) -> bool:
    """``ToolContext`` or ``ToolContext[...]``."""
    return annotation is ToolContext or get_origin(annotation) is ToolContext


def inspect_function(function: Callable[..., object], tool_name: str) -> ToolSignature:
    """Read ``function``'s signature, annotations and docstring; raise ``TypeError``
    naming the parameter or annotation that cannot become a tool argument."""
    try:
        hints = get_type_hints(function, include_extras=True)
    except NameError as error:
        raise TypeError(
            f"@tool {tool_name!r}: cannot resolve an annotation ({error}); "
            "define the types it names where the function's module can see them"
        ) from None
    docstring = parse_docstring(inspect.getdoc(function) or "")
    fields: dict[str, Any] = {}
    context_parameter: str | None = None
    for parameter in inspect.signature(function).parameters.values():
        if parameter.kind not in _PLAIN_KINDS:
            raise TypeError(
                f"@tool {tool_name!r}: parameter {parameter.name!r} must be a plain or "
                "keyword-only parameter (no *args, **kwargs or positional-only)"
            )
        annotation = hints.get(parameter.name, Any)
        if is_context_annotation(annotation):
            context_parameter = parameter.name
            continue
        # Neutral keys with the parameter name as alias, so a parameter may be called
        # ``json`` or ``schema`` without shadowing BaseModel attributes.
        fields[f"field_{len(fields)}"] = (annotation, _field(parameter))
    model: type[BaseModel] = create_model(
        f"{tool_name}_arguments", __config__=ConfigDict(extra="forbid"), **fields
    )
    schema = model.model_json_schema()
    schema.pop("title", None)
    names = {key: spec.alias for key, (_, spec) in fields.items()}
    properties: dict[str, Any] = schema.get("properties", {})
    for name, text in docstring.arguments.items():
        if name in properties:
            properties[name].setdefault("description", text)
    return ToolSignature(
        description=docstring.description,
        parameters=schema,
        context_parameter=context_parameter,
        _model=model,
        _names=names,
    )


def _field(parameter: inspect.Parameter) -> FieldInfo:
    named: FieldInfo = Field(alias=parameter.name)
    default = parameter.default
    if isinstance(default, FieldInfo):
        return FieldInfo.merge_field_infos(default, named)
    if default is inspect.Parameter.empty:
        return named
    return FieldInfo.merge_field_infos(Field(default), named)


__all__ = [
    "ToolSignature",
    "inspect_function",
    "is_context_annotation",
]
