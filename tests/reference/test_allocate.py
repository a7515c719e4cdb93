"""Tests for reference/allocate.py (``sched.allocate``): the rules, the errors, the fast paths."""

from __future__ import annotations

import itertools
import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flux_conformance.reference import _alloc_speed, allocate
from flux_conformance.reference.errors import InvalidError
from flux_conformance.reference.idset import IdSet
from flux_conformance.reference.operations import EDITIONS, run
from flux_conformance.reference.ranges import Count, Range, parse_count
from flux_conformance.reference.rset import Children, load

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
    doc = alloc([slot(1, core(1))], now=100, system={"duration": 0})
    assert "expiration" not in doc["execution"]
    assert doc["execution"]["starttime"] == 100
    doc = alloc([slot(1, core(1))], now=100.25, system={"duration": 0.5})
    assert (doc["execution"]["starttime"], doc["execution"]["expiration"]) == (100.25, 100.75)


def test_without_now_the_clock_is_read() -> None:
    """Readings, Allocation: no ``now`` means the scheduler's own clock, not 0 (1970)."""
    before = time.time()
    doc = alloc([slot(1, core(1))], system={"duration": 3600})
    after = time.time()
    start = doc["execution"]["starttime"]
    assert before <= start <= after
    assert doc["execution"]["expiration"] == start + 3600


def test_duration_zero_takes_the_pool_expiration() -> None:
    pool = {"version": 1, "execution": {**POOL["execution"], "expiration": 5000}}
    value = {"pool": pool, "jobspec": jobspec([slot(1, core(1))], duration=0), "now": 2000}
    assert run("sched.allocate", value, edition=NEWER)["execution"]["expiration"] == 5000
    value["jobspec"] = jobspec([slot(1, core(1))], duration=10000)
    assert run("sched.allocate", value, edition=NEWER)["execution"]["expiration"] == 12000
    value["now"] = 5000
    with pytest.raises(allocate.UnsatisfiableError, match="expired"):
        run("sched.allocate", value, edition=NEWER)


def test_an_allocation_that_has_ended_is_free_again() -> None:
    """Readings, Allocation: an allocated R whose expiration is at or before now has ended."""
    held = _held("0-3", "0-3")
    held["execution"]["expiration"] = 500
    spec = [node(4, slot(1, core(4)))]
    assert sorted(per_rank(alloc(spec, allocated=[held], now=500))) == [0, 1, 2, 3]
    assert sorted(per_rank(alloc(spec, allocated=[held], now=1000.5))) == [0, 1, 2, 3]
    with pytest.raises(allocate.BusyError):
        alloc(spec, allocated=[held], now=499.5)
    held["execution"]["expiration"] = 0  # 0: no expiration (never ends)
    with pytest.raises(allocate.BusyError):
        alloc(spec, allocated=[held], now=1000)


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
    first = pool.allocate(spec, now=100, edition=OLDER)
    assert pool.allocate(spec, now=100, edition=OLDER) == first
    assert sorted(per_rank(first)) == [1, 2, 3]


# -- several slots sharing one node or one pool (readings, Allocation: largest available) -----

ONE_NODE = {
    "version": 1,
    "execution": {"R_lite": [{"rank": "0", "children": {"core": "0-3"}}], "nodelist": ["n0"]},
}


def alloc_on(pool: dict[str, Any], resources: list[Any], **more: Any) -> dict[str, Any]:
    spec = jobspec(resources)
    for label in sorted({v.get("label", "s") for v in _vertices(resources)} - {"s"}):
        spec["tasks"].append({"command": ["y"], "slot": label, "count": {"per_slot": 1}})
    value = {"pool": pool, "jobspec": spec, **more}
    result: dict[str, Any] = run("sched.allocate", value, edition=NEWER)
    return result


