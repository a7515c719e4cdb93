"""A badge for a run: the JSON a shields.io ``endpoint`` badge reads.

``{"schemaVersion": 1, "label": "flux-conformance", "message": "1,417/1,417 must", "color":
"brightgreen"}``: how many of the selected ``must`` cases passed (xfails count as not passed),
coloured green when all did, yellow from 90 %, red below; when no ``must`` case ran, every
case counts instead.  Written when the run finishes, so a badge always matches its report.
"""

from __future__ import annotations

import json

from flux_conformance.runner.engine import CaseResult, Outcome, Summary
from flux_conformance.runner.report import FileReporter

__all__ = ["BadgeReporter", "badge"]


def badge(results: list[CaseResult], *, label: str = "flux-conformance") -> dict[str, object]:
    """The endpoint JSON for ``results`` (every result of the run)."""
    ran = [r for r in results if r.outcome is not Outcome.SKIPPED]
    must = [r for r in ran if r.case.level == "must"]
    counted, what = (must, " must") if must else (ran, "")
    passed = sum(r.outcome is Outcome.PASSED for r in counted)
    total = len(counted)
    if total and passed == total:
        color = "brightgreen"
    elif total and passed >= 0.9 * total:
        color = "yellow"
    else:
        color = "red"
    return {
        "schemaVersion": 1,
        "label": label,
        "message": f"{passed:,}/{total:,}{what}",
        "color": color,
    }


class BadgeReporter(FileReporter):
    """Writes the badge JSON when the run finishes."""

    keep_passed = True

    def write(self, summary: Summary, *, interrupted: bool) -> None:
        """Write the file."""
        del summary
        doc = badge(self._results)
        if interrupted:
            doc["message"] = f"{doc['message']} (interrupted)"
            doc["color"] = "lightgrey"
        self.path.write_text(json.dumps(doc) + "\n", encoding="utf-8")
