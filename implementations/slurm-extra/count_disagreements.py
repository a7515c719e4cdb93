"""Count, without shrinking, how often two implementations disagree on generated inputs.

``flux-conformance diff`` stops at the first input of each kind of disagreement and shrinks
it; this counts every disagreement over many inputs of the same strategies, grouped by the
pair of outcomes, with a few examples of each, so that a report can say how often they occur:

    cd implementations/slurm-extra
    SLURM_EXTRA_BUILD=OUT python count_disagreements.py slurm.extra.match --examples 20000
"""

from __future__ import annotations

import argparse
import collections
import json
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed

from runner.adapters.factory import make_adapter
from runner.operations import load_registry
from runner.oracle import reference_oracle
from runner.tools.diff import compare_replies
from runner.tools.strategies import STRATEGIES


def _outcome(kind: str, value: Any) -> str:
    return f"error:{value}" if kind == "error" else kind


def main() -> None:
    """Draw inputs, run both implementations, print the disagreements by outcome pair."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("operation")
    parser.add_argument("--impl", default="slurm-extra")
    parser.add_argument("--against", default="reference")
    parser.add_argument("--examples", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--show", type=int, default=5, help="examples printed per group")
    parser.add_argument("--dump", help="write every disagreement to this file, one JSON a line")
    args = parser.parse_args()

    op = load_registry()[args.operation]
    impl, against = make_adapter(args.impl), make_adapter(args.against)
    impl.start()
    against.start()
    oracle = reference_oracle()
    seen: set[str] = set()
    groups: dict[tuple[str, str], list[Any]] = collections.defaultdict(list)

    def body(value: Any) -> None:
        key = json.dumps(value, sort_keys=True)
        if key in seen:
            return
        seen.add(key)
        actual = impl.run(op.name, value, edition=None)
        expected = against.run(op.name, value, edition=None)
        if compare_replies(op, actual, expected, oracle) is not None:
            pair = (_outcome(actual.kind, actual.value), _outcome(expected.kind, expected.value))
            groups[pair].append(value)

    test: Any = given(STRATEGIES[args.operation]())(body)
    test = hypothesis_seed(args.seed)(test)
    test = settings(
        max_examples=args.examples,
        database=None,
        deadline=None,
        phases=(Phase.generate,),
        suppress_health_check=list(HealthCheck),
    )(test)
    test()
    impl.close()
    against.close()

    if args.dump:
        with open(args.dump, "w", encoding="utf-8") as out:
            for (actual, expected), values in groups.items():
                for value in values:
                    line = {"impl": actual, "against": expected, "input": value}
                    out.write(json.dumps(line, ensure_ascii=False) + "\n")
    total = sum(len(v) for v in groups.values())
    print(f"{args.operation}: {len(seen)} distinct inputs, {total} disagreements")
    for (actual, expected), values in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(values):6d}  {args.impl} {actual}, {args.against} {expected}")
        for value in values[: args.show]:
            print(f"            {json.dumps(value, ensure_ascii=False)}")


if __name__ == "__main__":
    main()
