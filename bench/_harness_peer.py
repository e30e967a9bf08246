"""The TypeScript harness as an optional peer: our driver (``harness_peer/append.mts``)
run as a child process under Node, importing the harness's packages from a checkout.

The peer is optional because nothing of the harness is part of this repository. It runs
when three environment variables name it (see bench/README.md, "Harness peer"):

- ``DSH_BENCH_HARNESS``: a harness checkout (its ``tsconfig.base.json`` maps the package
  names to their sources, so no build is needed);
- ``DSH_BENCH_TSX``: the ``tsx`` command (``node_modules/.bin/tsx``);
- ``DSH_BENCH_NODE``: a ``node`` binary, version 22 or later.

None set: the peer is skipped and the suite says so. Some set, or set to something that
does not work: :class:`HarnessPeerError`, naming what is wrong.

:class:`HarnessTools` is that environment, checked; the interop tests
(tests/harness_interop) run their own driver with it.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ENVIRONMENT = ("DSH_BENCH_HARNESS", "DSH_BENCH_TSX", "DSH_BENCH_NODE")
SKIPPED = (
    "harness peer skipped: set DSH_BENCH_HARNESS (a harness checkout), DSH_BENCH_TSX (tsx) "
    "and DSH_BENCH_NODE (node >= 22); see bench/README.md"
)
DRIVER = Path(__file__).resolve().parent / "harness_peer" / "append.mts"
MIN_NODE = 22
ANSWER_TIMEOUT = 300.0
"""Seconds to wait for one answer of the driver (100k appends take about 2 s)."""


class HarnessPeerError(RuntimeError):
    """The harness peer was asked for but cannot run as configured."""


@dataclass(frozen=True)
class HarnessTools:
    """A harness checkout, ``tsx`` and ``node`` as the environment names them, checked."""

    harness: Path
    tsx: Path
    node: Path
    node_version: str

    @classmethod
    def from_environment(cls) -> HarnessTools | None:
        """The tools the three variables name; ``None`` when none is set.

        Raises :class:`HarnessPeerError` when only some are set or one does not work."""
        values = {name: os.environ.get(name, "") for name in ENVIRONMENT}
        if not any(values.values()):
            return None
        missing = [name for name, value in values.items() if not value]
        if missing:
            raise HarnessPeerError(f"harness peer half configured: set {', '.join(missing)} too")
        harness, tsx, node = (Path(values[name]) for name in ENVIRONMENT)
        if not (harness / "tsconfig.base.json").is_file():
            raise HarnessPeerError(f"DSH_BENCH_HARNESS={harness} has no tsconfig.base.json")
        if not tsx.is_file():
            raise HarnessPeerError(f"DSH_BENCH_TSX={tsx} is not a file")
        return cls(harness, tsx, node, _check_node(node))

    def command(self, driver: Path) -> list[str]:
        """The command line that runs ``driver`` (a ``.mts`` file) under ``tsx``, with
        the harness's packages resolving from the checkout's sources."""
        tsconfig = self.harness / "tsconfig.base.json"
        return [str(self.node), str(self.tsx), "--tsconfig", str(tsconfig), str(driver)]

    def environment(self) -> dict[str, str]:
        """This process's environment with ``node``'s folder first on ``PATH``."""
        env = dict(os.environ)
        env["PATH"] = f"{self.node.parent}{os.pathsep}{env.get('PATH', '')}"
        return env


class HarnessPeer:
    """The driver as a child process: one command line in, one JSON line out, so the
    suite can interleave the driver's repeats with its own."""

    def __init__(self, tools: HarnessTools) -> None:
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        env = tools.environment()
        # lets the driver collect before each repeat, as the Python side does
        env["NODE_OPTIONS"] = f"{env.get('NODE_OPTIONS', '')} --expose-gc".strip()
        self._process = subprocess.Popen(
            tools.command(DRIVER),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            cwd=DRIVER.parent,
            env=env,
            text=True,
        )
        try:
            ready = self._answer()
            if not isinstance(ready, dict) or ready.get("ready") is not True:
                raise self._failure(
                    f"the driver's first line is not its ready line: {ready!r:.300}"
                )
        except BaseException:
            self.close()
            raise
        self.node_version = str(ready["node"])

    @classmethod
    def from_environment(cls) -> HarnessPeer | None:
        """The peer the environment names, started; ``None`` when it names none."""
        tools = HarnessTools.from_environment()
        return None if tools is None else cls(tools)

    def append(self, events: int) -> tuple[float, float]:
        """``(wall, cpu)`` seconds of appending ``events`` events to a new session."""
        answer = self._ask(f"append {events}")
        if not isinstance(answer, dict) or answer.get("events") != events:
            raise self._failure(f"unexpected answer to 'append {events}': {answer!r:.300}")
        return float(answer["wall_s"]), float(answer["cpu_s"])

    def sample(self, events: int) -> list[Any]:
        """The first ``events`` events of a new session, as the harness logs them."""
        answer = self._ask(f"sample {events}")
        if not isinstance(answer, list) or len(answer) != events:
            raise self._failure(f"unexpected answer to 'sample {events}': {answer!r:.300}")
        return answer

    def close(self) -> None:
        """End the driver (it exits when its input closes) and release its files."""
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        finally:
            if self._process.stdout is not None:
                self._process.stdout.close()
            self._stderr.close()

    def __enter__(self) -> HarnessPeer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _ask(self, command: str) -> Any:
        stdin = self._process.stdin
        assert stdin is not None
        try:
            stdin.write(command + "\n")
            stdin.flush()
        except BrokenPipeError:
            raise self._failure(f"the driver ended before {command!r}") from None
        return self._answer()

    def _answer(self) -> Any:
        stdout = self._process.stdout
        assert stdout is not None
        ready, _, _ = select.select([stdout], [], [], ANSWER_TIMEOUT)
        if not ready:
            raise self._failure(f"no answer from the driver in {ANSWER_TIMEOUT:g} s")
        line = stdout.readline()
        if not line:
            raise self._failure("the driver ended without answering")
        try:
            return json.loads(line)
        except json.JSONDecodeError:
            raise self._failure(f"the driver printed a line that is not JSON: {line!r}") from None

    def _failure(self, what: str) -> HarnessPeerError:
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        self._stderr.seek(0)
        stderr = self._stderr.read().decode(errors="replace").strip()
        tail = "\n".join(stderr.splitlines()[-15:])
        return HarnessPeerError(
            f"harness peer ({DRIVER.name}): {what}"
            + (f"; its stderr ends:\n{tail}" if tail else "")
        )


def _check_node(node: Path) -> str:
    """``node --version`` of a node binary that runs and is recent enough."""
    try:
        version = subprocess.run(
            [str(node), "--version"], capture_output=True, text=True, check=True, timeout=30
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError) as error:
        raise HarnessPeerError(f"DSH_BENCH_NODE={node} does not run: {error}") from None
    major = version.removeprefix("v").split(".")[0]
    if not major.isdigit() or int(major) < MIN_NODE:
        raise HarnessPeerError(f"DSH_BENCH_NODE={node} is node {version}; need >= {MIN_NODE}")
    return version
