"""Requirement coverage: which normative statements of each spec have a case citing them."""

from __future__ import annotations

from collections import defaultdict

from flux_conformance.runner.cases import Requirement, Suite

__all__ = ["coverage", "coverage_report"]


def coverage(
    suite: Suite, edition: str | None = None
) -> dict[str, tuple[list[Requirement], list[Requirement]]]:
    """Per spec: (requirements some case cites, requirements none cites), in ``edition``.

    An edition's requirements are the statements its texts make; the cases that cover them are
    those that hold under it.  ``edition`` None: the suite's default edition.
    """
    name = suite.editions.resolve(edition)
    cited = {
        req for case in suite.cases if case.edition in (None, name) for req in case.requirements
    }
    out: dict[str, tuple[list[Requirement], list[Requirement]]] = defaultdict(lambda: ([], []))
    for req in suite.requirements.values():
        if req.applies_in(name):
            out[req.spec][0 if req.id in cited else 1].append(req)
    return dict(sorted(out.items()))


def coverage_report(suite: Suite, *, missing: bool = True, edition: str | None = None) -> str:
    """A plain-text report for one edition (None: the default).

    One line per spec, then (``missing``) every uncovered statement.
    """
    name = suite.editions.resolve(edition)
    lines = [f"edition {name}:"]
    table = coverage(suite, name)
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
    return "\n".join(lines) + "\n"
