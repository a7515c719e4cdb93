"""Benchmark: Slurm --extra expressions in the reference.

Target: ``slurm.extra.select`` of a 10-term expression over 10,000 nodes in under
100 ms, Extra decoding included.  The other rows show where that time goes (parsing once, JSON
decoding, evaluation) and the cost of the longest and deepest expressions Slurm accepts.
"""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import Bench, main

from flux_conformance.reference import operations
from flux_conformance.reference.errors import FormatError
from flux_conformance.reference.slurm_extra import Expression, load_extra, parse

#: Ten requests over every value type, with ANDs, ORs and two levels of parentheses.
TEN_TERMS = (
    "(load<0.5|load>=4.0)&gpu=true&(arch=x86_64,mem>=64)&rack!=r07&(site<m|tier<=2)&up=yes&mem<1e3"
)
assert len([t for t in re.split(r"[&,|()]", TEN_TERMS) if t]) == 10


def _nodes(count: int) -> dict[str, str]:
    """``count`` nodes with varied, realistic Extra text (deterministic)."""
    rng = random.Random(5)
    nodes = {}
    for i in range(count):
        extra = {
            "load": round(rng.uniform(0, 8), 2),
            "gpu": rng.random() < 0.5,
            "arch": rng.choice(["x86_64", "aarch64", "ppc64le"]),
            "mem": rng.choice([32, 64, 128, 256]),
            "rack": f"r{rng.randrange(16):02d}",
            "site": rng.choice(["alpha", "lima", "zulu"]),
            "tier": rng.randrange(1, 4),
            "up": rng.random() < 0.9,
        }
        if rng.random() < 0.05:
            del extra["gpu"]  # some nodes lack a key
        nodes[f"node{i:05d}"] = json.dumps(extra)
    return nodes


NODES = _nodes(10_000)
DECODED = [load_extra(text) for text in NODES.values()]
COMPILED = Expression.compile(TEN_TERMS)
SELECT_INPUT = {"expression": TEN_TERMS, "nodes": NODES}
LONGEST = "&".join(["load>=0.0"] * 102) + "&up=1"
DEEPEST = "(" * 508 + "gpu=true" + ")" * 508

assert len(parse(TEN_TERMS).to_json()["children"]) == 7
assert len(LONGEST.encode()) <= 1024
assert len(DEEPEST) <= 1024
assert 0 < len(operations.run("slurm.extra.select", SELECT_INPUT)) < len(NODES)

BENCHES = [
    Bench(
        "slurm.extra.select, 10-term expression, 10,000 nodes",
        lambda: operations.run("slurm.extra.select", SELECT_INPUT),
        target=0.100,
    ),
    Bench(
        "  of which: JSON-decode 10,000 Extra texts",
        lambda: [load_extra(t) for t in NODES.values()],
    ),
    Bench(
        "  of which: evaluate on 10,000 decoded Extras",
        lambda: [COMPILED.matches(d) for d in DECODED],
    ),
    Bench("Expression.compile, 10-term expression", lambda: Expression.compile(TEN_TERMS)),
    Bench("Expression.compile, 103 terms in 1024 bytes", lambda: Expression.compile(LONGEST)),
    Bench("Expression.compile, 508 nested parentheses", lambda: Expression.compile(DEEPEST)),
    Bench(
        "slurm.extra.parse refusing 100,000 nested parentheses",
        lambda: _refused("(" * 100_000 + "a=1" + ")" * 100_000),
    ),
]


def _refused(text: str) -> str:
    try:
        operations.run("slurm.extra.parse", text)
    except FormatError as exc:
        return exc.category
    raise AssertionError("expected an error")


if __name__ == "__main__":
    sys.exit(main(BENCHES))