def _vertices(resources: list[Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for vertex in resources:
        if vertex.get("type") == "slot":
            out.append(vertex)
        out.extend(_vertices(vertex.get("with", [])))
    return out


def test_two_min_only_slots_share_one_node() -> None:
    """Two slots of ``core: {min: 1}`` on one 4-core node: both met, all 4 cores taken.

    First fit gives the first slot all four cores and answers "never" for the second.
    """
    doc = alloc_on(ONE_NODE, [slot(2, core({"min": 1}))])
    assert per_rank(doc) == {0: ("0-3", "")}
    assert doc["execution"]["nslots"] == 2
    doc = alloc_on(ONE_NODE, [node(1, slot(2, core({"min": 1})))])
    assert per_rank(doc) == {0: ("0-3", "")}
    assert doc["execution"]["nslots"] == 2


def test_two_slot_kinds_with_min_only_counts_share_one_node() -> None:
    other = {"type": "slot", "label": "t", "count": 1, "with": [core({"min": 1})]}
    doc = alloc_on(ONE_NODE, [node(1, slot(1, core({"min": 1})), other)])
    assert per_rank(doc) == {0: ("0-3", "")}
    assert doc["execution"]["nslots"] == 2


def test_requests_one_after_another_leave_room_for_those_after() -> None:
    """Top-level requests: a min-only one before a fixed one leaves the later its room."""
    other = {"type": "slot", "label": "t", "count": 1, "with": [core(1)]}
    doc = alloc_on(ONE_NODE, [slot(1, core({"min": 1})), other])
    assert per_rank(doc) == {0: ("0-3", "")}
    assert doc["execution"]["nslots"] == 2
    two = {"type": "slot", "label": "t", "count": 2, "with": [core({"min": 1})]}
    doc = alloc_on(ONE_NODE, [slot({"min": 1}, core(1)), two])
    assert per_rank(doc) == {0: ("0-3", "")}
    assert doc["execution"]["nslots"] == 4
    with pytest.raises(allocate.UnsatisfiableError):
        alloc_on(ONE_NODE, [slot(2, core({"min": 2})), other])
    exclusive = node(1, {**other}, exclusive=True)
    pool = {"version": 1, "execution": {**POOL["execution"]}}
    doc = alloc_on(pool, [node({"min": 1}, slot(1, core(1))), exclusive])
    assert sorted(per_rank(doc)) == [0, 1, 2, 3]
    assert doc["execution"]["nslots"] == 4


def test_ranged_slots_share_one_node_up_to_their_max() -> None:
    doc = alloc_on(ONE_NODE, [slot(3, core({"min": 1, "max": 2}))])
    assert per_rank(doc) == {0: ("0-3", "")}  # 2 + 1 + 1: none could grow from what is free
    doc = alloc_on(ONE_NODE, [slot(2, core({"min": 1, "max": 1}))])
    assert per_rank(doc) == {0: ("0-1", "")}


def test_slots_of_min_only_nodes_share_the_pool() -> None:
    doc = alloc([slot(2, node({"min": 1}, core(1)))], edition=NEWER)
    assert sorted(per_rank(doc)) == [0, 1, 2, 3]
    assert doc["execution"]["nslots"] == 2


def test_a_min_only_count_in_a_slot_goes_where_most_is_free() -> None:
    """RFC 14 count: the largest count available; the first rank meeting the minimum is not."""
    taken = [_held("0-1", "0-2"), _held("2", "0")]  # free: 1, 1, 3 and 4 cores
    doc = alloc([slot(1, core({"min": 1}))], allocated=taken)
    assert per_rank(doc) == {3: ("0-3", "")}
    doc = alloc([node(1, slot(1, core({"min": 1})))], allocated=taken)
    assert per_rank(doc) == {3: ("0-3", "")}
    doc = alloc([node(2, slot(1, core({"min": 1})))], allocated=taken)
    assert per_rank(doc) == {2: ("1-3", ""), 3: ("0-3", "")}


@given(
    st.lists(st.integers(1, 6), min_size=1, max_size=4),
    st.integers(1, 4),
    st.integers(1, 3),
    st.none() | st.integers(0, 3),
)
def test_several_slots_are_met_and_none_could_grow(
    sizes: list[int], nslots: int, least: int, spread: int | None
) -> None:
    """Against the plain statement of the reading: met when the minimums fit, then maximal."""
    doc = {
        "version": 1,
        "execution": {
            "R_lite": [
                {"rank": str(r), "children": {"core": IdSet(((0, c - 1),)).encode()}}
                for r, c in enumerate(sizes)
            ],
            "nodelist": [",".join(f"n{r}" for r in range(len(sizes)))],
        },
    }
    count: dict[str, int] = (
        {"min": least} if spread is None else {"min": least, "max": least + spread}
    )
    fits = sum(c // least for c in sizes) >= nslots
    value = {"pool": doc, "jobspec": jobspec([slot(nslots, core(count))])}
    if not fits:
        with pytest.raises(allocate.UnsatisfiableError):
            run("sched.allocate", value, edition=NEWER)
        return
    got = per_rank(run("sched.allocate", value, edition=NEWER))
    taken = [IdSet.decode(got[rank][0]).size if rank in got else 0 for rank in range(len(sizes))]
    upper = least + spread if spread is not None else None
    assert any(
        all(
            _node_total_allowed(held, size, k, least, upper)
            for held, size, k in zip(taken, sizes, split, strict=True)
        )
        for split in itertools.product(range(nslots + 1), repeat=len(sizes))
        if sum(split) == nslots
    ), (sizes, nslots, count, got)


def _node_total_allowed(held: int, size: int, k: int, least: int, upper: int | None) -> bool:
    """The plain reading for ``k`` slots on a node of ``size`` cores: each slot at least
    ``least`` and at most ``upper``, and none could take one more (all at ``upper``, or
    nothing left free on the node)."""
    if k == 0:
        return held == 0
    top = size if upper is None else min(size, k * upper)
    return k * least <= held <= top and (held == size or (upper is not None and held == k * upper))


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
    assert _alloc_speed.largest_acceptable(count, available) == _plain_largest(count, available)


@given(st.lists(st.integers(1, 30), min_size=1, max_size=4, unique=True), st.integers(0, 40))
def test_largest_of_idset_counts(ids: list[int], available: int) -> None:
    count = parse_count(",".join(map(str, sorted(ids))))
    assert _alloc_speed.largest_acceptable(count, available) == _plain_largest(count, available)


@given(st.sets(st.integers(0, 300)), st.integers(0, 310))
def test_lowest_ids_on_bits_and_intervals(ids: set[int], n: int) -> None:
    plain = sorted(ids)[:n]
    as_set = IdSet.from_ids(ids)
    bits = _alloc_speed.lowest(as_set.to_bits(), n)
    intervals = _alloc_speed.lowest(as_set, n)
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
            for n in _alloc_speed.Walk(free, allowed, IdSet.from_ids(whole))
        ]
        plain = [
            (rank, per_rank[rank], rank in whole) for rank in sorted(per_rank) if rank in allowed
        ]
        assert walked == plain


@given(st.integers(0, 255), st.integers(0, 15), st.integers(0, 255), st.integers(0, 15))
def test_children_are_shared_only_when_equal(c1: int, g1: int, c2: int, g2: int) -> None:
    """The ``_MADE`` memo against the plain rule: ``Children(cores, gpus)`` each time."""
    first, second = _alloc_speed.children(c1, g1), _alloc_speed.children(c2, g2)
    assert first == Children(c1, g1)
    assert second == Children(c2, g2)
    assert (first is second) == ((c1, g1) == (c2, g2))


@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 3)), max_size=8))
def test_plans_by_free_counts_are_the_plain_plans(free: list[tuple[int, int]]) -> None:
    """A plan worked out once per pair of free counts is the plan worked out per node."""
    calls: list[tuple[int, int]] = []

    def plan(cores: int, gpus: int) -> tuple[int, int]:
        calls.append((cores, gpus))
        return (cores * 7 + gpus, len(calls))

    cached = _alloc_speed.by_free_counts(plan)
    got = [cached(c, g)[0] for c, g in free]
    assert got == [c * 7 + g for c, g in free]
    assert sorted(calls) == sorted(set(free))


