"""``flux-conformance diff``: differential testing of one implementation against another.

Hypothesis generates inputs for one operation (:mod:`runner.strategies`: valid and
near-valid), both implementations answer each, and the answers are compared the way the
suite compares an answer with a case: the operation's comparator for two outputs, the
category for two errors.  Every disagreement is shrunk by hypothesis to a minimal input and
written as a case YAML for a person to review, its expected outcome taken from the
``--against`` implementation (the reference by default).

Finding several distinct disagreements: the search runs in rounds.  In each round the test
fails only on a disagreement of a new kind -- a new pair of outcome kinds (``output``, or
the error category), or the same pair on an input whose punctuation does not include that
of a known finding's input -- so hypothesis shrinks towards a new kind of disagreement, and
the next round looks for another.  Rounds
stop when one finds nothing new, at ``--max`` disagreements, or when ``--seconds`` run out.
``--examples`` bounds the inputs generated per round.  With ``--seed`` the whole search is
deterministic (hypothesis's ``seed``, no example database); without it a seed is drawn and
printed, so any run can be replayed.

Exit status: 0 no disagreement, 1 some found, 2 usage (unknown operation, no strategy for
it, an implementation that cannot load, hypothesis missing).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import time
import unittest
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import yaml

from runner.adapters.base import Adapter, AdapterError, Reply
from runner.comparators import Oracle
from runner.operations import OperationSpec, load_registry

__all__ = [
    "DiffResult",
    "Disagreement",
    "add_parser",
    "cmd_diff",
    "compare_replies",
    "differential",
    "render_cases",
]

EXIT_OK, EXIT_FOUND, EXIT_USAGE = 0, 1, 2

#: Placeholder written when no requirement id can be proposed; the suite refuses to load it.
REQUIREMENT_PLACEHOLDER = "REVIEWER-MUST-FILL-IN-A-REQUIREMENT-ID"


@dataclass(frozen=True)
class Disagreement:
    """One minimal input on which the two implementations answer differently."""

    operation: str
    input: Any
    actual: Reply
    expected: Reply
    reason: str
    signature: tuple[str, ...]


@dataclass
class DiffResult:
    """What a differential run found, and what it cost."""

    operation: str
    seed: int
    disagreements: list[Disagreement] = field(default_factory=list)
    evaluated: int = 0
    incomparable: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0
    out_of_time: bool = False
    rounds: int = 0


def _outcome(reply: Reply) -> str:
    if reply.kind == "error":
        return f"error:{reply.value}"
    return reply.kind


def compare_replies(
    op: OperationSpec, actual: Reply, expected: Reply, oracle: Oracle
) -> str | None:
    """Why ``actual`` does not answer like ``expected`` (None when they agree).

    Two outputs agree when the operation's comparator accepts ``actual`` against
    ``expected``; two errors when their categories are equal.  An ``unsupported`` answer on
    either side is not compared (the caller counts it).
    """
    if expected.kind == "errored":
        return f"the --against implementation failed to answer: {expected.message}"
    if actual.kind == "errored":
        return f"failed to answer: {actual.message}"
    if actual.kind != expected.kind:
        return f"answers {_outcome(actual)} where the other answers {_outcome(expected)}"
    if actual.kind == "error":
        if actual.value != expected.value:
            return f"reports error {actual.value!r} where the other reports {expected.value!r}"
        return None
    try:
        problems = op.output_problems(actual.value)
    except RecursionError:  # jsonschema recurses once per level of the output
        return "output is nested too deeply for its form to be checked"
    if problems:
        return f"output is not of the operation's form: {problems[0]}"
    try:
        return op.comparator(expected.value, actual.value, oracle)
    except Exception as exc:  # a comparator choking on an odd output is a disagreement too
        return f"comparator {op.comparator_name} failed on the output: {exc!r}"


def _punctuation(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return "".join(sorted({c for c in text if not c.isalnum()}))


def _signature(actual: Reply, expected: Reply, value: Any) -> tuple[str, ...]:
    return (_outcome(actual), _outcome(expected), _punctuation(value))


def _covered(signature: tuple[str, ...], known: set[tuple[str, ...]]) -> bool:
    """Whether a disagreement of this kind is already known.

    Same pair of outcomes, and the input uses every punctuation character of a known
    finding (``,.`` adds nothing to ``,``); an input without punctuation is covered only by
    a finding without punctuation, which would otherwise cover everything.
    """
    *outcomes, punctuation = signature
    for *known_outcomes, known_punctuation in known:
        if known_outcomes != outcomes:
            continue
        if not known_punctuation and punctuation:
            continue
        if set(known_punctuation) <= set(punctuation):
            return True
    return False


_DIGITS = re.compile(r"[0-9]+")


def _number_slot(value: Any, index: int) -> tuple[int, Callable[[int], Any]] | None:
    """The ``index``-th number in ``value`` (depth first), and how to put another in its place.

    Numbers are JSON integers (not booleans) and runs of ASCII digits inside strings.
    """
    found: list[tuple[int, Callable[[int], Any]]] = []

    def in_text(text: str, start: int, end: int, put: Callable[[Any], Any]) -> Callable[[int], Any]:
        return lambda n: put(text[:start] + str(n) + text[end:])

    def in_list(node: list[Any], i: int, put: Callable[[Any], Any]) -> Callable[[Any], Any]:
        return lambda v: put([*node[:i], v, *node[i + 1 :]])

    def in_dict(node: dict[str, Any], key: str, put: Callable[[Any], Any]) -> Callable[[Any], Any]:
        return lambda v: put({**node, key: v})

    def walk(node: Any, put: Callable[[Any], Any]) -> None:
        if len(found) > index or isinstance(node, bool):
            return
        if isinstance(node, int):
            found.append((node, put))
        elif isinstance(node, str):
            found.extend(
                (int(match.group()), in_text(node, *match.span(), put))
                for match in _DIGITS.finditer(node)
            )
        elif isinstance(node, list):
            for i, item in enumerate(node):
                walk(item, in_list(node, i, put))
        elif isinstance(node, dict):
            for key, item in node.items():
                walk(item, in_dict(node, key, put))

    walk(value, lambda v: v)
    return found[index] if len(found) > index else None


class _Found(Exception):
    """Raised inside the hypothesis test to make it fail (and shrink) on a new disagreement."""

    def __init__(self, value: Any) -> None:
        super().__init__("disagreement")
        self.value = value


class _Search:
    """The state shared by the rounds of one differential run."""

    def __init__(
        self,
        op: OperationSpec,
        impl: Adapter,
        against: Adapter,
        *,
        oracle: Oracle,
        result: DiffResult,
        deadline: float,
    ) -> None:
        self.op, self.impl, self.against, self.oracle = op, impl, against, oracle
        self.result = result
        self.deadline = deadline
        self.known: set[tuple[str, ...]] = set()
        self.replies: dict[str, tuple[Reply, Reply]] = {}

    def answer(self, value: Any) -> tuple[Reply, Reply]:
        """Both implementations' replies for ``value`` (each input is run once)."""
        key = json.dumps(value, sort_keys=True)
        if key not in self.replies:
            self.result.evaluated += 1
            self.replies[key] = (
                self.impl.run(self.op.name, value, edition=None),
                self.against.run(self.op.name, value, edition=None),
            )
        return self.replies[key]

    def round(self, strategy: Any, *, examples: int, seed: int) -> Any:
        """One hypothesis run failing on a new kind of disagreement; its minimal input."""
        from hypothesis import HealthCheck, Phase, given, settings
        from hypothesis import seed as hypothesis_seed

        smallest: list[Any] = []

        def body(value: Any) -> None:
            if time.monotonic() >= self.deadline:
                # Hypothesis re-raises a skip at once, without shrinking: the run ends here
                # and the smallest failure seen so far, if any, is kept.
                raise unittest.SkipTest("out of time")
            actual, expected = self.answer(value)
            if "unsupported" in (actual.kind, expected.kind):
                return
            if compare_replies(self.op, actual, expected, self.oracle) is None:
                return
            if _covered(_signature(actual, expected, value), self.known):
                return
            smallest.append(value)
            raise _Found(value)

        decorate: Any = given(strategy)
        test: Any = decorate(body)
        test = hypothesis_seed(seed)(test)
        test = settings(
            max_examples=examples,
            database=None,
            deadline=None,
            derandomize=False,
            phases=(Phase.generate, Phase.shrink),
            suppress_health_check=list(HealthCheck),
            report_multiple_bugs=False,
            print_blob=False,
        )(test)
        try:
            test()
        except _Found as exc:
            return exc.value
        except unittest.SkipTest:
            self.result.out_of_time = True
            return smallest[-1] if smallest else None
        except Exception:
            # Flakiness (an implementation answering differently on a replay) or the clock:
            # keep the smallest failure seen, if there is one.
            if not smallest:
                raise
            return smallest[-1]
        return None

    def fails(self, value: Any, outcomes: tuple[str, ...]) -> bool:
        """Whether ``value`` shows a disagreement of a new kind with these outcomes."""
        actual, expected = self.answer(value)
        if "unsupported" in (actual.kind, expected.kind):
            return False
        if compare_replies(self.op, actual, expected, self.oracle) is None:
            return False
        signature = _signature(actual, expected, value)
        return signature[:2] == outcomes and not _covered(signature, self.known)

    def minimise_numbers(self, value: Any) -> Any:
        """Lower every number of ``value`` as far as the disagreement allows.

        Hypothesis shrinks a number only within the branch of the strategy that drew it:
        a failure first seen on an edge value (``2**31``) stays there even when ``1001``
        would do.  This pass takes each integer, and each run of digits in a string, in
        turn and binary-searches the smallest value that still shows the same kind of
        disagreement (it keeps only values it has checked).
        """
        actual, expected = self.answer(value)
        outcomes = (_outcome(actual), _outcome(expected))
        index = 0
        while time.monotonic() < self.deadline:
            slot = _number_slot(value, index)
            if slot is None:
                break
            current, rebuild = slot
            low, high = 0, current
            while low < high and time.monotonic() < self.deadline:
                middle = (low + high) // 2
                if self.fails(rebuild(middle), outcomes):
                    high = middle
                else:
                    low = middle + 1
            if high != current and self.fails(rebuild(high), outcomes):
                value = rebuild(high)
            index += 1
        return value

    def record(self, value: Any) -> None:
        """Keep ``value`` as a disagreement and stop looking for its kind."""
        value = self.minimise_numbers(value)
        actual, expected = self.answer(value)
        reason = compare_replies(self.op, actual, expected, self.oracle) or "disagreement"
        signature = _signature(actual, expected, value)
        self.known.add(signature)
        self.result.disagreements.append(
            Disagreement(self.op.name, value, actual, expected, reason, signature)
        )


