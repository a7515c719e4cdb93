"""Benchmark: allocation on the fragmented 16,384-node pool, Fluxion beside the reference.

The pool is :mod:`_fragmented`'s ``FULL`` (16,384 nodes of 48 cores, 64 scattered
properties); what is already taken is its two fragmented allocations ``ALLOC_A`` and
``ALLOC_B`` (9,830 scattered nodes each, every node with its own subset of cores).  The three
requests are ``bench_allocate.py``'s when it is there (the reference's ``sched.allocate``
benchmark), else this file's own of the same shape:

* 128 nodes, each with a slot of 16 cores, under a properties constraint;
* 1,000 slots of one core, no node level;
* a min-only node count, each node with a slot of one core (the largest count that is free).

Fluxion (``FLUXION_BUILD``, see :mod:`_fluxion`) runs one ``resource-query`` session: it
loads the pool, takes what is allocated with ``update allocate``, then matches each request
three times, cancelling in between.  Graph loading, taking the allocations and matching are
Fluxion's own timings (``-e``), reported apart.  The two allocations overlap (they were drawn
independently), and Fluxion refuses to mark a resource allocated twice, so it is given their
union (the reference's ``R.union``) as one allocation: the same resources are taken.  The
reference, when it has ``sched.allocate``, is timed in the same run on the same inputs: its
pool loaded once with both allocations, then each request matched (median of five).

Run it on its own (``python tests/benchmarks/bench_fluxion.py``): one Fluxion session takes
minutes (its graph has 802,817 vertices), so ``run_all.py`` leaves it out (:func:`benches`
is empty).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _fluxion
from _fragmented import ALLOC_A_TEXT, ALLOC_B_TEXT, FULL_TEXT, statistics
from _harness import Bench, measure

from flux_conformance.reference import operations

__all__ = ["REQUESTS", "benches", "main"]


def _jobspec(resources: list[dict[str, Any]], **system: Any) -> dict[str, Any]:
    return {
        "version": 1,
        "resources": resources,
        "tasks": [{"command": ["app"], "slot": "task", "count": {"per_slot": 1}}],
        "attributes": {"system": {"duration": 0, **system}},
    }


def _slot(count: Any, cores: int) -> dict[str, Any]:
    return {
        "type": "slot",
        "count": count,
        "label": "task",
        "with": [{"type": "core", "count": cores}],
    }


def _requests() -> dict[str, dict[str, Any]]:
    try:
        import bench_allocate
    except ImportError:
        return {
            "128 nodes x 16 cores, properties constraint": _jobspec(
                [{"type": "node", "count": 128, "with": [_slot(1, 16)]}],
                constraints={"properties": ["prop1", "^prop2"]},
            ),
            "1,000 one-core slots": _jobspec([_slot(1000, 1)]),
            "min-only node count": _jobspec(
                [{"type": "node", "count": {"min": 1}, "with": [_slot(1, 1)]}]
            ),
        }
    found: dict[str, dict[str, Any]] = bench_allocate.REQUESTS
    return found


REQUESTS = _requests()


def benches() -> list[Bench]:
    """None for ``run_all.py``: a Fluxion session takes minutes; run this script instead."""
    return []


def _reference() -> tuple[float, dict[str, Callable[[], object]]] | None:
    """The reference's load time and one matcher per request, when it allocates."""
    try:
        from flux_conformance.reference.allocate import Pool
    except ImportError:
        return None
    taken = [json.loads(ALLOC_A_TEXT), json.loads(ALLOC_B_TEXT)]
    start = time.perf_counter()
    pool = Pool.load(json.loads(FULL_TEXT), taken)
    loaded = time.perf_counter() - start
    edition = operations.DEFAULT_EDITION
    return loaded, {
        name: (lambda jobspec=jobspec: pool.allocate(jobspec, edition=edition))
        for name, jobspec in REQUESTS.items()
    }


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:,.1f} ms"


def main() -> int:
    """Print the figures; 1 when Fluxion is not found."""
    print(f"pool: {statistics(json.loads(FULL_TEXT))}")
    print(f"allocated: {statistics(json.loads(ALLOC_A_TEXT))}, and as many again")
    print(_fluxion.available())
    if _fluxion.resource_query() is None:
        return 1
    union = operations.run(
        "R.union", {"a": json.loads(ALLOC_A_TEXT), "b": json.loads(ALLOC_B_TEXT)}
    )
    print(f"taken (their union, given to Fluxion): {statistics(union)}")
    reference = _reference()
    timings = _fluxion.session(FULL_TEXT, [json.dumps(union)], REQUESTS, repeat=3)
    print(
        f"Fluxion: graph load {timings.load:.1f} s, update allocate of what is taken "
        f"{timings.update[0]:.1f} s, whole session {timings.wall:.1f} s"
    )
    if reference is not None:
        print(f"reference: load the pool and mark both allocations {reference[0]:.1f} s")
    print(f"{'request':46} {'reference':>12} {'Fluxion match (median of 3)':>28}  allocated")
    for name in REQUESTS:
        ours = measure(reference[1][name], 5) if reference is not None else None
        ok = "yes" if all(timings.allocated[name]) else f"no ({timings.allocated[name]})"
        print(f"{name:46} {_ms(ours):>12} {_ms(timings.median(name)):>28}  {ok}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
