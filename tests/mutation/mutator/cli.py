"""The command line of the mutation tester (``python tests/mutation/mutate.py --help``)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .equivalents import (
    EQUIVALENT_FILE,
    EquivalentError,
    Matched,
    classify_unreachable,
    load_equivalents,
    load_library_only,
    match_equivalents,
)
from .hunt import HuntResult, hunt_mutants, render_hunt
from .kill import MutationRun, Result, run_mutants
from .operators import Mutant, enumerate_mutants
from .report import render_entries, report, score
from .suite import SuiteHarness, Target, module_users, record_coverage

__all__ = ["main", "reference_target"]

#: Reference modules left out by default: the error hierarchy (mutating it breaks every case
#: at once and says nothing about the suite) and the operation table.
DEFAULT_EXCLUDED = frozenset({"__init__", "errors", "operations"})


def reference_target(modules: Sequence[str] = ()) -> Target:
    """The bundled reference: every module but the error hierarchy and the operation table."""
    from flux_conformance import reference

    directory = Path(reference.__file__).resolve().parent
    every = sorted(p.stem for p in directory.glob("*.py") if p.stem not in DEFAULT_EXCLUDED)
    unknown = sorted(set(modules) - {p.stem for p in directory.glob("*.py")})
    if unknown:
        raise SystemExit(
            f"no such reference module: {', '.join(unknown)} (have: {', '.join(every)})"
        )
    return Target(
        package="flux_conformance.reference",
        directory=directory,
        modules=tuple(modules) or tuple(every),
        keep=("errors",),
        entry=("operations",),
    )


def _sample(mutants: list[Mutant], limit: int | None) -> list[Mutant]:
    if limit is None or len(mutants) <= limit:
        return mutants
    step = len(mutants) / limit
    return [mutants[int(i * step)] for i in range(limit)]


def _files(target: Target) -> dict[str, str]:
    files = {}
    for module in target.modules:
        path = target.path(module)
        files[str(path)] = module
        files[str(path.resolve())] = module
    return files


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mutate.py",
        description="Run the conformance suite against mutants of the reference and report, "
        "per module, the share of mutants some case kills (docs/mutation.md).",
    )
    parser.add_argument(
        "--module",
        action="append",
        default=[],
        help="a reference module (repeatable; default: all)",
    )
    parser.add_argument("--max-mutants", type=int, help="run at most N mutants, spread evenly")
    parser.add_argument("--seconds", type=float, help="start no mutant after S seconds")
    parser.add_argument("--json", type=Path, help="write every mutant's result to FILE")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="children at once")
    parser.add_argument(
        "--first-kill",
        action="store_true",
        help="stop a mutant at its first failing case (faster; the idle-case list is then "
        "only indicative)",
    )
    parser.add_argument(
        "--threshold", type=float, default=90.0, help="minimum score per module, in percent"
    )
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument(
        "--entries",
        action="store_true",
        help="list the equivalent.yaml entries of the modules with the mutant each covers, "
        "flag stale and ambiguous ones, and exit (nothing is run)",
    )
    parser.add_argument("--cases", type=Path, help="the case directory (default: the suite's)")
    parser.add_argument(
        "--hunt",
        action="store_true",
        help="then search generated inputs for one each surviving mutant answers differently on",
    )
    parser.add_argument(
        "--hunt-listed",
        action="store_true",
        help="hunt the mutants equivalent.yaml lists as well: a difference found for an "
        "`equivalent` entry refutes it, one for a `conforming` entry must be one the readings "
        "permit",
    )
    parser.add_argument(
        "--hunt-seconds", type=float, default=8.0, help="hunting time per mutant (default 8)"
    )
    parser.add_argument(
        "--survivors",
        type=Path,
        metavar="JSON",
        help="hunt the survivors recorded by an earlier --json run (no kill matrix)",
    )
    parser.add_argument("--seed", type=int, default=0, help="hypothesis seed of the hunt")
    return parser


def _all_mutants(target: Target) -> list[Mutant]:
    return [
        m
        for module in target.modules
        for m in enumerate_mutants(module, target.path(module).read_text())
    ]


def _list(mutants: Sequence[Mutant]) -> None:
    for m in mutants:
        print(f"{m.id}\n    - {m.source}\n    + {m.changed}")
        where = f"  (function: {m.function})" if m.function else ""
        print(f'    at: "{m.col}:{m.operator}:{m.original} -> {m.mutated}"{where}')


def _entries(target: Target, matched: Matched) -> int:
    listing, problems = render_entries(matched, [], [], target.modules)
    print("\n".join(listing + problems))
    return 1 if problems else 0


class _Progress:
    """Progress lines on stderr: every 100 mutants run, every 25 hunted."""

    def __init__(self, started: float, total: int) -> None:
        self.started = started
        self.total = total
        self.done = 0
        self.killed = 0
        self.hunted = 0
        self.found = 0

    def __call__(self, result: Result) -> None:
        self.done += 1
        self.killed += result.killed
        if self.done % 100 == 0:
            print(
                f"  {self.done}/{self.total} mutants, {self.killed} killed, "
                f"{time.monotonic() - self.started:.0f} s",
                file=sys.stderr,
            )

    def hunt(self, result: HuntResult) -> None:
        self.hunted += 1
        self.found += result.finding is not None
        if self.hunted % 25 == 0:
            print(
                f"  hunt: {self.hunted} mutants, {self.found} with a finding, "
                f"{time.monotonic() - self.started:.0f} s",
                file=sys.stderr,
            )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the suite against mutants of the reference and report; 1 if a module scores under
    the threshold or an entry of equivalent.yaml is wrong (killed, stale, ambiguous)."""
    given = list(sys.argv[1:] if argv is None else argv)
    if "--runner" in given:  # the runner's tests against mutants of the runner
        from .runner_mode import main as runner_main

        return runner_main(given)
    args = _parser().parse_args(given)
    target = reference_target(args.module)
    mutants = _all_mutants(target)
    if args.list:
        _list(mutants)
        return 0
    try:
        matched = match_equivalents(mutants, load_equivalents())
        library = load_library_only()
    except EquivalentError as exc:
        print(f"{EQUIVALENT_FILE}: {exc}", file=sys.stderr)
        return 2
    if args.entries:
        return _entries(target, matched)
    mutants = _sample(mutants, args.max_mutants)

    from flux_conformance.runner.cases import load_suite

    started = time.monotonic()
    suite = load_suite(args.cases)
    harness = SuiteHarness(suite.cases, suite.operations)
    baseline = record_coverage(harness, _files(target))
    baseline.users = module_users(target)
    broken = [harness.names[i] for i, ok in enumerate(baseline.passing) if not ok]
    print(
        f"{len(harness.names)} cases ({len(broken)} not passing against the reference, left out); "
        f"{len(mutants)} mutants of {len(target.modules)} modules; coverage in "
        f"{time.monotonic() - started:.1f} s",
        file=sys.stderr,
    )
    for name in broken:
        print(f"  not passing: {name}", file=sys.stderr)
    progress = _Progress(started, len(mutants))
    run = MutationRun(
        target,
        harness,
        baseline,
        jobs=args.jobs,
        first_kill=args.first_kill,
        seconds=args.seconds,
        progress=progress,
    )
    if args.survivors:
        recorded = json.loads(args.survivors.read_text())["mutants"]
        kept = ("survived", "equivalent") if args.hunt_listed else ("survived",)
        wanted = {m["id"] for m in recorded if m["status"] in kept}
        found = hunt_mutants(
            run,
            [m for m in mutants if m.id in wanted],
            seconds=args.hunt_seconds,
            seed=args.seed,
            progress=progress.hunt,
        )
        print(render_hunt(found))
        if args.json:
            args.json.write_text(json.dumps({"hunt": _hunt_json(found)}, indent=1))
        return 0
    results = run_mutants(run, mutants)
    results, stale_library = classify_unreachable(results, library)
    text, ok = report(run, results, matched, args.threshold / 100)
    print(text)
    for entry in stale_library:
        print(f"Stale library_only entry (no mutant in it): {entry.module}.{entry.function}")
    hunted: list[HuntResult] = []
    if args.hunt or args.hunt_listed:
        survivors = [
            r.mutant
            for r in results
            if r.status == "survived" and (args.hunt_listed or r.mutant.id not in matched.by_mutant)
        ]
        hunted = hunt_mutants(
            run, survivors, seconds=args.hunt_seconds, seed=args.seed, progress=progress.hunt
        )
        print()
        print(render_hunt(hunted))
    elapsed = time.monotonic() - started
    print(f"\n{len(results)} mutants in {elapsed:.0f} s with {args.jobs} jobs.")
    if args.json:
        args.json.write_text(
            json.dumps(_run_json(results, matched, harness.names, hunted, elapsed), indent=1)
        )
    return 0 if ok else 1


