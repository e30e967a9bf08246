"""Project-wide test options (soak variants marked ``slow`` run only with --run-slow)
and the PostgreSQL server fixtures (``postgres_server.py``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings
from postgres_server import fresh_schema, server_dsn

# Property tests check what is generated, not how fast: on a loaded 2-core machine (the
# suite on every core, other work beside it) generation time says nothing about dsh.
settings.register_profile("dsh", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("dsh")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-slow", action="store_true", default=False, help="also run the slow soak tests"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-slow"):
        return
    skip_slow = pytest.mark.skip(reason="soak variant: run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The DSN of the run's PostgreSQL server (started on first use)."""
    yield from server_dsn()


@pytest.fixture
def postgres_dsn(postgres_server: str) -> Iterator[str]:
    """A DSN of the run's server whose tables land in this test's own schema."""
    yield from fresh_schema(postgres_server)
