"""The ``division`` and ``largest`` rules across an answer's ranks (allocation.division).

What the comparator of ``sched.allocate`` judges for a pool, a request and an answer: whether
the ranks, cores and GPUs of the answer divide into the requested units with every count
acceptable (``division``), whether some division leaves nothing free that would make a count
larger (``largest``), and, in the newer texts, whether ``nslots`` is the slot total of such a
division.  Every size is written as a number; each wrong answer is one a plausible scheduler
gives (one node too many, first fit instead of the most free, a slot of nodes cut in half).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from support import allocation_input, broken_rules, node_vertex, r_held, r_pool, slot_vertex

from flux_conformance.reference.operations import EDITIONS, run
from flux_conformance.runner.comparators.allocation import inputs
from flux_conformance.runner.comparators.allocation.times import CLOCK_FLOOR

OLDER, NEWER = EDITIONS[0], EDITIONS[-1]
FOUR = r_pool((4, 0), (4, 0), (4, 0), (4, 0))


def broken(value: dict[str, Any], answer: dict[str, Any], edition: str = OLDER) -> list[str]:
    """The rules ``answer`` breaks as an answer to ``value`` (the older texts unless named)."""
    return broken_rules(value, answer, edition)


def cores(n: int) -> str:
    return f"0-{n - 1}" if n > 1 else "0"


def on(ranks: Any, n: int, **execution: Any) -> dict[str, Any]:
    """An answer holding the first ``n`` cores of each of ``ranks``."""
    return r_held({r: (cores(n), "") for r in ranks}, **execution)


def one_core_nodes(count: Any, **extra: Any) -> list[Any]:
    return [node_vertex(count, slot_vertex(1, ("core", 1)), **extra)]


def test_the_reference_answers_are_judged_conforming() -> None:
    requests = [
        one_core_nodes({"min": 1}),
        [slot_vertex({"min": 1}, ("core", 2))],
        [slot_vertex({"min": 1}, ("node", 2))],
        [node_vertex(2, slot_vertex({"min": 1}, ("core", 1)))],
    ]
    for resources in requests:
        value = allocation_input(FOUR, resources)
        for edition in EDITIONS:
            assert broken(value, run("sched.allocate", value, edition=edition), edition) == []


def test_a_fixed_node_count_is_that_many_nodes() -> None:
    value = allocation_input(FOUR, one_core_nodes(2))
    assert broken(value, on([0, 1], 1)) == []
    assert broken(value, on([1, 3], 1)) == []
    assert broken(value, on([0, 1, 2], 1)) == ["division"]
    assert broken(value, on([0], 1)) == ["division"]


def test_min_only_nodes_take_every_free_node_that_can_hold_one() -> None:
    value = allocation_input(FOUR, one_core_nodes({"min": 1}))
    assert broken(value, on([0, 1, 2, 3], 1)) == []
    assert broken(value, on([0, 1, 2], 1)) == ["largest"]
    assert broken(value, on([0], 1)) == ["largest"]
    # Rank 3 fully allocated: three nodes are all there is.
    value = allocation_input(FOUR, one_core_nodes({"min": 1}), r_held({3: ("0-3", "")}))
    assert broken(value, on([0, 1, 2], 1)) == []
    assert broken(value, on([0, 1], 1)) == ["largest"]
    # Rank 3 with one core taken still holds a one-core slot.
    value = allocation_input(FOUR, one_core_nodes({"min": 1}), r_held({3: ("0", "")}))
    assert broken(value, on([0, 1, 2], 1)) == ["largest"]


def test_a_node_too_small_for_the_slot_is_no_node_left_out() -> None:
    two = [node_vertex({"min": 1}, slot_vertex(1, ("core", 2)))]
    value = allocation_input(FOUR, two, r_held({3: ("0-2", "")}))  # one core free on rank 3
    assert broken(value, on([0, 1, 2], 2)) == []
    value = allocation_input(FOUR, two, r_held({3: ("0-1", "")}))  # two free: a slot fits
    assert broken(value, on([0, 1, 2], 2)) == ["largest"]
    gpu = [node_vertex({"min": 1}, slot_vertex(1, ("gpu", 1)))]
    pool = r_pool((2, 1), (2, 1), (2, 0))
    value = allocation_input(pool, gpu)
    assert broken(value, r_held({0: ("", "0"), 1: ("", "0")})) == []
    assert broken(value, r_held({0: ("", "0")})) == ["largest"]


def test_exclusive_nodes_count_only_the_nodes_no_allocation_touches() -> None:
    request = one_core_nodes({"min": 1}, exclusive=True)
    taken = r_held({3: ("0", "")})
    value = allocation_input(FOUR, request, taken)
    assert broken(value, on([0, 1, 2], 4)) == []
    assert broken(value, on([0, 1], 4)) == ["largest"]
    # The same request shared: rank 3's three free cores hold a node of it.
    value = allocation_input(FOUR, one_core_nodes({"min": 1}), taken)
    assert broken(value, on([0, 1, 2], 1)) == ["largest"]


def test_ranged_and_stepped_node_counts() -> None:
    value = allocation_input(
        FOUR, one_core_nodes({"min": 1, "max": 2, "operator": "+", "operand": 1})
    )
    assert broken(value, on([0, 1], 1)) == []
    assert broken(value, on([0], 1)) == ["largest"]
    assert broken(value, on([0, 1, 2], 1)) == ["division"]
    doubling = {"min": 1, "max": 4, "operator": "*", "operand": 2}  # 1, 2 or 4
    value = allocation_input(FOUR, one_core_nodes(doubling))
    assert broken(value, on([0, 1, 2, 3], 1)) == []
    assert broken(value, on([0, 1, 2], 1)) == ["division"]
    assert broken(value, on([0, 1], 1)) == ["largest"]
    value = allocation_input(FOUR, one_core_nodes(doubling), r_held({3: ("0-3", "")}))
    assert broken(value, on([0, 1], 1)) == []  # 4 is not free: 2 is the largest
    by_two = {"min": 1, "max": 5, "operator": "+", "operand": 2}  # 1, 3 or 5
    value = allocation_input(FOUR, one_core_nodes(by_two))
    assert broken(value, on([0, 1, 2], 1)) == []
    assert broken(value, on([0, 1, 2, 3], 1)) == ["division"]
    assert broken(value, on([0], 1)) == ["largest"]
    value = allocation_input(FOUR, one_core_nodes(by_two), r_held({3: ("0-3", "")}))
    assert broken(value, on([0, 1, 2], 1)) == []


def test_fixed_top_level_slots_lie_anywhere() -> None:
    value = allocation_input(FOUR, [slot_vertex(3, ("core", 1))])
    assert broken(value, on([0], 3)) == []
    assert broken(value, on([0, 1, 2], 1)) == []
    assert broken(value, r_held({0: ("0-1", ""), 3: ("2", "")})) == []
    assert broken(value, on([0], 4)) == ["division"]
    assert broken(value, on([0, 1], 1)) == ["division"]
    pairs = allocation_input(FOUR, [slot_vertex(3, ("core", 2))])
    assert broken(pairs, r_held({0: ("0-3", ""), 1: ("0-1", "")})) == []
    assert broken(pairs, r_held({0: ("0-2", ""), 1: ("0-2", "")})) == ["division"]


def test_min_only_slots_take_every_slot_the_free_cores_hold() -> None:
    pool = r_pool((4, 0), (3, 0))  # 2 + 1 slots of two cores
    value = allocation_input(pool, [slot_vertex({"min": 1}, ("core", 2))])
    assert broken(value, r_held({0: ("0-3", ""), 1: ("0-1", "")})) == []
    assert broken(value, r_held({0: ("0-3", "")})) == ["largest"]
    assert broken(value, r_held({0: ("0-1", ""), 1: ("0-1", "")})) == ["largest"]
    assert broken(value, r_held({0: ("0-2", "")})) == ["division"]
    pool = r_pool((4, 0), (1, 0))  # rank 1 holds no slot of two cores
    value = allocation_input(pool, [slot_vertex({"min": 1}, ("core", 2))])
    assert broken(value, r_held({0: ("0-3", "")})) == []


def test_min_only_slots_of_gpus_and_of_cores_with_gpus() -> None:
    pool = r_pool((4, 2), (4, 1))
    gpus = allocation_input(pool, [slot_vertex({"min": 1}, ("gpu", 1))])
    assert broken(gpus, r_held({0: ("", "0-1"), 1: ("", "0")})) == []
    assert broken(gpus, r_held({0: ("", "0-1")})) == ["largest"]
    both = allocation_input(pool, [slot_vertex({"min": 1}, ("core", 1), ("gpu", 1))])
    assert broken(both, r_held({0: ("0-1", "0-1"), 1: ("0", "0")})) == []
    assert broken(both, r_held({0: ("0-1", "0-1")})) == ["largest"]
    assert broken(both, r_held({0: ("0", "0"), 1: ("0", "0")})) == ["largest"]
    # Cores are plenty; the GPUs bound the slots (three in all).
    assert broken(both, r_held({0: ("0-2", "0-1"), 1: ("0", "0")})) == ["division"]


def test_ranks_outside_the_constraint_are_neither_counted_nor_missed() -> None:
    pool = r_pool((4, 0), (4, 0), (4, 0), (4, 0), properties={"ssd": "0-1"})
    nodes = one_core_nodes({"min": 1})
    value = allocation_input(pool, nodes, constraints={"properties": ["ssd"]})
    assert broken(value, on([0, 1], 1)) == []
    assert broken(value, on([0], 1)) == ["largest"]
    value = allocation_input(pool, [slot_vertex({"min": 1}, ("core", 2))])
    value["jobspec"]["attributes"]["system"]["constraints"] = {"properties": ["ssd"]}
    assert broken(value, on([0, 1], 4)) == []
    assert broken(value, on([0], 4)) == ["largest"]


def slots_of_nodes(count: Any, nodes: Any, **node: Any) -> list[Any]:
    """``count`` slots of ``nodes`` nodes each (``with_``: what each node holds)."""
    inner = {"type": "node", "count": nodes} | {k.rstrip("_"): v for k, v in node.items()}
    return [{"type": "slot", "label": "s", "count": count, "with": [inner]}]


def test_a_slot_of_nodes_takes_its_nodes_whole() -> None:
    value = allocation_input(FOUR, slots_of_nodes(2, 1))
    assert broken(value, on([0, 1], 4)) == []
    assert broken(value, on([0, 1], 3)) == ["division"]
    assert broken(value, on([0, 1, 2], 4)) == ["division"]
    assert broken(value, on([0], 4)) == ["division"]
    pairs = allocation_input(FOUR, slots_of_nodes(2, 2))
    assert broken(pairs, on([0, 1, 2, 3], 4)) == []
    assert broken(pairs, on([0, 1, 2], 4)) == ["division"]
    # A node some allocation touches is no node of an exclusive slot.
    touched = allocation_input(FOUR, slots_of_nodes(1, 1), r_held({0: ("0", "")}))
    assert broken(touched, r_held({0: ("1-3", "")})) == ["division"]
    assert broken(touched, on([1], 4)) == []


def test_slots_of_nodes_of_a_min_count_take_every_free_group() -> None:
    value = allocation_input(FOUR, slots_of_nodes({"min": 1}, 2))
    assert broken(value, on([0, 1, 2, 3], 4)) == []
    assert broken(value, on([0, 1], 4)) == ["largest"]
    # Rank 3 is touched: one untouched node is left, too few for a slot of two.
    value = allocation_input(FOUR, slots_of_nodes({"min": 1}, 2), r_held({3: ("0", "")}))
    assert broken(value, on([0, 1], 4)) == []
    shared = slots_of_nodes({"min": 1}, 1, exclusive=False, with_=[{"type": "core", "count": 2}])
    # Rank 3 touched, but its two free cores hold a shared slot of one node.
    value = allocation_input(FOUR, shared, r_held({3: ("0-1", "")}))
    assert broken(value, on([0, 1, 2, 3], 2)) == ["subset"]
    assert (
        broken(value, r_held({0: ("0-1", ""), 1: ("0-1", ""), 2: ("0-1", ""), 3: ("2-3", "")}))
        == []
    )
    assert broken(value, on([0, 1, 2], 2)) == ["largest"]
    value = allocation_input(FOUR, shared, r_held({3: ("0-2", "")}))
    assert broken(value, on([0, 1, 2], 2)) == []


def test_slots_of_a_node_range_split_the_nodes() -> None:
    value = allocation_input(FOUR, slots_of_nodes(2, {"min": 1}))
    assert broken(value, on([0, 1, 2], 4)) == []  # 1 + 2 nodes
    assert broken(value, on([0], 4)) == ["division"]  # one node is not two slots
    value = allocation_input(
        FOUR, slots_of_nodes(3, {"min": 2, "max": 3, "operator": "+", "operand": 1})
    )
    assert broken(value, on([0], 4)) == ["division"]
    five = r_pool(*[(1, 0)] * 7)
    value = allocation_input(
        five, slots_of_nodes(2, {"min": 2, "max": 3, "operator": "+", "operand": 1})
    )
    assert broken(value, on([0, 1, 2, 3, 4], 1)) == []  # 2 + 3
    assert broken(value, on([0, 1, 2, 3, 4, 5, 6], 1)) == ["division"]  # 7 > 3 + 3


def test_nslots_is_the_slot_total_of_the_division() -> None:
    cases = [
        (slots_of_nodes(2, 1), on([0, 1], 4), 2),
        (slots_of_nodes(2, {"min": 1}), on([0, 1, 2], 4), 2),
        (one_core_nodes(3), on([0, 1, 2], 1), 3),
        ([node_vertex(2, slot_vertex(2, ("core", 1)))], on([0, 1], 2), 4),
        ([slot_vertex({"min": 1}, ("core", 2))], on([0, 1, 2, 3], 4), 8),
        (
            [slot_vertex(3, ("core", 1)), slot_vertex(1, ("core", 4), label="a")],
            r_held({0: ("0-3", ""), 1: ("0-2", "")}),
            4,
        ),
    ]
    for resources, answer, total in cases:
        value = allocation_input(FOUR, resources)
        for nslots in range(1, 10):
            got = broken(
                value, {**answer, "execution": {**answer["execution"], "nslots": nslots}}, NEWER
            )
            assert got == ([] if nslots == total else ["nslots"]), (resources, nslots)


def test_nslots_follows_a_division_that_keeps_the_largest_rule() -> None:
    # One or two slots of at least one core; rank 1 has two cores free, rank 0 four.  Two
    # slots on rank 1 keep the rule (how free cores are shared among slots is open); one slot
    # of two cores there does not (rank 0 would give it four).
    pool = r_pool((4, 0), (4, 0))
    value = allocation_input(
        pool, [slot_vertex("1-2", ("core", {"min": 1}))], r_held({1: ("0-1", "")})
    )
    answer = r_held({1: ("2-3", "")})
    assert broken(value, answer) == []
    two = {**answer, "execution": {**answer["execution"], "nslots": 2}}
    one = {**answer, "execution": {**answer["execution"], "nslots": 1}}
    assert broken(value, two, NEWER) == []
    assert broken(value, one, NEWER) == ["nslots"]


def test_nslots_is_judged_against_every_division_when_none_keeps_the_largest_rule() -> None:
    pool = r_pool((4, 0), (4, 0))
    value = allocation_input(pool, [slot_vertex({"min": 1}, ("core", {"min": 1}))])
    answer = r_held({0: ("0-1", "")})  # one slot of two cores, or two of one: both too few
    for nslots in (1, 2):
        doc = {**answer, "execution": {**answer["execution"], "nslots": nslots}}
        assert broken(value, doc, NEWER) == ["largest"]
    doc = {**answer, "execution": {**answer["execution"], "nslots": 3}}
    assert broken(value, doc, NEWER) == ["largest", "nslots"]


def test_node_and_slot_vertices_side_by_side() -> None:
    request = [*one_core_nodes(1), slot_vertex(2, ("core", 2), label="a")]
    value = allocation_input(FOUR, request)
    assert broken(value, r_held({0: ("0", ""), 1: ("0-3", "")})) == []
    assert broken(value, r_held({0: ("0-2", ""), 1: ("0-1", "")})) == []
    assert broken(value, r_held({0: ("0", ""), 1: ("0-2", "")})) == ["division"]
    assert broken(value, on([0], 1)) == ["division"]
    for nslots in (2, 3, 4):
        answer = r_held({0: ("0", ""), 1: ("0-3", "")}, nslots=nslots)
        assert broken(value, answer, NEWER) == ([] if nslots == 3 else ["nslots"])


@pytest.mark.parametrize(
    "resources",
    [
        [{"type": "socket", "count": 1, "with": [slot_vertex(1, ("core", 1))]}],
        [slot_vertex(1, ("core", 1)), {"type": "memory", "count": 1}],
        [{"type": "slot", "count": 1, "label": "s", "with": [slot_vertex(1, ("core", 1))]}],
    ],
    ids=["socket", "memory", "slot-in-a-slot"],
)
def test_a_request_the_division_does_not_read_is_judged_by_the_other_rules(
    resources: list[Any],
) -> None:
    value = allocation_input(FOUR, resources)
    assert broken(value, on([0, 1, 2], 3)) == []
    assert broken(value, r_held({0: ("0-4", "")})) == ["subset"]


def test_the_room_for_more_slots_counts_each_resource_the_slot_needs() -> None:
    # GPU slots: rank 1's core is taken, its three GPUs are free and hold three more slots.
    gpus = [slot_vertex({"min": 1}, ("gpu", 1))]
    value = allocation_input(r_pool((1, 3), (1, 3)), gpus, r_held({1: ("0", "")}))
    assert broken(value, r_held({0: ("", "0-2")})) == ["largest"]
    assert broken(value, r_held({0: ("", "0-2"), 1: ("", "0-2")})) == []
    # Core slots on ranks whose GPUs are free too: the GPUs hold no core slot, the cores do.
    core_slots = [slot_vertex({"min": 1}, ("core", 1))]
    value = allocation_input(r_pool((4, 4), (4, 4)), core_slots)
    assert broken(value, r_held({0: ("0-3", "")})) == ["largest"]
    assert broken(value, r_held({0: ("0-3", ""), 1: ("0-3", "")})) == []
    # A rank the answer leaves alone, with two cores free: one more slot of two.
    pairs = [slot_vertex({"min": 1}, ("core", 2))]
    value = allocation_input(r_pool((4, 0), (2, 0)), pairs)
    assert broken(value, r_held({0: ("0-3", "")})) == ["largest"]
    # ... and GPU slots beside a rank with cores but no GPU: nothing more.
    value = allocation_input(r_pool((4, 2), (4, 0)), gpus)
    assert broken(value, r_held({0: ("", "0-1")})) == []


def test_a_free_node_counts_when_it_holds_the_node_at_its_smallest() -> None:
    # One core free on rank 3: a node of one one-core slot fits there.
    value = allocation_input(FOUR, one_core_nodes({"min": 1}), r_held({3: ("0-2", "")}))
    assert broken(value, on([0, 1, 2], 1)) == ["largest"]
    assert broken(value, r_held({0: ("0", ""), 1: ("0", ""), 2: ("0", ""), 3: ("3", "")})) == []
    # A GPU slot per node: rank 2's cores are taken, its GPU is free.
    gpu_nodes = [node_vertex({"min": 1}, slot_vertex(1, ("gpu", 1)))]
    value = allocation_input(r_pool((2, 1), (2, 1), (2, 1)), gpu_nodes, r_held({2: ("0-1", "")}))
    assert broken(value, r_held({0: ("", "0"), 1: ("", "0")})) == ["largest"]
    # A node of a two-core slot and a GPU slot: one core and a GPU free hold no such node.
    kinds = [slot_vertex(1, ("core", 2)), slot_vertex(1, ("gpu", 1), label="a")]
    pool = r_pool((2, 1), (2, 1), (2, 1))
    value = allocation_input(pool, [node_vertex({"min": 1}, *kinds)], r_held({2: ("0", "")}))
    assert broken(value, r_held({0: ("0-1", "0"), 1: ("0-1", "0")})) == []
    value = allocation_input(pool, [node_vertex({"min": 1}, *kinds)], r_held({2: ("", "0")}))
    assert broken(value, r_held({0: ("0-1", "0"), 1: ("0-1", "0")})) == []
    value = allocation_input(pool, [node_vertex({"min": 1}, *kinds)])
    assert broken(value, r_held({0: ("0-1", "0"), 1: ("0-1", "0")})) == ["largest"]


def test_shared_slots_of_a_gpu_node_count_a_node_whose_cores_are_taken() -> None:
    request = slots_of_nodes({"min": 1}, 1, exclusive=False, with_=[{"type": "gpu", "count": 1}])
    pool = r_pool((1, 1), (1, 1), (1, 1))
    value = allocation_input(pool, request, r_held({2: ("0", "")}))
    assert broken(value, r_held({0: ("", "0"), 1: ("", "0")})) == ["largest"]
    assert broken(value, r_held({0: ("", "0"), 1: ("", "0"), 2: ("", "0")})) == []


def test_every_vertex_of_the_request_is_judged() -> None:
    # A slot of a node, then three one-core slots: the second vertex wants exactly three.
    request = [*slots_of_nodes(1, 1), slot_vertex(3, ("core", 1), label="a")]
    value = allocation_input(FOUR, request)
    assert broken(value, r_held({0: ("0-3", ""), 1: ("0-2", "")})) == []
    assert broken(value, r_held({0: ("0-3", ""), 1: ("0-1", "")})) == ["division"]
    assert broken(value, r_held({0: ("0-3", ""), 1: ("0-3", "")})) == ["division"]


def test_a_rank_outside_the_constraint_before_the_others_is_left_out() -> None:
    pool = r_pool((4, 0), (4, 0), (4, 0), (4, 0), properties={"ssd": "1,3"})
    value = allocation_input(pool, one_core_nodes({"min": 1}), constraints={"properties": ["ssd"]})
    assert broken(value, on([1, 3], 1)) == []
    assert broken(value, on([1], 1)) == ["largest"]
    assert broken(value, on([3], 1)) == ["largest"]


def test_resources_an_allocation_may_have_freed_are_not_counted_free(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Without now, an allocation ending half a second after the clock's floor may have ended
    # when the judgement comes a second after it: an answer may use its cores, and they are
    # not counted among the free ones (rank 0's two cores here), nor do they lower the count.
    monkeypatch.setattr(inputs, "time", SimpleNamespace(time=lambda: CLOCK_FLOOR + 1))
    maybe = r_held({0: ("0-1", "")}, expiration=CLOCK_FLOOR + 0.5)
    pool = r_pool((2, 0), (4, 0))
    value = {**allocation_input(pool, [slot_vertex({"min": 1}, ("core", 1))]), "allocated": [maybe]}
    assert broken(value, r_held({0: ("0-1", ""), 1: ("0-3", "")})) == []
    assert broken(value, r_held({0: ("0-1", ""), 1: ("0-2", "")})) == ["largest"]
    assert broken(value, r_held({1: ("0-3", "")})) == []
    maybe = r_held({0: ("0", "0-1")}, expiration=CLOCK_FLOOR + 0.5)
    pool = r_pool((1, 2), (1, 4))
    value = {**allocation_input(pool, [slot_vertex({"min": 1}, ("gpu", 1))]), "allocated": [maybe]}
    assert broken(value, r_held({0: ("", "0-1"), 1: ("", "0-3")})) == []
    assert broken(value, r_held({0: ("", "0-1"), 1: ("", "0-2")})) == ["largest"]


def test_a_rank_that_holds_no_unit_makes_the_division_fail_however_large_the_rest() -> None:
    # Rank 0's one core is no slot of two; the search stops there, before rank 1's 64 cores
    # (as two kinds of slot, more ways than the search may try).
    kinds = [
        slot_vertex({"min": 1}, ("core", {"min": 2})),
        slot_vertex({"min": 1}, ("core", {"min": 2}), label="a"),
    ]
    value = allocation_input(r_pool((4, 0), (64, 0)), kinds)
    assert broken(value, r_held({0: ("0", ""), 1: ("0-63", "")})) == ["division"]