def _run_json(
    results: Sequence[Result],
    matched: Matched,
    names: Sequence[str],
    hunted: Sequence[HuntResult],
    elapsed: float,
) -> dict[str, Any]:
    """Every mutant's fate, every entry with the mutants it covers, and the hunt."""
    listed = matched.by_mutant
    modules = {r.mutant.module for r in results}
    return {
        "seconds": round(elapsed, 1),
        "table": {k: v.__dict__ for k, v in score(results, listed).items()},
        "mutants": [
            {
                "id": r.mutant.id,
                "status": "equivalent"
                if r.status == "survived" and r.mutant.id in listed
                else r.status,
                "note": r.note,
                "cases_run": r.ran,
                "killed_by": [names[i] for i in r.killers],
                "source": r.mutant.source,
                "changed": r.mutant.changed,
            }
            for r in results
        ],
        "entries": [
            {
                "entry": entry.label,
                "kind": entry.kind,
                "reviewed": entry.reviewed,
                "reason": entry.reason,
                "covers": [m.id for m in found],
            }
            for entry, found in matched.covered
            if entry.target_module in modules
        ],
        "hunt": _hunt_json(hunted),
    }


def _hunt_json(results: Sequence[HuntResult]) -> list[dict[str, Any]]:
    return [
        {
            "id": r.mutant.id,
            "operations": list(r.operations),
            "evaluated": r.evaluated,
            "note": r.note,
            "finding": None
            if r.finding is None
            else {
                "operation": r.finding.operation,
                "input": r.finding.input,
                "reference": r.finding.reference_reply,
                "mutant": r.finding.mutant_reply,
                "reason": r.finding.reason,
            },
        }
        for r in results
    ]
