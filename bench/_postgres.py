"""The PostgreSQL server the PostgreSQL suites run against, and fresh schemas in it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

from dsh_session.stores.postgres.throwaway import ThrowawayServer


@contextmanager
def server() -> Iterator[str]:
    """``DSH_BENCH_POSTGRES_DSN`` when set, else a throwaway local cluster with
    PostgreSQL's default durability (``fsync``/``synchronous_commit`` on)."""
    given = os.environ.get("DSH_BENCH_POSTGRES_DSN")
    if given:
        yield given
        return
    with ThrowawayServer() as throwaway:
        yield throwaway.dsn


def schema(dsn: str, name: str) -> str:
    """A DSN whose tables land in a fresh schema ``name``."""
    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE; CREATE SCHEMA {name}".encode())
    return f"{dsn}{'&' if '?' in dsn else '?'}options=-csearch_path%3D{name}"
