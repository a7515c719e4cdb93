"""What a findings run of ``diff`` found, classified against the suite, and its table.

Each disagreement ``diff`` finds between an implementation and the reference is one of:

* ``artefact``: not an answer of the implementation's -- it crashed, broke the protocol, went
  over a bound of the run, or the adapter's own code failed -- or the reference failed to
  answer.  Worth a look at the adapter, never a case;
* ``covered``: the suite already has it -- a case has that very input, or a case the
  implementation's expectations file lists as a known failure (in that edition) shows the same
  pair of outcomes (output, or the error category, on each side) on an input of the same
  features (:func:`features`: its keys, punctuation, kinds of character and the integer ranges
  its numbers fall in), or a clarification case the implementation passes permits both
  outcomes on an input of the same features (the text leaves room, and the two took different
  readings);
* ``limit``: the reference refuses the input with ``limit`` (a bound of its own, past every
  number RFC 22 and 29 implementations are asked to hold) and the implementation answers, or the
  implementation refuses an input with a number past 2**31 with ``limit`` or without saying
  which kind of refusal (``unknown``) where the reference answers: the readings allow an
  implementation its own bound, so it is no departure (whether an answer's numbers are right is
  judged only for ``idset.encode``, whose right answer is the ids it was given);
* ``new``: none of these: a class of input no case has yet.  A person reviews it and, when the
  reference is right, writes the case (docs/diff.md).

A disagreement on a union, a difference, an intersection or a match whose implementation and
reference disagree on whether one of its documents is valid at all (:data:`PARTS`) is classified
as that document's ``R.validate`` or ``constraint.validate`` finding.

The ``covered`` test is a heuristic that errs towards ``new``: a finding it cannot tie to a
known failure is shown, not hidden.  Features half the cases of the operation share (the keys
of every R, say) are left out of the comparison; a known failure covers a finding when one's
features contain the other's, and the case has every number range past 2**31, whitespace and
non-ASCII character the finding has.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from flux_conformance.runner.adapters.base import Adapter, Reply
from flux_conformance.runner.cases import Case
from flux_conformance.runner.comparators.text import idset_runs_past_limits
from flux_conformance.runner.tools.diff import Disagreement

__all__ = ["Finding", "PairResult", "classify", "features", "outcome", "render_table"]

#: Integer ranges that implementations' types split: below 2**31, to 2**32, 2**53, 2**64, past.
_BUCKETS = ((2**31, "int<2^31"), (2**32, "int<2^32"), (2**53, "int<2^53"), (2**64, "int<2^64"))
_DIGITS = re.compile(r"[0-9]+")


def _bucket(number: int) -> str:
    for bound, name in _BUCKETS:
        if abs(number) < bound:
            return name
    return "int>=2^64"


def _digits_bucket(digits: str) -> str:
    digits = digits.lstrip("0") or "0"
    return "int>=2^64" if len(digits) > 20 else _bucket(int(digits))


def features(value: Any) -> frozenset[str]:
    """What an input is made of: keys, punctuation, kinds of character, integer ranges, types."""
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.add("{}" if not item else "dict")
            for key, child in item.items():
                found.add(f"key:{key}")
                stack.append(child)
        elif isinstance(item, list):
            found.add("[]" if not item else "list")
            stack.extend(item)
        elif isinstance(item, bool) or item is None:
            found.add(repr(item))
        elif isinstance(item, int):
            found.add(_bucket(item))
            found.add("negative" if item < 0 else "integer")
        elif isinstance(item, float):
            found.add("float")
        elif isinstance(item, str):
            found.add('""' if not item else "string")
            found.update(f"char:{c}" for c in item if not c.isalnum() or not c.isascii())
            found.update(_digits_bucket(m.group()) for m in _DIGITS.finditer(item))
            if any(c.isspace() for c in item):
                found.add("whitespace")
    return frozenset(found)


def _common_features(cases: Sequence[Case]) -> frozenset[str]:
    """The features at least half of the operation's cases have (the keys of every R...)."""
    counts: dict[str, int] = {}
    for case in cases:
        for feature in features(case.input):
            counts[feature] = counts.get(feature, 0) + 1
    return frozenset(f for f, n in counts.items() if 2 * n >= len(cases))


def _critical(found: frozenset[str]) -> frozenset[str]:
    """Features that make a class of their own: big numbers, whitespace, non-ASCII text."""
    return frozenset(
        f
        for f in found
        if (f.startswith("int") and f != "int<2^31")
        or f == "whitespace"
        or (f.startswith("char:") and not f[5:].isascii())
    )


