"""How one rank of an answer serves the request (allocation.one_rank), as the comparator judges.

A rank serves an exclusive vertex alone and whole; shared vertices use exactly what it holds;
a slot whose count or size could grow from what is left free on its own node breaks the
``largest`` rule, and so does a lone slot that another node (free to choose) would hold larger.
Each answer below is what a plausible scheduler gives: a core too many, an exclusive node
shared, a slot placed by first fit.  Sizes are written as numbers.
"""

from __future__ import annotations

from typing import Any

from support import allocation_input, broken_rules, node_vertex, r_held, r_pool, slot_vertex

from flux_conformance.reference.operations import EDITIONS, run

OLDER, NEWER = EDITIONS[0], EDITIONS[-1]
ONE = {"min": 1}


def broken(value: dict[str, Any], answer: dict[str, Any], edition: str = OLDER) -> list[str]:
    """The rules ``answer`` breaks as an answer to ``value`` (the older texts unless named)."""
    return broken_rules(value, answer, edition)


def slots_said(value: dict[str, Any], answer: dict[str, Any]) -> list[int]:
    """The nslots the newer texts accept with ``answer`` (from 1 to 9)."""
    execution = answer["execution"]
    return [
        n
        for n in range(1, 10)
        if broken(value, {**answer, "execution": {**execution, "nslots": n}}, NEWER) == []
    ]


def test_the_reference_answers_are_judged_conforming() -> None:
    pool = r_pool((4, 1), (2, 0), (4, 2))
    requests = [
        [node_vertex(1, slot_vertex(ONE, ("core", 2)), exclusive=True)],
        [node_vertex(2, slot_vertex(1, ("core", ONE)))],
        [slot_vertex(1, ("core", ONE), ("gpu", ONE))],
        [slot_vertex(2, ("core", 1)), slot_vertex(1, ("core", 2), label="a")],
    ]
    for resources in requests:
        value = allocation_input(pool, resources, r_held({0: ("0", "")}))
        for edition in EDITIONS:
            assert broken(value, run("sched.allocate", value, edition=edition), edition) == []


def test_an_exclusive_node_is_held_whole_and_alone() -> None:
    pool = r_pool((4, 1), (4, 1))
    value = allocation_input(pool, [node_vertex(1, slot_vertex(1, ("core", 1)), exclusive=True)])
    assert broken(value, r_held({0: ("0-3", "0")})) == []
    assert broken(value, r_held({0: ("0", "")})) == ["division"]
    assert broken(value, r_held({0: ("0-3", "")})) == ["division"]  # its GPU left out
    taken = allocation_input(
        pool, [node_vertex(1, slot_vertex(1, ("core", 1)), exclusive=True)], r_held({0: ("0", "")})
    )
    assert broken(taken, r_held({0: ("1-3", "0")})) == ["division"]  # rank 0 is shared
    assert broken(taken, r_held({1: ("0-3", "0")})) == []
    # A slot larger than the node: no way to hold it.
    big = allocation_input(pool, [node_vertex(1, slot_vertex(1, ("core", 8)), exclusive=True)])
    assert broken(big, r_held({0: ("0-3", "0")})) == ["division"]


def test_the_slots_of_an_exclusive_node_fill_it() -> None:
    pool = r_pool((5, 0), (5, 0))
    pairs = allocation_input(pool, [node_vertex(1, slot_vertex(ONE, ("core", 2)), exclusive=True)])
    answer = r_held({0: ("0-4", "")})
    assert broken(pairs, answer) == []
    assert slots_said(pairs, answer) == [2]  # two slots of two; the fifth core holds none
    alone = allocation_input(r_pool((5, 0)), pairs["jobspec"]["resources"])
    assert slots_said(alone, answer) == [2]  # and no other node to compare it with
    one = allocation_input(pool, [node_vertex(1, slot_vertex(1, ("core", ONE)), exclusive=True)])
    assert slots_said(one, answer) == [1]
    fixed = allocation_input(pool, [node_vertex(1, slot_vertex(1, ("core", 2)), exclusive=True)])
    assert broken(fixed, answer) == []
    assert slots_said(fixed, answer) == [1]


