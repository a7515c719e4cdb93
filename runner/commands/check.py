"""``flux-conformance check``: load and check every case file; print the counts."""

from __future__ import annotations

import argparse
from collections import Counter
from typing import IO

from flux_conformance.runner.commands._common import add_cases_option, load
from flux_conformance.runner.errors import EXIT_OK

__all__ = ["add_parser", "main"]


def main(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """Load and check every case file; print counts per operation and per edition."""
    del err
    suite = load(args)
    per_op = Counter(case.operation for case in suite.cases)
    for op, n in sorted(per_op.items()):
        print(f"{op:28} {n:5} cases", file=out)
    editions = Counter(case.edition for case in suite.cases)
    common = editions.pop(None, 0)
    print(
        f"ok: {len(suite.cases)} cases, {len(suite.requirements)} requirements, "
        f"{len(suite.operations)} operations",
        file=out,
    )
    if editions:
        # `run` selects one edition: say how many cases each run sees.
        runs = ", ".join(
            f"{common + n} under --edition {name} ({n} of that edition only)"
            for name, n in sorted(editions.items())
        )
        print(f"editions: {common} cases hold under every edition; a run selects {runs}", file=out)
    return EXIT_OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``check``."""
    p = sub.add_parser(
        "check",
        help="check every case file; print counts",
        description="Load and check every case file (schema, requirements cited, inputs "
        "against their operation's schema, duplicate ids) and print the number of cases per "
        "operation and edition. Exit status: 0 every file loads, 2 a problem (each printed "
        "with its file and line).",
    )
    add_cases_option(p)
    p.set_defaults(func=main)
