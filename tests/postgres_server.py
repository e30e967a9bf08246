"""The PostgreSQL server the tests use: ``DSH_TEST_POSTGRES_DSN`` when set, else a
throwaway cluster started for the test run (and stopped after it). Without
PostgreSQL binaries or psycopg the tests that need a server skip, except under
``CI=true``, where they fail: CI must never pass by not testing the backend."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest


def unavailable(reason: str) -> None:
    """Skip the test, or fail it in CI."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"PostgreSQL tests cannot run in CI: {reason}")
    pytest.skip(f"PostgreSQL not available: {reason}")


def server_dsn() -> Iterator[str]:
    """The server's DSN for the whole run (the body of a session-scoped fixture)."""
    given = os.environ.get("DSH_TEST_POSTGRES_DSN")
    if given:
        yield given
        return
    try:
        from dsh_session.errors import PostgresUnavailableError
        from dsh_session.stores.postgres.throwaway import ThrowawayServer
    except ImportError as error:
        unavailable(str(error))
        return
    try:
        server = ThrowawayServer()
    except PostgresUnavailableError as error:
        unavailable(str(error))
        return
    server.start()
    try:
        yield server.dsn
    finally:
        server.stop()


def with_schema(dsn: str, schema: str) -> str:
    """``dsn`` (a URL) with ``schema`` first on the search path."""
    joiner = "&" if "?" in dsn else "?"
    return f"{dsn}{joiner}options=-csearch_path%3D{schema}"


def fresh_schema(dsn: str) -> Iterator[str]:
    """A DSN whose tables land in a new, empty schema, dropped afterwards."""
    import psycopg

    schema = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {schema}".encode())
    try:
        yield with_schema(dsn, schema)
    finally:
        with psycopg.connect(dsn, autocommit=True) as connection:
            connection.execute(f"DROP SCHEMA {schema} CASCADE".encode())
