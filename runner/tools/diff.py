"""The search behind ``flux-conformance diff``: where two implementations disagree.

Hypothesis generates inputs for one operation (:mod:`runner.tools.strategies`: valid and
near-valid), both implementations answer each, and the answers are compared the way the
suite compares an answer with a case: the operation's comparator for two outputs, the
category for two errors.  Every disagreement is shrunk by hypothesis to a minimal input;
:mod:`runner.tools.diff_cases` writes them as case YAML for a person to review, and
:mod:`runner.commands.diff` is the command.

Finding several distinct disagreements: the search runs in rounds.  In each round the test
fails only on a disagreement of a new kind -- one that no known finding explains
(:mod:`runner.tools.diff_kinds`: a new pair of outcome kinds, ``output`` or the error
category, or the same pair on an input with features no known finding's input has) -- so
hypothesis shrinks towards a new kind of disagreement, and the next round looks for another.
Rounds stop when one finds nothing new, at ``max_found`` disagreements, or when ``seconds``
run out.  ``examples`` bounds the inputs generated per
round.  With a seed the whole search is deterministic (hypothesis's ``seed``, no example
database).
"""

from __future__ import annotations

import json
import re
import time
import unittest
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from flux_conformance.runner.adapters.base import UNKNOWN_CATEGORY, Adapter, Reply
from flux_conformance.runner.bounds import shown, too_large_to_judge
from flux_conformance.runner.comparators import Oracle
from flux_conformance.runner.operations import OperationSpec, load_registry
from flux_conformance.runner.tools.diff_bounds import BoundedAdapter, Bounds
from flux_conformance.runner.tools.diff_clock import TimedJudge
from flux_conformance.runner.tools.diff_kinds import (
    Baseline,
    Kind,
    baseline,
    draw_sample,
    explained,
    kind_of,
)

#: Seconds between two progress reports of a search.
PROGRESS_EVERY = 2.0

__all__ = ["DiffResult", "Disagreement", "compare_replies", "differential"]


@dataclass(frozen=True)
class Disagreement:
    """One minimal input on which the two implementations answer differently."""

    operation: str
    input: Any
    actual: Reply
    expected: Reply
    reason: str
    signature: Kind


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
    #: The edition of the specs both implementations were asked to follow (None: each one's
    #: default, and the reference's for judging).
    edition: str | None = None
    #: Inputs over a bound of the implementation's worker, by bound and side
    #: (``impl time``, ``against memory``...): reported, not compared.
    over_bounds: Counter[str] = field(default_factory=Counter)
    #: Whether the search ended because ``diff``'s own process ran out of memory.
    out_of_memory: bool = False


def _outcome(reply: Reply) -> str:
    if reply.kind == "error":
        return f"error:{reply.value}"
    return reply.kind


def compare_replies(
    op: OperationSpec, actual: Reply, expected: Reply, oracle: Oracle, value: Any = None
) -> str | None:
    """Why ``actual`` does not answer like ``expected`` (None when they agree).

    Two outputs agree when the operation's comparator accepts ``actual`` against
    ``expected``; two errors when their categories are equal, or when either side does not say
    its category (``unknown``: a refusal is all it gives).  An ``unsupported`` answer on either
    side is not compared (the caller counts it), nor is an adapter bound, unless the
    implementation was giving an output where the other refuses.
    """
    if "bound" in (actual.kind, expected.kind):
        bound, other = (actual, expected) if actual.kind == "bound" else (expected, actual)
        if bound.value == "output" and other.kind == "error":
            return (
                f"answers with an output (adapter bound: {bound.message}) where the other refuses"
            )
        return None
    if expected.kind == "errored":
        return f"the --against implementation failed to answer: {expected.message}"
    if actual.kind == "errored":
        return f"failed to answer: {actual.message}"
    if actual.kind != expected.kind:
        return f"answers {_outcome(actual)} where the other answers {_outcome(expected)}"
    if actual.kind == "error":
        if UNKNOWN_CATEGORY in (actual.value, expected.value):
            return None
        if actual.value != expected.value:
            return f"reports error {actual.value!r} where the other reports {expected.value!r}"
        return None
    # The bounds of the suite's own judging (runner.bounds): an answer far larger than the
    # other's is a disagreement at once, and only its first schema problem is looked for.
    too_large = too_large_to_judge([expected.value], actual.value)
    if too_large:
        return too_large
    problem = op.first_output_problem(actual.value)
    if problem:
        return f"output is not of the operation's form: {problem}"
    try:
        return op.compare(expected.value, actual.value, oracle, value)
    except Exception as exc:  # a comparator choking on an odd output is a disagreement too
        return shown(f"comparator {op.comparator_name} failed on the output: {exc!r}", 1000)


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