def test_a_lone_exclusive_node_goes_where_it_holds_the_largest_slot() -> None:
    pool = r_pool((2, 0), (4, 0))
    request = [node_vertex(1, slot_vertex(1, ("core", ONE)), exclusive=True)]
    value = allocation_input(pool, request)
    assert broken(value, r_held({1: ("0-3", "")})) == []
    assert broken(value, r_held({0: ("0-1", "")})) == ["largest"]
    # Rank 1 touched by another allocation: an exclusive node cannot be there.
    value = allocation_input(pool, request, r_held({1: ("0", "")}))
    assert broken(value, r_held({0: ("0-1", "")})) == []


def test_an_exclusive_slot_of_a_node_takes_it_whole() -> None:
    pool = r_pool((4, 1), (4, 1))
    inner = {"type": "node", "count": 1, "with": [{"type": "core", "count": 2}]}
    value = allocation_input(pool, [{"type": "slot", "label": "s", "count": 1, "with": [inner]}])
    assert broken(value, r_held({0: ("0-3", "0")})) == []
    assert broken(value, r_held({0: ("0-1", "")})) == ["division"]
    inner["with"] = [{"type": "core", "count": 8}]
    assert broken(value, r_held({0: ("0-3", "0")})) == ["division"]
    inner["with"] = [{"type": "gpu", "count": 2}]
    assert broken(value, r_held({0: ("0-3", "0")})) == ["division"]


def test_a_shared_node_uses_exactly_what_the_rank_holds() -> None:
    pool = r_pool((4, 0), (4, 0))
    value = allocation_input(pool, [node_vertex(1, slot_vertex(2, ("core", 1)))])
    assert broken(value, r_held({0: ("0-1", "")})) == []
    assert broken(value, r_held({0: ("0-2", "")})) == ["division"]
    assert broken(value, r_held({0: ("0", "")})) == ["division"]
    assert slots_said(value, r_held({0: ("0-1", "")})) == [2]
    # A node's own core, outside its slot, counts no slot.
    own = [node_vertex(1, slot_vertex(1, ("core", 1)), {"type": "core", "count": 1})]
    value = allocation_input(pool, own)
    assert broken(value, r_held({0: ("0-1", "")})) == []
    assert broken(value, r_held({0: ("0", "")})) == ["division"]
    assert slots_said(value, r_held({0: ("0-1", "")})) == [1]


def test_a_shared_node_with_two_kinds_of_slot() -> None:
    pool = r_pool((4, 2), (4, 2))
    kinds = [slot_vertex(1, ("core", 2)), slot_vertex(1, ("core", 1), ("gpu", 1), label="a")]
    value = allocation_input(pool, [node_vertex(2, *kinds)])
    right = r_held({0: ("0-2", "0"), 1: ("0-2", "1")})
    assert broken(value, right) == []
    assert slots_said(value, right) == [4]
    assert broken(value, r_held({0: ("0-2", "0"), 1: ("0-3", "")})) == ["division"]


def test_slots_of_a_shared_node_take_what_is_free_on_it() -> None:
    pool = r_pool((4, 0), (4, 0))
    value = allocation_input(pool, [node_vertex(1, slot_vertex(ONE, ("core", 1)))])
    assert broken(value, r_held({0: ("0-3", "")})) == []
    assert broken(value, r_held({0: ("0-2", "")})) == ["largest"]  # a fourth slot fits
    pairs = [node_vertex(1, slot_vertex(ONE, ("core", 2)))]
    value = allocation_input(pool, pairs, r_held({0: ("0", ""), 1: ("0-1", "")}))
    assert broken(value, r_held({0: ("1-2", "")})) == []  # the core left holds no slot of two
    assert broken(value, r_held({1: ("2-3", "")})) == []
    # With rank 1 all free, a node of one slot there is a node of two.
    value = allocation_input(pool, pairs, r_held({0: ("0", "")}))
    assert broken(value, r_held({0: ("1-2", "")})) == ["largest"]
    assert broken(value, r_held({1: ("0-3", "")})) == []


