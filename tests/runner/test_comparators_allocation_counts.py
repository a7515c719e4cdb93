"""Acceptable counts as the allocation checks read them (allocation.counts; RFC 14, count).

A count is read through the oracle; ``above`` gives the smallest acceptable value above a
number, exactly while it stays below 2**64 (past every count the oracle admits), and
``accepts`` whether a number is acceptable.  The checks ask these of counts of nodes, slots,
cores and GPUs, so each answer below is the arithmetic of RFC 14's operators.
"""

from __future__ import annotations

from typing import Any

import pytest

from flux_conformance.runner.comparators.allocation.counts import (
    above,
    accepts,
    read_count,
    smallest,
)
from flux_conformance.runner.oracle import reference_oracle

OLDER = reference_oracle("2025-07-31")
#: The 2026-08-13 texts allow '*' and '^' without a max.
NEWER = reference_oracle("2026-08-13")


def _read(count: Any, oracle: Any = NEWER) -> dict[str, Any]:
    found = read_count(count, oracle)
    assert found is not None, count
    return found


@pytest.mark.parametrize(
    ("count", "read"),
    [
        (3, {"values": [3]}),
        ("1-9:3", {"values": [1, 4, 7]}),
        ("1,5", {"values": [1, 5]}),
        ({"min": 2}, {"min": 2, "max": None, "operator": "+", "operand": 1}),
        (
            {"min": 1, "max": 10_000, "operator": "+", "operand": 1},
            {"min": 1, "max": 10_000, "operator": "+", "operand": 1},
        ),
        ({"min": 2, "max": 20, "operator": "*", "operand": 3}, {"values": [2, 6, 18]}),
    ],
)
def test_a_count_is_read_as_its_values_or_its_bounds(count: Any, read: dict[str, Any]) -> None:
    assert read_count(count, OLDER) == read


@pytest.mark.parametrize("count", [True, "x", {"min": 1, "operator": "*", "operand": 1}])
def test_a_count_the_oracle_refuses_is_not_read(count: Any) -> None:
    assert read_count(count, NEWER) is None


@pytest.mark.parametrize(
    ("count", "numbers"),
    [
        # value: (the next acceptable value above it, whether it is acceptable)
        ("2,5", {0: (2, False), 2: (5, True), 3: (5, False), 5: (None, True), 9: (None, False)}),
        ({"min": 3}, {0: (3, False), 2: (3, False), 3: (4, True), 1000: (1001, True)}),
        (
            {"min": 3, "max": 10_003, "operator": "+", "operand": 2},
            {
                1: (3, False),
                3: (5, True),
                4: (5, False),
                10_001: (10_003, True),
                10_002: (10_003, False),
                10_003: (None, True),
                10_004: (None, False),
            },
        ),
        (
            {"min": 3, "operator": "*", "operand": 2},
            {0: (3, False), 2: (3, False), 3: (6, True), 4: (6, False), 6: (12, True)},
        ),
        (
            {"min": 2, "operator": "^", "operand": 3},
            {1: (2, False), 2: (8, True), 3: (8, False), 8: (512, True), 511: (512, False)},
        ),
    ],
    ids=["values", "min-only", "plus-bounded", "times", "power"],
)
def test_the_next_acceptable_value_and_whether_one_is_acceptable(
    count: Any, numbers: dict[int, tuple[int | None, bool]]
) -> None:
    read = _read(count)
    for value, (nxt, ok) in numbers.items():
        assert above(read, value) == nxt, value
        assert accepts(read, value) is ok, value
    assert smallest(read) == above(read, 0)


@pytest.mark.parametrize(
    ("count", "value", "nxt"),
    [
        # The exact power, however few its base's bits.
        ({"min": 2, "operator": "^", "operand": 22}, 2, 2**22),
        ({"min": 2, "operator": "^", "operand": 33}, 2, 2**33),
        ({"min": 4, "operator": "^", "operand": 31}, 4, 2**62),
        ({"min": 3, "operator": "*", "operand": 2**62}, 3, 3 * 2**62),
        ({"min": 1, "operator": "*", "operand": 2**64 - 1}, 1, 2**64 - 1),
    ],
)
def test_a_next_value_below_2_to_the_64_is_exact(count: Any, value: int, nxt: int) -> None:
    read = _read(count)
    assert above(read, value) == nxt
    assert accepts(read, nxt)
    assert not accepts(read, nxt - 1)


@pytest.mark.parametrize(
    "count",
    [
        {"min": 2, "operator": "^", "operand": 2**64 - 1},  # never worked out
        {"min": 2**32, "operator": "^", "operand": 2},
        {"min": 3, "operator": "*", "operand": 2**63},
    ],
)
def test_a_next_value_past_every_count_is_past_every_pool(count: Any) -> None:
    read = _read(count)
    nxt = above(read, smallest(read))
    assert nxt is not None
    assert nxt >= 2**64
    assert not accepts(read, 2**62)
