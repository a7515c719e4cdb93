"""Every wrong implementation of the zoo is caught by the suite.

Each member (tests/zoo/members.py) runs in-process against the cases of the operation it
breaks, judged exactly as ``flux-conformance run`` judges; it is caught when at least one case
fails or errors, and it must be caught by at least two cases.  A member that survives means a
class of input without a case: write the case, and keep the member.  The run ends with "zoo: N of N wrong implementations caught".
"""

from __future__ import annotations

from collections import Counter
from functools import cache

import pytest

from flux_conformance.reference.operations import OPERATIONS
from flux_conformance.runner.adapters.inprocess import InProcessAdapter
from flux_conformance.runner.cases import Case, Suite, load_suite
from flux_conformance.runner.engine import Outcome, run_cases
from flux_conformance.runner.oracle import reference_oracle
from zoo.members import MEMBERS, Member, Ref, WrongImplementation

from . import RESULTS

#: The zoo holds at least this many members, and a member for every operation.
MINIMUM = 60

#: Each member must be caught by at least this many cases, so that no single case carries a
#: class of bug alone (editing one case must not let a bug through).
CATCHERS = 2


@cache
def _suite() -> Suite:
    return load_suite()


@cache
def _cases_by_operation() -> dict[str, list[Case]]:
    suite = _suite()
    grouped: dict[str, list[Case]] = {}
    for case in suite.cases:
        grouped.setdefault(case.operation, []).append(case)
    return grouped


def catching_cases(item: Member) -> list[str]:
    """The ids of the cases of ``item``'s operation that fail or error against it."""
    suite = _suite()
    adapter = InProcessAdapter(WrongImplementation(item))
    adapter.start()
    try:
        return [
            result.case.id
            for result in run_cases(
                _cases_by_operation()[item.operation],
                adapter,
                suite.operations,
                oracle=reference_oracle,
            )
            if result.outcome in (Outcome.FAILED, Outcome.ERRORED)
        ]
    finally:
        adapter.close()


def test_zoo_is_large_and_spans_every_operation() -> None:
    names = Counter(m.name for m in MEMBERS)
    assert not [n for n, k in names.items() if k > 1], "member names must be unique"
    assert len(MEMBERS) >= MINIMUM
    assert {m.operation for m in MEMBERS} == set(OPERATIONS)


@pytest.mark.parametrize("item", MEMBERS, ids=lambda m: m.name)
def test_member_is_caught(item: Member) -> None:
    if item.witness is not None:
        ref = Ref(item.operation, None)
        wrong = WrongImplementation(item).run(item.operation, item.witness)
        assert wrong != ref(item.witness), f"{item.name} answers its witness like the reference"
    caught = catching_cases(item)
    RESULTS[item.name] = caught
    assert caught, f"{item.name} ({item.description}) survives every {item.operation} case"
    assert len(caught) >= CATCHERS, f"{item.name} is caught by one case only: {caught}"
