"""A small timing harness shared by the benchmark scripts (not a test: nothing here asserts).

A benchmark script builds a list of :class:`Bench` rows and hands it to :func:`main`, which
times each one (median of several runs after a warm-up), prints a table with the target the
issues set, and exits 1 if any figure misses its target.  ``run_all.py`` runs every script.
"""

from __future__ import annotations

import argparse
import gc
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

__all__ = ["Bench", "Elapsed", "main", "measure"]


class Elapsed(float):
    """Seconds a callable timed itself: :func:`measure` takes them instead of its own clock.

    For work whose set-up cannot be left off the clock otherwise (an implementation driven
    through a pipe times its own request and reply, not the clean-up before it).
    """


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
        result = func()
        spent = time.perf_counter() - start
        times.append(float(result) if isinstance(result, Elapsed) else spent)
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
    parser.add_argument(
        "--json",
        metavar="FILE",
        help="also write the figures, the date and the machine as JSON (tests/readme.py "
        "renders the README's table from it)",
    )
    args = parser.parse_args(argv)
    failed = False
    rows: list[dict[str, object]] = []
    print(f"{'benchmark':58} {'ours':>10} {'target':>10}  verdict  third party")
    for bench in benches:
        if args.only not in bench.name:
            continue
        # What earlier figures left (their inputs, a third party's loaded pool) would be walked
        # by every full pass of the cycle collector during this one: a process that does only
        # this work has none of it.  Collect it, then set what is left aside.
        gc.collect()
        gc.freeze()
        repeat = args.repeat or bench.repeat
        ours = measure(bench.func, repeat)
        verdict = "-"
        if bench.target is not None:
            verdict = "ok" if ours <= bench.target else "MISSED"
            failed |= ours > bench.target
        extra = []
        figures: dict[str, float] = {}
        for name, other in ({} if args.no_third_party else bench.others).items():
            once = bench.others_repeat == 1
            theirs = measure(other, bench.others_repeat or repeat, warm_up=not once)
            figures[name] = theirs
            extra.append(f"{name} {_fmt(theirs)} (x{theirs / ours:.1f} ours)")
        rows.append({"name": bench.name, "ours": ours, "target": bench.target, "others": figures})
        target = _fmt(bench.target) if bench.target is not None else "-"
        print(f"{bench.name:58} {_fmt(ours):>10} {target:>10}  {verdict:7}  {'; '.join(extra)}")
        if bench.stats:
            print(f"    ({bench.stats})")
    sys.stdout.flush()
    if args.json:
        _write_json(args.json, rows)
    return 1 if failed else 0


def _write_json(path: str, rows: list[dict[str, object]]) -> None:
    """The figures with when and where they were measured."""
    import datetime as dt
    import json
    import os

    machine = {
        "cpus": os.cpu_count(),
        "processor": _cpu_model() or platform.machine(),
        "system": _system(),
        "python": platform.python_version(),
        "load": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
    }
    doc = {
        "measured": dt.datetime.now(dt.UTC).isoformat(timespec="minutes"),
        "machine": machine,
        "benchmarks": rows,
    }
    with open(path, "w", encoding="utf-8") as stream:
        json.dump(doc, stream, indent=1)
        stream.write("\n")


def _system() -> str:
    """The operating system's name and version (``Debian GNU/Linux 12 (bookworm)``)."""
    try:
        return platform.freedesktop_os_release()["PRETTY_NAME"]
    except (OSError, KeyError, AttributeError):
        return platform.platform(terse=True)


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as stream:
            for line in stream:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""