def test_a_lone_shared_node_goes_where_its_slot_is_largest() -> None:
    pool = r_pool((4, 0), (4, 0), (4, 0))
    taken = r_held({0: ("0-1", ""), 2: ("0-2", "")})  # free: 2, 4 and 1 cores
    value = allocation_input(pool, [node_vertex(1, slot_vertex(1, ("core", ONE)))], taken)
    assert broken(value, r_held({1: ("0-3", "")})) == []
    assert broken(value, r_held({0: ("2-3", "")})) == ["largest"]
    assert broken(value, r_held({1: ("0-2", "")})) == ["largest"]  # one left free in place
    # Two nodes: which nodes hold them is open once each takes all its own node has.
    two = allocation_input(pool, [node_vertex(2, slot_vertex(1, ("core", ONE)))], taken)
    assert broken(two, r_held({0: ("2-3", ""), 1: ("0-3", "")})) == []
    assert broken(two, r_held({0: ("2-3", ""), 2: ("3", "")})) == []


def test_slots_of_cores_and_gpus_lie_on_one_rank_each() -> None:
    pool = r_pool((4, 1), (4, 1))
    value = allocation_input(pool, [slot_vertex(1, ("core", 1), ("gpu", 1))])
    assert broken(value, r_held({0: ("0", "0")})) == []
    assert broken(value, r_held({0: ("0", ""), 1: ("", "0")})) == ["division"]
    value = allocation_input(pool, [slot_vertex(2, ("core", 1), ("gpu", 1))])
    assert broken(value, r_held({0: ("0", "0"), 1: ("0", "0")})) == []
    assert broken(value, r_held({0: ("0-1", "0")})) == ["division"]


def test_slots_of_a_core_range_hold_all_their_node_has_free() -> None:
    pool = r_pool((4, 0), (4, 0))
    ranged = {"min": 1, "max": 2, "operator": "+", "operand": 1}
    value = allocation_input(pool, [slot_vertex(1, ("core", ranged))])
    assert broken(value, r_held({0: ("0-1", "")})) == []
    assert broken(value, r_held({0: ("0", "")})) == ["largest"]
    assert broken(value, r_held({0: ("0-2", "")})) == ["division"]
    gpus = allocation_input(r_pool((1, 3), (1, 3)), [slot_vertex(1, ("gpu", ONE))])
    assert broken(gpus, r_held({0: ("", "0-2")})) == []
    assert broken(gpus, r_held({0: ("", "0-1")})) == ["largest"]


def test_a_lone_slot_placed_by_first_fit_breaks_the_largest_rule() -> None:
    pool = r_pool((4, 0), (4, 0))
    request = [slot_vertex(1, ("core", ONE))]
    # Rank 0 has 2 free, rank 1 has 3: the slot belongs on rank 1, all of it.
    value = allocation_input(pool, request, r_held({0: ("0-1", ""), 1: ("0", "")}))
    assert broken(value, r_held({1: ("1-3", "")})) == []
    assert broken(value, r_held({0: ("2-3", "")})) == ["largest"]
    # Both have 2 free: either is right.
    value = allocation_input(pool, request, r_held({0: ("0-1", ""), 1: ("0-1", "")}))
    assert broken(value, r_held({0: ("2-3", "")})) == []
    assert broken(value, r_held({1: ("2-3", "")})) == []
    # GPUs the same way.
    gpus = allocation_input(r_pool((1, 1), (1, 2)), [slot_vertex(1, ("gpu", ONE))])
    assert broken(gpus, r_held({1: ("", "0-1")})) == []
    assert broken(gpus, r_held({0: ("", "0")})) == ["largest"]
    # A slot of a core and GPUs: the other node's GPUs make it larger.
    both = allocation_input(r_pool((2, 1), (2, 2)), [slot_vertex(1, ("core", 1), ("gpu", ONE))])
    assert broken(both, r_held({1: ("0", "0-1")})) == []
    assert broken(both, r_held({0: ("0", "0")})) == ["largest"]


def test_several_slots_share_the_free_cores_as_they_like() -> None:
    pool = r_pool((4, 0), (4, 0))
    request = [slot_vertex(2, ("core", ONE))]
    value = allocation_input(pool, request, r_held({0: ("0-1", "")}))
    # Two slots on rank 0's two free cores: rank 1 would give them more, but how free cores
    # are shared among several slots is open.
    assert broken(value, r_held({0: ("2-3", "")})) == []
    assert broken(value, r_held({1: ("0-3", "")})) == []
    assert broken(value, r_held({1: ("0-2", "")})) == ["largest"]  # a core left on its node


