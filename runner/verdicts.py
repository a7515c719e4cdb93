"""The words of a verdict: one place that says when a run *conforms*, and what it says otherwise.

Every report (terminal, JSON Lines, JUnit, Markdown, HTML, the badge, the GitHub action's
outputs) and ``compare``'s verdicts take their words from here, so that they never disagree.
The exit status is not decided here: a run exits 0 whenever nothing is new against its
baseline (nothing failed, errored or passed against its expectations file).  The words tell
apart the two runs that exit 0:

* **conforms** -- every case that ran passed: no known departure (xfailed), no refusal left
  unchecked, nothing failed or errored;
* **matches its baseline** -- nothing new, but cases depart from the specs as the
  expectations file records (xfailed); the verdict leads with how many;
* **passes what could be checked** -- nothing failed and nothing is a known departure, but
  refusals were given without a category (unchecked), so part of the run could not be judged;
* **does not conform** -- something failed, errored or passed against its expectations file;
* **nothing was run** -- no selected case was answered;
* **interrupted** -- the run was stopped before its end.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from flux_conformance.runner.engine import Outcome, Summary

__all__ = ["Verdict", "counts_text", "judged", "verdict_line"]


class Verdict(StrEnum):
    """The words a verdict opens with (the value is what every report prints)."""

    CONFORMS = "conforms"
    MATCHES_BASELINE = "matches its baseline"
    PARTLY_CHECKED = "passes what could be checked"
    DOES_NOT_CONFORM = "does not conform"
    NOTHING_RUN = "nothing was run"
    INTERRUPTED = "interrupted"

    @property
    def exit_ok(self) -> bool:
        """Whether a run with this verdict exits 0 (nothing new against its baseline)."""
        return self in (Verdict.CONFORMS, Verdict.MATCHES_BASELINE, Verdict.PARTLY_CHECKED)


def judged(counts: Mapping[str, int], *, interrupted: bool = False) -> Verdict:
    """The verdict on a run whose outcomes are counted in ``counts`` (outcome value -> count)."""
    if interrupted:
        return Verdict.INTERRUPTED
    if any(counts.get(o.value, 0) for o in Outcome if o.is_bad):
        return Verdict.DOES_NOT_CONFORM
    ran = sum(counts.get(o.value, 0) for o in Outcome if o is not Outcome.SKIPPED)
    if not ran:
        return Verdict.NOTHING_RUN
    if counts.get(Outcome.XFAILED.value, 0):
        return Verdict.MATCHES_BASELINE
    if counts.get(Outcome.UNCHECKED.value, 0):
        return Verdict.PARTLY_CHECKED
    return Verdict.CONFORMS


#: How each outcome is counted in a verdict, in the order a verdict lists them: what is new
#: against the baseline first, then what passed, then the known departures and the unchecked.
#: (``{s}`` is the plural's ``s``.)
_COUNTED = (
    (Outcome.FAILED, "failed"),
    (Outcome.ERRORED, "errored"),
    (Outcome.XPASSED, "passed against the expectations file (xpass)"),
    (Outcome.PASSED, "passed"),
    (Outcome.XFAILED, "known departure{s} (xfail)"),
    (Outcome.UNCHECKED, "refused without a category (unchecked)"),
)


def counts_text(counts: Mapping[str, int]) -> str:
    """``164 passed, 105 known departures (xfail)``: the counts a verdict leads with.

    Outcomes that did not occur are left out, except ``passed``; skipped cases are the
    scope's business (see :meth:`runner.engine.Scope.describe`).
    """
    parts = []
    for outcome, words in _COUNTED:
        n = counts.get(outcome.value, 0)
        if n or outcome is Outcome.PASSED:
            parts.append(f"{n:,} " + words.format(s="" if n == 1 else "s"))
    return ", ".join(parts)


def verdict_line(summary: Summary, *, interrupted: bool = False) -> str:
    """The verdict with its counts and its scope, as every report prints it.

    ``conforms on 2 of 21 operations (114 of 1,624 cases); 19 operations unsupported``, or,
    when anything departs, the words, the counts, then the scope: ``matches its baseline:
    164 passed, 105 known departures (xfail); on 4 of 22 operations (269 of 1,922 cases)``.
    """
    word = judged(summary.total, interrupted=interrupted)
    scope = summary.scope()
    if word in (Verdict.CONFORMS, Verdict.NOTHING_RUN):
        return f"{word} {scope.describe()}"
    return f"{word}: {counts_text(summary.total)}; {scope.describe(unchecked=False)}"