def _alike(mine: frozenset[str], theirs: frozenset[str]) -> bool:
    """Whether a known failure's features cover a finding's (common features left out).

    One set holds the other (a minimal finding holds less than the case, or the case's whole
    input is inside the finding), and every critical feature of the finding is the case's too.
    """
    if not _critical(mine) <= theirs:
        return False
    return mine <= theirs or (bool(theirs) and theirs <= mine)


def outcome(reply: Reply) -> str:
    """``output``, ``error:<category>``, or the kind of a reply that is not an answer."""
    return f"error:{reply.value}" if reply.kind == "error" else reply.kind


def _artefact(found: Disagreement) -> bool:
    actual, expected = found.actual, found.expected
    return (
        actual.kind in ("errored", "bound")
        or expected.kind in ("errored", "bound")
        or actual.adapter_fault
        or (actual.kind == "error" and actual.value == "internal")
    )


@dataclass(frozen=True)
class Finding:
    """One disagreement, as the findings table and the report list it."""

    operation: str
    implementation: str
    edition: str
    input: Any
    actual: str
    expected: str
    reason: str
    kind: str  # "new", "covered", "limit" or "artefact"
    covered_by: str = ""


@dataclass
class PairResult:
    """One implementation against the reference on one operation, in one edition."""

    operation: str
    implementation: str
    edition: str
    inputs: int = 0
    seconds: float = 0.0
    over_bounds: dict[str, int] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)

    def count(self, kind: str) -> int:
        """How many findings are of ``kind``."""
        return sum(1 for f in self.findings if f.kind == kind)

    def to_json(self) -> dict[str, Any]:
        """The pair as the findings file keeps it."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PairResult:
        """The inverse of :meth:`to_json`."""
        findings = [Finding(**f) for f in data.get("findings", [])]
        return cls(**{**data, "findings": findings})


#: Operations whose input holds documents of another operation: a disagreement on whether one
#: of them is valid at all is that operation's finding (an R side of a union is an R.validate
#: matter), classified as such.
PARTS: dict[str, tuple[tuple[str, str], ...]] = {
    "R.union": (("a", "R.validate"), ("b", "R.validate")),
    "R.diff": (("a", "R.validate"), ("b", "R.validate")),
    "R.intersect": (("a", "R.validate"), ("b", "R.validate")),
    "constraint.match": (("constraint", "constraint.validate"), ("R", "R.validate")),
}


class _Classifier:
    """The suite's known failures of one implementation, as pairs of outcomes and features."""

    def __init__(
        self,
        *,
        edition: str,
        known_failures: Callable[[str], Iterable[Case]],
        cases: Sequence[Case],
        impl: Adapter,
        reference: Adapter,
    ) -> None:
        self.edition, self.known_failures, self.cases = edition, known_failures, cases
        self.impl, self.reference = impl, reference
        self.inputs = {json.dumps(c.input, sort_keys=True) for c in cases}
        self._shown: dict[str, tuple[frozenset[str], list[tuple[str, str, frozenset[str], str]]]]
        self._shown = {}

    def answers(self, operation: str, value: Any) -> tuple[str, str]:
        """Both outcomes of ``operation`` on ``value``."""
        actual = self.impl.run(operation, value, edition=self.edition)
        expected = self.reference.run(operation, value, edition=self.edition)
        return outcome(actual), outcome(expected)

    def _wrong_ids(self, operation: str, value: Any) -> bool:
        """Whether an encoder's answer past the reference's limit names other ids than given.

        Past its limit the reference cannot say what a decoder's answer should be, but an
        encoder's is known: the ids it was given (libslurm writes 2**64 as 2**64 - 1).
        """
        if operation != "idset.encode" or not isinstance(value, list):
            return False
        if not all(type(i) is int and i >= 0 for i in value):
            return False
        answer = self.impl.run(operation, value, edition=self.edition)
        if answer.kind != "output" or not isinstance(answer.value, str):
            return False
        want = [[i, i] for i in sorted(set(value))]
        merged: list[list[int]] = []
        for low, high in want:
            if merged and merged[-1][1] + 1 == low:
                merged[-1][1] = high
            else:
                merged.append([low, high])
        return idset_runs_past_limits(answer.value) != merged

    def shown(self, operation: str) -> tuple[frozenset[str], list[Any]]:
        """The operation's common features, and each known failure's outcomes and features."""
        if operation not in self._shown:
            baseline = _common_features([c for c in self.cases if c.operation == operation])
            shown = [
                (*self.answers(operation, case.input), features(case.input) - baseline, case.id)
                for case in self.known_failures(operation)
            ]
            self._shown[operation] = (baseline, shown)
        return self._shown[operation]

    def kind(self, operation: str, value: Any, pair: tuple[str, str]) -> tuple[str, str]:
        """``(kind, covered_by)`` of a disagreement that is the implementation's answer."""
        if json.dumps(value, sort_keys=True) in self.inputs:
            return "covered", "a case with this input"
        critical = _critical(features(value))
        if pair == ("output", "error:limit") and self._wrong_ids(operation, value):
            return "new", ""
        if pair == ("output", "error:limit") or (
            pair[1] == "output" and pair[0] in ("error:limit", "error:unknown") and critical
        ):
            return "limit", ""
        for key, part_operation in PARTS.get(operation, ()):
            part = value.get(key) if isinstance(value, dict) else None
            part_pair = self.answers(part_operation, part)
            if part_pair[0].split(":")[0] != part_pair[1].split(":")[0] or (
                part_pair[0] != part_pair[1] and "error:unknown" not in part_pair
            ):
                kind, covered_by = self.kind(part_operation, part, part_pair)
                return kind, f"{part_operation} of {key}" + (
                    f": {covered_by}" if covered_by else ""
                )
        baseline, shown = self.shown(operation)
        mine = features(value) - baseline
        for actual, expected, theirs, case_id in shown:
            if (actual, expected) == pair and _alike(mine, theirs):
                return "covered", case_id
        failing = {case_id for *_, case_id in shown}
        for case in self.cases:
            if (
                case.operation == operation
                and case.level == "clarification"
                and case.id not in failing
                and case.edition in (None, self.edition)
                and _permits(case, pair)
                and _alike(mine, features(case.input) - baseline)
            ):
                return "covered", case.id
        return "new", ""


