"""One module of errors per package, every public exception under ``DshError``.

Each package defines its public exceptions in one module (``errors``; the command line,
which exports nothing, in ``_errors``), whose docstring draws their tree; every other
exception class in the packages is private (its name starts with ``_``): a signal the
code that raises it also catches. See
docs/decisions/2026-12-04-one-error-module-per-package.md.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from types import ModuleType

import pytest

from dsh_llm import DshError

ERROR_MODULES = {
    "dsh_llm": "dsh_llm.errors",
    "dsh_session": "dsh_session.errors",
    "dsh_agent": "dsh_agent.errors",
    "dsh_cli": "dsh_cli._errors",
}
EXPORTING_PACKAGES = ("dsh_llm", "dsh_session", "dsh_agent")
"""The libraries; the command line is an application and exports no errors."""


def _modules(package: str) -> list[ModuleType]:
    root = importlib.import_module(package)
    names = [package] + [
        info.name
        for info in pkgutil.walk_packages(root.__path__, f"{package}.")
        if not info.name.endswith("__main__")
    ]
    return [importlib.import_module(name) for name in names]


def _exceptions_defined_in(module: ModuleType) -> dict[str, type[BaseException]]:
    return {
        name: value
        for name, value in vars(module).items()
        if inspect.isclass(value)
        and issubclass(value, BaseException)
        and value.__module__ == module.__name__
    }


def _public_exceptions(package: str) -> dict[str, type[BaseException]]:
    """What a user can catch: the errors module's ``__all__`` and the exception classes
    in the ``__all__`` of every module of the package."""
    found: dict[str, type[BaseException]] = {}
    for module in _modules(package):
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            if inspect.isclass(value) and issubclass(value, BaseException):
                found[name] = value
    errors = importlib.import_module(ERROR_MODULES[package])
    found.update({name: getattr(errors, name) for name in errors.__all__})
    return found


@pytest.mark.parametrize("package", list(ERROR_MODULES))
def test_every_public_exception_is_a_dsh_error_defined_in_the_errors_module(
    package: str,
) -> None:
    public = _public_exceptions(package)

    assert public, package
    for name, cls in public.items():
        assert issubclass(cls, DshError), f"{package}: {name} is not a DshError"
        assert cls.__module__ == ERROR_MODULES[package], f"{name} is defined in {cls.__module__}"
        assert cls.__module__.rsplit(".", 1)[-1] in ("errors", "_errors")


@pytest.mark.parametrize("package", list(ERROR_MODULES))
def test_the_errors_module_exports_exactly_the_exceptions_it_defines(package: str) -> None:
    errors = importlib.import_module(ERROR_MODULES[package])

    assert sorted(errors.__all__) == sorted(_exceptions_defined_in(errors))


@pytest.mark.parametrize("package", EXPORTING_PACKAGES)
def test_the_package_exports_every_error(package: str) -> None:
    top = importlib.import_module(package)
    errors = importlib.import_module(ERROR_MODULES[package])

    missing = [name for name in errors.__all__ if name not in top.__all__]
    assert missing == []
    assert all(getattr(top, name) is getattr(errors, name) for name in errors.__all__)


@pytest.mark.parametrize("package", list(ERROR_MODULES))
def test_exceptions_defined_anywhere_else_are_private(package: str) -> None:
    public_elsewhere = [
        f"{module.__name__}.{name}"
        for module in _modules(package)
        if module.__name__ != ERROR_MODULES[package]
        for name in _exceptions_defined_in(module)
        if not name.startswith("_")
    ]

    assert public_elsewhere == []


_TREE_LINE = re.compile(r"^(?P<indent> *)(?P<name>[\w.]+)(?: \(also (?P<also>[\w, ]+)\))?$")


def _tree(module: ModuleType) -> list[tuple[int, str, tuple[str, ...]]]:
    """The tree drawn in the docstring's literal block (after ``::``), as (depth, name,
    the other bases named after "also")."""
    doc = module.__doc__ or ""
    assert "::\n\n" in doc, f"{module.__name__}: the docstring draws no tree"
    lines = doc.split("::\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    margin = min(len(line) - len(line.lstrip(" ")) for line in lines)
    rows = []
    for line in lines:
        match = _TREE_LINE.match(line[margin:])
        assert match is not None, f"not a tree line: {line!r}"
        assert len(match["indent"]) % 4 == 0, line
        also = tuple(part.strip() for part in (match["also"] or "").split(",") if part.strip())
        rows.append((len(match["indent"]) // 4, match["name"], also))
    return rows


def _resolve(module: ModuleType, name: str) -> type[BaseException]:
    """A plain name is defined in ``module``; ``package.Name`` is another package's."""
    home, _, attribute = name.rpartition(".")
    found = getattr(importlib.import_module(home) if home else module, attribute)
    assert isinstance(found, type) and issubclass(found, BaseException), name
    return found


@pytest.mark.parametrize("package", list(ERROR_MODULES))
def test_the_docstring_draws_the_tree_of_the_classes_defined(package: str) -> None:
    errors = importlib.import_module(ERROR_MODULES[package])
    rows = _tree(errors)

    drawn_here = [name for _, name, _ in rows if "." not in name]
    assert sorted(drawn_here) == sorted(_exceptions_defined_in(errors))
    assert len(set(drawn_here)) == len(drawn_here)
    parents: list[str] = []
    for depth, name, also in rows:
        del parents[depth:]
        cls = _resolve(errors, name)
        if depth:
            assert cls.__bases__[0] is _resolve(errors, parents[-1]), f"{name} under {parents}"
            assert tuple(base.__name__ for base in cls.__bases__[1:]) == also, name
        else:
            assert cls is DshError or cls.__module__ != errors.__name__, name
        parents.append(name)
    assert rows[0][1] in ("DshError", "dsh_llm.DshError")
