"""Tests for reference/allocate.py (``sched.allocate``): the rules, the errors, the fast paths."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flux_conformance.reference import allocate
from flux_conformance.reference.errors import InvalidError
from flux_conformance.reference.idset import IdSet
from flux_conformance.reference.operations import EDITIONS, run
from flux_conformance.reference.ranges import Count, Range, parse_count
from flux_conformance.reference.rset import load

OLDER, NEWER = EDITIONS[0], EDITIONS[-1]

POOL = {
    "version": 1,
    "execution": {
        "R_lite": [{"rank": "0-3", "children": {"core": "0-3", "gpu": "0-1"}}],
        "nodelist": ["n[0-3]"],
        "properties": {"ssd": "1,3", "+q": "0-3"},
    },
}


def jobspec(resources: list[Any], **system: Any) -> dict[str, Any]:
    return {
        "version": 1,
        "resources": resources,
        "tasks": [{"command": ["x"], "slot": "s", "count": {"per_slot": 1}}],
        "attributes": {"system": system},
    }


def slot(count: Any, *inner: Any) -> dict[str, Any]:
    return {"type": "slot", "label": "s", "count": count, "with": list(inner)}


def core(count: Any) -> dict[str, Any]:
    return {"type": "core", "count": count}


def gpu(count: Any) -> dict[str, Any]:
    return {"type": "gpu", "count": count}


def node(count: Any, *inner: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "node", "count": count, **({"with": list(inner)} if inner else {}), **extra}


def alloc(resources: list[Any], edition: str = OLDER, **more: Any) -> dict[str, Any]:
    value = {"pool": POOL, "jobspec": jobspec(resources, **more.pop("system", {})), **more}
    result: dict[str, Any] = run("sched.allocate", value, edition=edition)
    return result


def per_rank(doc: dict[str, Any]) -> dict[int, tuple[str, str]]:
    return {r["rank"]: (r["cores"], r["gpus"]) for r in load(doc)[0].to_ranks()}


def test_fixed_counts_are_exact_and_first_fit() -> None:
    doc = alloc([node(2, slot(1, core(2), gpu(1)))])
    assert per_rank(doc) == {0: ("0-1", "0"), 1: ("0-1", "0")}
    assert doc["execution"]["nodelist"] == ["n[0-1]"]
    assert doc["execution"]["properties"] == {"+q": "0-1", "ssd": "1"}


def test_slots_below_node_level_pack_each_node_in_turn() -> None:
    assert per_rank(alloc([slot(3, core(3))])) == {0: ("0-2", ""), 1: ("0-2", ""), 2: ("0-2", "")}
    assert per_rank(alloc([slot(3, core(2))])) == {0: ("0-3", ""), 1: ("0-1", "")}


def test_ranged_counts_take_the_largest_acceptable() -> None:
    assert len(per_rank(alloc([node({"min": 1}, slot(1, core(1)))]))) == 4
    assert len(per_rank(alloc([node("1-3", slot(1, core(1)))]))) == 3
    assert len(per_rank(alloc([node("1-4:2", slot(1, core(1)))]))) == 3
    assert per_rank(alloc([slot(1, core({"min": 1}))])) == {0: ("0-3", "")}
    assert per_rank(alloc([node(1, slot("1-3", core(1)))])) == {0: ("0-2", "")}


def test_exclusive_nodes_are_whole_and_untouched() -> None:
    doc = alloc([node(1, slot(1, core(1)), exclusive=True)], allocated=[_held("0", "0")])
    assert per_rank(doc) == {1: ("0-3", "0-1")}
    assert per_rank(alloc([slot(2, node(1, core(1)))])) == {0: ("0-3", "0-1"), 1: ("0-3", "0-1")}
    shared = alloc([slot(1, node(1, core(1), exclusive=False))])
    assert per_rank(shared) == {0: ("0", "")}


def _held(ranks: str, cores: str) -> dict[str, Any]:
    hosts = f"n{ranks}" if ranks.isdigit() else f"n[{ranks}]"
    return {
        "version": 1,
        "execution": {
            "R_lite": [{"rank": ranks, "children": {"core": cores}}],
            "nodelist": [hosts],
        },
    }


def test_what_is_allocated_is_left_alone() -> None:
    doc = alloc([slot(2, core(2))], allocated=[_held("0-3", "0-1")])
    assert per_rank(doc) == {0: ("2-3", ""), 1: ("2-3", "")}


def test_never_and_busy_differ() -> None:
    with pytest.raises(allocate.UnsatisfiableError):
        alloc([node(5, slot(1, core(1)))])
    with pytest.raises(allocate.UnsatisfiableError):
        alloc([node(5, slot(1, core(1)))], allocated=[_held("0", "0")])
    with pytest.raises(allocate.BusyError):
        alloc([node(1, slot(1, core(1)))], allocated=[_held("0-3", "0-3")])
    with pytest.raises(allocate.BusyError) as busy:
        alloc([node(1, slot(1, core(1)), exclusive=True)], allocated=[_held("0-3", "0")])
    assert busy.value.category == "busy"


def test_constraint_limits_the_ranks() -> None:
    doc = alloc(
        [node({"min": 1}, slot(1, core(1)))], system={"constraints": {"properties": ["ssd"]}}
    )
    assert sorted(per_rank(doc)) == [1, 3]


def test_times() -> None:
    doc = alloc([slot(1, core(1))], now=100, system={"duration": 60})
    assert (doc["execution"]["starttime"], doc["execution"]["expiration"]) == (100, 160)
    doc = alloc([slot(1, core(1))], system={"duration": 0})
    assert "expiration" not in doc["execution"]
    assert "starttime" not in doc["execution"]


def test_newer_texts_write_nslots_and_drop_instance_local_properties() -> None:
    doc = alloc([node(2, slot(2, core(1)))], edition=NEWER)
    assert doc["execution"]["nslots"] == 4
    assert doc["execution"]["properties"] == {"ssd": "1"}
    assert "nslots" not in alloc([node(2, slot(2, core(1)))], edition=OLDER)["execution"]
    assert alloc([slot(2, node(1, core(1)))], edition=NEWER)["execution"]["nslots"] == 2


def test_requests_one_after_another() -> None:
    two = [slot(1, core(4)), {"type": "slot", "label": "t", "count": 1, "with": [core(4)]}]
    spec = jobspec(two)
    spec["tasks"].append({"command": ["y"], "slot": "t", "count": {"per_slot": 1}})
    doc = run("sched.allocate", {"pool": POOL, "jobspec": spec}, edition=NEWER)
    assert per_rank(doc) == {0: ("0-3", ""), 1: ("0-3", "")}
    assert doc["execution"]["nslots"] == 2


@pytest.mark.parametrize(
    ("resources", "reason"),
    [
        ([node(1, {"type": "socket", "count": 1, "with": [slot(1, core(1))]})], "'socket'"),
        ([node(1, node(1, slot(1, core(1))))], "no node inside a node"),
        ([slot(1, {"type": "core", "count": 1, "with": [gpu(1)]})], "nothing inside a core"),
        ([slot(1, core(1), core(1))], "two core vertices"),
    ],
)
def test_what_an_r_cannot_hold_is_unsatisfiable(resources: list[Any], reason: str) -> None:
    with pytest.raises(allocate.UnsatisfiableError, match=reason):
        alloc(resources)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ([], "must be an object"),
        ({"pool": POOL}, "needs jobspec"),
        ({"pool": POOL, "jobspec": {}, "later": 1}, "unknown key 'later'"),
        ({"pool": POOL, "jobspec": jobspec([slot(1, core(1))]), "allocated": {}}, "array"),
        ({"pool": POOL, "jobspec": jobspec([slot(1, core(1))]), "now": -1}, "now must be"),
        ({"pool": POOL, "jobspec": jobspec([slot(1, core(1))]), "now": True}, "now must be"),
        ({"pool": POOL, "jobspec": jobspec([slot(1, core(1))]), "now": float("inf")}, "now"),
        ({"pool": POOL, "jobspec": jobspec([slot(0, core(1))])}, r"jobspec\.resources\[0\]"),
        ({"pool": {"version": 2}, "jobspec": jobspec([slot(1, core(1))])}, "pool"),
        (
            {"pool": POOL, "jobspec": jobspec([slot(1, core(1))]), "allocated": [{}]},
            r"allocated\[0\]",
        ),
    ],
)
def test_bad_input_is_invalid_with_its_path(value: Any, reason: str) -> None:
    with pytest.raises(InvalidError, match=reason):
        run("sched.allocate", value, edition=OLDER)


def test_a_pool_answers_again_and_again() -> None:
    pool = allocate.Pool.load(POOL, [_held("0", "0-3")])
    spec = jobspec([node({"min": 1}, slot(1, core(1)))])
    first = pool.allocate(spec, edition=OLDER)
    assert pool.allocate(spec, edition=OLDER) == first
    assert sorted(per_rank(first)) == [1, 2, 3]


# -- the fast paths against the plain rules they implement -----------------------------------


def _plain_largest(count: Count, available: int) -> int | None:
    """The rule as RFC 14 states it: the largest acceptable count not above what is free."""
    values = count.values(available)
    return values[-1] if values else None


@given(
    low=st.integers(1, 40),
    span=st.none() | st.integers(0, 60),
    operator=st.sampled_from("+*^"),
    operand=st.integers(1, 5),
    available=st.integers(0, 200),
)
def test_largest_is_the_plain_rule(
    low: int, span: int | None, operator: str, operand: int, available: int
) -> None:
    if operator != "+":
        operand = max(operand, 2)
        low = max(low, 2) if operator == "^" else low
    count = Count(range=Range(low, None if span is None else low + span, operator, operand))
    assert allocate._largest(count, available) == _plain_largest(count, available)


@given(st.lists(st.integers(1, 30), min_size=1, max_size=4, unique=True), st.integers(0, 40))
def test_largest_of_idset_counts(ids: list[int], available: int) -> None:
    count = parse_count(",".join(map(str, sorted(ids))))
    assert allocate._largest(count, available) == _plain_largest(count, available)


@given(st.sets(st.integers(0, 300)), st.integers(0, 310))
def test_lowest_ids_on_bits_and_intervals(ids: set[int], n: int) -> None:
    plain = sorted(ids)[:n]
    as_set = IdSet.from_ids(ids)
    bits = allocate._lowest(as_set.to_bits(), n)
    intervals = allocate._lowest(as_set, n)
    assert isinstance(bits, int)
    assert IdSet.from_bits(bits).to_list() == plain
    assert isinstance(intervals, IdSet)
    assert intervals.to_list() == plain


def test_a_bare_node_is_taken_whole() -> None:
    doc = alloc([{"type": "node", "count": 1}, slot(1, core(1))], edition=NEWER)
    assert per_rank(doc) == {0: ("0-3", "0-1"), 1: ("0", "")}
    assert doc["execution"]["nslots"] == 1


@given(
    st.lists(st.tuples(st.integers(0, 40), st.integers(0, 15)), max_size=12),
    st.sets(st.integers(0, 45)),
    st.sets(st.integers(0, 45)),
)
def test_the_walk_is_the_plain_rank_loop(
    entries: list[tuple[int, int]], eligible: set[int], whole: set[int]
) -> None:
    """The walk (runs against eligible intervals, or runs alone) against a loop over ranks."""
    per_rank = {rank: cores for rank, cores in entries if cores}
    doc = {
        "version": 1,
        "execution": {
            "R_lite": [
                {"rank": str(r), "children": {"core": f"0-{c - 1}" if c > 1 else "0"}}
                for r, c in sorted(per_rank.items())
            ],
            "nodelist": [",".join(f"n{r}" for r in sorted(per_rank))] if per_rank else [],
        },
    }
    free = load(doc)[0]
    for allowed in (IdSet.from_ids(eligible), free.ranks):
        walked = [
            (n.rank, n.ncores, n.whole)
            for n in allocate._Walk(free, allowed, IdSet.from_ids(whole))
        ]
        plain = [
            (rank, per_rank[rank], rank in whole) for rank in sorted(per_rank) if rank in allowed
        ]
        assert walked == plain