def test_shared_vertices_on_one_rank_sum_to_what_it_holds() -> None:
    pool = r_pool((4, 0), (4, 0))
    request = [slot_vertex(1, ("core", 2)), slot_vertex(1, ("core", 1), label="a")]
    value = allocation_input(pool, request)
    assert broken(value, r_held({0: ("0-2", "")})) == []
    assert broken(value, r_held({0: ("0-1", ""), 1: ("0", "")})) == []
    assert broken(value, r_held({0: ("0-3", "")})) == ["division"]
    assert broken(value, r_held({0: ("0-1", "")})) == ["division"]


def test_a_shared_slot_of_a_node_holds_its_cores() -> None:
    pool = r_pool((4, 0), (4, 0))
    inner = {"type": "node", "count": 1, "exclusive": False, "with": [{"type": "core", "count": 2}]}
    one = {"type": "slot", "label": "s", "count": 1, "with": [inner]}
    value = allocation_input(pool, [one, slot_vertex(1, ("core", 1), label="a")])
    assert broken(value, r_held({0: ("0-1", ""), 1: ("0", "")})) == []
    value = allocation_input(pool, [{"type": "slot", "label": "s", "count": 2, "with": [inner]}])
    assert broken(value, r_held({0: ("0-1", ""), 1: ("0-1", "")})) == []
    assert broken(value, r_held({0: ("0-3", "")})) == ["division"]  # two slots, one node
    assert broken(value, r_held({0: ("0-2", ""), 1: ("0", "")})) == ["division"]


def test_a_slot_of_cores_and_gpus_grows_in_either_resource() -> None:
    value = allocation_input(r_pool((2, 2)), [slot_vertex(1, ("core", ONE), ("gpu", ONE))])
    assert broken(value, r_held({0: ("0-1", "0-1")})) == []
    assert broken(value, r_held({0: ("0-1", "0")})) == ["largest"]  # a GPU left free
    assert broken(value, r_held({0: ("0", "0-1")})) == ["largest"]  # a core left free


def test_gpu_slots_of_an_exclusive_node_fill_it() -> None:
    one = [node_vertex(1, slot_vertex(1, ("gpu", 1)), exclusive=True)]
    assert broken(allocation_input(r_pool((2, 1)), one), r_held({0: ("0-1", "0")})) == []
    pool = r_pool((2, 3), (2, 3))
    gpus = [node_vertex(1, slot_vertex(ONE, ("gpu", 1)), exclusive=True)]
    value = allocation_input(pool, gpus)
    assert slots_said(value, r_held({0: ("0-1", "0-2")})) == [3]
    per_node = [node_vertex(1, slot_vertex(ONE, ("gpu", 1)))]
    value = allocation_input(pool, per_node)
    assert broken(value, r_held({0: ("", "0-2")})) == []
    assert broken(value, r_held({0: ("", "0-1")})) == ["largest"]


def test_an_exclusive_slot_of_one_core_node() -> None:
    inner = {"type": "node", "count": 1, "with": [{"type": "core", "count": 1}]}
    request = [{"type": "slot", "label": "s", "count": 1, "with": [inner]}]
    value = allocation_input(r_pool((1, 0), (1, 0)), request)
    assert broken(value, r_held({0: ("0", "")})) == []
    assert broken(value, r_held({0: ("0", ""), 1: ("0", "")})) == ["division"]
    # A node of one GPU and no core, the same way.
    inner["with"] = [{"type": "gpu", "count": 1}]
    value = allocation_input(r_pool((0, 1), (0, 1)), request)
    assert broken(value, r_held({0: ("", "0")})) == []