def differential(
    operation: str,
    impl: Adapter,
    against: Adapter,
    *,
    examples: int = 200,
    seconds: float = 60.0,
    seed: int = 0,
    max_found: int = 10,
    oracle: Oracle | None = None,
    strategy: Any = None,
) -> DiffResult:
    """Search for inputs of ``operation`` on which ``impl`` and ``against`` disagree.

    Both adapters must be started.  ``strategy`` overrides the operation's strategy from
    :data:`runner.strategies.STRATEGIES` (tests use it).  Raises :class:`ImportError` when
    hypothesis is missing and :class:`KeyError` when no strategy exists for ``operation``.
    """
    from runner.engine import reference_oracle
    from runner.strategies import STRATEGIES

    op = load_registry()[operation]
    strategy = strategy if strategy is not None else STRATEGIES[operation]()
    result = DiffResult(operation, seed)
    start = time.monotonic()
    search = _Search(
        op,
        impl,
        against,
        oracle=oracle or reference_oracle(),
        result=result,
        deadline=start + seconds,
    )
    while len(result.disagreements) < max_found:
        if time.monotonic() >= search.deadline:
            result.out_of_time = True
            break
        result.rounds += 1
        found = search.round(strategy, examples=examples, seed=seed)
        if found is None:
            break
        search.record(found)
    for actual, expected in search.replies.values():
        for side, reply in (("impl", actual), ("against", expected)):
            if reply.kind == "unsupported":
                result.incomparable[side] += 1
    result.seconds = time.monotonic() - start
    result.out_of_time = result.out_of_time or time.monotonic() >= search.deadline
    return result


