"""Running cases against an implementation and judging each answer.

:func:`select` filters a suite; :func:`judge` turns one reply into a :class:`CaseResult`;
:func:`run_cases` drives an adapter through the selected cases, yielding results as they
come, so reporters can stream.  A fault of the implementation never stops the run.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from flux_conformance.runner.adapters.base import UNKNOWN_CATEGORY, Adapter, Reply
from flux_conformance.runner.bounds import (
    DIFF_MAX_VALUES,
    KEPT_TEXT,
    cut,
    first_difference,
    json_size,
    too_large_to_judge,
)
from flux_conformance.runner.cases import Case
from flux_conformance.runner.comparators import Oracle, OracleFailure
from flux_conformance.runner.editions import bundled
from flux_conformance.runner.operations import OperationSpec

__all__ = [
    "CaseResult",
    "Filters",
    "OracleFactory",
    "Outcome",
    "Scope",
    "Summary",
    "judge",
    "kept",
    "run_cases",
    "select",
]


class Outcome(StrEnum):
    """What became of a case.

    ``unchecked`` is a refusal whose category the implementation did not say (error category
    ``unknown``) where the case expects a refusal: counted as a refusal, never as a full pass.
    """

    PASSED = "passed"
    FAILED = "failed"
    ERRORED = "errored"
    SKIPPED = "skipped"
    XFAILED = "xfailed"
    XPASSED = "xpassed"
    UNCHECKED = "unchecked"

    @property
    def is_bad(self) -> bool:
        """Whether this outcome makes the run fail."""
        return self in (Outcome.FAILED, Outcome.ERRORED, Outcome.XPASSED)


@dataclass(frozen=True)
class CaseResult:
    """The verdict on one case, with what is needed to explain it."""

    case: Case
    outcome: Outcome
    reply: Reply | None
    reason: str = ""
    diff: str = ""
    seconds: float = 0.0
    #: Whose fault an errored result is when it is not the implementation's: ``adapter`` (the
    #: suite's adapter code raised) or ``suite`` (a comparator or the oracle failed).  No
    #: expectations file can excuse such a result.
    fault: str = ""

    def to_json(self) -> dict[str, Any]:
        """The result as a JSON object (one line of the JSON Lines report)."""
        out: dict[str, Any] = {
            "id": self.case.id,
            "operation": self.case.operation,
            "level": self.case.level,
            "outcome": self.outcome.value,
            "file": str(self.case.file),
            "line": self.case.line,
            "seconds": round(self.seconds, 6),
        }
        if self.outcome is not Outcome.PASSED:
            out["input"] = self.case.input
            out["expected"] = self.case.expected_json()
            if self.reply is not None:
                out["actual"] = self.reply.to_json()
            if self.reason:
                out["reason"] = self.reason
            if self.diff:
                out["diff"] = self.diff
            if self.fault:
                out["fault"] = self.fault
        return out


def _kept_text(text: str) -> str:
    """``text`` cut at :data:`~runner.bounds.KEPT_TEXT`, unless it was cut so already."""
    if len(text) > KEPT_TEXT and not (
        text[KEPT_TEXT:].startswith("... (") and text.endswith(" characters)")
    ):
        return cut(text, KEPT_TEXT)
    return text


def kept(result: CaseResult) -> CaseResult:
    """``result`` as reports keep it: every text cut at :data:`~runner.bounds.KEPT_TEXT`.

    An output of more than that many JSON values or characters of strings is kept as the
    start of its JSON text (``Reply.cut``); an error's category and message, an errored
    answer's reason and stderr, the result's reason and diff are cut (each says how long it was).
    Judging is done by then: a run holds at most this much of any answer, however many huge
    answers it gets.
    """
    from flux_conformance.runner.compact import compact_json  # the reports' own rendering

    reply = result.reply
    if reply is not None:
        value = reply.value
        if reply.kind == "output":
            if not reply.cut and max(json_size(value, cap=KEPT_TEXT)) > KEPT_TEXT:
                value = compact_json(value, KEPT_TEXT)
        elif isinstance(value, str):
            value = _kept_text(value)
        reply = dataclasses.replace(
            reply,
            value=value,
            message=_kept_text(reply.message),
            stderr=_kept_text(reply.stderr),
            cut=reply.cut or (reply.kind == "output" and value is not reply.value),
        )
    return dataclasses.replace(
        result, reply=reply, reason=_kept_text(result.reason), diff=_kept_text(result.diff)
    )


@dataclass(frozen=True)
class Filters:
    """Which cases to run; an empty tuple means no restriction.

    A case runs when it belongs to ``edition`` (or to every edition; ``edition`` None: any
    edition), matches each inclusion
    filter that is given (any of its values) and none of the exclusions.  Operation and id
    values are globs; levels and tags are matched exactly.
    """

    operations: tuple[str, ...] = ()
    ids: tuple[str, ...] = ()
    levels: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    edition: str | None = field(default_factory=lambda: bundled().default)
    exclude_operations: tuple[str, ...] = ()
    exclude_ids: tuple[str, ...] = ()
    exclude_levels: tuple[str, ...] = ()
    exclude_tags: tuple[str, ...] = ()

    def accepts(self, case: Case) -> bool:
        """Whether ``case`` passes every filter."""
        if self.edition is not None and case.edition is not None and case.edition != self.edition:
            return False
        if self.operations and not _any_glob(case.operation, self.operations):
            return False
        if self.ids and not _any_glob(case.id, self.ids):
            return False
        if self.levels and case.level not in self.levels:
            return False
        if self.tags and not set(self.tags) & set(case.tags):
            return False
        return not (
            _any_glob(case.operation, self.exclude_operations)
            or _any_glob(case.id, self.exclude_ids)
            or case.level in self.exclude_levels
            or set(self.exclude_tags) & set(case.tags)
        )

    def to_json(self) -> dict[str, Any]:
        """The filters that restrict anything, as reports record them."""
        fields = (
            "operations",
            "ids",
            "levels",
            "tags",
            "exclude_operations",
            "exclude_ids",
            "exclude_levels",
            "exclude_tags",
        )
        return {name: list(getattr(self, name)) for name in fields if getattr(self, name)}


def _any_glob(name: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def select(cases: Iterable[Case], filters: Filters) -> list[Case]:
    """The cases that pass ``filters``, in suite order."""
    return [c for c in cases if filters.accepts(c)]


@dataclass(frozen=True)
class Scope:
    """How much of the suite a run covered, for verdicts that say so.

    An operation is *run* when at least one of its cases was answered (not skipped), and
    *unsupported* when none was and the implementation answered ``unsupported`` to those it
    was asked (an expectations file may keep some from being asked).
    ``operations`` and ``cases`` count the whole suite (for the run's edition), whatever
    the filters selected.
    """

    operations: int
    cases: int
    selected_operations: tuple[str, ...]
    run_operations: tuple[str, ...]
    unsupported_operations: tuple[str, ...]
    cases_run: int
    unchecked: int

    def describe(self, *, unchecked: bool = True) -> str:
        """``on 2 of 21 operations (114 of 1,624 cases); 19 operations unsupported``.

        ``unchecked=False`` leaves out the count of unchecked refusals (for a verdict that
        has already given it).
        """
        text = (
            f"on {len(self.run_operations)} of {self.operations} operations "
            f"({self.cases_run:,} of {self.cases:,} cases)"
        )
        unsupported = len(self.unsupported_operations)
        if unsupported:
            text += f"; {unsupported} operation{'s' * (unsupported != 1)} unsupported"
        others = self.operations - len(self.selected_operations)
        if others > 0:
            text += f"; {others} not selected"
        if self.unchecked and unchecked:
            text += f"; {self.unchecked:,} refused without a category (category not checked)"
        return text

    @property
    def partial(self) -> bool:
        """Whether fewer than half of the suite's operations were run (the badge's rule)."""
        return 2 * len(self.run_operations) < self.operations

    def to_json(self) -> dict[str, Any]:
        """The scope as JSON (the JSON report's footer)."""
        return {
            "operations": self.operations,
            "cases": self.cases,
            "selected_operations": list(self.selected_operations),
            "run_operations": list(self.run_operations),
            "unsupported_operations": list(self.unsupported_operations),
            "cases_run": self.cases_run,
            "unchecked": self.unchecked,
            "text": self.describe(),
        }


@dataclass
class Summary:
    """Counts per outcome, overall and per operation, and what the run covered.

    ``suite_operations`` and ``suite_cases`` are the whole suite's counts for the run's
    edition (the denominators of :meth:`scope`); left at zero, the selection stands in.
    """

    total: Counter[str] = field(default_factory=Counter)
    by_operation: dict[str, Counter[str]] = field(default_factory=dict)
    suite_operations: int = 0
    suite_cases: int = 0
    #: Per operation, how many cases the implementation answered ``unsupported``.
    unsupported: Counter[str] = field(default_factory=Counter)

    def add(self, result: CaseResult) -> None:
        """Count one result."""
        self.total[result.outcome.value] += 1
        self.by_operation.setdefault(result.case.operation, Counter())[result.outcome.value] += 1
        if result.reply is not None and result.reply.kind == "unsupported":
            self.unsupported[result.case.operation] += 1

    @property
    def ok(self) -> bool:
        """True when nothing failed, errored or passed unexpectedly, and something ran."""
        nothing_bad = not any(self.total[o.value] for o in Outcome if o.is_bad)
        return nothing_bad and self.cases_run > 0

    @property
    def cases_run(self) -> int:
        """Cases answered (not skipped)."""
        return sum(self.total.values()) - self.total[Outcome.SKIPPED.value]

    def scope(self) -> Scope:
        """What the run covered (see :class:`Scope`)."""
        selected = tuple(sorted(self.by_operation))
        run = tuple(
            op
            for op in selected
            if sum(self.by_operation[op].values()) > self.by_operation[op][Outcome.SKIPPED.value]
        )
        # Not run, and what was asked was answered unsupported (an expectations file may
        # have kept some of its cases from being asked at all).
        unsupported = tuple(op for op in selected if op not in run and self.unsupported[op])
        return Scope(
            operations=self.suite_operations or len(selected),
            cases=self.suite_cases or sum(self.total.values()),
            selected_operations=selected,
            run_operations=run,
            unsupported_operations=unsupported,
            cases_run=self.cases_run,
            unchecked=self.total[Outcome.UNCHECKED.value],
        )

    def to_json(self) -> dict[str, Any]:
        """Counts as JSON: ``{"total": {...}, "operations": {op: {...}}, "scope": {...}}``."""
        return {
            "total": {o.value: self.total[o.value] for o in Outcome},
            "operations": {
                op: {o.value: counts[o.value] for o in Outcome}
                for op, counts in sorted(self.by_operation.items())
            },
            "scope": self.scope().to_json(),
        }


#: The oracle to judge a case by, for the case's edition (see :mod:`runner.oracle`).
OracleFactory = Callable[[str | None], Oracle]


@functools.cache
def _deepdiff() -> Any:
    """DeepDiff, imported on first use (the first failure)."""
    from deepdiff import DeepDiff

    return DeepDiff


def _diff(expected: Any, actual: Any) -> str:
    """The differences of a failed answer: its first 40 lines, as DeepDiff words them.

    DeepDiff compares the whole of two values of at most DIFF_MAX_VALUES JSON values (that
    bound is what keeps its work small): its ``max_diffs`` counts every pair of values it
    visits, equal or not, so a cap there would leave out differences past the first few dozen
    values, or all of them in a list.  A larger value gets the path of its first difference.
    """
    if max(json_size(expected, DIFF_MAX_VALUES) + json_size(actual, DIFF_MAX_VALUES)) > (
        DIFF_MAX_VALUES
    ):
        return first_difference(expected, actual)
    try:
        diff = _deepdiff()(expected, actual, verbose_level=2)
        text: str = diff.pretty()
    except Exception as exc:  # deepdiff on exotic values: the diff is a courtesy
        return f"(no diff: {exc})"
    return "\n".join(text.splitlines()[:40])


def _describe_expected(case: Case) -> str:
    return " or ".join(
        f"error {e.value!r}" if e.kind == "error" else "an output" for e in case.expected
    )


def judge(case: Case, reply: Reply, op: OperationSpec, oracle: Oracle) -> CaseResult:
    """Compare ``reply`` with what ``case`` permits."""
    if reply.kind == "errored":
        fault = "adapter" if reply.adapter_fault else ""
        return CaseResult(case, Outcome.ERRORED, reply, reply.message, fault=fault)
    if reply.kind == "unsupported":
        return CaseResult(case, Outcome.SKIPPED, reply, reply.message or "unsupported")
    if reply.kind == "bound":
        return _judge_bound(case, reply)
    if reply.kind == "error":
        return _judge_error(case, reply, op)
    outputs = [e for e in case.expected if e.kind == "output"]
    too_large = too_large_to_judge([e.value for e in outputs], reply.value)
    if too_large:
        return CaseResult(case, Outcome.FAILED, reply, too_large)
    problem = op.first_output_problem(reply.value)
    if problem:
        return CaseResult(
            case, Outcome.FAILED, reply, "output is not of the operation's form: " + problem
        )
    if not outputs:
        return CaseResult(
            case,
            Outcome.FAILED,
            reply,
            f"returned an output; expected {_describe_expected(case)}",
        )
    reasons = []
    for expected in outputs:
        try:
            reason = op.compare(expected.value, reply.value, oracle, case.input)
        except (Exception, OracleFailure) as exc:
            # The implementation answered; the suite could not judge the answer.
            return CaseResult(
                case,
                Outcome.ERRORED,
                reply,
                f"suite defect: comparator {op.comparator_name} failed on this answer: {exc!r}",
                fault="suite",
            )
        if reason is None:
            return CaseResult(case, Outcome.PASSED, reply)
        reasons.append(reason)
    return CaseResult(
        case, Outcome.FAILED, reply, "; ".join(reasons), _diff(outputs[0].value, reply.value)
    )


def _judge_error(case: Case, reply: Reply, op: OperationSpec) -> CaseResult:
    """A refusal: its category against the case's.

    A refusal of category ``unknown`` (the implementation did not say which kind) is counted
    as a refusal but its category is not checked: *unchecked*, never a full pass.  Where the
    operation registers a single category, every refusal is of that category, so there is
    nothing left unchecked.
    """
    category = reply.value
    if category == UNKNOWN_CATEGORY and len(op.errors) == 1:
        category = next(iter(op.errors))
    if category == UNKNOWN_CATEGORY:
        if any(e.kind == "error" for e in case.expected):
            return CaseResult(
                case,
                Outcome.UNCHECKED,
                reply,
                f"refused without a category; expected {_describe_expected(case)} "
                "(refusal counted, category not checked)",
            )
        return CaseResult(
            case,
            Outcome.FAILED,
            reply,
            f"refused (category unknown); expected {_describe_expected(case)}",
        )
    if any(e.kind == "error" and e.value == category for e in case.expected):
        return CaseResult(case, Outcome.PASSED, reply)
    if category not in op.errors:
        return CaseResult(
            case,
            Outcome.FAILED,
            reply,
            f"reported error category {category!r}, which {case.operation} does not have "
            f"(it has {', '.join(op.errors)}); expected {_describe_expected(case)}",
        )
    return CaseResult(
        case,
        Outcome.FAILED,
        reply,
        f"reported error {category!r}; expected {_describe_expected(case)}",
    )


def _judge_bound(case: Case, reply: Reply) -> CaseResult:
    """An adapter's own bound: never an answer of the implementation.

    When the implementation was giving an output and the case admits none, that output is
    wrong whatever it holds: failed.  Otherwise the case was not judged: skipped, saying so.
    """
    if reply.value == "output" and not any(e.kind == "output" for e in case.expected):
        return CaseResult(
            case,
            Outcome.FAILED,
            reply,
            f"answered with an output (not listed: adapter bound, {reply.message}); "
            f"expected {_describe_expected(case)}",
        )
    return CaseResult(case, Outcome.SKIPPED, reply, f"adapter bound: {reply.message}")


def run_cases(
    cases: Sequence[Case],
    adapter: Adapter,
    operations: Mapping[str, OperationSpec],
    *,
    oracle: OracleFactory,
    skip: Callable[[Case], str | None] | None = None,
    decide: Callable[[CaseResult], CaseResult] | None = None,
    edition: str | None = None,
) -> Iterator[CaseResult]:
    """Run every case through ``adapter``, yielding each judged result in order.

    ``edition`` is the edition of the specs the run follows: a case of every edition is sent
    to the implementation, and judged, in it (a case of one edition, in its own).

    ``oracle`` gives the oracle comparators consult for a case's edition (usually
    :func:`runner.oracle.reference_oracle`).  ``skip`` may name a
    reason not to run a case at all; ``decide`` may rewrite a result
    afterwards (expectations files turn failures into xfails).  The adapter must already
    be started; it is not closed here.
    """
    for case in cases:
        why = skip(case) if skip else None
        if why:
            yield CaseResult(case, Outcome.SKIPPED, None, why)
            continue
        start = time.perf_counter()
        if not adapter.supports(case.operation):
            reply = Reply("unsupported", message="operation not supported by the implementation")
        else:
            reply = adapter.run(case.operation, case.input, edition=case.edition or edition)
        seconds = time.perf_counter() - start
        result = dataclasses.replace(
            judge(case, reply, operations[case.operation], oracle(case.edition or edition)),
            seconds=seconds,
        )
        out = kept(decide(result) if decide else result)
        # The whole answer goes now, not when the next one has come: one huge answer at a time.
        del reply, result
        yield out
