"""``flux-conformance coverage``: the share of each spec's requirements that cases cite."""

from __future__ import annotations

import argparse
from typing import IO

from flux_conformance.runner.commands._common import (
    add_cases_option,
    add_scope_filters,
    load,
    scope_of,
)
from flux_conformance.runner.errors import EXIT_OK

__all__ = ["add_parser", "main"]


def main(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """Per spec: the share of requirements some case cites, and which have none."""
    from flux_conformance.runner.tools.coverage import coverage_report

    del err
    suite = load(args)
    specs, operations = scope_of(args, suite) if args.spec or args.operation else (None, None)
    # Citations are narrowed only by -o: --spec alone shows the whole suite's cover of a spec.
    cited_by = operations if args.operation else None
    names = [args.edition] if args.edition else list(suite.editions.names)
    for name in names:
        report = coverage_report(
            suite,
            missing=not args.summary,
            edition=name,
            specs=specs,
            operations=cited_by,
            classes_of=operations,
        )
        print(report, file=out, end="")
    return EXIT_OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``coverage``."""
    p = sub.add_parser(
        "coverage",
        help="requirements covered by cases, per spec",
        description="For each spec, the share of its requirements that at least one case "
        "cites, the requirements no case cites, and the input classes each operation's cases "
        "cover; per edition.",
    )
    add_cases_option(p)
    add_scope_filters(p)
    p.add_argument("--summary", action="store_true", help="only the per-spec shares")
    p.add_argument(
        "--edition",
        metavar="NAME",
        help="only this edition of the spec texts (default: each edition in turn)",
    )
    p.set_defaults(func=main)
