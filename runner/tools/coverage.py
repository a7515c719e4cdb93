"""Coverage of the suite: requirements cited by cases, input classes exercised by cases.

A requirement is covered when some case cites it.  An input class (declared under
``classes:`` in an operation's case file) is covered when it has a case of every kind it
declares: a valid one (an output expected) and an invalid one (an error expected).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection
from dataclasses import dataclass

from flux_conformance.runner.cases import InputClass, Requirement, Suite

__all__ = ["ClassCoverage", "class_coverage", "class_gaps", "coverage", "coverage_report"]


def coverage(
    suite: Suite,
    edition: str | None = None,
    *,
    specs: Collection[str] | None = None,
    operations: Collection[str] | None = None,
) -> dict[str, tuple[list[Requirement], list[Requirement]]]:
    """Per spec: (requirements some case cites, requirements none cites), in ``edition``.

    An edition's requirements are the statements its texts make; the cases that cover them are
    those that hold under it.  ``edition`` None: the suite's default edition.  ``specs`` keeps
    those specs' statements; ``operations`` counts only the citations of those operations'
    cases (the statements of their specs that those cases cover, and those they leave to other
    operations or to none).
    """
    name = suite.editions.resolve(edition)
    cited = {
        req
        for case in suite.cases
        if case.edition in (None, name) and (operations is None or case.operation in operations)
        for req in case.requirements
    }
    out: dict[str, tuple[list[Requirement], list[Requirement]]] = defaultdict(lambda: ([], []))
    for req in suite.requirements.values():
        if specs is not None and req.spec not in specs:
            continue
        if req.applies_in(name):
            out[req.spec][0 if req.id in cited else 1].append(req)
    return dict(sorted(out.items()))


@dataclass(frozen=True)
class ClassCoverage:
    """One input class and how many cases of each kind exercise it."""

    input_class: InputClass
    valid: int
    invalid: int

    @property
    def missing(self) -> tuple[str, ...]:
        """The kinds the class declares but no case gives it."""
        counts = {"valid": self.valid, "invalid": self.invalid}
        return tuple(kind for kind in self.input_class.kinds if not counts[kind])


def class_coverage(suite: Suite) -> dict[str, list[ClassCoverage]]:
    """Per operation of the registry (declared or not): its classes with their case counts."""
    counts: Counter[tuple[str, str, str]] = Counter()
    for case in suite.cases:
        for name in case.classes:
            counts[case.operation, name, case.kind] += 1
    return {
        op: [
            ClassCoverage(c, counts[op, c.id, "valid"], counts[op, c.id, "invalid"])
            for c in suite.classes.get(op, ())
        ]
        for op in suite.operations
    }


def class_gaps(suite: Suite) -> list[str]:
    """Every gap, one line each: an operation with cases but no classes, a class short of a kind."""
    gaps = []
    with_cases = {case.operation for case in suite.cases}
    for op, rows in class_coverage(suite).items():
        if not rows and op in with_cases:
            gaps.append(f"{op}: no input classes declared")
        gaps.extend(
            f"{op} {row.input_class.id}: no {kind} case" for row in rows for kind in row.missing
        )
    return gaps


def _class_lines(
    suite: Suite, *, details: bool, operations: Collection[str] | None = None
) -> list[str]:
    lines = ["", "input classes, per operation (valid / invalid cases):"]
    for op, rows in class_coverage(suite).items():
        if operations is not None and op not in operations:
            continue
        if not rows and not any(c.operation == op for c in suite.cases):
            continue
        short = sum(1 for row in rows if row.missing)
        lines.append(
            f"{op:24} {len(rows) - short:3}/{len(rows):<3} classes covered"
            + (f"; {short} short of a case" if short else "")
        )
        for row in rows:
            if row.missing or details:
                kinds = row.input_class.kinds
                only = f" (only {kinds[0]})" if len(kinds) == 1 else ""
                gap = "  NO " + " NOR ".join(k.upper() for k in row.missing) if row.missing else ""
                lines.append(
                    f"  {row.input_class.id:32} {row.valid:4} / {row.invalid:<4}{only}{gap}"
                )
    gaps = [
        gap
        for gap in class_gaps(suite)
        if operations is None or gap.split()[0].rstrip(":") in operations
    ]
    lines.append(f"{len(gaps)} class gap(s)" if gaps else "every input class has its cases")
    lines.extend(f"  {gap}" for gap in gaps if ": no input classes" in gap)
    return lines


def coverage_report(
    suite: Suite,
    *,
    missing: bool = True,
    edition: str | None = None,
    specs: Collection[str] | None = None,
    operations: Collection[str] | None = None,
    classes_of: Collection[str] | None = None,
) -> str:
    """A plain-text report for one edition (None: the default).

    One line per spec, then (``missing``) every uncovered statement.  Then the input classes
    of each operation, every class short of a case listed (with ``missing``, every class and
    its counts), and (with ``missing``) the number of the edition's cases citing each of its
    requirements.  ``specs`` and ``operations`` narrow it as :func:`coverage` does (and
    ``operations`` the input classes shown; ``classes_of`` shows the classes of those
    operations instead).
    """
    name = suite.editions.resolve(edition)
    lines = [f"edition {name}:"]
    if operations is not None:
        lines.append(f"citations of the cases of {', '.join(sorted(operations))} only")
    table = coverage(suite, name, specs=specs, operations=operations)
    for spec, (covered, uncovered) in table.items():
        total = len(covered) + len(uncovered)
        testable = total - sum(1 for r in uncovered if r.untestable)
        share = 100 * len(covered) / total
        lines.append(
            f"{spec:16} {len(covered):4}/{total:<4} statements covered ({share:5.1f}%); "
            f"{len(covered)}/{testable} of the testable ones"
        )
    if missing:
        for spec, (_, uncovered) in table.items():
            for req in uncovered:
                why = f"untestable: {req.untestable}" if req.untestable else "NO CASE"
                lines.append(f"  {spec} {req.id} [{req.keyword}, {req.section}] {why}")
    shown = classes_of if classes_of is not None else operations
    lines.extend(_class_lines(suite, details=missing, operations=shown))
    if missing:
        per_req = Counter(
            req for case in suite.cases if case.edition in (None, name) for req in case.requirements
        )
        lines.extend(["", "cases per requirement:"])
        lines.extend(
            f"  {req.id:48} {per_req[req.id]:5}"
            for req in suite.requirements.values()
            if req.applies_in(name) and (not req.untestable or per_req[req.id])
        )
    return "\n".join(lines) + "\n"
