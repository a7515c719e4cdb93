"""A badge for a run: the JSON a shields.io ``endpoint`` badge reads.

``{"schemaVersion": 1, "label": "flux-conformance", "message": "107/107 must, 2/21 ops",
"color": "blue"}`` (an implementation of two operations; the numbers are an example).  The
message says how many of the selected ``must`` cases passed (when no ``must`` case ran, every
case counts instead), then how many of the suite's operations were run:

* a case counts when it was answered (not skipped); xfailed, failed, errored and *unchecked*
  cases (refusals whose category the implementation did not say) count as not passed, and the
  unchecked ones are named, e.g. ``1,400/1,417 must (17 unchecked), 21/21 ops``;
* the colour: green when every counted case passed and at least half of the suite's operations
  were run; **blue** when every counted case passed but fewer than half of the operations were
  run (most of the suite is unsupported or was not selected: the badge must not read as a full
  pass); yellow from 90 % passed; red below; lightgrey when nothing ran or the run was
  interrupted.

Written when the run finishes, so a badge always matches its report.
"""

from __future__ import annotations

import json

from flux_conformance.runner.engine import CaseResult, Outcome, Scope, Summary
from flux_conformance.runner.report import FileReporter

__all__ = ["BadgeReporter", "badge"]


def badge(
    results: list[CaseResult], scope: Scope | None = None, *, label: str = "flux-conformance"
) -> dict[str, object]:
    """The endpoint JSON for ``results`` (every result of the run) and its ``scope``."""
    ran = [r for r in results if r.outcome is not Outcome.SKIPPED]
    must = [r for r in ran if r.case.level == "must"]
    counted, what = (must, " must") if must else (ran, "")
    passed = sum(r.outcome is Outcome.PASSED for r in counted)
    unchecked = sum(r.outcome is Outcome.UNCHECKED for r in counted)
    total = len(counted)
    if not total:
        color = "lightgrey"
    elif passed == total:
        color = "blue" if scope is not None and scope.partial else "brightgreen"
    elif passed >= 0.9 * total:
        color = "yellow"
    else:
        color = "red"
    message = f"{passed:,}/{total:,}{what}"
    if unchecked:
        message += f" ({unchecked:,} unchecked)"
    if scope is not None:
        message += f", {len(scope.run_operations)}/{scope.operations} ops"
    return {"schemaVersion": 1, "label": label, "message": message, "color": color}


class BadgeReporter(FileReporter):
    """Writes the badge JSON when the run finishes."""

    keep_passed = True

    def render(self, summary: Summary, *, interrupted: bool) -> str:
        """The file's text."""
        doc = badge(self._results, summary.scope())
        if interrupted:
            doc["message"] = f"{doc['message']} (interrupted)"
            doc["color"] = "lightgrey"
        return json.dumps(doc) + "\n"
