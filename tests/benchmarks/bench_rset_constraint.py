"""Benchmark: RFC 20 resource sets and RFC 31 constraint matching in the reference.

Targets: ``constraint.match`` of a 20-term nested constraint over an R of 16,384
ranks with 64 properties under 50 ms; ``R.union`` and ``R.diff`` of two 16,384-rank Rs under
100 ms each; ``R.decode`` of such an R under 100 ms.  Every figure times the whole operation as
an implementation under test would see it: the JSON input is validated in full (R_lite, the
16,384-host nodelist, 64 property idsets) before any work, and the output is built as JSON.

A hostlist term at the expansion limit (``node[0-3999999]``) must cost what the R costs, not
what expanding it would.

The sparse rows guard the other end: a few hundred ranks numbered in the millions, with long
property lists.  Kept as int bitsets, such sets cost work in proportion to the largest rank
(0.4.0 took 6.5 s to decode this R); as interval lists they cost milliseconds.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import Bench, main

from flux_conformance.reference.idset import IdSet
from flux_conformance.reference.operations import run

RANKS = 16_384
BLOCK = 128


def _properties(count: int) -> dict[str, str]:
    """Each property covers a scattered third of the 128-rank blocks (tens of intervals)."""
    out: dict[str, str] = {}
    blocks = RANKS // BLOCK
    for i in range(count):
        spans = [(b * BLOCK, b * BLOCK + BLOCK - 1) for b in range(blocks) if (b * 7 + i) % 3 == 0]
        out[f"prop{i}"] = IdSet.from_intervals(spans).encode()
    return out


def _big_r(cores: tuple[str, str], gpus: str) -> dict[str, Any]:
    half = RANKS // 2
    return {
        "version": 1,
        "execution": {
            "R_lite": [
                {"rank": f"0-{half - 1}", "children": {"core": cores[0], "gpu": gpus}},
                {"rank": f"{half}-{RANKS - 1}", "children": {"core": cores[1]}},
            ],
            "nodelist": [f"node[0-{RANKS - 1}]"],
            "properties": _properties(64),
            "starttime": 0,
            "expiration": 86400,
        },
    }


R_FULL = _big_r(("0-63", "0-127"), "0-3")
R_HALF = _big_r(("0-31", "64-127"), "0-1")
# Rank 5000-5099 of the second set get different cores: a non-trivial overlap pattern.
R_HALF["execution"]["R_lite"].append({"rank": "5000-5099", "children": {"core": "100-101"}})


def _p(*names: str) -> dict[str, Any]:
    return {"properties": list(names)}


# 20 leaf terms, nested four deep, mixing every operator.
CONSTRAINT: dict[str, Any] = {
    "and": [
        {"or": [_p("prop1"), _p("prop2", "^prop3"), {"hostlist": ["node[0-4095]"]}]},
        {"not": [{"and": [_p("prop4"), _p("prop5")]}]},
        {"or": [{"ranks": ["1000-9000", "12000-13000"]}, _p("prop6", "prop7")]},
        {
            "or": [
                {"and": [_p("^prop8"), _p("prop9"), {"not": [{"ranks": ["7000-7100"]}]}]},
                {"and": [_p("prop10"), {"hostlist": ["node[100-200],node[9000-9999]"]}]},
                _p("prop11"),
            ]
        },
        {"not": [_p("prop12"), _p("^prop13")]},
        {"or": [_p("prop14"), _p("prop15"), {"not": [_p("prop17")]}]},
        {"ranks": ["0-16383"]},
        {"not": [{"hostlist": ["node[16000-16383]"]}]},
    ]
}


def _count_leaves(obj: dict[str, Any]) -> int:
    ((op, values),) = obj.items()
    if op in ("and", "or", "not"):
        return sum(_count_leaves(v) for v in values)
    return 1


assert _count_leaves(CONSTRAINT) == 20, _count_leaves(CONSTRAINT)


def listed(ids: list[int]) -> str:
    """Ids written one by one, as flux-core writes a fragmented allocation's ranks."""
    return ",".join(map(str, ids))