def test_an_exclusive_vertex_beside_a_shared_one() -> None:
    pool = r_pool((4, 0), (4, 0), (4, 0))
    whole = {"type": "slot", "label": "w", "count": 1, "with": [{"type": "node", "count": 1}]}
    for request in (
        [whole, slot_vertex(2, ("core", 1))],
        [slot_vertex(2, ("core", 1)), whole],
    ):
        value = allocation_input(pool, request)
        answer = r_held({0: ("0-3", ""), 1: ("0-1", "")})
        assert broken(value, answer) == []
        assert slots_said(value, answer) == [3]
        assert broken(value, r_held({0: ("0-3", ""), 1: ("0-2", "")})) == ["division"]
        assert broken(value, r_held({0: ("0-1", ""), 1: ("0-3", "")})) == []
    nodes = [node_vertex(1, slot_vertex(1, ("core", 1)), exclusive=True)]
    for request in ([*nodes, slot_vertex(2, ("core", 1))], [slot_vertex(2, ("core", 1)), *nodes]):
        value = allocation_input(pool, request)
        answer = r_held({0: ("0-3", ""), 1: ("0-1", "")})
        assert broken(value, answer) == []
        assert slots_said(value, answer) == [3]
        assert broken(value, r_held({0: ("0-2", ""), 1: ("0-1", "")})) == ["division"]


def test_a_bare_node_is_a_whole_node_beside_its_slots() -> None:
    request = [{"type": "node", "count": 1}, slot_vertex(1, ("core", 1))]
    value = allocation_input(r_pool((4, 0), (4, 0)), request)
    assert broken(value, r_held({0: ("0-3", ""), 1: ("0", "")})) == []
    assert broken(value, r_held({0: ("0-2", ""), 1: ("0", "")})) == ["division"]


def test_a_top_level_core_counts_no_slot() -> None:
    request = [slot_vertex(1, ("core", 1)), {"type": "core", "count": 1}]
    value = allocation_input(r_pool((4, 0)), request)
    assert broken(value, r_held({0: ("0-1", "")})) == []
    assert slots_said(value, r_held({0: ("0-1", "")})) == [1]


def test_a_lone_shared_node_looks_at_nodes_other_allocations_touch() -> None:
    request = [node_vertex(1, slot_vertex(1, ("core", ONE)))]
    value = allocation_input(r_pool((2, 0), (4, 0)), request, r_held({1: ("0", "")}))
    assert broken(value, r_held({0: ("0-1", "")})) == ["largest"]  # rank 1 has 3 free
    assert broken(value, r_held({1: ("1-3", "")})) == []
    # An exclusive one does not: a node another allocation touches is not free for it.
    request = [node_vertex(1, slot_vertex(1, ("core", ONE)), exclusive=True)]
    value = allocation_input(r_pool((2, 0), (4, 0), (8, 0)), request, r_held({2: ("0", "")}))
    assert broken(value, r_held({0: ("0-1", "")})) == ["largest"]  # rank 1 is whole and larger
    assert broken(value, r_held({1: ("0-3", "")})) == []


def test_a_node_whose_slot_needs_a_gpu_moves_only_to_a_node_with_one() -> None:
    request = [node_vertex(1, slot_vertex(1, ("core", ONE), ("gpu", 1)))]
    value = allocation_input(r_pool((2, 1), (4, 0)), request)
    assert broken(value, r_held({0: ("0-1", "0")})) == []
    request = [node_vertex(1, slot_vertex(1, ("core", 1), ("gpu", ONE)))]
    value = allocation_input(r_pool((1, 1), (1, 2)), request, r_held({1: ("0", "")}))
    assert broken(value, r_held({0: ("0", "0")})) == []  # rank 1's GPUs, but no core


def test_a_hostile_request_is_judged_by_the_other_rules_past_the_search_bound() -> None:
    # 64 nodes of 64 cores, slots of at least one core: the search stops at its bound, so an
    # answer that leaves a core free is not judged by the division rules; on 4 nodes it is.
    big = r_pool(*[(64, 0)] * 64)
    request = [slot_vertex(ONE, ("core", ONE))]
    answer = r_held({r: ("0-63" if r else "0-62", "") for r in range(64)})
    assert broken(allocation_input(big, request), answer) == []
    small = allocation_input(r_pool(*[(4, 0)] * 4), request)
    assert broken(small, r_held({r: ("0-3" if r else "0-2", "") for r in range(4)})) == ["largest"]
    # 44 nodes of 12 cores take some 125,000 steps of the 200,000 the search may take: judged.
    many = allocation_input(r_pool(*[(12, 0)] * 44), request)
    answer = r_held({r: ("0-11" if r else "0-10", "") for r in range(44)})
    assert broken(many, answer) == ["largest"]
    # Two kinds of such slots on one node: 40 cores take some 124,000 steps, judged; 64 cores
    # take more than 200,000, not judged.
    two = [*request, slot_vertex(ONE, ("core", ONE), label="a")]
    assert broken(allocation_input(r_pool((40, 0)), two), r_held({0: ("0-38", "")})) == ["largest"]
    assert broken(allocation_input(r_pool((64, 0)), two), r_held({0: ("0-62", "")})) == []