def _bounded(reply: Reply, other: Reply) -> Reply:
    """``reply``, or an errored reply saying why when its output is too large to judge."""
    if reply.kind != "output":
        return reply
    reason = too_large_to_judge([other.value] if other.kind == "output" else [], reply.value)
    return reply if reason is None else Reply("errored", message=reason)


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
        progress: Callable[[DiffResult], None] | None = None,
    ) -> None:
        self.op, self.impl, self.against, self.oracle = op, impl, against, oracle
        self.edition = result.edition
        self.result = result
        self.deadline = deadline
        self.progress = progress
        self.started = self.last_report = time.monotonic()
        self.known: set[Kind] = set()
        #: What most of the strategy's documents have (diff_kinds.baseline), set by the caller.
        self.shared = Baseline()
        self.replies: dict[str, tuple[Reply, Reply]] = {}

    def answer(self, value: Any) -> tuple[Reply, Reply]:
        """Both implementations' replies for ``value`` (each input is run once)."""
        key = json.dumps(value, sort_keys=True)
        if key not in self.replies:
            self.result.evaluated += 1
            actual = self.impl.run(self.op.name, value, edition=self.edition)
            expected = self.against.run(self.op.name, value, edition=self.edition)
            # Replies are kept for the whole search: one too large to judge is kept as the
            # reason it cannot be judged, not as five million items.
            self.replies[key] = (_bounded(actual, expected), _bounded(expected, actual))
            self.report()
        return self.replies[key]

    def kind(self, actual: Reply, expected: Reply, value: Any) -> Kind:
        """The kind of the disagreement between these replies on ``value``."""
        return kind_of((_outcome(actual), _outcome(expected)), value, self.shared)

    def report(self, *, every: float = PROGRESS_EVERY) -> None:
        """Hand the result so far to ``progress``, at most once every ``every`` seconds."""
        now = time.monotonic()
        if self.progress is not None and now - self.last_report >= every:
            self.last_report = now
            self.result.seconds = now - self.started
            self.progress(self.result)

    def round(self, strategy: Any, *, examples: int, seed: int) -> list[Any]:
        """One hypothesis run failing on a new kind of disagreement: ``[its minimal input]``.

        An empty list when the round found nothing (the input itself may be ``null``).
        """
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
            if compare_replies(self.op, actual, expected, self.oracle, value) is None:
                return
            if explained(self.kind(actual, expected, value), self.known):
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
            return [exc.value]
        except unittest.SkipTest:
            self.result.out_of_time = True
            return smallest[-1:]
        except Exception:
            # Flakiness (an implementation answering differently on a replay) or the clock:
            # keep the smallest failure seen, if there is one.
            if not smallest:
                raise
            return smallest[-1:]
        return []

    def fails(self, value: Any, outcomes: tuple[str, ...]) -> bool:
        """Whether ``value`` shows a disagreement of a new kind with these outcomes."""
        actual, expected = self.answer(value)
        if "unsupported" in (actual.kind, expected.kind):
            return False
        if compare_replies(self.op, actual, expected, self.oracle, value) is None:
            return False
        kind = self.kind(actual, expected, value)
        return kind.outcomes == outcomes and not explained(kind, self.known)

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
        reason = compare_replies(self.op, actual, expected, self.oracle, value) or "disagreement"
        signature = self.kind(actual, expected, value)
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
    progress: Callable[[DiffResult], None] | None = None,
    edition: str | None = None,
    deadline: float | None = None,
) -> DiffResult:
    """Search for inputs of ``operation`` on which ``impl`` and ``against`` disagree.

    Both adapters must be started.  ``strategy`` overrides the operation's strategy from
    :data:`runner.tools.strategies.STRATEGIES` (tests use it).  Raises :class:`ImportError` when
    hypothesis is missing and :class:`KeyError` when no strategy exists for ``operation``.
    ``progress`` is called with the result so far every few seconds and at each
    disagreement found.  ``edition`` (an edition's own name) is sent with every input to both
    implementations, and the reference judges in it (None: the default edition).
    ``deadline`` (a ``time.monotonic()`` value) ends the search and its shrinking, each
    disagreement found so far kept, when it comes before ``seconds`` from now.  A
    ``MemoryError`` in this process ends the search too (``out_of_memory``), keeping them.
    """
    from flux_conformance.runner.oracle import reference_oracle
    from flux_conformance.runner.tools.strategies import STRATEGIES

    op = load_registry()[operation]
    strategy = strategy if strategy is not None else STRATEGIES[operation]()
    result = DiffResult(operation, seed, edition=edition)
    start = time.monotonic()
    end = start + seconds if deadline is None else min(deadline, start + seconds)
    for adapter in (impl, against):
        if isinstance(adapter, BoundedAdapter):
            # A bounded worker stops each input at the run's end at the latest.
            adapter.deadline = end
    # The judging in this process is held to the per-input time bound of the workers too.
    per_input = impl.per_input if isinstance(impl, BoundedAdapter) else Bounds.timeout
    judge = TimedJudge(op, per_input, end, result.over_bounds, clock=time.monotonic)
    judged = cast(OperationSpec, judge)
    search = _Search(
        judged,
        impl,
        against,
        oracle=oracle or reference_oracle(edition),
        result=result,
        deadline=end,
        progress=progress,
    )
    try:
        search.shared = baseline(draw_sample(strategy, seed=seed))
        while len(result.disagreements) < max_found:
            if time.monotonic() >= search.deadline:
                result.out_of_time = True
                break
            result.rounds += 1
            found = search.round(strategy, examples=examples, seed=seed)
            if not found:
                break
            search.record(found[0])
            search.report(every=0)
    except MemoryError:
        # What was being built is gone with the frames that held it: the report can be written.
        result.out_of_memory = True
    for actual, expected in search.replies.values():
        for side, reply in (("impl", actual), ("against", expected)):
            if reply.kind == "unsupported":
                result.incomparable[side] += 1
    for side, adapter in (("impl", impl), ("against", against)):
        if isinstance(adapter, BoundedAdapter):
            for bound, count in adapter.over.items():
                result.over_bounds[f"{side} {bound}"] += count
    result.seconds = time.monotonic() - start
    result.out_of_time = result.out_of_time or time.monotonic() >= search.deadline
    return result
