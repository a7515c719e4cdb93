"""The judgement of ``rset_decoded`` (``R.union``, ``R.diff``, ``R.intersect``) and its reason.

An R conforms when it decodes, rank by rank, to the expected one; when it does not, the reason
names the first rank that differs, or the number of ranks when one list is a prefix of the
other.
"""

from __future__ import annotations

from typing import Any

import pytest

from flux_conformance.runner.comparators import COMPARATORS
from flux_conformance.runner.oracle import reference_oracle

oracle = reference_oracle()
decoded = COMPARATORS["rset_decoded"]


def r_doc(ranks: str, cores: str, nodelist: str) -> dict[str, Any]:
    return {
        "version": 1,
        "execution": {
            "R_lite": [{"rank": ranks, "children": {"core": cores}}],
            "nodelist": [nodelist],
        },
    }


WANT = r_doc("0-3", "0-3", "n[0-3]")


@pytest.mark.parametrize(
    ("actual", "reason"),
    [
        (r_doc("0-2", "0-3", "n[0-2]"), "expected 4 ranks, got 3"),
        (r_doc("0-4", "0-3", "n[0-4]"), "expected 4 ranks, got 5"),
        (r_doc("0-3", "0-3", "n[0-1],m2,n3"), "expected {'rank': 2, 'hostname': 'n2'"),
        (r_doc("0-3", "0-2", "n[0-3]"), "expected {'rank': 0, 'hostname': 'n0', 'cores': '0-3'"),
    ],
)
def test_the_reason_names_the_first_rank_that_differs(actual: Any, reason: str) -> None:
    got = decoded(WANT, actual, oracle)
    assert got is not None
    assert got.startswith(f"output decodes to a different resource set: {reason}"), got


def test_another_encoding_of_the_same_ranks_conforms() -> None:
    same = {
        "version": 1,
        "execution": {
            "R_lite": [
                {"rank": "0-1", "children": {"core": "0-3"}},
                {"rank": "2-3", "children": {"core": "0-1,2-3"}},
            ],
            "nodelist": ["n0", "n[1-3]"],
        },
    }
    assert decoded(WANT, same, oracle) is None
