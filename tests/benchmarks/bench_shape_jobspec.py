"""Benchmark: RFC 46 shapes and RFC 14 jobspec validation in the reference.

Targets: parsing a 1,000-vertex shape and validating a jobspec with 1,000
resource vertices, each under 50 ms.  Two shapes are timed: a flat one (one slot holding 999
siblings) and a mixed one (100 labelled slots of 10 vertices each, with every count form,
braces and nested levels).  The parser reads each distinct count once (a small cache), so
two more figures empty that cache first, one of them with 999 different range counts.  The
jobspecs are built from those shapes, with one task per slot.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import Bench, main

from flux_conformance.reference.jobspec import jobspec_from_shape, validate_jobspec
from flux_conformance.reference.shape import _count_to_shape, parse_shape

_COUNTS = ["4", "2-8", "2+", "1,3,5", "[2-16:2:*]", "3", "1-9:2"]

FLAT = "slot{s}/[" + ";".join(f"t{i}={_COUNTS[i % 7]}{{unit:GB}}" for i in range(999)) + "]"


def _group(i: int) -> str:
    # 10 vertices: the slot, a node, a socket and 7 more spread over two levels.
    count = _COUNTS[i % 7]
    return (
        f"slot={count}{{g{i},-x}}/node{{x,rack:r{i % 10}}}/"
        f"[socket=2/[core=4;gpu={count}];memory={count}{{unit:GB}};nic{{speed:100,+ib}};"
        f"disk=2{{kind:ssd}};accel;bmc]"
    )


MIXED = "[" + ";".join(_group(i) for i in range(100)) + "]"

# Every count different, and the count cache emptied before each run: the worst case.
DISTINCT = "slot{s}/[" + ";".join(f"t{i}={i + 1}-{i + 1000}:{i % 5 + 1}" for i in range(999)) + "]"


def _parse_cold(text: str) -> object:
    _count_to_shape.cache_clear()
    return parse_shape(text)


def _vertices(resources: list[dict[str, object]]) -> int:
    total, stack = 0, list(resources)
    while stack:
        vertex = stack.pop()
        total += 1
        stack.extend(vertex.get("with", []))  # type: ignore[arg-type]
    return total


FLAT_JOBSPEC = jobspec_from_shape(FLAT, ["app"])
MIXED_JOBSPEC = jobspec_from_shape(MIXED, ["app"], tasks={"per_slot": 2})
assert _vertices(parse_shape(FLAT)) == 1000
assert _vertices(parse_shape(MIXED)) == 1000
assert _vertices(parse_shape(DISTINCT)) == 1000

BENCHES = [
    Bench(f"shape.parse flat 1,000 vertices ({len(FLAT)} chars)", lambda: parse_shape(FLAT), 0.050),
    Bench(
        f"shape.parse mixed 1,000 vertices ({len(MIXED)} chars)", lambda: parse_shape(MIXED), 0.050
    ),
    Bench(
        # A stress figure beyond the target: reported, not held to 50 ms.
        "shape.parse 1,000 distinct range counts, cold cache",
        lambda: _parse_cold(DISTINCT),
    ),
    Bench("shape.parse mixed 1,000 vertices, cold cache", lambda: _parse_cold(MIXED), 0.050),
    Bench("jobspec.validate flat 1,000 vertices", lambda: validate_jobspec(FLAT_JOBSPEC), 0.050),
    Bench(
        "jobspec.validate mixed 1,000 vertices, 100 slots and tasks",
        lambda: validate_jobspec(MIXED_JOBSPEC),
        0.050,
    ),
    Bench("jobspec.from_shape mixed 1,000 vertices", lambda: jobspec_from_shape(MIXED, ["app"])),
]

if __name__ == "__main__":
    sys.exit(main(BENCHES))
