"""The harness's store-root layout: ``<root>/<project>/<session>/session.jsonl[.zstd]``.

Source: session-persistence-jsonl/src/format.ts (``encodeSegment``, ``projectKey``,
``logPath``) and index.ts (``listArtifacts``, ``findLog``). ``<project>`` is ``_no-cwd``
for a session without cwd, else ``--<readable cwd>--`` (lossy, for humans; the header's
``cwd`` is the truth). ``<session>`` is the id with every code unit outside
``[A-Za-z0-9._-]`` (and ``~``) written ``~XXXX`` (UTF-16, upper-case hex) — injective
over ids as JSON yields them (a lone surrogate is kept; a pair is one character).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from dsh_session.errors import HarnessLayoutError

NO_CWD_DIR = "_no-cwd"
PLAIN_LOG_NAME = "session.jsonl"
ZSTD_LOG_NAME = "session.jsonl.zstd"
_PROJECT_KEY_MAX = 251
_SAFE = re.compile(r"[A-Za-z0-9._-]")
_ESCAPE = re.compile(r"~([0-9A-F]{4})")


def _utf16_units(text: str) -> list[int]:
    data = text.encode("utf-16-le", "surrogatepass")
    return [int.from_bytes(data[i : i + 2], "little") for i in range(0, len(data), 2)]


def _escape_unit(unit: int) -> str:
    char = chr(unit)
    return char if _SAFE.fullmatch(char) else f"~{unit:04X}"


def encode_segment(raw: str) -> str:
    """One path segment for a session id, decodable by :func:`decode_segment`."""
    if not raw:
        raise ValueError("cannot encode an empty path segment")
    if raw == ".":
        return "~002E"
    if raw == "..":
        return "~002E~002E"
    return "".join(_escape_unit(unit) for unit in _utf16_units(raw))


def decode_segment(segment: str) -> str:
    """The id a session folder name stands for; refuses names the harness never writes."""
    units: list[int] = []
    position = 0
    while position < len(segment):
        char = segment[position]
        if char == "~":
            match = _ESCAPE.match(segment, position)
            if match is None:
                raise HarnessLayoutError(f"folder name {segment!r} has a bad ~ escape", field="id")
            units.append(int(match.group(1), 16))
            position = match.end()
        elif _SAFE.fullmatch(char):
            units.append(ord(char))
            position += 1
        else:
            raise HarnessLayoutError(f"folder name {segment!r} is not an encoded id", field="id")
    raw = b"".join(unit.to_bytes(2, "little") for unit in units).decode(
        "utf-16-le", "surrogatepass"
    )
    if not raw or encode_segment(raw) != segment:
        raise HarnessLayoutError(f"folder name {segment!r} is not canonically encoded", field="id")
    return raw


def project_key(cwd: str) -> str:
    """The readable project folder for a cwd: separators become one ``-``, unsafe units
    ``~XXXX``, leading dashes dropped, bounded to 251 characters, wrapped in ``--``."""
    if not cwd:
        raise ValueError("cannot encode an empty project path")
    readable: list[str] = []
    in_separator = False
    for unit in _utf16_units(cwd):
        if chr(unit) in "/\\:":
            if not in_separator:
                readable.append("-")
            in_separator = True
        else:
            readable.append(_escape_unit(unit))
            in_separator = False
    slug = "".join(readable).lstrip("-") or "root"
    return f"--{slug[:_PROJECT_KEY_MAX]}--"


def project_dir(root: Path, cwd: str | None) -> Path:
    return root / (NO_CWD_DIR if cwd is None else project_key(cwd))


def session_dir(root: Path, cwd: str | None, session_id: str) -> Path:
    return project_dir(root, cwd) / encode_segment(session_id)


def log_path(root: Path, cwd: str | None, session_id: str, *, compressed: bool) -> Path:
    """Where the harness keeps a session's artifact."""
    name = ZSTD_LOG_NAME if compressed else PLAIN_LOG_NAME
    return session_dir(root, cwd, session_id) / name


@dataclass(frozen=True)
class SessionFolder:
    """One session artifact found under a root."""

    session_id: str
    """The id decoded from the folder name (the header must name the same id)."""
    path: Path
    compressed: bool


def list_session_folders(root: Path) -> list[SessionFolder]:
    """Every session artifact under ``root``, sorted by path. Refuses what the harness
    refuses: flat ``<project>/<id>.jsonl*`` files, a session folder holding both
    encodings, and one id in two project folders. A missing root has no sessions."""
    if not root.is_dir():
        return []
    found: dict[str, SessionFolder] = {}
    for project in sorted(p for p in root.iterdir() if p.is_dir()):
        for entry in sorted(project.iterdir()):
            if entry.is_file() and entry.name.endswith((".jsonl", ".jsonl.zstd")):
                raise HarnessLayoutError(f"{entry} uses the unsupported flat-file layout")
            folder = _session_folder(entry)
            if folder is None:
                continue
            if folder.session_id in found:
                raise _twice(folder.session_id)
            found[folder.session_id] = folder
    return sorted(found.values(), key=lambda folder: str(folder.path))


def find_session(root: Path, session_id: str) -> SessionFolder | None:
    """The artifact of one session, looking only where its folder would be in each
    project, so the cost follows the number of projects, not of sessions. Refuses a
    folder holding both encodings and the id in two project folders."""
    segment = encode_segment(session_id)
    try:
        with os.scandir(root) as entries:  # no stat per flat log file
            projects = sorted(e.path for e in entries if e.is_dir())
    except (FileNotFoundError, NotADirectoryError):
        return None
    found = [f for f in (_session_folder(Path(p, segment)) for p in projects) if f is not None]
    if len(found) > 1:
        raise _twice(session_id)
    return found[0] if found else None


def _session_folder(entry: Path) -> SessionFolder | None:
    """The session artifact in folder ``entry``, if it is a session folder."""
    plain, packed = entry / PLAIN_LOG_NAME, entry / ZSTD_LOG_NAME
    if not entry.is_dir() or not (plain.is_file() or packed.is_file()):
        return None
    if plain.is_file() and packed.is_file():
        raise HarnessLayoutError(f"{entry} holds both {PLAIN_LOG_NAME} and {ZSTD_LOG_NAME}")
    path = packed if packed.is_file() else plain
    return SessionFolder(decode_segment(entry.name), path, compressed=path == packed)


def _twice(session_id: str) -> HarnessLayoutError:
    return HarnessLayoutError(
        f"session id {session_id!r} appears in two project folders", field="id"
    )


__all__ = [
    "NO_CWD_DIR",
    "PLAIN_LOG_NAME",
    "ZSTD_LOG_NAME",
    "SessionFolder",
    "decode_segment",
    "encode_segment",
    "find_session",
    "list_session_folders",
    "log_path",
    "project_dir",
    "project_key",
    "session_dir",
]
