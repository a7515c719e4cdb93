"""Fluxion's resource-query on the benchmarks' allocation inputs, where a build can be found.

``FLUXION_BUILD`` names a build of ``implementations/flux-sched/build.sh``.  One
``resource-query`` session (``-e``, which makes it print its own timings) loads the pool,
takes the already-allocated Rs with ``update allocate`` (as the ``fluxion`` adapter does), then
matches each jobspec ``repeat`` times, cancelling each allocation before the next match so that
every match sees the same free resources.  The figures are Fluxion's own measurements:

* ``load``: ``Graph Load Time``, reading the R and building the graph;
* ``update``: the ``ELAPSE`` of each ``update allocate`` (marking the allocated Rs);
* ``match``: the ``ELAPSE`` of each ``match allocate_with_satisfiability``, per jobspec;
* ``wall``: the whole process, start to exit.

:class:`Session` keeps one ``resource-query`` running instead, for a timing harness that asks
for one match at a time: the pool is loaded and the allocated Rs taken once, then each
:meth:`Session.match` sends one ``match allocate_with_satisfiability`` and waits for its
answer, timed on our clock from the command written to the answer read (the cancel of the
match before it is left off the clock).

Nothing here is a dependency of the suite; :func:`available` says why Fluxion was not found.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Session", "Timings", "available", "resource_query", "session"]

#: How long an ``allocated`` R without an expiration is held (as the adapter holds it; see
#: docs/adapters.md).
HORIZON = 3153600000

_why: list[str] = []


def resource_query() -> Path | None:
    """The build's resource-query, or None (the reason goes to :func:`available`)."""
    build = os.environ.get("FLUXION_BUILD", "")
    if not build:
        _why[:] = ["FLUXION_BUILD is not set (implementations/flux-sched/build.sh makes a build)"]
        return None
    program = Path(build) / "resource" / "utilities" / "resource-query"
    if not os.access(program, os.X_OK):
        _why[:] = [f"no resource-query in FLUXION_BUILD={build}"]
        return None
    return program


def available() -> str:
    """One line: whether Fluxion was found, and why not."""
    found = resource_query()
    return "Fluxion: resource-query found" if found else f"Fluxion: not found ({_why[0]})"


@dataclass
class Timings:
    """Fluxion's own figures for one session, in seconds."""

    load: float = 0.0
    wall: float = 0.0
    update: list[float] = field(default_factory=list)
    match: dict[str, list[float]] = field(default_factory=dict)
    allocated: dict[str, list[bool]] = field(default_factory=dict)

    def median(self, name: str) -> float:
        """The median match time of jobspec ``name``."""
        return statistics.median(self.match[name])


def _blocks(stdout: str) -> list[tuple[bool, float]]:
    """(allocated, ELAPSE) of each job, in the order resource-query printed them."""
    found: list[tuple[bool, float]] = []
    allocated = False
    for line in stdout.splitlines():
        if line.startswith("INFO: RESOURCES=ALLOCATED"):
            allocated = True
        elif line.startswith("INFO: ELAPSE="):
            found.append((allocated, float(line.split("=", 1)[1])))
            allocated = False
    return found


def session(
    pool: str,
    allocated: Sequence[str],
    jobspecs: dict[str, dict[str, Any]],
    *,
    repeat: int = 3,
    policy: str = "first",
) -> Timings:
    """Run one resource-query session; ``pool`` and ``allocated`` are R texts."""
    program = resource_query()
    if program is None:
        raise RuntimeError(available())
    with tempfile.TemporaryDirectory(prefix="fluxion-bench-") as tmp:
        work = Path(tmp)
        (work / "pool.json").write_text(pool)
        commands = []
        for n, text in enumerate(allocated, start=1):
            (work / f"alloc-{n}.json").write_text(text)
            commands.append(f"update allocate rv1exec alloc-{n}.json {n} 0 {HORIZON}")
        order: list[str] = []
        jobid = len(allocated) + 1
        for index, (name, jobspec) in enumerate(jobspecs.items()):
            # resource-query splits its commands at spaces: the files get plain names.
            (work / f"request-{index}.json").write_text(json.dumps(jobspec))
            for _ in range(repeat):
                command = f"match allocate_with_satisfiability request-{index}.json"
                commands += [command, f"cancel {jobid}"]
                order.append(name)
                jobid += 1
        commands.append("quit")
        argv = [str(program), "-L", "pool.json", "-f", "rv1exec", "-F", "rv1_nosched"]
        argv += ["-P", policy, "-d", "-e"]
        start = time.perf_counter()
        done = subprocess.run(
            argv,
            input="\n".join(commands) + "\n",
            cwd=work,
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"resource-query failed: {done.stderr[-2000:]}")
    timings = Timings(wall=wall)
    for line in done.stdout.splitlines():
        if line.startswith("INFO: Graph Load Time:"):
            timings.load = float(line.split(":", 2)[2])
    blocks = _blocks(done.stdout)
    held, matched = blocks[: len(allocated)], blocks[len(allocated) :]
    if not all(ok for ok, _ in held) or len(matched) != len(order):
        raise RuntimeError(f"resource-query did not take the allocated Rs: {done.stderr[-2000:]}")
    timings.update = [seconds for _, seconds in held]
    for name, (ok, seconds) in zip(order, matched, strict=True):
        timings.match.setdefault(name, []).append(seconds)
        timings.allocated.setdefault(name, []).append(ok)
    return timings


