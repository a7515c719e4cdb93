"""What ``allocation_rules`` reads from an input and its oracle (allocation.inputs).

Which texts the oracle follows is told by its own allocation of the smallest request: nslots
is written exactly in the editions whose RFC 20 defines it.
"""

from __future__ import annotations

import pytest

from flux_conformance.runner.comparators.allocation import inputs
from flux_conformance.runner.oracle import reference_oracle


@pytest.mark.parametrize(("edition", "newer"), [("2025-07-31", False), ("2026-08-13", True)])
def test_the_oracles_edition_is_told_by_its_own_allocation(
    edition: str, newer: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inputs, "_NEWER", {})  # asked afresh, not remembered from a test before
    assert inputs.newer(reference_oracle(edition)) is newer


def test_a_now_that_is_no_number_is_no_clock() -> None:
    from flux_conformance.runner.comparators import COMPARATORS

    pool = {
        "version": 1,
        "execution": {"R_lite": [{"rank": "0", "children": {"core": "0"}}], "nodelist": ["n0"]},
    }
    slot = {"type": "slot", "count": 1, "label": "s", "with": [{"type": "core", "count": 1}]}
    value = {
        "pool": pool,
        "jobspec": {
            "version": 1,
            "resources": [slot],
            "tasks": [{"command": ["x"], "slot": "s", "count": {"per_slot": 1}}],
            "attributes": {},
        },
        "now": True,
    }
    answer = {"version": 1, "execution": {**pool["execution"], "starttime": 1}}
    reason = COMPARATORS["allocation_rules"]({}, answer, reference_oracle("2025-07-31"), value)
    assert reason is not None
    assert reason.startswith("times: starttime is 1; the clock lay in ["), reason
