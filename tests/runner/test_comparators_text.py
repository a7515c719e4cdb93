"""The judgement of the encoders' comparators, ``idset_string`` and ``hostlist_string``.

Each test gives the expected string of a case and an implementation's answer, and says whether
the answer conforms: another spelling of the same ids or hosts does, another set does not.
Ids past what the reference holds (2**64 and above, or more ids than it expands) are judged by
the value the text names, as strictly as the reference reads the ids it holds.
"""

from __future__ import annotations

import itertools

import pytest

from flux_conformance.runner.comparators import COMPARATORS
from flux_conformance.runner.comparators.text import decodes_alike, idset_runs_past_limits
from flux_conformance.runner.oracle import reference_oracle

oracle = reference_oracle()
idset = COMPARATORS["idset_string"]
hostlist = COMPARATORS["hostlist_string"]

#: The first id the reference refuses with ``limit``: RFC 22 bounds no id, the reference does.
B = 2**64


def _spellings(ids: list[int]) -> list[str]:
    """Several valid RFC 22 spellings of the sorted, distinct ``ids``."""
    # Ids of one run keep the same distance from their place in the list.
    runs = [
        [group[0][1], group[-1][1]]
        for group in (list(g) for _, g in itertools.groupby(enumerate(ids), lambda p: p[1] - p[0]))
    ]
    canonical = ",".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in runs)
    one_by_one = ",".join(map(str, ids))
    # Each run of three or more split after its first id: "1-3" as "1,2-3".
    split = ",".join(
        str(lo) if lo == hi else f"{lo},{lo + 1}" if hi == lo + 1 else f"{lo},{lo + 1}-{hi}"
        for lo, hi in runs
    )
    return [canonical, f"[{canonical}]", one_by_one, split]


@pytest.mark.parametrize("base", [0, B], ids=["held", "past-limits"])
def test_every_spelling_of_a_set_conforms_and_no_other_set_does(base: int) -> None:
    # Every subset of five consecutive ids, from 0 (the reference decodes them) or from 2**64
    # (read past its limits): a wrong merge of runs makes two of them alike.
    subsets = [
        [base + offset for offset in chosen]
        for size in range(6)
        for chosen in itertools.combinations(range(5), size)
    ]
    for want in subsets:
        expected = _spellings(want)[0]
        for other in subsets:
            for actual in _spellings(other):
                reason = idset(expected, actual, oracle)
                assert (reason is None) is (want == other), (expected, actual, reason)


@pytest.mark.parametrize(
    ("expected", "actual", "conforms"),
    [
        (f"{B}", f"[{B}]", True),
        (f"[{B}]", f"{B}", True),
        (f"{B}-{B + 5}", f"{B}-{B + 2},{B + 3}-{B + 5}", True),
        (f"{B - 1}-{B}", f"{B - 1},{B}", True),
        (f"0,{B}", f"[0,{B}]", True),
        # More ids than the reference expands (4,000,000): read as runs, never expanded.
        ("0-18446744073709551615", "[0-18446744073709551615]", True),
        ("0-4000000", "0-3999999,4000000", True),
        ("[]", "", True),
        (f"{B}", f"{B + 1}", False),
        (f"{B}-{B + 2}", f"{B},{B + 2}", False),
        (f"{B},{B + 2}", f"{B}-{B + 2}", False),
        (f"{B}-{B + 5}", f"{B}-{B + 2},{B + 4}-{B + 5}", False),
        ("0-4000000", "0-4000001", False),
        ("0-4000001", "1-4000001", False),
        (f"{B}", "1844674407370955161", False),  # 2**64 with its last digit lost
    ],
)
def test_ids_past_the_references_limits_are_judged_by_value(
    expected: str, actual: str, conforms: bool
) -> None:
    reason = idset(expected, actual, oracle)
    if conforms:
        assert reason is None
    else:
        assert reason is not None
        assert "decodes to a different idset" in reason


