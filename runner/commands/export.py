"""``flux-conformance export``: the selected cases, registry and requirements as plain JSON.

The document follows ``runner/schemas/export.json`` (also written with ``--schema``); see
``docs/export.md`` for how a test runner in another language consumes it.
"""

from __future__ import annotations

import argparse
import json
from typing import IO

from flux_conformance.runner.commands._common import (
    add_selection,
    filters_of,
    load,
    opened,
    selected,
)
from flux_conformance.runner.commands._numbers import whole
from flux_conformance.runner.errors import EXIT_OK

__all__ = ["add_parser", "main"]


def main(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """Write the export document (or its schema) to ``--out`` or stdout."""
    from flux_conformance.runner._schemas import schema

    if args.schema:
        with opened(args.out, out) as stream:
            json.dump(schema("export.json"), stream, indent=2)
            stream.write("\n")
        return EXIT_OK
    from flux_conformance.runner.oracle import reference_oracle
    from flux_conformance.runner.tools.export import export_suite

    suite = load(args)
    cases, _ = selected(suite, args)
    doc = export_suite(suite, cases, oracle=reference_oracle, filters=filters_of(args, suite))
    with opened(args.out, out) as stream:
        json.dump(doc, stream, ensure_ascii=False, indent=args.indent)
        stream.write("\n")
    if args.out and args.out != "-":
        print(f"wrote {len(cases)} cases to {args.out}", file=err)
    return EXIT_OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``export``."""
    p = sub.add_parser(
        "export",
        help="write the cases as plain JSON for any language",
        description="Write the selected cases, the operation registry, the requirements and "
        "the editions as one JSON document (its schema with --schema), for a test runner in "
        "another language (docs/export.md).",
    )
    add_selection(p)
    p.add_argument("--out", metavar="FILE", help="write here (default: stdout)")
    p.add_argument(
        "--indent", type=whole(0, 16), default=None, help="pretty-print with this indent"
    )
    p.add_argument("--schema", action="store_true", help="write the export's JSON Schema instead")
    p.set_defaults(func=main)
