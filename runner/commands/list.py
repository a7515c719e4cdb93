"""``flux-conformance list``: the selected cases, or the registered operations."""

from __future__ import annotations

import argparse
from typing import IO, TYPE_CHECKING

from flux_conformance.runner.bounds import shown
from flux_conformance.runner.commands._common import add_selection, check_names, filters_of, load
from flux_conformance.runner.errors import EXIT_OK

if TYPE_CHECKING:
    from flux_conformance.runner.editions import Editions

__all__ = ["add_parser", "main"]


def main(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """List the selected cases, the operations (``--operations``) or the editions."""
    del err
    if args.editions:
        return _list_editions(load(args).editions, out)
    if args.operations:
        import fnmatch

        from flux_conformance.runner.operations import load_registry

        check_names(args, load(args))
        wanted = args.operation or ["*"]
        unwanted = args.exclude_operation or []
        for op in load_registry().values():
            if not any(fnmatch.fnmatchcase(op.name, g) for g in wanted) or any(
                fnmatch.fnmatchcase(op.name, g) for g in unwanted
            ):
                continue
            print(f"{op.name}  ({op.spec}) {op.summary}", file=out)
            for category, meaning in op.errors.items():
                print(f"    error {category}: {meaning}", file=out)
            print(f"    comparator {op.comparator_name}: {op.comparator_doc}", file=out)
        return EXIT_OK
    from flux_conformance.runner.engine import select

    suite = load(args)
    for case in select(suite.cases, filters_of(args, suite)):
        # A file name may hold any character: shown() keeps escapes off the terminal.
        print(f"{case.id}\t{case.operation}\t{case.level}\t{shown(case.location)}", file=out)
    return EXIT_OK


def _list_editions(editions: Editions, out: IO[str]) -> int:
    """Each edition: its names, what it is, and the revision of every spec it follows."""
    for edition in editions.editions:
        names = ", ".join((edition.name, *edition.aliases))
        default = " (default)" if edition.name == editions.default else ""
        print(f"{names}{default}", file=out)
        print(f"    {edition.summary}", file=out)
        for spec, revision in edition.revisions.items():
            print(f"    {spec}: {revision}", file=out)
    print(f"Commits are those of {editions.repository}.", file=out)
    return EXIT_OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``list``."""
    p = sub.add_parser(
        "list",
        help="list cases (or --operations, --editions)",
        description="List the selected cases (id, operation, level, file:line), or with "
        "--operations the registered operations (those -o selects) with their error "
        "categories and comparators, or with --editions the editions of the spec texts.",
    )
    add_selection(p)
    p.add_argument("--operations", action="store_true", help="list the registered operations")
    p.add_argument(
        "--editions",
        action="store_true",
        help="list the editions of the spec texts, with the revision of each spec",
    )
    p.set_defaults(func=main)
