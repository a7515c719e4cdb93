"""Benchmark: an expectations file's entries matched to every case of the suite.

Each figure matches every case id of the suite to its entry (``entry_for``, as a run does)
and checks that no entry is stale (``stale``, as a run does first), for a file of 2,000 and
of 28,000 glob entries (``support.globs_for``: several globs covering each case id, as people
write them).  Target: 28,000 entries in under 2 s, the time 2,000 entries took when every
entry was tried against every case (that way, 28,000 took minutes).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from _harness import Bench, main  # noqa: E402
from support import globs_for  # noqa: E402

from flux_conformance.runner.cases import load_suite  # noqa: E402
from flux_conformance.runner.expectations import Entry, Expectations  # noqa: E402

IDS = [case.id for case in load_suite().cases]


def _entries(count: int) -> tuple[Entry, ...]:
    patterns = globs_for(IDS, count)
    return tuple(Entry(p, "xfail", "reason", None, n + 1) for n, p in enumerate(patterns))


ENTRIES = {count: _entries(count) for count in (2_000, 28_000)}


def _match_all(count: int) -> None:
    # A file as loaded (its index is built on first use, once a file), then the run's work.
    expectations = Expectations(Path("expectations.yaml"), ENTRIES[count])
    if expectations.stale(IDS):
        raise SystemExit("bench_expectations: a glob matches no case")
    for case_id in IDS:
        expectations.entry_for(case_id)


BENCHES = [
    Bench(
        f"expectations: 2,000 globs x {len(IDS)} cases",
        lambda: _match_all(2_000),
        target=2.0,
        repeat=3,
    ),
    Bench(
        f"expectations: 28,000 globs x {len(IDS)} cases",
        lambda: _match_all(28_000),
        target=2.0,
        repeat=3,
    ),
]


if __name__ == "__main__":
    sys.exit(main(BENCHES))
