"""A small timing harness shared by the benchmark scripts (not a test: nothing here asserts).

A benchmark script builds a list of :class:`Bench` rows and hands it to :func:`main`, which
times each one (median of several runs after a warm-up), prints a table with the target the
issues set, and exits 1 if any figure misses its target.  ``run_all.py`` runs every script.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

__all__ = ["Bench", "main", "measure"]


@dataclass(frozen=True)
class Bench:
    """One figure: ``func`` is timed; ``target`` is the limit in seconds (None: no target).

    ``others`` maps a third-party implementation's name to a callable doing the same work;
    each is timed too and shown as a ratio to ours, ``others_repeat`` times (0: as often as
    ours; 1: once, without a warm-up, for work that takes minutes).  ``stats`` describes the
    workload and is printed under the row.
    """

    name: str
    func: Callable[[], object]
    target: float | None = None
    others: dict[str, Callable[[], object]] = field(default_factory=dict)
    repeat: int = 5
    others_repeat: int = 0
    stats: str = ""


def measure(func: Callable[[], object], repeat: int = 5, *, warm_up: bool = True) -> float:
    """Median wall-clock seconds of ``repeat`` calls, after one warm-up call (if asked)."""
    if warm_up:
        func()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _fmt(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def main(benches: Sequence[Bench], argv: Sequence[str] | None = None) -> int:
    """Time every bench, print the table, return 0 when all targets are met."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=None, help="runs per figure")
    parser.add_argument("--only", default="", help="only the figures whose name holds this text")
    parser.add_argument(
        "--no-third-party", action="store_true", help="time the reference only (much quicker)"
    )
    args = parser.parse_args(argv)
    failed = False
    print(f"{'benchmark':58} {'ours':>10} {'target':>10}  verdict  third party")
    for bench in benches:
        if args.only not in bench.name:
            continue
        repeat = args.repeat or bench.repeat
        ours = measure(bench.func, repeat)
        verdict = "-"
        if bench.target is not None:
            verdict = "ok" if ours <= bench.target else "MISSED"
            failed |= ours > bench.target
        extra = []
        for name, other in ({} if args.no_third_party else bench.others).items():
            once = bench.others_repeat == 1
            theirs = measure(other, bench.others_repeat or repeat, warm_up=not once)
            extra.append(f"{name} {_fmt(theirs)} (x{theirs / ours:.1f} ours)")
        target = _fmt(bench.target) if bench.target is not None else "-"
        print(f"{bench.name:58} {_fmt(ours):>10} {target:>10}  {verdict:7}  {'; '.join(extra)}")
        if bench.stats:
            print(f"    ({bench.stats})")
    sys.stdout.flush()
    return 1 if failed else 0