# -- writing cases ---------------------------------------------------------------------------


class _CaseDumper(yaml.SafeDumper):
    """Double-quotes every string, so no YAML 1.1 reading ("no", "1e3", "0755") can bite."""


def _quoted(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')


_CaseDumper.add_representer(str, _quoted)


def _flow(value: Any) -> str:
    """``value`` as one line of flow-style YAML, every string double-quoted."""
    text = yaml.dump(
        value,
        Dumper=_CaseDumper,
        default_flow_style=True,
        allow_unicode=True,
        width=2**31,
        explicit_end=False,
    )
    return text.removesuffix("\n...\n").strip()


def _general_requirement(operation: str, cases_dir: Path | None) -> str | None:
    """The requirement the operation's existing cases cite most (None if none can be read)."""
    from runner.cases import SuiteError, load_suite

    try:
        suite = load_suite(cases_dir)
    except (SuiteError, OSError):
        return None
    cited = Counter(
        req for case in suite.cases if case.operation == operation for req in case.requirements
    )
    return cited.most_common(1)[0][0] if cited else None


def _case_id(operation: str, value: Any) -> str:
    digest = hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:10]
    return f"{operation}.diff-{digest}"


def _compact(reply: Reply) -> str:
    if reply.kind == "output":
        text = "output " + json.dumps(reply.value, ensure_ascii=False)
        return text if len(text) <= 120 else text[:117] + "..."
    if reply.kind == "error":
        return f"error {reply.value}"
    return reply.kind