class Session:
    """One ``resource-query`` kept running on ``pool`` with ``allocated`` taken (R texts).

    ``loaded`` is the wall time from the start of the process to the last allocated R marked.
    ``resource-query`` writes its answers through C stdio, which a pipe would buffer, so it is
    run under coreutils' ``stdbuf -oL`` to see each answer when it is written.
    """

    def __init__(
        self,
        pool: str,
        allocated: Sequence[str],
        jobspecs: Mapping[str, Mapping[str, Any]],
        *,
        policy: str = "first",
    ) -> None:
        program = resource_query()
        if program is None:
            raise RuntimeError(available())
        self._tmp = tempfile.TemporaryDirectory(prefix="fluxion-bench-")
        work = Path(self._tmp.name)
        (work / "pool.json").write_text(pool)
        self._files: dict[str, str] = {}
        for index, (name, jobspec) in enumerate(jobspecs.items()):
            # resource-query splits its commands at spaces: the files get plain names.
            (work / f"request-{index}.json").write_text(json.dumps(jobspec))
            self._files[name] = f"request-{index}.json"
        argv = ["stdbuf", "-oL", str(program), "-L", "pool.json", "-f", "rv1exec"]
        argv += ["-F", "rv1_nosched", "-P", policy, "-d", "-e"]
        start = time.perf_counter()
        self._process = subprocess.Popen(
            argv,
            cwd=work,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        for n, text in enumerate(allocated, start=1):
            (work / f"alloc-{n}.json").write_text(text)
            if not self._ask(f"update allocate rv1exec alloc-{n}.json {n} 0 {HORIZON}")[0]:
                self.close()
                raise RuntimeError(f"resource-query did not take allocated R {n}")
        self.loaded = time.perf_counter() - start
        self._held = 0

    def _ask(self, command: str) -> tuple[bool, list[str]]:
        """Send one command; read its answer block; (allocated, lines)."""
        stdin, stdout = self._process.stdin, self._process.stdout
        assert stdin is not None
        assert stdout is not None
        stdin.write(command + "\n")
        stdin.flush()
        lines: list[str] = []
        while True:
            line = stdout.readline()
            if not line:
                raise RuntimeError(f"resource-query ended during {command!r}")
            lines.append(line)
            if line.startswith("INFO: POSTORDER VISIT COUNT"):
                lines.append(stdout.readline())  # the closing rule of the block
                return any(x.startswith("INFO: RESOURCES=ALLOCATED") for x in lines), lines

    def match(self, name: str) -> float:
        """Seconds for one match of jobspec ``name``; what it allocates is cancelled later."""
        stdin = self._process.stdin
        assert stdin is not None
        if self._held:
            # A successful cancel prints nothing; the next answer is the match's own.
            stdin.write(f"cancel {self._held}\n")
            self._held = 0
        start = time.perf_counter()
        allocated, lines = self._ask(f"match allocate_with_satisfiability {self._files[name]}")
        spent = time.perf_counter() - start
        if not allocated:
            raise RuntimeError(f"Fluxion allocated nothing for {name!r}")
        jobids = [x.split("=", 1)[1] for x in lines if x.startswith("INFO: JOBID=")]
        self._held = int(jobids[0])
        return spent

    def close(self) -> None:
        """Stop resource-query and remove its files."""
        if self._process.poll() is None and self._process.stdin is not None:
            try:
                self._process.stdin.write("quit\n")
                self._process.stdin.close()
                self._process.wait(timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                self._process.kill()
                self._process.wait()
        self._tmp.cleanup()
