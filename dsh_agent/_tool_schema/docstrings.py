"""Argument descriptions from a docstring, in the three styles people write.

A tool's docstring is its description for the model; the argument sections of it
(Google ``Args:``, NumPy ``Parameters`` with a dashed underline, Sphinx ``:param x:``)
say what each parameter means. :func:`parse_docstring` splits the two, so the
arguments' texts go into the JSON Schema and the description keeps only the prose
before the first section. The parser is deliberately small: it reads the sections it
recognises and leaves every other line in the prose, never failing on odd text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_GOOGLE_ARGS = frozenset({"args", "arguments", "parameters", "params", "keyword args"})
_SECTION_NAMES = _GOOGLE_ARGS | frozenset(
    {
        "returns",
        "return",
        "yields",
        "raises",
        "examples",
        "example",
        "notes",
        "note",
        "see also",
        "other parameters",
        "attributes",
        "warnings",
        "references",
    }
)
_GOOGLE_HEADER = re.compile(r"^(?P<name>[A-Za-z][A-Za-z ]*):\s*$")
_GOOGLE_ITEM = re.compile(r"^(?P<name>\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(?P<text>.*)$")
_NUMPY_RULE = re.compile(r"^-{3,}\s*$")
_NUMPY_ITEM = re.compile(r"^(?P<names>\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*)\s*(?::.*)?$")
_SPHINX_FIELD = re.compile(r"^:(?P<kind>\w+)(?:\s+(?:[^:\s]+\s+)?(?P<name>\w+))?:\s*(?P<text>.*)$")


@dataclass(frozen=True, slots=True)
class ParsedDocstring:
    """A docstring split into the prose the model reads and one text per argument."""

    description: str
    """The prose before the first recognised section, dedented and stripped."""
    arguments: dict[str, str] = field(default_factory=dict)
    """Each documented argument's text, continuation lines joined with spaces."""


def parse_docstring(doc: str) -> ParsedDocstring:
    """Split an already-dedented docstring (``inspect.getdoc``) into prose and
    per-argument descriptions, whichever of the three styles it uses."""
    lines = doc.strip().splitlines()
    start = _first_section(lines)
    description = "\n".join(lines[:start]).strip()
    arguments: dict[str, str] = {}
    _read_google(lines[start:], arguments)
    _read_numpy(lines[start:], arguments)
    _read_sphinx(lines[start:], arguments)
    return ParsedDocstring(description=description, arguments=arguments)


def _first_section(lines: list[str]) -> int:
    for index, line in enumerate(lines):
        stripped = line.strip()
        header = _GOOGLE_HEADER.match(stripped)
        if header and header["name"].lower() in _SECTION_NAMES and not line[:1].isspace():
            return index
        if (
            stripped.lower() in _SECTION_NAMES
            and index + 1 < len(lines)
            and _NUMPY_RULE.match(lines[index + 1].strip())
        ):
            return index
        if _SPHINX_FIELD.match(stripped):
            return index
    return len(lines)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _join(parts: list[str]) -> str:
    return " ".join(part.strip() for part in parts if part.strip())


def _read_google(lines: list[str], into: dict[str, str]) -> None:
    """``Args:`` then indented ``name (type): text`` items, deeper lines continuing."""
    in_args = False
    item_indent: int | None = None
    name: str | None = None
    parts: list[str] = []
    for line in [*lines, ""]:
        header = _GOOGLE_HEADER.match(line.strip())
        if header and _indent(line) == 0:
            _store(into, name, parts)
            name, parts, item_indent = None, [], None
            in_args = header["name"].lower() in _GOOGLE_ARGS
            continue
        if not in_args:
            continue
        if not line.strip():
            continue
        if _indent(line) == 0:  # prose after the section ends it
            _store(into, name, parts)
            name, parts, in_args = None, [], False
            continue
        if item_indent is None:
            item_indent = _indent(line)
        item = _GOOGLE_ITEM.match(line.strip())
        if _indent(line) <= item_indent and item:
            _store(into, name, parts)
            name, parts = item["name"].lstrip("*"), [item["text"]]
        elif name is not None:
            parts.append(line)
    _store(into, name, parts)


def _read_numpy(lines: list[str], into: dict[str, str]) -> None:
    """``Parameters`` over a dashed rule, then ``name : type`` and indented text."""
    in_params = False
    names: list[str] = []
    parts: list[str] = []
    for index, line in enumerate(lines):
        following = lines[index + 1].strip() if index + 1 < len(lines) else ""
        if _NUMPY_RULE.match(following) and line.strip():
            _store_all(into, names, parts)
            names, parts = [], []
            in_params = line.strip().lower() in {"parameters", "other parameters"}
            continue
        if not in_params or not line.strip() or _NUMPY_RULE.match(line.strip()):
            continue
        item = _NUMPY_ITEM.match(line)
        if item and _indent(line) == 0:  # unindented: a parameter line
            _store_all(into, names, parts)
            names = [each.strip().lstrip("*") for each in item["names"].split(",")]
            parts = []
        elif names:
            parts.append(line)
    _store_all(into, names, parts)


def _store_all(into: dict[str, str], names: list[str], parts: list[str]) -> None:
    for name in names:
        _store(into, name, parts)


def _read_sphinx(lines: list[str], into: dict[str, str]) -> None:
    """``:param [type] name: text`` fields, indented lines continuing the last one."""
    name: str | None = None
    parts: list[str] = []
    for line in [*lines, ":end:"]:
        fielded = _SPHINX_FIELD.match(line.strip())
        if fielded:
            _store(into, name, parts)
            name, parts = None, []
            if fielded["kind"] in {"param", "parameter", "arg", "argument"} and fielded["name"]:
                name, parts = fielded["name"], [fielded["text"]]
        elif name is not None and line[:1].isspace() and line.strip():
            parts.append(line)
    _store(into, name, parts)


def _store(into: dict[str, str], name: str | None, parts: list[str]) -> None:
    text = _join(parts)
    if name is not None and text:
        into.setdefault(name, text)


__all__ = [
    "ParsedDocstring",
    "parse_docstring",
]
