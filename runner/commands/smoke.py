"""``flux-conformance smoke``: is this implementation set up right?  No cases are judged.

Starts the implementation, prints what it announces (name, version, the operations it
supports out of the suite's), sends one trivial request per operation up to three (see
:mod:`runner.adapters.preflight`) and prints the exchange: the request as the protocol carries
it, the reply, and what the case would make of it.  Exit status 0 when it answered, 3 when it
could not be run, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import json
from typing import IO, Any

from flux_conformance.runner.commands._common import add_cases_option, load
from flux_conformance.runner.commands._numbers import seconds
from flux_conformance.runner.errors import EXIT_OK

__all__ = ["add_parser", "main"]


def _json(value: Any, limit: int = 300) -> str:
    from flux_conformance.runner.report import compact_json

    return compact_json(value, limit)


def main(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """Start the implementation, list what it announces, show one exchange."""
    from flux_conformance.runner.adapters.factory import make_adapter
    from flux_conformance.runner.adapters.preflight import preflight, start
    from flux_conformance.runner.engine import judge
    from flux_conformance.runner.oracle import reference_oracle

    del err
    adapter = make_adapter(args.impl, timeout=args.timeout)
    try:
        start(adapter)
        suite = load(args)
        operations = sorted(suite.operations)
        supported = [op for op in operations if adapter.supports(op)]
        print(f"implementation: {adapter.name} {adapter.version}".rstrip(), file=out)
        print(f"  --impl {args.impl}", file=out)
        print(
            f"announces {len(supported)} of the suite's {len(operations)} operations: "
            + (", ".join(supported) or "none"),
            file=out,
        )
        missing = [op for op in operations if op not in supported]
        if missing:
            print(f"does not announce: {', '.join(missing)}", file=out)
        edition = suite.editions.resolve(None)
        probes = preflight(adapter, suite.cases, edition=edition)
        if not probes:
            print("no sample exchange: it announces none of the suite's operations", file=out)
        for probe in probes:
            case = probe.case
            request: dict[str, Any] = {
                "cmd": "run",
                "operation": case.operation,
                "input": case.input,
                "edition": case.edition or edition,
            }
            op = suite.operations[case.operation]
            result = judge(case, probe.reply, op, reference_oracle(case.edition or edition))
            print(f"sample exchange ({case.id}):", file=out)
            print(f"  sent:     {json.dumps(request)}", file=out)
            print(f"  answered: {_json(probe.reply.to_json())}", file=out)
            print(f"  expected: {_json(case.expected_json())}", file=out)
            print(
                f"  verdict:  {result.outcome.value}"
                + (f" ({result.reason})" if result.reason else ""),
                file=out,
            )
        print("ok: the implementation starts and answers", file=out)
    finally:
        adapter.close()
    return EXIT_OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``smoke``."""
    p = sub.add_parser(
        "smoke",
        help="check that an implementation starts and answers; show what it announces",
        description="Start an implementation, print what it announces and one sample "
        "exchange. Exit status: 0 it answered, 2 a usage error, 3 it could not be run.",
    )
    p.add_argument(
        "--impl",
        default="reference",
        help="reference (default), a shipped adapter's name, python:module:object, or exec:COMMAND",
    )
    add_cases_option(p)
    p.add_argument(
        "--timeout", type=seconds(), default=10.0, help="seconds per request (exec: only)"
    )
    p.set_defaults(func=main)