@given(
    st.lists(st.tuples(st.integers(0, 9), st.integers(0, 3)), min_size=1, max_size=6),
    st.tuples(st.integers(0, 3), st.integers(0, 2)),
    st.integers(0, 12),
)
def test_most_free_first_is_the_plain_loop(
    free: list[tuple[int, int]], unit: tuple[int, int], k: int
) -> None:
    """The heap against the plain rule: each unit to the first node with the most free."""
    if unit == (0, 0):
        unit = (1, 0)
    left = list(free)
    plain: list[int] = []
    for _ in range(k):
        fits = [i for i, (c, g) in enumerate(left) if c >= unit[0] and g >= unit[1]]
        if not fits:
            return  # more units than fit: the caller never asks for that
        best = max(fits, key=lambda i: (left[i], -i))
        plain.append(best)
        left[best] = (left[best][0] - unit[0], left[best][1] - unit[1])
    assert _alloc_speed.most_free_first(free, unit, k) == plain


@given(st.sets(st.integers(0, 20)), st.sets(st.integers(0, 20)), st.booleans(), st.booleans())
def test_held_cores_come_back_as_they_were(
    free: set[int], part: set[int], whole: bool, touched: bool
) -> None:
    """``hold``/``give_back`` against the plain rule: set aside, then the same node again."""
    part &= free
    bits = IdSet.from_ids(free).to_bits()
    node = _alloc_speed.Node(0, bits, 0, whole, len(free), 0)
    token = node.hold(Children(IdSet.from_ids(part).to_bits(), 0))
    assert (node.ncores, node.whole) == (len(free - part), False)
    assert IdSet.from_bits(node.cores).to_list() == sorted(free - part)
    if touched and node.ncores:
        node.take(1, 0)
    node.give_back(Children(IdSet.from_ids(part).to_bits(), 0), token)
    taken = 1 if touched and len(free - part) else 0
    assert node.ncores == len(free) - taken
    assert node.whole == (whole and not taken)
