"""Benchmark: allocation on the fragmented 16,384-node pool, Fluxion beside the reference.

The pool is :mod:`_fragmented`'s ``FULL`` (16,384 nodes of 48 cores, 64 scattered
properties); what is already taken is its two fragmented allocations ``ALLOC_A`` and
``ALLOC_B`` (9,830 scattered nodes each, every node with its own subset of cores).  The three
requests are ``bench_allocate.py``'s:

* 128 nodes, each with a slot of 16 cores, under a properties constraint;
* 1,000 slots of one core, no node level;
* a min-only node count, each node with a slot of one core (the largest count that is free).

Fluxion (``FLUXION_BUILD``, see :mod:`_fluxion`) runs one ``resource-query`` session: it
loads the pool, takes what is allocated with ``update allocate``, then matches each request
three times, cancelling in between.  Graph loading, taking the allocations and matching are
Fluxion's own timings (``-e``), reported apart.  The two allocations overlap (they were drawn
independently), and Fluxion refuses to mark a resource allocated twice, so it is given their
union (the reference's ``R.union``) as one allocation: the same resources are taken.  The
reference is timed in the same run on the same inputs, as ``bench_allocate.py`` times it: its
pool loaded once with both allocations, then each request matched (median of five).

Run it on its own (``python tests/benchmarks/bench_fluxion.py``): ``run_all.py`` leaves it
out (:func:`benches` is empty), since ``bench_allocate.py`` already times Fluxion there, on
our clock, from a session it keeps running.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _fluxion
import bench_allocate
from _fragmented import ALLOC_A_TEXT, FULL_TEXT, statistics
from _harness import Bench, measure

__all__ = ["REQUESTS", "benches", "main"]


REQUESTS = bench_allocate.REQUESTS


def benches() -> list[Bench]:
    """None for ``run_all.py``: a Fluxion session takes minutes; run this script instead."""
    return []


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms"


def main() -> int:
    """Print the figures; 1 when Fluxion is not found."""
    print(f"pool: {statistics(json.loads(FULL_TEXT))}")
    print(f"allocated: {statistics(json.loads(ALLOC_A_TEXT))}, and as many again")
    print(_fluxion.available())
    if _fluxion.resource_query() is None:
        return 1
    union = bench_allocate.taken_union()
    print(f"taken (their union, given to Fluxion): {statistics(union)}")
    start = time.perf_counter()
    bench_allocate.reference_load()
    loaded = time.perf_counter() - start
    timings = _fluxion.session(FULL_TEXT, [json.dumps(union)], REQUESTS, repeat=3)
    print(
        f"Fluxion: graph load {timings.load:.1f} s, update allocate of what is taken "
        f"{timings.update[0]:.1f} s, whole session {timings.wall:.1f} s"
    )
    print(f"reference: load the pool and mark both allocations {loaded:.1f} s")
    print(f"{'request':46} {'reference':>12} {'Fluxion match (median of 3)':>28}  allocated")
    for name, jobspec in REQUESTS.items():
        ours = measure(bench_allocate.reference_match(jobspec), 5)
        ok = "yes" if all(timings.allocated[name]) else f"no ({timings.allocated[name]})"
        print(f"{name:46} {_ms(ours):>12} {_ms(timings.median(name)):>28}  {ok}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