def _sparse_r(first: int) -> dict[str, Any]:
    """200 ranks three apart from ``first`` in two R_lite entries, 64 properties each
    listing two thirds of them one by one (over 1,000 characters each)."""
    ranks = [first + 3 * i for i in range(200)]

    props = {f"prop{k}": listed([r for j, r in enumerate(ranks) if (j + k) % 3]) for k in range(64)}
    return {
        "version": 1,
        "execution": {
            "R_lite": [
                {"rank": listed(ranks[0::2]), "children": {"core": "0-1"}},
                {"rank": listed(ranks[1::2]), "children": {"core": "0-3"}},
            ],
            "nodelist": [f"node[{listed(ranks)}]"],
            "properties": props,
        },
    }


R_SPARSE = _sparse_r(4_000_000)
R_SPARSE_B = _sparse_r(4_000_001)


def _scattered_r(seed: int = 3) -> tuple[dict[str, Any], dict[str, Any]]:
    """10,000 ranks scattered below 4,000,000, 48 cores each, 64 properties each on a random
    two fifths of them; and every other one of those ranks with 24 cores and the properties
    cut to them."""
    rnd = random.Random(seed)
    ranks = sorted(rnd.sample(range(4_000_000), 10_000))

    props = {f"p{k}": [r for r in ranks if rnd.random() < 0.4] for k in range(64)}
    half = ranks[::2]
    kept = set(half)

    def doc(ids: list[int], cores: str, names: dict[str, list[int]]) -> dict[str, Any]:
        return {
            "version": 1,
            "execution": {
                "R_lite": [{"rank": listed(ids), "children": {"core": cores}}],
                "nodelist": [f"n[{listed(ids)}]"],
                "properties": {name: listed(on) for name, on in names.items()},
            },
        }

    cut = {name: [r for r in on if r in kept] or half[:1] for name, on in props.items()}
    return doc(ranks, "0-47", props), doc(half, "0-23", cut)


R_SCATTERED, R_SCATTERED_HALF = _scattered_r()
#: A hostlist at the 4,000,000-host expansion limit (0.5.0 expanded it: 3.1 s).
HOSTS_AT_THE_LIMIT = {"hostlist": ["node[0-3999999]"]}
SCATTERED_MATCH = {"and": [_p("p1", "^p2"), {"not": [_p("p3")]}]}


BENCHES = [
    Bench(
        "constraint.match: 20 terms, 16,384 ranks, 64 properties",
        lambda: run("constraint.match", {"constraint": CONSTRAINT, "R": R_FULL}),
        target=0.050,
    ),
    Bench(
        "R.union of two 16,384-rank Rs", lambda: run("R.union", {"a": R_FULL, "b": R_HALF}), 0.100
    ),
    Bench("R.diff of two 16,384-rank Rs", lambda: run("R.diff", {"a": R_FULL, "b": R_HALF}), 0.100),
    Bench("R.decode of a 16,384-rank R with 64 properties", lambda: run("R.decode", R_FULL), 0.100),
    Bench(
        "R.intersect of two 16,384-rank Rs", lambda: run("R.intersect", {"a": R_FULL, "b": R_HALF})
    ),
    Bench("R.validate of a 16,384-rank R with 64 properties", lambda: run("R.validate", R_FULL)),
    Bench(
        "constraint.match: node[0-3999999] over the 16,384-rank R",
        lambda: run("constraint.match", {"constraint": HOSTS_AT_THE_LIMIT, "R": R_FULL}),
        target=0.050,
    ),
    Bench(
        "R.decode of 200 ranks numbered past 4,000,000, 64 long properties",
        lambda: run("R.decode", R_SPARSE),
        target=0.100,
    ),
    Bench(
        "R.union of two such sparse Rs",
        lambda: run("R.union", {"a": R_SPARSE, "b": R_SPARSE_B}),
        target=0.100,
    ),
    Bench(
        "constraint.match: 20 terms over the sparse R",
        lambda: run("constraint.match", {"constraint": CONSTRAINT, "R": R_SPARSE}),
        target=0.050,
    ),
    Bench(
        "R.decode of 10,000 ranks scattered below 4,000,000, 64 properties",
        lambda: run("R.decode", R_SCATTERED),
    ),
    Bench(
        "R.diff of that R minus every other rank's half",
        lambda: run("R.diff", {"a": R_SCATTERED, "b": R_SCATTERED_HALF}),
    ),
    Bench(
        "constraint.match: 3 property terms over that R",
        lambda: run("constraint.match", {"constraint": SCATTERED_MATCH, "R": R_SCATTERED}),
    ),
]


if __name__ == "__main__":
    raise SystemExit(main(BENCHES))