def render_cases(
    result: DiffResult,
    *,
    impl_name: str,
    against_name: str,
    requirement: str | None,
) -> str:
    """The disagreements of ``result`` as a case file, with the reviewer's work marked."""
    requirement_note = (
        f"# requirements: {requirement!r} is the requirement the existing {result.operation}\n"
        "#   cases cite most, proposed as the most general one: replace it with the precise\n"
        "#   requirement(s) each case exercises.\n"
        if requirement
        else f"# requirements: {REQUIREMENT_PLACEHOLDER} is a placeholder: the suite will not\n"
        "#   load this file until each case cites requirement ids that exist.\n"
    )
    lines = [
        f"# Found by: flux-conformance diff --impl {impl_name} --against {against_name} "
        f"--operation {result.operation} --seed {result.seed}",
        "# Ready to review, not to commit as is.  For each case:",
        f"# - the expected outcome is what {against_name} answered: check it against the spec;",
        "# - choose the `level` (must, should, may; clarification with one_of when the text",
        "#   leaves room); left out, it means must;",
        requirement_note.rstrip("\n"),
        f"operation: {json.dumps(result.operation)}",
        "cases:",
    ]
    written = 0
    for found in result.disagreements:
        if found.expected.kind not in ("output", "error"):
            lines.append(
                f"  # not written: {against_name} answered {_compact(found.expected)} for "
                f"input {json.dumps(found.input, ensure_ascii=False)}"
            )
            continue
        fields = {
            "id": _case_id(result.operation, found.input),
            "description": (
                f"Found by flux-conformance diff (seed {result.seed}): {impl_name} answers "
                f"{_compact(found.actual)}, {against_name} answers {_compact(found.expected)}. "
                "Reviewer: say why the spec demands the expected outcome."
            ),
            "input": found.input,
            found.expected.kind: found.expected.value,
            "requirements": [requirement or REQUIREMENT_PLACEHOLDER],
        }
        lines.append("  # level: reviewer to choose (must | should | may | clarification)")
        for index, (key, value) in enumerate(fields.items()):
            lines.append(f"{'  - ' if index == 0 else '    '}{key}: {_flow(value)}")
        written += 1
    if not written:
        lines[-1] = "cases: []"
    return "\n".join(lines) + "\n"


