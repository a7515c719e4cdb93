"""Benchmark: allocation on the fragmented 16,384-node pool, Fluxion beside the reference.

The pool is :mod:`_fragmented`'s ``FULL`` (16,384 nodes of 48 cores, 64 scattered
properties); what is already taken is its allocation ``ALLOC_A`` (9,830 scattered nodes, each
with a random half of its cores; ``ALLOC_B`` overlaps it, so the two cannot be held at once).
Three requests, each with one task per slot and a one-hour duration:

* ``nodes-128x16-constrained``: 128 nodes, each with a slot of 16 cores, on nodes with
  ``prop0`` and without ``prop1``;
* ``slots-1000x1``: 1,000 slots of one core, no node level;
* ``nodes-min-only``: ``{"min": 1}`` nodes, each with a slot of one core (the largest count
  that is free).

Fluxion (``FLUXION_BUILD``, see :mod:`_fluxion`) runs one ``resource-query`` session: it
loads the pool, takes ``ALLOC_A`` with ``update allocate``, then matches each request three
times, cancelling in between; graph loading, taking the allocation and matching are Fluxion's
own timings (``-e``), so they are reported apart.  The reference's ``sched.allocate``, when
the reference has it, is timed on the same inputs in the same run (R texts decoded in every
call, as an implementation receives them).

Run it on its own (``python tests/benchmarks/bench_fluxion.py``): one Fluxion session takes
minutes (its graph has 802,817 vertices), so ``run_all.py`` leaves it out (:func:`benches`
is empty).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _fluxion
from _fragmented import ALLOC_A_TEXT, FULL_TEXT, statistics
from _harness import Bench, measure

from flux_conformance.reference import operations

__all__ = ["REQUESTS", "benches", "main"]


def _jobspec(resources: list[dict[str, Any]], **system: Any) -> dict[str, Any]:
    return {
        "version": 1,
        "resources": resources,
        "tasks": [{"command": ["app"], "slot": "task", "count": {"per_slot": 1}}],
        "attributes": {"system": {"duration": 3600, **system}},
    }


def _slot(count: int, cores: int) -> dict[str, Any]:
    return {
        "type": "slot",
        "count": count,
        "label": "task",
        "with": [{"type": "core", "count": cores}],
    }


REQUESTS: dict[str, dict[str, Any]] = {
    "nodes-128x16-constrained": _jobspec(
        [{"type": "node", "count": 128, "with": [_slot(1, 16)]}],
        constraints={"properties": ["prop0", "^prop1"]},
    ),
    "slots-1000x1": _jobspec([_slot(1000, 1)]),
    "nodes-min-only": _jobspec([{"type": "node", "count": {"min": 1}, "with": [_slot(1, 1)]}]),
}


def benches() -> list[Bench]:
    """None for ``run_all.py``: a Fluxion session takes minutes; run this script instead."""
    return []


def _reference(name: str) -> float | None:
    if "sched.allocate" not in operations.OPERATIONS:
        return None

    def allocate() -> object:
        value = {
            "pool": json.loads(FULL_TEXT),
            "jobspec": REQUESTS[name],
            "allocated": [json.loads(ALLOC_A_TEXT)],
        }
        return operations.run("sched.allocate", value)

    return measure(allocate, 3)


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:,.1f} ms"


def main() -> int:
    """Print the table; 1 when Fluxion is not found."""
    print(f"pool: {statistics(json.loads(FULL_TEXT))}")
    print(f"allocated: {statistics(json.loads(ALLOC_A_TEXT))}")
    print(_fluxion.available())
    if _fluxion.resource_query() is None:
        return 1
    timings = _fluxion.session(FULL_TEXT, [ALLOC_A_TEXT], REQUESTS, repeat=3)
    print(
        f"Fluxion: graph load {timings.load:.1f} s, update allocate of the allocation "
        f"{timings.update[0]:.1f} s, whole session {timings.wall:.1f} s"
    )
    print(f"{'request':28} {'reference':>12} {'Fluxion match (median of 3)':>28}  allocated")
    for name in REQUESTS:
        ok = "yes" if all(timings.allocated[name]) else f"no ({timings.allocated[name]})"
        print(f"{name:28} {_ms(_reference(name)):>12} {_ms(timings.median(name)):>28}  {ok}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
