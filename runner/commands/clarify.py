"""``flux-conformance clarify``: the open points of the specs, for their authors."""

from __future__ import annotations

import argparse
from typing import IO

from flux_conformance.runner.commands._common import (
    add_cases_option,
    add_scope_filters,
    check_writable,
    load,
    opened,
    scope_of,
)
from flux_conformance.runner.commands._numbers import seconds
from flux_conformance.runner.errors import EXIT_OK

__all__ = ["add_parser", "main"]


def main(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """Render the clarification cases (and shipped findings) for spec authors."""
    from flux_conformance.runner.adapters.factory import make_adapter
    from flux_conformance.runner.tools.clarify import clarify_report, collect_readings

    del err
    check_writable(args.out)
    suite = load(args)
    _, operations = scope_of(args, suite)
    for impl in args.impl or ():
        make_adapter(impl, timeout=args.timeout)
    readings = collect_readings(
        suite,
        args.impl or [],
        lambda spec: make_adapter(spec, timeout=args.timeout),
        operations=operations,
    )
    argv = ["flux-conformance", "clarify", *(f"--impl={i}" for i in args.impl or ())]
    argv += [f"--spec={s}" for s in args.spec or ()]
    argv += [f"-o={op}" for op in args.operation or ()]
    text = clarify_report(
        suite, readings, fmt=args.format, command=" ".join(argv), operations=operations
    )
    with opened(args.out, out) as stream:
        stream.write(text)
    return EXIT_OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``clarify``."""
    p = sub.add_parser(
        "clarify",
        help="report the open points of the specs for their authors",
        description="Write, as Markdown, every open point of the specs the clarification "
        "cases record: the readings an implementation may take, the reference's, and (with "
        "--impl) the reading each named implementation takes.",
    )
    p.add_argument(
        "--impl",
        action="append",
        metavar="IMPL",
        help="also show which reading this implementation takes (repeatable)",
    )
    add_cases_option(p)
    add_scope_filters(p)
    p.add_argument("--format", choices=("markdown", "rst"), default="markdown")
    p.add_argument("--timeout", type=seconds(), default=10.0, help="seconds per case (exec: only)")
    # -o is --operation in every command; the file is -O/--out, as `export` and `diff` name it.
    p.add_argument("-O", "--out", metavar="FILE", help="write here instead of stdout")
    p.set_defaults(func=main)