def test_a_node_of_core_slots_and_gpu_slots_uses_both() -> None:
    kinds = [slot_vertex(ONE, ("core", 1)), slot_vertex(ONE, ("gpu", 1), label="a")]
    value = allocation_input(r_pool((4, 2)), [node_vertex(1, *kinds)])
    answer = r_held({0: ("0-3", "0-1")})
    assert broken(value, answer) == []
    assert slots_said(value, answer) == [6]


def test_a_lone_node_of_a_gpu_slot_moves_only_to_more_gpus() -> None:
    request = [node_vertex(1, slot_vertex(1, ("gpu", ONE)))]
    value = allocation_input(r_pool((1, 1), (1, 1)), request)
    assert broken(value, r_held({0: ("", "0")})) == []
    value = allocation_input(r_pool((1, 1), (1, 2)), request)
    assert broken(value, r_held({0: ("", "0")})) == ["largest"]


def test_two_lone_slots_on_one_node_need_one_way_to_share_it() -> None:
    # Rank 0's four cores as two slots of at least one core; rank 1 has two free.  Shared 2 + 2,
    # neither slot would be larger on rank 1 (1 + 3 would not do: the one-core slot would).
    request = [slot_vertex(1, ("core", ONE)), slot_vertex(1, ("core", ONE), label="a")]
    value = allocation_input(r_pool((4, 0), (4, 0)), request, r_held({1: ("0-1", "")}))
    assert broken(value, r_held({0: ("0-3", "")})) == []
    value = allocation_input(r_pool((4, 0), (4, 0)), request, r_held({1: ("0", "")}))
    assert broken(value, r_held({0: ("0-3", "")})) == ["largest"]  # rank 1 has three


def test_slots_of_ranged_cores_and_gpus_are_found_in_any_order() -> None:
    # Two slots of 2 or 3 cores and 1 or 2 GPUs holding 6 cores and 2 GPUs: 3 + 1 each.
    cores = {"min": 2, "max": 3, "operator": "+", "operand": 1}
    gpus = {"min": 1, "max": 2, "operator": "+", "operand": 1}
    value = allocation_input(r_pool((6, 2)), [slot_vertex(2, ("core", cores), ("gpu", gpus))])
    assert broken(value, r_held({0: ("0-5", "0-1")})) == []
    assert slots_said(value, r_held({0: ("0-5", "0-1")})) == [2]


def test_a_node_of_two_slot_kinds_is_found_in_any_order() -> None:
    # A one-GPU slot, then a slot of 1 or 2 cores and 1 or 2 GPUs: on 2 cores and 2 GPUs the
    # second is 2 cores and 1 GPU.
    ranged = {"min": 1, "max": 2, "operator": "+", "operand": 1}
    kinds = [
        slot_vertex(1, ("gpu", 1)),
        slot_vertex(1, ("core", ranged), ("gpu", ranged), label="a"),
    ]
    value = allocation_input(r_pool((2, 2)), [node_vertex(1, *kinds)])
    assert broken(value, r_held({0: ("0-1", "0-1")})) == []


def test_two_slot_vertices_on_one_node_are_found_in_any_order() -> None:
    # The same as a node's two slot kinds, as two vertices of the request.
    ranged = {"min": 1, "max": 2, "operator": "+", "operand": 1}
    request = [
        slot_vertex(1, ("gpu", 1)),
        slot_vertex(1, ("core", ranged), ("gpu", ranged), label="a"),
    ]
    value = allocation_input(r_pool((2, 2)), request)
    assert broken(value, r_held({0: ("0-1", "0-1")})) == []
