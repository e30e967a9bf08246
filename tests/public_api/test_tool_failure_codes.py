"""Tool failure codes are spelled in one module, dsh_session.tool_failure_codes: no other
module of the four packages writes one as a string literal (found with ``ast``, so
docstrings and comments that name a code in prose are not counted)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from dsh_session import tool_failure_codes

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("dsh_llm", "dsh_session", "dsh_agent", "dsh_cli")
HOME = ROOT / "dsh_session" / "tool_failure_codes.py"
TOOL_CODE = re.compile(r"TOOL_[A-Z_]+")

# AG-UI's own event types (its protocol, not a failure code), written by the encoder.
AG_UI_TYPES = {"TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT"}
AG_UI_ENCODER = ROOT / "dsh_agent" / "streaming" / "_ag_ui.py"


def _codes() -> set[str]:
    return {getattr(tool_failure_codes, name) for name in tool_failure_codes.__all__}


def _literals(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    # A module's __all__ lists names, not codes (a constant may be called TOOL_...).
    exported = {
        id(node)
        for statement in tree.body
        if isinstance(statement, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "__all__" for t in statement.targets)
        for node in ast.walk(statement.value)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in exported
    ]


def test_each_code_is_a_constant_named_as_its_value() -> None:
    for name in tool_failure_codes.__all__:
        assert getattr(tool_failure_codes, name) == name


def test_no_code_is_spelled_outside_its_module() -> None:
    codes = _codes()
    found: list[str] = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path == HOME:
                continue
            for line, value in _literals(path):
                if path == AG_UI_ENCODER and value in AG_UI_TYPES:
                    continue
                if value in codes or TOOL_CODE.fullmatch(value):
                    found.append(f"{path.relative_to(ROOT)}:{line}: {value!r}")
    assert found == [], "import the code from dsh_session.tool_failure_codes:\n" + "\n".join(found)


def test_the_scan_sees_a_spelled_code(tmp_path: Path) -> None:
    spelled = tmp_path / "spelled.py"
    spelled.write_text('CODE = "TOOL_NOT_FOUND"\n"""Prose naming TOOL_FAILED is fine."""\n')
    assert [value for _, value in _literals(spelled) if TOOL_CODE.fullmatch(value)] == [
        "TOOL_NOT_FOUND"
    ]
