"""The clarification report for spec authors.

Every case at level ``clarification`` marks a point where a spec's text leaves room.  This
report renders them grouped by spec and open point (the requirement the case cites first):
the input, the outcomes the text permits, the reading the reference takes and why (the
case's description), and, given implementations, which reading each one takes.  The
findings recorded in the shipped adapters' expectations files follow, so that every known
deviation of a real implementation reaches the spec authors too.  Markdown or
reStructuredText, ready to paste into an RFC issue.
"""

from __future__ import annotations

import contextlib
import fnmatch
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from flux_conformance.runner.adapters.base import AdapterError, Reply
from flux_conformance.runner.cases import Case, Expected, Suite
from flux_conformance.runner.engine import Outcome, judge
from flux_conformance.runner.oracle import reference_oracle
from flux_conformance.runner.report import compact_json

__all__ = ["Reading", "clarify_report", "collect_readings", "reading_taken", "shipped_findings"]


@dataclass(frozen=True)
class Reading:
    """One clarification case and the reading each implementation takes."""

    case: Case
    taken: tuple[tuple[str, str], ...]  # (implementation label, what it did)


def _describe(expected: Expected) -> str:
    if expected.kind == "error":
        return f"error `{expected.value}`"
    return f"output `{compact_json(expected.value, 300)}`"


def reading_taken(case: Case, reply: Reply, suite: Suite) -> str:
    """Which permitted reading of a clarification case ``reply`` takes, in words.

    ``reading 2: error `syntax```, ``unsupported``, or ``none of the permitted readings: ...``.
    """
    op = suite.operations[case.operation]
    if reply.kind in ("errored", "unsupported"):
        return f"{reply.kind}" + (f" ({reply.message})" if reply.message else "")
    for n, expected in enumerate(case.expected, 1):
        single = Case(**{**case.__dict__, "expected": (expected,)})
        if judge(single, reply, op, reference_oracle(case.edition)).outcome is Outcome.PASSED:
            return f"reading {n}: {_describe(expected)}"
    return f"none of the permitted readings: `{compact_json(reply.to_json(), 300)}`"


def collect_readings(
    suite: Suite,
    impls: Sequence[str],
    make_adapter: Callable[[str], Any],
    *,
    operations: Collection[str] | None = None,
) -> list[Reading]:
    """Run the clarification cases against the reference and ``impls``.

    ``operations`` keeps the cases of those operations (default: all).
    """
    cases = [
        c
        for c in suite.cases
        if c.level == "clarification" and (operations is None or c.operation in operations)
    ]
    labels_and_adapters = []
    for spec in ["reference", *[i for i in impls if i != "reference"]]:
        adapter = make_adapter(spec)
        with contextlib.suppress(AdapterError):
            adapter.start()  # if it fails, its cases come back errored, which the report shows
        labels_and_adapters.append(adapter)
    readings = []
    try:
        for case in cases:
            taken = []
            for adapter in labels_and_adapters:
                if adapter.supports(case.operation):
                    reply = adapter.run(case.operation, case.input, edition=case.edition)
                else:
                    reply = Reply("unsupported")
                label = f"{adapter.name} {adapter.version}".strip()
                taken.append((label, reading_taken(case, reply, suite)))
            readings.append(Reading(case, tuple(taken)))
    finally:
        for adapter in labels_and_adapters:
            adapter.close()
    return readings


def shipped_findings() -> list[tuple[str, list[dict[str, Any]]]]:
    """(implementation, entries) from every shipped adapter expectations file."""
    from flux_conformance.runner.expectations import Expectations

    folder = resources.files("flux_conformance.runner").joinpath("adapters").joinpath("thirdparty")
    folder = folder.joinpath("expectations")
    out = []
    try:
        entries = sorted(folder.iterdir(), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return []
    for entry in entries:
        if not entry.name.endswith(".yaml"):
            continue
        exp = Expectations.load(Path(str(entry)))
        rows = [
            {"id": e.pattern, "status": e.status, "reason": e.reason, "issue": e.issue}
            for e in exp.entries
        ]
        out.append((entry.name.removesuffix(".yaml"), rows))
    return out


def _in_scope(pattern: str, suite: Suite, operations: Collection[str] | None) -> bool:
    """Whether a findings entry (a case id or glob) names a case of ``operations``."""
    if operations is None:
        return True
    return any(
        case.operation in operations and fnmatch.fnmatchcase(case.id, pattern)
        for case in suite.cases
    )


def clarify_report(
    suite: Suite,
    readings: Sequence[Reading],
    *,
    fmt: str = "markdown",
    command: str = "",
    operations: Collection[str] | None = None,
) -> str:
    """Render the report as ``markdown`` or ``rst``.

    ``operations`` keeps the shipped findings to the cases of those operations (default all).
    """
    rst = fmt == "rst"
    lines: list[str] = []

    def heading(text: str, level: int) -> None:
        if rst:
            lines.extend([text, "=-~^"[level - 1] * len(text), ""])
        else:
            lines.extend(["#" * level + " " + text, ""])

    def code(text: str) -> str:
        return f"``{text}``" if rst else f"`{text}`"

    heading("Open points in the specs: what the suite permits, what implementations do", 1)
    if command:
        lines += [f"Generated by {code(command)}.", ""]
    lines += [
        "Each point below is a case where the text allows more than one outcome. The suite "
        "accepts every outcome listed; the reference takes the reading marked, for the reason "
        "given. Implementations are shown with the reading they take.",
        "",
    ]
    by_spec: dict[str, dict[str, list[Reading]]] = {}
    for r in readings:
        spec = suite.operations[r.case.operation].spec
        point = r.case.requirements[0]
        by_spec.setdefault(spec, {}).setdefault(point, []).append(r)
    for spec, points in sorted(by_spec.items()):
        heading(spec, 2)
        for point, items in points.items():
            req = suite.requirements[point]
            heading(f"{req.section}: {req.text}", 3)
            for r in items:
                case = r.case
                shown = code(compact_json(case.input, 300))
                # An open point of one edition's text only says so (cases/editions.yaml).
                edition = f", edition {code(case.edition)} only" if case.edition else ""
                lines.append(f"- {code(case.id)} ({case.operation}{edition}), input {shown}")
                lines.append(f"  - why it is open, and the reading taken: {case.description}")
                for n, expected in enumerate(case.expected, 1):
                    text = _describe(expected).replace("`", "``") if rst else _describe(expected)
                    lines.append(f"  - permitted reading {n}: {text}")
                for label, what in r.taken:
                    lines.append(f"  - {label}: {what.replace('`', '``') if rst else what}")
            lines.append("")
    findings = shipped_findings()
    if findings:
        heading("Findings recorded for real implementations", 2)
        lines += [
            "Each entry is a case the implementation is known to fail, and what it does "
            "instead: a candidate clarification, or a bug to report.",
            "",
        ]
        by_id = suite.by_id()
        for impl, all_entries in findings:
            entries = [e for e in all_entries if _in_scope(e["id"], suite, operations)]
            if not entries:
                continue
            heading(impl, 3)
            for e in entries:
                issue = f" ({e['issue']})" if e["issue"] else ""
                lines.append(f"- {code(e['id'])} [{e['status']}]: {e['reason']}{issue}")
                cited = by_id.get(e["id"])
                rule = suite.rule(cited) if cited else ""
                if rule:
                    lines.append(f"  - the rule: {rule}")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"
