"""``flux-conformance diff``: differential testing of one implementation against another.

Generated inputs for one operation go to both implementations; each disagreement is shrunk to
a minimal input and written as a case for review, its expected outcome taken from the
``--against`` implementation (the reference by default); see :mod:`runner.tools.diff`.
Without ``--seed`` a seed is drawn and printed, so any run can be replayed.

Exit status: 0 no disagreement, 1 some found, 2 usage (unknown operation, no strategy for
it, an implementation that cannot load, hypothesis missing).
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

from flux_conformance.runner.adapters.base import Adapter
from flux_conformance.runner.bounds import shown
from flux_conformance.runner.commands._common import UsageError
from flux_conformance.runner.commands._numbers import seconds, whole
from flux_conformance.runner.errors import EXIT_FAILED, EXIT_OK, EXIT_UNRUNNABLE
from flux_conformance.runner.tools.diff_clock import OWN_MEMORY

__all__ = ["add_parser", "main"]

#: Exit status when disagreements were found.
EXIT_FOUND = EXIT_FAILED
_OWN_MIB = OWN_MEMORY // (1024 * 1024)


def main(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """Run the differential search and write the cases it finds, all within ``--seconds``."""
    from flux_conformance.runner.tools.diff_clock import Budget, cap_own_memory, process_age

    # The budget is the whole command's, from the start of the process when the process is
    # this command (starting Python and importing count), else from here: loading, starting
    # the workers, searching, writing.
    age = process_age() if sys.argv[1:2] == ["diff"] else 0.0
    budget = Budget(args.seconds, start=time.monotonic() - age)
    capped, restore = cap_own_memory()
    try:
        return _run(args, out, err, budget, capped)
    except MemoryError:
        from flux_conformance.runner.tools.diff_bounds import MIB, peak_memory

        own, _ = peak_memory()
        print(
            f"diff {shown(args.impl)} on {args.operation}: stopped: diff's own process ran out "
            f"of memory (its bound is {_OWN_MIB} MiB; peak {own / MIB:.0f} MiB) after "
            f"{budget.elapsed():.1f} s, outside the search; nothing was written",
            file=err,
        )
        return EXIT_UNRUNNABLE
    finally:
        restore()


def _requirement(args: argparse.Namespace, budget: Any) -> str | None:
    """The requirement to propose, or None when it cannot be read within the time left."""
    from flux_conformance.runner.tools.diff_cases import general_requirement

    found: list[str | None] = []
    cases = Path(args.cases) if args.cases else None
    worker = threading.Thread(
        target=lambda: found.append(general_requirement(args.operation, cases)), daemon=True
    )
    worker.start()
    # What is left of the reserve, less a moment to write the file and the summary.
    worker.join(max(0.0, budget.left(last=True) - min(0.5, budget.reserve / 3)))
    return found[0] if found else None


def _run(args: argparse.Namespace, out: IO[str], err: IO[str], budget: Any, capped: bool) -> int:
    from flux_conformance.runner.operations import load_registry
    from flux_conformance.runner.tools.diff_bounds import MIB, BoundedAdapter, Bounds, bounded

    try:
        import hypothesis  # noqa: F401
    except ImportError:
        raise UsageError(
            "diff needs hypothesis: pip install hypothesis (or, in a checkout of the suite, "
            "pip install '.[diff]')"
        ) from None
    from flux_conformance.runner.tools.diff import differential
    from flux_conformance.runner.tools.diff_cases import render_cases
    from flux_conformance.runner.tools.strategies import STRATEGIES

    if args.operation not in load_registry():
        from flux_conformance.runner._suggest import did_you_mean

        raise UsageError(
            f"unknown operation {args.operation!r}" + did_you_mean(args.operation, load_registry())
        )
    if args.operation not in STRATEGIES:
        raise UsageError(
            f"diff has no input strategy for {args.operation}; it has: "
            + ", ".join(sorted(STRATEGIES))
        )
    if args.examples < 1 or args.seconds <= 0:
        raise UsageError("--examples and --seconds must be positive")
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    edition = None
    if args.edition is not None:
        from flux_conformance.runner.editions import EditionError, bundled

        try:
            edition = bundled().resolve(args.edition)
        except EditionError as exc:
            raise UsageError(str(exc)) from None
    bounds = Bounds(
        timeout=args.timeout, memory=args.memory * MIB, answer_bytes=args.max_answer_bytes
    )
    budget.ended("loading", budget.start)
    adapters: list[Adapter] = []
    try:
        since = budget.clock()
        for spec in (args.impl, args.against):
            adapter = bounded(spec, bounds)
            adapters.append(adapter)
            if isinstance(adapter, BoundedAdapter):
                adapter.start(budget.work_deadline)  # WorkerLate when it does not start in time
            else:
                adapter.start()
            if not adapter.supports(args.operation):
                raise UsageError(f"{spec} does not support {args.operation}")
        budget.ended("starting", since)
        impl, against = adapters
        print(
            f"diff {args.impl} against {args.against} on {args.operation}: seed {seed}, "
            f"up to {args.seconds:g} s" + (f", edition {edition}" if edition else ""),
            file=err,
            flush=True,
        )
        since = budget.clock()
        result = differential(
            args.operation,
            impl,
            against,
            examples=args.examples,
            seconds=args.seconds,
            seed=seed,
            max_found=args.max,
            edition=edition,
            deadline=budget.work_deadline,
            progress=lambda found: print(
                f"  {found.seconds:.0f} s: {found.evaluated} inputs, "
                f"{len(found.disagreements)} disagreement(s)",
                file=err,
                flush=True,
            ),
        )
        budget.ended("search and shrinking", since)
    finally:
        since = budget.clock()
        grace = max(0.1, min(2.0, budget.left(last=True) / 4))
        for adapter in adapters:
            if isinstance(adapter, BoundedAdapter):
                adapter.close(grace)
            else:
                adapter.close()
    budget.ended("closing", since, last=True)
    since = budget.clock()
    if result.disagreements:
        text = render_cases(
            result,
            impl_name=args.impl,
            against_name=args.against,
            requirement=_requirement(args, budget),
        )
        if args.out:
            from flux_conformance.runner.atomic import write_atomic

            write_atomic(args.out, text)
        else:
            out.write(text)
    budget.ended("writing", since, last=True)
    _summarise(result, args, err, budget, capped)
    if result.disagreements and args.out:
        print(f"wrote {len(result.disagreements)} case(s) to {args.out}", file=err)
    return EXIT_FOUND if result.disagreements else EXIT_OK


def _summarise(
    result: Any, args: argparse.Namespace, err: IO[str], budget: Any, capped: bool
) -> None:
    from flux_conformance.runner.report import compact_json
    from flux_conformance.runner.tools.diff_bounds import MIB, peak_memory

    stopped = " (stopped by --seconds)" if result.out_of_time else ""
    if result.out_of_memory:
        stopped = f" (stopped: diff's own process ran out of memory, its bound {_OWN_MIB} MiB)"
    print(
        f"diff {args.impl} against {args.against} on {result.operation}: "
        f"{result.evaluated} distinct inputs in {result.rounds} round(s), "
        f"{result.seconds:.1f}s, seed {result.seed}" + stopped,
        file=err,
    )
    print(f"  time: {budget.summary()}", file=err)
    for late in budget.over:
        print(f"  over the time bound: {late}", file=err)
    for what, count in sorted(result.over_bounds.items()):
        side, bound = what.split(" ", 1)
        if side == "judge":
            print(f"  {count} answer(s) not judged within the {bound} bound", file=err)
            continue
        name = args.impl if side == "impl" else args.against
        print(f"  {count} input(s) over the {bound} bound: {shown(name)} (not compared)", file=err)
    own, child = peak_memory()
    print(
        f"  peak memory: {own / MIB:.0f} MiB (diff"
        + (f", capped at {_OWN_MIB} MiB" if capped else ", not capped")
        + f"), {child / MIB:.0f} MiB (largest worker)",
        file=err,
    )
    for side, count in sorted(result.incomparable.items()):
        name = args.impl if side == "impl" else args.against
        print(f"  {count} input(s) not compared: {name} answered unsupported", file=err)
    for found in result.disagreements:
        print(
            f"  disagreement on {compact_json(found.input, 500)}: "
            f"{shown(args.impl)} {shown(found.reason, 2000)}",
            file=err,
        )
    if not result.disagreements:
        print("  no disagreement found", file=err)


def add_parser(sub: Any) -> None:
    """Register the ``diff`` subcommand on the CLI's subparsers."""
    p = sub.add_parser(
        "diff",
        help="differential testing: generated inputs, two implementations, minimal disagreements",
        description="Generate inputs for one operation, run two implementations on each, "
        "and write the disagreements, shrunk to minimal inputs, as a case file judged by the "
        "reference (docs/diff.md). Exit status: 0 no disagreement, 1 disagreements found, 2 a "
        "usage error, 3 an implementation could not be run.",
    )
    p.add_argument("--impl", required=True, help="the implementation under test")
    p.add_argument(
        "--against", default="reference", help="the implementation trusted for expected outcomes"
    )
    p.add_argument("-o", "--operation", required=True, help="the operation to test")
    p.add_argument(
        "--examples", type=whole(1), default=500, help="inputs generated per search round"
    )
    p.add_argument("--seconds", type=seconds(), default=60.0, help="time budget of the whole run")
    p.add_argument(
        "--seed", type=whole(0, 2**64 - 1), help="make the search deterministic (default: random)"
    )
    p.add_argument("--max", type=whole(1), default=10, help="stop after this many disagreements")
    p.add_argument(
        "--edition",
        metavar="NAME",
        help="the edition of the specs both implementations follow and the reference judges "
        "in (a name or alias; default: the latest)",
    )
    p.add_argument("--out", metavar="FILE", help="write the cases here (default: stdout)")
    p.add_argument("--cases", metavar="DIR", help="suite to propose requirement ids from")
    p.add_argument(
        "--timeout",
        type=seconds(),
        default=10.0,
        help="seconds per input, for every implementation but the bundled reference",
    )
    p.add_argument(
        "--memory",
        type=whole(0, 1024 * 1024),
        default=1024,
        metavar="MIB",
        help="address space of each implementation's worker, in MiB (0: not capped)",
    )
    p.add_argument(
        "--max-answer-bytes",
        type=whole(1, 2**40),
        default=8 * 1024 * 1024,
        help="longest output (JSON text) a worker passes on; a longer one is reported as such",
    )
    p.set_defaults(func=main)
