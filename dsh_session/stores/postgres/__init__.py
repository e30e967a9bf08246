"""The PostgreSQL backend (``pip install 'dsh-sdk[postgres]'``): ``PostgresSessionStore``.

Modules: ``schema`` (layout and migrations), ``fencing`` (ownership tokens, epochs and
the fenced writes), ``follow`` (LISTEN/NOTIFY followers), ``store`` (the store), and
``throwaway`` (a private server for tests and benchmarks).
"""

try:
    import psycopg  # noqa: F401
    import psycopg_pool  # noqa: F401
except ImportError as error:  # pragma: no cover - depends on the install
    raise ImportError(
        "the PostgreSQL store needs psycopg 3 and psycopg-pool: pip install 'dsh-sdk[postgres]'"
    ) from error

from dsh_session.stores.postgres._store import PostgresSessionStore

__all__ = ["PostgresSessionStore"]
