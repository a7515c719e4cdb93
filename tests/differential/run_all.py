"""``tox -e diff``: differential search over every operation, against every real implementation.

For each real implementation that is installed (python-hostlist, ClusterShell, libslurm's
hostlists, pdsh, flux-core, Slurm's --extra) and each operation it supports that has an input
strategy, run ``flux-conformance diff`` against the reference with a share of the time budget
(one hour in all by default), and report what was found: per pair, the disagreements, each
marked "new" when no case of the suite has that input.  The cases found are written, one file
per pair, under ``--out`` for review (docs/diff.md).  The report is the product; the exit status
is 0 whatever was found, 2 when nothing could run.

    python tests/differential/run_all.py [--seconds 3600] [--seed 1] [--out diff-found] [--impl NAME]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from flux_conformance.runner.adapters.factory import make_adapter
from flux_conformance.runner.cases import load_suite
from flux_conformance.runner.tools.diff import differential
from flux_conformance.runner.tools.diff_cases import general_requirement, render_cases
from flux_conformance.runner.tools.strategies import STRATEGIES

#: The shipped adapters of real implementations, in the order the report lists them.
REAL = ("python-hostlist", "clustershell", "slurm-hostlist", "pdsh", "flux-core", "slurm-extra")


def _installed(names: tuple[str, ...]) -> dict[str, list[str]]:
    """Implementation -> the operations with a strategy it supports; the absent are reported."""
    found: dict[str, list[str]] = {}
    for name in names:
        try:
            adapter = make_adapter(name)
            adapter.start()
        except Exception as exc:
            print(
                f"{name}: not run ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
            )
            continue
        try:
            found[name] = [op for op in sorted(STRATEGIES) if adapter.supports(op)]
        finally:
            adapter.close()
    return found


def main(argv: list[str] | None = None) -> int:
    """Run every pair within the budget and print the report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3600.0, help="budget of the whole run")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--examples", type=int, default=500, help="inputs per search round")
    parser.add_argument("--out", type=Path, default=Path("diff-found"))
    parser.add_argument("--impl", action="append", choices=REAL, help="only these (repeatable)")
    args = parser.parse_args(argv)

    pairs = [(name, op) for name, ops in _installed(tuple(args.impl or REAL)).items() for op in ops]
    if not pairs:
        print("no real implementation could run: nothing to compare")
        return 2
    known = {json.dumps(c.input, sort_keys=True) for c in load_suite().cases}
    share = args.seconds / len(pairs)
    args.out.mkdir(parents=True, exist_ok=True)
    print(
        f"{len(pairs)} pairs, {share:.0f} s each, seed {args.seed}; cases found go to {args.out}/"
    )
    totals = {"found": 0, "new": 0}
    start = time.monotonic()
    for name, op in pairs:
        impl, reference = make_adapter(name), make_adapter("reference")
        impl.start()
        reference.start()
        try:
            result = differential(
                op, impl, reference, examples=args.examples, seconds=share, seed=args.seed
            )
        finally:
            impl.close()
            reference.close()
        new = [d for d in result.disagreements if json.dumps(d.input, sort_keys=True) not in known]
        totals["found"] += len(result.disagreements)
        totals["new"] += len(new)
        print(
            f"{name:16} {op:24} {result.evaluated:6} inputs {result.seconds:6.0f} s: "
            f"{len(result.disagreements)} disagreement(s), {len(new)} on inputs no case has"
        )
        for found in result.disagreements:
            mark = "new " if found in new else "case"
            print(
                f"    [{mark}] {json.dumps(found.input, ensure_ascii=False)[:120]}: {found.reason}"
            )
        if result.disagreements:
            text = render_cases(
                result,
                impl_name=name,
                against_name="reference",
                requirement=general_requirement(op, None),
            )
            (args.out / f"{name}.{op}.yaml").write_text(text, encoding="utf-8")
    print(
        f"{totals['found']} disagreement(s) in {time.monotonic() - start:.0f} s, "
        f"{totals['new']} on inputs that no case has yet (review them in {args.out}/)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
