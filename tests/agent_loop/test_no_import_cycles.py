"""No import circle among the modules of the four packages, not even through
``TYPE_CHECKING``.

The graph is read from the source with :mod:`ast`, so it sees every ``import`` and
``from ... import`` statement wherever it is written (module level, under ``if
TYPE_CHECKING:``, inside a function). ``from pkg import name`` is an edge to
``pkg.name`` when that is a module, else to ``pkg``; a package's ``__init__`` that
re-exports from its submodules is an edge ``pkg -> pkg.sub``. Importing a module does
not count as importing its parent packages (Python runs their ``__init__`` first, but
that is not a dependency of the importing module), so a submodule that imports its own
package's ``__init__`` closes a circle and must name the defining module instead.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("dsh_llm", "dsh_session", "dsh_agent", "dsh_cli")


def _module_name(path: Path) -> tuple[str, bool]:
    """The dotted name of the module at ``path`` and whether it is a package."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts.pop()
    return ".".join(parts), is_package


def modules() -> dict[str, tuple[Path, bool]]:
    """Every module of the packages: name -> (path, is a package)."""
    found: dict[str, tuple[Path, bool]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            name, is_package = _module_name(path)
            found[name] = (path, is_package)
    return found


def _imported(
    node: ast.Import | ast.ImportFrom, here: str, is_package: bool, known: Mapping[str, object]
) -> Iterator[str]:
    """The known modules one import statement depends on."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            name = alias.name
            while name and name not in known:  # `import a.b.c` of an attribute path
                name = name.rpartition(".")[0]
            if name:
                yield name
        return
    base = node.module or ""
    if node.level:
        anchor = here if is_package else here.rpartition(".")[0]
        for _ in range(node.level - 1):
            anchor = anchor.rpartition(".")[0]
        base = f"{anchor}.{base}" if base else anchor
    for alias in node.names:
        submodule = f"{base}.{alias.name}"
        if submodule in known:
            yield submodule
        elif base in known:
            yield base


def import_graph() -> dict[str, set[str]]:
    """module -> the modules of the packages it imports."""
    known = modules()
    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in known.items():
        edges = graph.setdefault(name, set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                edges.update(t for t in _imported(node, name, is_package, known) if t != name)
    return graph


def find_cycle(graph: Mapping[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a path whose last module is its first, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state:
                found = visit(target)
                if found is not None:
                    return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found is not None:
                return found
    return None


def test_the_graph_sees_the_packages() -> None:
    graph = import_graph()
    assert "dsh_agent._engine.loop" in graph
    assert "dsh_agent._engine.loop" in graph["dsh_agent"]  # the re-export is an edge
    assert "dsh_session" in graph["dsh_agent._engine.loop"] or any(
        target.startswith("dsh_session.") for target in graph["dsh_agent._engine.loop"]
    )


def test_find_cycle_reports_the_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or ())
