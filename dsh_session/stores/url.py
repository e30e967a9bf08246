"""Open a store from a URL, so applications can take the backend from configuration.

Forms: ``sqlite:///relative.db``, ``sqlite:////absolute.db``, ``jsonl:///relative/dir``,
``jsonl:////absolute/dir`` and ``memory://``. The path is what follows the third slash,
so a fourth slash makes it absolute; it is percent-decoded. Hosts, queries and
fragments are refused rather than ignored, so a typo never opens the wrong file.
"""

from __future__ import annotations

from urllib.parse import unquote

from dsh_session.errors import StoreError
from dsh_session.stores.base import SessionStore
from dsh_session.stores.jsonl import JsonlSessionStore
from dsh_session.stores.memory import MemorySessionStore
from dsh_session.stores.sqlite import SqliteSessionStore

_FORMS = "sqlite:///path.db, jsonl:///path/dir or memory:// (four slashes for an absolute path)"


def open_store(url: str) -> SessionStore:
    """Build the store a URL names. Missing folders are created when the store opens."""
    scheme, separator, rest = url.partition("://")
    if not separator:
        raise StoreError(f"store url {url!r} has no scheme; expected {_FORMS}")
    if scheme == "memory":
        if rest:
            raise StoreError(f"store url {url!r}: memory:// takes no path")
        return MemorySessionStore()
    if scheme not in ("sqlite", "jsonl"):
        raise StoreError(f"store url {url!r}: unknown scheme {scheme!r}; expected {_FORMS}")
    if not rest.startswith("/"):
        raise StoreError(f"store url {url!r} names a host; expected {_FORMS}")
    if "?" in rest or "#" in rest:
        raise StoreError(f"store url {url!r}: queries and fragments are not supported")
    path = unquote(rest[1:])
    if not path or path == "/":
        raise StoreError(f"store url {url!r} has no path; expected {_FORMS}")
    if scheme == "sqlite":
        return SqliteSessionStore(path)
    return JsonlSessionStore(path)
