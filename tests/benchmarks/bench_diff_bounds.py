"""Benchmark: ``flux-conformance diff --seconds S`` against every kind of adapter, start to exit.

Target: every run exits within ``S`` plus one second of its start (the process's start: Python,
imports, workers, search, shrinking, closing, writing), and neither ``diff`` nor any of its
workers goes over 1 GiB of resident memory.  One run a column: a ``python:`` object and an
``exec:`` program (the reference, served both ways), the shipped in-process adapters
(python-hostlist, ClusterShell, libslurm's hostlists, pdsh, flux-core) and the shipped workers
(librlist, Fluxion, Slurm's ``--extra``), those not installed or built left out with the reason.
Each runs on an operation where it departs from the reference, so that shrinking and writing
the cases are part of the run.

The wall-clock figure is measured here, around the process; the peak resident memory of the
whole tree is its ``ru_maxrss`` (``wait4``), and ``diff``'s own and its largest worker's are the
ones its summary reports.  ``tox -e bench`` gathers the wall-clock rows (:func:`benches`, 5 s
runs); run it alone for the memory table:

    python tests/benchmarks/bench_diff_bounds.py [--seconds 30] [--only NAME] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import Bench, Elapsed

from flux_conformance.runner.errors import ConformanceError
from flux_conformance.runner.tools.diff_bounds import Bounds, bounded

MIB = 1024 * 1024
#: How far past ``--seconds`` a run may exit.
MARGIN = 1.0
#: The memory bound of ``diff`` and of each worker.
MEMORY = 1024 * MIB

#: Column, the kind of adapter it is, and an operation where it departs from the reference.
COLUMNS = (
    (
        "python:flux_conformance.runner.adapters.inprocess:ReferenceImplementation",
        "python: object",
        "idset.decode",
    ),
    ("exec:{python} -m flux_conformance.runner.cli serve", "exec: program", "hostlist.decode"),
    ("python-hostlist", "shipped, in-process", "hostlist.decode"),
    ("clustershell", "shipped, in-process", "hostlist.decode"),
    ("slurm-hostlist", "shipped, in-process", "idset.encode"),
    ("pdsh", "shipped, in-process", "hostlist.decode"),
    ("flux-core", "shipped, in-process", "R.decode"),
    ("flux-core-librlist", "shipped worker", "R.decode"),
    ("fluxion", "shipped worker", "jobspec.validate"),
    ("slurm-extra", "shipped worker", "slurm.extra.parse"),
)

_PEAK = re.compile(r"peak memory: (\d+) MiB \(diff[^)]*\), (\d+) MiB \(largest worker\)")
_TIME = re.compile(r"  time: (.*)")


@dataclass
class Run:
    """One ``diff`` run, as measured."""

    column: str
    kind: str
    operation: str
    seconds: float
    wall: float
    exit_status: int
    tree_peak_mib: float
    diff_peak_mib: float | None
    worker_peak_mib: float | None
    phases: str

    @property
    def ok(self) -> bool:
        """Whether the run kept to its time and memory bounds and ended with a report."""
        peaks = [self.tree_peak_mib, self.diff_peak_mib or 0, self.worker_peak_mib or 0]
        return (
            self.wall <= self.seconds + MARGIN
            and max(peaks) < MEMORY / MIB
            and self.exit_status in (0, 1)
        )


def _spec(column: str) -> str:
    return column.format(python=sys.executable)


def available() -> list[tuple[str, str, str]]:
    """The columns that can run here; the others are printed with the reason."""
    found = []
    for column, kind, operation in COLUMNS:
        try:
            bounded(_spec(column), Bounds())
        except ConformanceError as exc:
            print(f"{column}: left out ({str(exc).splitlines()[0]})", file=sys.stderr)
            continue
        found.append((column, kind, operation))
    return found


def run_diff(column: str, kind: str, operation: str, seconds: float) -> Run:
    """One ``diff --seconds`` run of ``column`` against the reference, measured from outside."""
    with tempfile.TemporaryDirectory() as folder:
        command = [
            sys.executable,
            "-m",
            "flux_conformance.runner.cli",
            "diff",
            "--impl",
            _spec(column),
            "-o",
            operation,
            "--seconds",
            f"{seconds:g}",
            "--seed",
            "1",
            "--out",
            str(Path(folder) / "found.yaml"),
        ]
        start = time.monotonic()
        with tempfile.TemporaryFile() as err:
            proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err)
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.monotonic() - start
            proc.returncode = os.waitstatus_to_exitcode(status)
            err.seek(0)
            text = err.read().decode("utf-8", "replace")
    peak = _PEAK.search(text)
    phases = _TIME.search(text)
    return Run(
        column=column.split(":", maxsplit=1)[0] if column.startswith("exec:") else column,
        kind=kind,
        operation=operation,
        seconds=seconds,
        wall=wall,
        exit_status=proc.returncode,
        tree_peak_mib=usage.ru_maxrss * 1024 / MIB,
        diff_peak_mib=float(peak.group(1)) if peak else None,
        worker_peak_mib=float(peak.group(2)) if peak else None,
        phases=phases.group(1) if phases else text.strip().splitlines()[-1:][0] if text else "",
    )


def benches(seconds: float = 5.0) -> list[Bench]:
    """The wall-clock rows for ``tox -e bench``: one short run a column (target S + 1 s)."""
    rows = []
    for column, kind, operation in available():

        def once(column: str = column, kind: str = kind, operation: str = operation) -> Elapsed:
            return Elapsed(run_diff(column, kind, operation, seconds).wall)

        name = column.split(":")[0] if column.startswith(("exec:", "python:")) else column
        rows.append(
            Bench(
                f"diff --seconds {seconds:g}, start to exit: {name}",
                once,
                target=seconds + MARGIN,
                repeat=1,
                stats=f"{kind}, {operation}",
            )
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    """Run every available column once, print the table, exit 1 if a run broke a bound."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--only", action="append", help="only these columns (repeatable)")
    parser.add_argument("--json", type=Path, help="also write the runs here")
    args = parser.parse_args(argv)
    runs = []
    print(
        f"{'column':20} {'kind':20} {'operation':18} {'wall':>7} {'bound':>6} "
        f"{'tree':>9} {'diff':>9} {'worker':>9}  verdict"
    )
    for column, kind, operation in available():
        if args.only and not any(o in column for o in args.only):
            continue
        run = run_diff(column, kind, operation, args.seconds)
        runs.append(run)
        mib = [
            f"{v:.0f} MiB" if v is not None else "-"
            for v in (run.tree_peak_mib, run.diff_peak_mib, run.worker_peak_mib)
        ]
        print(
            f"{run.column[:20]:20} {kind:20} {operation:18} {run.wall:6.1f}s "
            f"{run.seconds + MARGIN:5.0f}s {mib[0]:>9} {mib[1]:>9} {mib[2]:>9}  "
            f"{'ok' if run.ok else 'MISSED'} (exit {run.exit_status})",
            flush=True,
        )
        print(f"    {run.phases}", flush=True)
    if args.json:
        doc = {
            "seconds": args.seconds,
            "load": os.getloadavg()[0],
            "runs": [asdict(r) for r in runs],
        }
        args.json.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return 0 if all(r.ok for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
