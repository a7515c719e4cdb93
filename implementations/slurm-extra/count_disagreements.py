"""Count, without shrinking, how often two implementations disagree on generated inputs.

``flux-conformance diff`` stops at the first input of each kind of disagreement and shrinks
it; this counts every disagreement over many inputs of the same strategies, grouped by the
pair of outcomes, with a few examples of each, so that a report can say how often they occur.
``--attribute`` then re-runs each disagreement with its known causes taken out (texts cut at
their first NUL; Extra that is not a strict JSON object replaced by none) and counts those
that then agree, by cause; any that still disagree are printed as unexplained:

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

from flux_conformance.runner.adapters.factory import make_adapter
from flux_conformance.runner.operations import load_registry
from flux_conformance.runner.oracle import reference_oracle
from flux_conformance.runner.tools.diff import compare_replies
from flux_conformance.runner.tools.strategies import STRATEGIES


def _outcome(kind: str, value: Any) -> str:
    return f"error:{value}" if kind == "error" else kind


def _strict_object(text: str | None) -> bool:
    """Whether ``text`` is no Extra or a JSON object by RFC 8259 (no NaN or Infinity)."""
    if not text:
        return True

    def refuse(constant: str) -> Any:
        raise ValueError(constant)

    try:
        return isinstance(json.loads(text, parse_constant=refuse), dict)
    except ValueError:
        return False


def _without_known_causes(operation: str, value: Any) -> tuple[Any, frozenset[str]]:
    """``value`` with each known cause of disagreement taken out, and the causes found."""
    causes: set[str] = set()

    def cut(text: str | None, cause: str) -> str | None:
        if text is not None and "\x00" in text:
            causes.add(cause)
            return text.split("\x00")[0]
        return text

    def extra(text: str | None) -> str | None:
        text = cut(text, "NUL in Extra")
        if not _strict_object(text):
            causes.add("lenient or non-object Extra")
            return None
        return text

    if operation == "slurm.extra.parse":
        return cut(value, "NUL in expression"), frozenset(causes)
    value = dict(value, expression=cut(value["expression"], "NUL in expression"))
    if operation == "slurm.extra.match":
        value["extra"] = extra(value["extra"])
    else:
        value["nodes"] = {name: extra(text) for name, text in value["nodes"].items()}
    return value, frozenset(causes)


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
    parser.add_argument(
        "--attribute", action="store_true", help="re-run each disagreement without known causes"
    )
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

    attributed: collections.Counter[str] = collections.Counter()
    unexplained: list[Any] = []
    if args.attribute:
        for values in groups.values():
            for value in values:
                plain, causes = _without_known_causes(op.name, value)
                actual = impl.run(op.name, plain, edition=None)
                expected = against.run(op.name, plain, edition=None)
                if compare_replies(op, actual, expected, oracle) is None:
                    attributed[" + ".join(sorted(causes)) or "none"] += 1
                else:
                    unexplained.append(value)
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
    if args.attribute:
        print("agree once the known causes are taken out:")
        for causes, count in attributed.most_common():
            print(f"  {count:6d}  {causes}")
        print(f"unexplained: {len(unexplained)}")
        for value in unexplained:
            print(f"            {json.dumps(value, ensure_ascii=False)}")


if __name__ == "__main__":
    main()
