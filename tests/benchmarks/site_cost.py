"""The results site's cost beyond the comparison: ``compare --site`` minus the compare.

    python tests/benchmarks/site_cost.py [--impl IMPL ...] [--keep MATRIX] [--repeat N]

Runs the comparison once (by default every shipped column: the reference and the eight real
implementations, which need their builds; see docs/adapters.md), then writes the site from it
``--repeat`` times into a temporary folder and prints the median wall and CPU times, the
number of files and their size.  Exits 1 when the median CPU time misses the target (30 s for
the nine columns; the wall time also counts what else shares the machine, so it is printed
with the load average).
``--keep FILE`` saves the comparison (a pickle) on the first run and reuses it afterwards, so
the site alone can be timed again without running the implementations.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import pickle
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flux_conformance.runner.adapters.factory import description, make_adapter
from flux_conformance.runner.cases import load_suite
from flux_conformance.runner.commands._common import shipped_expectations, suite_size
from flux_conformance.runner.report.site import Site, write_site
from flux_conformance.runner.tools.clarify import reading_taken
from flux_conformance.runner.tools.compare import run_matrix

NINE = (
    "reference",
    "flux-core",
    "flux-core-librlist",
    "fluxion",
    "slurm-hostlist",
    "slurm-extra",
    "pdsh",
    "python-hostlist",
    "clustershell",
)
TARGET_SECONDS = 30.0


def main() -> int:
    """Time the site; 0 when the median meets the target."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--impl", action="append", help="a column (default: the nine shipped)")
    parser.add_argument("--keep", type=Path, help="save the comparison here, or reuse it")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    suite = load_suite()
    edition = suite.editions.resolve(None)
    if args.keep is not None and args.keep.is_file():
        with args.keep.open("rb") as stream:
            matrix, started = _deep(lambda: pickle.load(stream))
    else:
        impls = args.impl or list(NINE)
        began = time.perf_counter()
        started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        matrix = run_matrix(
            suite,
            [c for c in suite.cases if c.edition in (None, edition)],
            impls,
            make_adapter=make_adapter,
            expectations={i: p for i in impls if (p := shipped_expectations(i)) is not None},
            progress=lambda line: print(line, file=sys.stderr),
            edition=edition,
        )
        print(f"compare: {time.perf_counter() - began:.1f} s", file=sys.stderr)
        if args.keep is not None:
            with args.keep.open("wb") as stream:
                _deep(lambda: pickle.dump((matrix, started), stream))
    site_args = {
        "started": started,
        "command": "flux-conformance compare "
        + " ".join(f"--impl={c.spec}" for c in matrix.columns),
        "suite_size": suite_size(suite, edition),
        "descriptions": {c.spec: description(c.spec) for c in matrix.columns},
        "reading_of": lambda case, reply: reading_taken(case, reply, suite),
    }
    times, cpu = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(args.repeat):
            target = Path(tmp) / f"site-{n}"
            began, began_cpu = time.perf_counter(), time.process_time()
            files = write_site(Site(matrix, suite, edition, **site_args), target)
            times.append(time.perf_counter() - began)
            cpu.append(time.process_time() - began_cpu)
            size = sum(p.stat().st_size for p in target.rglob("*") if p.is_file())
            print(
                f"run {n + 1}: {times[-1]:.2f} s wall, {cpu[-1]:.2f} s CPU, {files:,} files, "
                f"{size / 1e6:.1f} MB (load average {os.getloadavg()[0]:.1f})"
            )
    median, median_cpu = statistics.median(times), statistics.median(cpu)
    columns = len(matrix.columns)
    print(
        f"site of {columns} columns x {len(matrix.cases):,} cases: median {median:.2f} s wall, "
        f"{median_cpu:.2f} s CPU over {len(times)} runs (target {TARGET_SECONDS:.0f} s)"
    )
    # The CPU time is what the site costs; the wall time adds whatever shares the machine.
    return 0 if median_cpu <= TARGET_SECONDS else 1


def _deep(action: Callable[[], Any]) -> Any:
    """``action()`` on a thread with a large stack and recursion limit: some cases nest deeply,
    and pickle recurses.  (Only for the pickle: the comparison runs with the usual limit.)"""
    import threading

    limit = sys.getrecursionlimit()
    threading.stack_size(512 * 1024 * 1024)
    sys.setrecursionlimit(200_000)
    out: list[Any] = []
    try:
        thread = threading.Thread(target=lambda: out.append(action()))
        thread.start()
        thread.join()
    finally:
        sys.setrecursionlimit(limit)
        threading.stack_size(0)
    if not out:
        raise SystemExit("could not pickle or unpickle the comparison")
    return out[0]


if __name__ == "__main__":
    sys.exit(main())
