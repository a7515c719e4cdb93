"""``flux-conformance compare``: several implementations over the same cases, as a matrix.

Expectations follow the rule ``run`` follows: a shipped adapter is held to the expectations
file that ships with it unless ``--no-shipped-expectations``; ``--expectations IMPL=FILE``
replaces one implementation's file.
"""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path
from typing import IO

from flux_conformance import runner
from flux_conformance.runner.commands._common import (
    UsageError,
    add_jobs_option,
    add_selection,
    check_writable,
    filters_of,
    load,
    opened,
    selected,
    shipped_expectations,
)
from flux_conformance.runner.errors import EXIT_OK

__all__ = ["add_parser", "main"]


def main(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """Run every implementation on every selected case; write the matrix."""
    from flux_conformance.runner.adapters.factory import make_adapter
    from flux_conformance.runner.report.matrix import matrix_html, matrix_markdown
    from flux_conformance.runner.tools.compare import run_matrix

    check_writable(args.markdown, args.html)
    suite = load(args)
    cases, _ = selected(suite, args)
    impls = args.impl or ["reference"]
    expectations: dict[str, Path] = {}
    if not args.no_shipped_expectations:
        for impl in impls:
            shipped = shipped_expectations(impl)
            if shipped is not None:
                expectations[impl] = shipped
    for item in args.expectations or ():
        impl, sep, file = item.partition("=")
        if not sep or impl not in impls:
            raise UsageError(f"--expectations takes IMPL=FILE with IMPL one of {impls}")
        expectations[impl] = Path(file)
    for impl in impls:
        # fail early on a bad --impl
        make_adapter(impl, timeout=args.timeout, max_timeouts=args.max_timeouts)
    filters = filters_of(args, suite).to_json()
    about = (
        f"flux-conformance {runner.__version__} (cases {suite.digest()[:12]}), "
        f"edition {suite.editions.resolve(args.edition)}, {len(cases)} cases"
        + ("".join(f"; {k} {', '.join(v)}" for k, v in filters.items()))
        + f", run {dt.datetime.now(dt.UTC).isoformat(timespec='seconds')}"
    )
    matrix = run_matrix(
        suite,
        cases,
        impls,
        expectations=expectations,
        make_adapter=lambda spec: make_adapter(
            spec, timeout=args.timeout, max_timeouts=args.max_timeouts
        ),
        progress=lambda line: print(line, file=err, flush=True),
        about=about,
        workers=args.jobs,
        edition=suite.editions.resolve(args.edition),
    )
    argv = ["flux-conformance", "compare", *(f"--impl={i}" for i in impls)]
    argv += [f"-o={op}" for op in args.operation or ()]
    markdown = matrix_markdown(matrix, all_rows=args.all_rows, command=" ".join(argv))
    with opened(args.markdown, out) as stream:
        stream.write(markdown)
    if args.html:
        Path(args.html).write_text(matrix_html(matrix), encoding="utf-8")
        print(f"wrote {args.html}", file=err)
    return EXIT_OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``compare``."""
    p = sub.add_parser("compare", help="run several implementations; write a matrix")
    p.add_argument(
        "--impl",
        action="append",
        metavar="IMPL",
        help="an implementation (repeatable; default: the reference)",
    )
    add_selection(p)
    p.add_argument("--timeout", type=float, default=10.0, help="seconds per case (exec: only)")
    p.add_argument(
        "--max-timeouts",
        type=int,
        default=None,
        metavar="N",
        help="give an exec: implementation up after N timeouts in a row (default 5; 0: never)",
    )
    p.add_argument(
        "--expectations",
        action="append",
        metavar="IMPL=FILE",
        help="expectations file for one implementation (repeatable)",
    )
    p.add_argument(
        "--no-shipped-expectations",
        action="store_true",
        help="ignore the expectations files shipped with named adapters",
    )
    add_jobs_option(p)
    p.add_argument("--markdown", metavar="FILE", help="write the Markdown matrix here")
    p.add_argument("--html", metavar="FILE", help="write the HTML page here")
    p.add_argument(
        "--all-rows",
        action="store_true",
        help="Markdown: every case, not only those some implementation did not pass",
    )
    p.set_defaults(func=main)
