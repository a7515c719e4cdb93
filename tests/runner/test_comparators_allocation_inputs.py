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
