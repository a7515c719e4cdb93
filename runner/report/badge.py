"""A badge for a run: the JSON a shields.io ``endpoint`` badge reads.

``{"schemaVersion": 1, "label": "flux-conformance", "message": "conforms: 107/107 must, 2/21
ops", "color": "blue"}`` (an implementation of two operations; the numbers are an example).
The message opens with the run's verdict in the words of :mod:`runner.verdicts`, says how many
of the selected ``must`` cases passed (when no ``must`` case ran, every case counts instead),
then how many of the suite's operations were run:

* a case counts when it was answered (not skipped); xfailed, failed, errored and *unchecked*
  cases (refusals whose category the implementation did not say) count as not passed, and the
  known departures (xfailed) and the unchecked ones are named, e.g. ``matches its baseline:
  1,300/1,417 must (100 known departures, 17 unchecked), 21/21 ops``;
* the colour: green when every counted case passed and at least half of the suite's operations
  were run; **blue** when every counted case passed but fewer than half of the operations were
  run (most of the suite is unsupported or was not selected: the badge must not read as a full
  pass); yellow from 90 % passed; red below; lightgrey when nothing ran or the run was
  interrupted.

Written when the run finishes, so a badge always matches its report.
"""

from __future__ import annotations

import json
from collections import Counter

from flux_conformance.runner.engine import CaseResult, Outcome, Scope, Summary
from flux_conformance.runner.report import FileReporter
from flux_conformance.runner.verdicts import judged

__all__ = ["BadgeReporter", "badge"]


def badge(
    results: list[CaseResult],
    scope: Scope | None = None,
    *,
    label: str = "flux-conformance",
    interrupted: bool = False,
) -> dict[str, object]:
    """The endpoint JSON for ``results`` (every result of the run) and its ``scope``."""
    ran = [r for r in results if r.outcome is not Outcome.SKIPPED]
    must = [r for r in ran if r.case.level == "must"]
    counted, what = (must, " must") if must else (ran, "")
    passed = sum(r.outcome is Outcome.PASSED for r in counted)
    unchecked = sum(r.outcome is Outcome.UNCHECKED for r in counted)
    total = len(counted)
    word = judged(Counter(r.outcome.value for r in results), interrupted=interrupted)
    if not total or interrupted:
        color = "lightgrey"
    elif passed == total:
        color = "blue" if scope is not None and scope.partial else "brightgreen"
    elif passed >= 0.9 * total:
        color = "yellow"
    else:
        color = "red"
    departures = sum(r.outcome is Outcome.XFAILED for r in counted)
    message = f"{word}: {passed:,}/{total:,}{what}"
    known = [f"{departures:,} known departure{'s' * (departures != 1)}"] if departures else []
    known += [f"{unchecked:,} unchecked"] if unchecked else []
    if known:
        message += f" ({', '.join(known)})"
    if scope is not None:
        message += f", {len(scope.run_operations)}/{scope.operations} ops"
    return {"schemaVersion": 1, "label": label, "message": message, "color": color}


class BadgeReporter(FileReporter):
    """Writes the badge JSON when the run finishes."""

    keep_passed = True

    def render(self, summary: Summary, *, interrupted: bool) -> str:
        """The file's text."""
        doc = badge(self._results, summary.scope(), interrupted=interrupted)
        return json.dumps(doc) + "\n"
