"""Fragmented workloads: R documents shaped like a real cluster's allocations.

Every figure comes from one fixed seed, so the documents are the same on every run:

* ``FULL``: 16,384 ranks (``node0`` .. ``node16383``) of 48 cores each, with 64 properties;
  each property marks every node independently with probability 1/3, which scatters it over
  about 3,600 intervals (about 233,000 in all).
* ``ALLOC_A`` and ``ALLOC_B``: two allocations of 9,830 scattered ranks each (60 %); every
  rank gets its own random subset of the 48 cores (each core with probability 1/2), so R_lite
  has one entry per distinct subset, nearly one per rank.  Each carries the full R's
  properties restricted to its ranks, as flux-core writes a job's R.
* ``CONSTRAINT``: the 20-term nested constraint of the easy workload.

The documents are kept as JSON text (``*_TEXT``): an implementation under test receives text,
so every timing includes ``json.loads``.  :func:`statistics` reports the shape actually
generated.
"""

from __future__ import annotations

import json
import random
from typing import Any

from flux_conformance.reference.idset import IdSet

__all__ = [
    "ALLOC_A",
    "ALLOC_A_TEXT",
    "ALLOC_B",
    "ALLOC_B_TEXT",
    "CORES",
    "FULL",
    "FULL_TEXT",
    "RANKS",
    "allocation",
    "statistics",
]

SEED = 11
RANKS = 16_384
CORES = 48
PROPERTIES = 64
ALLOCATED = 9_830


def _hostlist_of(ranks: list[int]) -> str:
    # Hosts are node<rank>: the nodelist is the rank idset under a prefix.
    return f"node[{IdSet.from_ids(ranks).encode()}]"


def _full(rng: random.Random) -> tuple[dict[str, Any], dict[str, IdSet]]:
    props: dict[str, IdSet] = {}
    for i in range(PROPERTIES):
        props[f"prop{i}"] = IdSet.from_ids(r for r in range(RANKS) if rng.random() < 1 / 3)
    doc = {
        "version": 1,
        "execution": {
            "R_lite": [{"rank": f"0-{RANKS - 1}", "children": {"core": f"0-{CORES - 1}"}}],
            "nodelist": [f"node[0-{RANKS - 1}]"],
            "properties": {name: ids.encode() for name, ids in props.items()},
            "starttime": 0,
            "expiration": 86400,
        },
    }
    return doc, props


def allocation(rng: random.Random, props: dict[str, IdSet]) -> dict[str, Any]:
    """An R of ``ALLOCATED`` scattered ranks, each with its own random subset of cores."""
    ranks = sorted(rng.sample(range(RANKS), ALLOCATED))
    by_cores: dict[str, list[int]] = {}
    for rank in ranks:
        cores = [c for c in range(CORES) if rng.random() < 0.5] or [rng.randrange(CORES)]
        by_cores.setdefault(IdSet.from_ids(cores).encode(), []).append(rank)
    held = IdSet.from_ids(ranks)
    restricted = {name: (ids & held).encode() for name, ids in props.items()}
    return {
        "version": 1,
        "execution": {
            "R_lite": [
                {"rank": IdSet.from_ids(members).encode(), "children": {"core": cores}}
                for cores, members in by_cores.items()
            ],
            "nodelist": [_hostlist_of(ranks)],
            "properties": {name: text for name, text in restricted.items() if text},
            "starttime": 0,
            "expiration": 86400,
        },
    }


def statistics(doc: dict[str, Any]) -> str:
    """One line describing an R: ranks, R_lite entries, property intervals, cores, JSON size."""
    ex = doc["execution"]
    ranks = 0
    cores = 0
    for entry in ex["R_lite"]:
        count = IdSet.decode(entry["rank"]).size
        ranks += count
        cores += count * IdSet.decode(entry["children"]["core"]).size
    intervals = sum(len(IdSet.decode(text).intervals) for text in ex["properties"].values())
    return (
        f"{ranks:,} ranks, {len(ex['R_lite']):,} R_lite entries, {cores:,} cores, "
        f"{len(ex['properties'])} properties with {intervals:,} intervals, "
        f"{len(json.dumps(doc)):,} bytes of JSON"
    )


_rng = random.Random(SEED)
FULL, _PROPS = _full(_rng)
ALLOC_A = allocation(_rng, _PROPS)
ALLOC_B = allocation(_rng, _PROPS)
FULL_TEXT = json.dumps(FULL)
ALLOC_A_TEXT = json.dumps(ALLOC_A)
ALLOC_B_TEXT = json.dumps(ALLOC_B)


if __name__ == "__main__":
    for label, doc in (("full", FULL), ("allocation A", ALLOC_A), ("allocation B", ALLOC_B)):
        print(f"{label}: {statistics(doc)}")
