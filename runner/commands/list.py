"""``flux-conformance list``: the selected cases, or the registered operations."""

from __future__ import annotations

import argparse
from typing import IO

from flux_conformance.runner.commands._common import add_selection, filters_of, load
from flux_conformance.runner.errors import EXIT_OK

__all__ = ["add_parser", "main"]


def main(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """List the selected cases, or the operations with ``--operations``."""
    del err
    if args.operations:
        from flux_conformance.runner.operations import load_registry

        for op in load_registry().values():
            print(f"{op.name}  ({op.spec}) {op.summary}", file=out)
            for category, meaning in op.errors.items():
                print(f"    error {category}: {meaning}", file=out)
            print(f"    comparator {op.comparator_name}: {op.comparator_doc}", file=out)
        return EXIT_OK
    from flux_conformance.runner.engine import select

    for case in select(load(args).cases, filters_of(args)):
        print(f"{case.id}\t{case.operation}\t{case.level}\t{case.location}", file=out)
    return EXIT_OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``list``."""
    p = sub.add_parser("list", help="list cases (or --operations)")
    add_selection(p)
    p.add_argument("--operations", action="store_true", help="list the registered operations")
    p.set_defaults(func=main)
