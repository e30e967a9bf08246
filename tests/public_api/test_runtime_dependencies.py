"""The suite runs on the dependency versions a user gets (issue 27): every runtime
requirement of the installed ``dsh-sdk`` is satisfied by what is installed, and the
``dev`` extra pulls in none of the peer frameworks that only ``bench/`` uses (one of
them, langsmith's pin, once downgraded ``uuid-utils`` below what users install)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, requires, version

import pytest
from packaging.requirements import Requirement

DISTRIBUTION = "dsh-sdk"


def _requirements(extra: str | None) -> list[Requirement]:
    """The distribution's requirements that apply with ``extra`` (``None``: the
    runtime ones), on this interpreter."""
    found: list[Requirement] = []
    for line in requires(DISTRIBUTION) or []:
        requirement = Requirement(line)
        marker = requirement.marker
        if marker is None:
            if extra is None:
                found.append(requirement)
        elif extra is not None and marker.evaluate({"extra": extra}):
            if not marker.evaluate({"extra": ""}):
                found.append(requirement)
        elif extra is None and marker.evaluate({"extra": ""}):
            found.append(requirement)
    return found


RUNTIME = _requirements(None)


def test_the_runtime_requirements_are_read() -> None:
    assert "uuid-utils" in {requirement.name for requirement in RUNTIME}


@pytest.mark.parametrize("requirement", RUNTIME, ids=[r.name for r in RUNTIME])
def test_each_installed_runtime_dependency_satisfies_its_pin(requirement: Requirement) -> None:
    try:
        installed = version(requirement.name)
    except PackageNotFoundError:
        pytest.fail(f"{requirement.name} is a runtime requirement ({requirement}) but missing")
    assert requirement.specifier.contains(installed, prereleases=True), (
        f"installed {requirement.name} {installed} does not satisfy {requirement}: the "
        "suite would run on a version users cannot get"
    )


def test_the_dev_extra_installs_no_bench_peer() -> None:
    bench = {requirement.name for requirement in _requirements("bench")}
    dev = {requirement.name for requirement in _requirements("dev")}
    assert bench, "the bench extra names the peers bench/ measures against"
    assert not bench & dev, f"dev pulls in bench-only peers: {sorted(bench & dev)}"