@pytest.mark.parametrize(
    "actual",
    [
        f"{B}-{B}",  # a degenerate range, refused below the limit too ("3-3")
        f"{B + 1}-{B}",  # reversed
        f"{B},{B}",  # an id twice
        f"{B + 1},{B}",  # descending
        f"{B},{B + 5},{B + 3}",  # descending after the first run
        f"{B},{B + 5}-{B + 7},{B + 6}",
        f"{B}-{B + 2},{B + 1}",  # overlapping
        f"0{B}",  # a leading zero
        f"[{B}",  # an unclosed bracket
        f"{B}]",
        f"[[{B}]]",
        f"{B},,{B + 1}",  # an empty element
        f"{B},",
        f"{B} ",
        f"-{B}",
        "1" * 4301,  # an id longer than any integer the runner reads
    ],
)
def test_malformed_ids_past_the_limits_do_not_conform(actual: str) -> None:
    reason = idset(f"{B}", actual, oracle)
    assert reason is not None
    assert "is not a valid idset" in reason
    # The reader of ids past the limits refuses it too, whatever the reference checks first
    # (a text over its length limit reaches the reader with nothing else checked).
    assert idset_runs_past_limits(actual) is None


def test_the_longest_ids_the_runner_reads_are_judged_by_value() -> None:
    low = int("1" * 4300)
    longest = f"{low}-{low + 1}"  # two ids of 4300 digits: the longest element read
    assert idset(longest, f"{low},{low + 1}", oracle) is None
    assert idset(longest, f"[{longest}]", oracle) is None
    assert idset(longest, f"{low}", oracle) is not None


@pytest.mark.parametrize(
    ("expected", "actual"),
    [("1-3", "1-3,"), ("1-3", "3-1"), ("1-3", "1,1-3"), ("5", "5-5"), ("1-3", "")],
)
def test_a_text_the_reference_refuses_does_not_conform(expected: str, actual: str) -> None:
    reason = idset(expected, actual, oracle)
    assert reason is not None


@pytest.mark.parametrize("actual", [5, [1, 2, 3], None, {"ids": "1-3"}])
def test_an_encoders_answer_must_be_a_string(actual: object) -> None:
    for compare, expected in ((idset, "1-3"), (hostlist, "node[1-3]")):
        reason = compare(expected, actual, oracle)
        assert reason is not None
        assert f"is not a string but {type(actual).__name__}" in reason


@pytest.mark.parametrize(
    ("expected", "actual", "alike"),
    [
        ("node[1-3]", "node1,node2,node3", True),
        ("node[1-3]", "node[1,2-3]", True),
        ("node[1-3],login1", "node[1-3],login1", True),
        ("node[1-3]", "node[1-2]", False),
        ("node[1-3]", "node[3,1-2]", False),  # the order is part of the list
        ("node[1,1]", "node1", False),  # and so are duplicates
        ("node[1,1]", "node1,node1", True),
        ("node[1-3]", "node[1-3", False),  # refused
        ("node[1-3]", "node[0-99999999999]", False),  # refused for its size
    ],
)
def test_a_hostlist_conforms_when_it_decodes_to_the_same_hosts(
    expected: str, actual: str, alike: bool
) -> None:
    reason = hostlist(expected, actual, oracle)
    assert (reason is None) is alike, reason


def test_a_comparator_made_for_a_decoder_reads_past_the_limits_only_for_idsets() -> None:
    # Made here, not taken from the registry (built at import): an idset comparator reads
    # 2**64 by its value; a hostlist one compares host names, which no idset reader may touch.
    made_idset = decodes_alike("idset.decode", "idset")
    assert made_idset(f"0,{B}", f"[0,{B}]", oracle) is None
    assert made_idset(f"0,{B}", f"0,{B + 1}", oracle) is not None
    made_hostlist = decodes_alike("hostlist.decode", "hostlist")
    assert made_hostlist("node[1-3]", "node1,node2,node3", oracle) is None
    assert made_hostlist("node[1-3]", "node[1-2]", oracle) is not None
