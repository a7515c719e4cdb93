"""Benchmark: R and constraints on fragmented data, as a real cluster's allocations are.

The workloads are described in :mod:`_fragmented` (16,384 ranks x 48 cores, 64 scattered
properties, allocations of 9,830 scattered ranks each holding its own subset of cores).  Every
figure takes JSON text in, as an implementation under test receives it, and the set operations
return JSON text.  Targets: R.decode under 350 ms; constraint.match under 150 ms
with the R validated and decoded, under 60 ms against an R already decoded; R.union, R.diff
and R.intersect under 400 ms each.

Where flux-core's librlist can be loaded (see :mod:`_fluxcore`), it does the same work: R text
decoded by ``rlist_from_R``, set operations by ``rlist_union``/``rlist_diff``/
``rlist_intersect`` and encoded by ``rlist_encode``, matching by ``rlist_copy_constraint``.
Its set operations take minutes on these inputs, so they are timed once.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _fluxcore
from _fragmented import (
    ALLOC_A,
    ALLOC_A_TEXT,
    ALLOC_B,
    ALLOC_B_TEXT,
    FULL,
    FULL_TEXT,
    statistics,
)
from _harness import Bench, main
from bench_rset_constraint import CONSTRAINT

from flux_conformance.reference import constraint, rset
from flux_conformance.reference.operations import run

CONSTRAINT_TEXT = json.dumps(CONSTRAINT)
_HELD = rset.load(FULL)[0]
_RLIST = _fluxcore.rlist()


def _set_op(op: str, a: str, b: str) -> Callable[[], object]:
    return lambda: json.dumps(run(op, {"a": json.loads(a), "b": json.loads(b)}))


def _c(name: str, func: Callable[[Any], object]) -> dict[str, Callable[[], object]]:
    """The librlist figure, when the probe loaded."""
    rlist = _RLIST
    if rlist is None:
        return {}
    return {name: lambda: func(rlist)}


def _match_held() -> list[int]:
    compiled, _ = constraint.compile_constraint(json.loads(CONSTRAINT_TEXT))
    # (Before the fast paths the reference had only the private _evaluate: kept for side-by-side runs.)
    evaluate = getattr(constraint, "evaluate", None) or constraint._evaluate  # type: ignore[attr-defined]
    return evaluate(compiled, _HELD).to_list()


def _c_match_held() -> dict[str, Callable[[], object]]:
    rlist = _RLIST
    if rlist is None:
        return {}
    held = rlist.load(FULL_TEXT.encode())  # kept for the life of the process, like _HELD
    return {"librlist": lambda: rlist.match_loaded(held, CONSTRAINT_TEXT.encode())}


_FULL = f"full R: {statistics(FULL)}"
_PAIR = f"A: {statistics(ALLOC_A)}; B: {statistics(ALLOC_B)}"

BENCHES = [
    Bench(
        "fragmented: R.decode of the full R (JSON text in)",
        lambda: run("R.decode", json.loads(FULL_TEXT)),
        target=0.350,
        others=_c("librlist", lambda c: c.decode(FULL_TEXT.encode())),
        stats=_FULL,
    ),
    Bench(
        "fragmented: constraint.match, 20 terms (R validated, decoded)",
        lambda: run(
            "constraint.match",
            {"constraint": json.loads(CONSTRAINT_TEXT), "R": json.loads(FULL_TEXT)},
        ),
        target=0.150,
        others=_c("librlist", lambda c: c.match(FULL_TEXT.encode(), CONSTRAINT_TEXT.encode())),
    ),
    Bench(
        "fragmented: constraint.match, 20 terms, R already decoded",
        _match_held,
        target=0.060,
        others=_c_match_held(),
    ),
    Bench(
        "fragmented: R.union of two allocations, encoded",
        _set_op("R.union", ALLOC_A_TEXT, ALLOC_B_TEXT),
        target=0.400,
        others=_c(
            "librlist", lambda c: c.set_op("union", ALLOC_A_TEXT.encode(), ALLOC_B_TEXT.encode())
        ),
        others_repeat=1,
        stats=_PAIR,
    ),
    Bench(
        "fragmented: R.diff full minus an allocation, encoded",
        _set_op("R.diff", FULL_TEXT, ALLOC_A_TEXT),
        target=0.400,
        others=_c(
            "librlist", lambda c: c.set_op("diff", FULL_TEXT.encode(), ALLOC_A_TEXT.encode())
        ),
        others_repeat=1,
    ),
    Bench(
        "fragmented: R.intersect of two allocations, encoded",
        _set_op("R.intersect", ALLOC_A_TEXT, ALLOC_B_TEXT),
        target=0.400,
        others=_c(
            "librlist",
            lambda c: c.set_op("intersect", ALLOC_A_TEXT.encode(), ALLOC_B_TEXT.encode()),
        ),
        others_repeat=1,
    ),
]


if __name__ == "__main__":
    print(_fluxcore.available())
    sys.exit(main(BENCHES))