def _permits(case: Case, pair: tuple[str, str]) -> bool:
    """Whether a clarification case lets both sides' outcomes stand (two outputs if both are)."""
    permitted = [e.kind if e.kind == "output" else f"error:{e.value}" for e in case.expected]
    if pair == ("output", "output"):
        return permitted.count("output") >= 2
    return all(side in permitted for side in pair)


def classify(
    found: Sequence[Disagreement],
    *,
    implementation: str,
    edition: str,
    known_failures: Callable[[str], Iterable[Case]],
    cases: Sequence[Case],
    impl: Adapter,
    reference: Adapter,
) -> list[Finding]:
    """Each disagreement as ``new``, ``covered``, ``limit`` or ``artefact`` (module docstring).

    ``known_failures(operation)`` are the cases of an operation the implementation's
    expectations file lists as failing in ``edition``; both adapters answer each of them once,
    here, to learn the pair of outcomes it shows.  ``cases`` are all the suite's cases (what
    half of an operation's cases share is left out of the comparison of features).
    """
    classifier = _Classifier(
        edition=edition,
        known_failures=known_failures,
        cases=cases,
        impl=impl,
        reference=reference,
    )
    findings = []
    for item in found:
        pair = (outcome(item.actual), outcome(item.expected))
        kind, covered_by = "artefact", ""
        if not _artefact(item):
            kind, covered_by = classifier.kind(item.operation, item.input, pair)
        findings.append(
            Finding(
                item.operation,
                implementation,
                edition,
                item.input,
                pair[0],
                pair[1],
                item.reason,
                kind,
                covered_by,
            )
        )
    return findings


def render_table(pairs: Sequence[PairResult]) -> str:
    """The findings table: operation x implementation (x edition), one row a pair."""
    lines = [
        "| operation | implementation | edition | inputs | seconds | disagreements "
        "| covered | past the reference's limits | artefacts | new | over a bound |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for pair in sorted(pairs, key=lambda p: (p.operation, p.implementation, p.edition)):
        bounds = ", ".join(f"{n} {what}" for what, n in sorted(pair.over_bounds.items()))
        lines.append(
            f"| `{pair.operation}` | {pair.implementation} | {pair.edition} | {pair.inputs} "
            f"| {pair.seconds:.0f} | {len(pair.findings)} | {pair.count('covered')} "
            f"| {pair.count('limit')} | {pair.count('artefact')} | {pair.count('new')} "
            f"| {bounds or '-'} |"
        )
    total = sum(len(p.findings) for p in pairs)
    lines.append(
        f"| all | {len({p.implementation for p in pairs})} implementations | | "
        f"{sum(p.inputs for p in pairs)} | {sum(p.seconds for p in pairs):.0f} | {total} "
        f"| {sum(p.count('covered') for p in pairs)} | {sum(p.count('limit') for p in pairs)} "
        f"| {sum(p.count('artefact') for p in pairs)} | {sum(p.count('new') for p in pairs)} | |"
    )
    return "\n".join(lines)
