"""``--store``: a bare path is a store too; errors name the store as it was typed
(password masked), never the library's class names or a converted DSN; a PostgreSQL
URL without the ``postgres`` extra is one line naming the extra."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from cli.runner import Dsh, dsh_environment
from cli.test_cli_extra import _WITHOUT
from cli.test_sessions import _store_sessions


def _one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1, result
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    return line


@pytest.mark.parametrize("path", ["mine.db", "mine.sqlite", "mine.sqlite3", "sub/mine.db"])
def test_a_bare_path_with_a_sqlite_suffix_is_a_sqlite_store(dsh: Dsh, path: str) -> None:
    result = dsh.run("demo", "--delay", "0", "--store", path)

    assert result.returncode == 0, result.stderr
    assert (dsh.cwd / path).read_bytes().startswith(b"SQLite format 3\0")
    assert f"dsh sessions show {dsh.json('sessions', 'list', '--store', path)[0]['id']}" in (
        result.stdout
    )
    assert f"--store {path}" in result.stdout
    assert not (dsh.cwd / "dsh.db").exists()


def test_a_bare_path_without_a_suffix_is_a_jsonl_folder(dsh: Dsh) -> None:
    result = dsh.run("demo", "--delay", "0", "--store", "logs")

    assert result.returncode == 0, result.stderr
    assert len(list((dsh.cwd / "logs").glob("_no-cwd/*/session.jsonl.zstd"))) == 1
    (listed,) = dsh.json("sessions", "list", "--store", "logs")
    url = dsh.json("sessions", "list", "--store", "jsonl:///logs")
    assert [listed] == url


def test_an_existing_file_is_sqlite_and_an_existing_folder_jsonl(dsh: Dsh) -> None:
    # an existing file, whatever its name, is read as a database
    assert dsh.run("demo", "--delay", "0", "--store", "sessions.db").returncode == 0
    (dsh.cwd / "sessions.db").rename(dsh.cwd / "sessions.data")
    assert len(dsh.json("sessions", "list", "--store", "sessions.data")) == 1
    # an existing folder, even one named like a database, is a JSONL root
    (dsh.cwd / "odd.db").mkdir()
    assert dsh.run("demo", "--delay", "0", "--store", "odd.db").returncode == 0
    assert list((dsh.cwd / "odd.db").glob("_no-cwd/*/session.jsonl.zstd"))


def test_a_missing_bare_path_is_one_line_naming_it(dsh: Dsh) -> None:
    line = _one_line(dsh.run("sessions", "list", "--store", "nothere.db"))
    assert line == "dsh: error: no session store at nothere.db: no such file"
    assert not (dsh.cwd / "nothere.db").exists()


def test_errors_name_the_store_url_as_typed(dsh: Dsh) -> None:
    asyncio.run(_store_sessions(dsh.cwd / "dsh.db", "abc-1111"))

    unknown = _one_line(dsh.run("sessions", "show", "nope"))
    assert unknown == "dsh: error: no session in sqlite:///dsh.db has the id or id prefix 'nope'"
    missing = _one_line(dsh.run("sessions", "show", "x", "--store", "sqlite:///typo.db"))
    assert missing == "dsh: error: no session store at sqlite:///typo.db: no such file"
    bad = _one_line(dsh.run("sessions", "list", "--store", "sqlite://host/x.db"))
    assert bad.startswith("dsh: error: --store sqlite://host/x.db: names a host")
    for line in (unknown, missing, bad):
        assert "SessionStore" not in line


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://bob:s3cret@127.0.0.1:1/db", "postgresql://bob:***@127.0.0.1:1/db"),
        (
            "postgresql://127.0.0.1:1/db?user=bob&password=s3cret",
            "postgresql://127.0.0.1:1/db?user=bob&password=***",
        ),
    ],
)
def test_an_unreachable_postgres_store_is_named_as_typed_without_its_password(
    dsh: Dsh, url: str, shown: str
) -> None:
    line = _one_line(dsh.run("sessions", "list", "--store", url))

    assert line.startswith(f"dsh: error: {shown}: cannot connect")
    assert "s3cret" not in line
    assert "PostgresSessionStore" not in line
    assert "dbname=" not in line  # not the DSN the library converted it to


LIST = ("sessions", "list", "--store")


def test_postgres_without_the_extra_is_one_line_naming_the_extra(tmp_path: Path) -> None:
    url = "postgresql://bob:s3cret@127.0.0.1:1/db"
    result = subprocess.run(
        [sys.executable, "-c", _WITHOUT, "psycopg,psycopg_pool", "module", "dsh_cli", *LIST, url],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=dsh_environment(),
        timeout=60,
    )

    line = _one_line(result)
    assert line == (
        "dsh: error: --store postgresql://bob:***@127.0.0.1:1/db: the PostgreSQL store "
        "needs the 'postgres' extra (No module named 'psycopg'): pip install 'dsh-sdk[postgres]'"
    )