# -- the command -----------------------------------------------------------------------------


def cmd_diff(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """Run the differential search and write the cases it finds."""
    from runner.cli import make_adapter

    try:
        import hypothesis  # noqa: F401
    except ImportError:
        print(
            "error: diff needs hypothesis: pip install 'flux-conformance[diff]'",
            file=err,
        )
        return EXIT_USAGE
    from runner.strategies import STRATEGIES

    registry = load_registry()
    if args.operation not in registry:
        print(f"error: unknown operation {args.operation!r}", file=err)
        return EXIT_USAGE
    if args.operation not in STRATEGIES:
        print(
            f"error: diff has no input strategy for {args.operation}; it has: "
            + ", ".join(sorted(STRATEGIES)),
            file=err,
        )
        return EXIT_USAGE
    if args.examples < 1 or args.seconds <= 0:
        print("error: --examples and --seconds must be positive", file=err)
        return EXIT_USAGE
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    adapters: list[Adapter] = []
    try:
        for spec in (args.impl, args.against):
            adapter = make_adapter(spec, timeout=args.timeout)
            adapters.append(adapter)
            adapter.start()
            if not adapter.supports(args.operation):
                print(f"error: {spec} does not support {args.operation}", file=err)
                return EXIT_USAGE
        impl, against = adapters
        result = differential(
            args.operation,
            impl,
            against,
            examples=args.examples,
            seconds=args.seconds,
            seed=seed,
            max_found=args.max,
        )
    except AdapterError as exc:
        print(f"error: {exc}", file=err)
        return EXIT_USAGE
    finally:
        for adapter in adapters:
            adapter.close()
    _summarise(result, args, err)
    if result.disagreements:
        text = render_cases(
            result,
            impl_name=args.impl,
            against_name=args.against,
            requirement=_general_requirement(
                args.operation, Path(args.cases) if args.cases else None
            ),
        )
        if args.out:
            Path(args.out).write_text(text, encoding="utf-8")
            print(f"wrote {len(result.disagreements)} case(s) to {args.out}", file=err)
        else:
            out.write(text)
    return EXIT_FOUND if result.disagreements else EXIT_OK


def _summarise(result: DiffResult, args: argparse.Namespace, err: IO[str]) -> None:
    print(
        f"diff {args.impl} against {args.against} on {result.operation}: "
        f"{result.evaluated} distinct inputs in {result.rounds} round(s), "
        f"{result.seconds:.1f}s, seed {result.seed}"
        + (" (stopped by --seconds)" if result.out_of_time else ""),
        file=err,
    )
    for side, count in sorted(result.incomparable.items()):
        name = args.impl if side == "impl" else args.against
        print(f"  {count} input(s) not compared: {name} answered unsupported", file=err)
    for found in result.disagreements:
        print(
            f"  disagreement on {json.dumps(found.input, ensure_ascii=False)}: "
            f"{args.impl} {found.reason}",
            file=err,
        )
    if not result.disagreements:
        print("  no disagreement found", file=err)


def add_parser(sub: Any) -> None:
    """Register the ``diff`` subcommand on the CLI's subparsers."""
    p = sub.add_parser(
        "diff",
        help="differential testing: generated inputs, two implementations, minimal disagreements",
    )
    p.add_argument("--impl", required=True, help="the implementation under test")
    p.add_argument(
        "--against", default="reference", help="the implementation trusted for expected outcomes"
    )
    p.add_argument("-o", "--operation", required=True, help="the operation to test")
    p.add_argument("--examples", type=int, default=500, help="inputs generated per search round")
    p.add_argument("--seconds", type=float, default=60.0, help="time budget of the whole run")
    p.add_argument("--seed", type=int, help="make the search deterministic (default: random)")
    p.add_argument("--max", type=int, default=10, help="stop after this many disagreements")
    p.add_argument("--out", metavar="FILE", help="write the cases here (default: stdout)")
    p.add_argument("--cases", metavar="DIR", help="suite to propose requirement ids from")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds per input (exec: only)")
    p.set_defaults(func=cmd_diff)
