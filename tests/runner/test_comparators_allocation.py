"""Tests for ``allocation_rules``, the comparator of ``sched.allocate``.

Each rule is shown rejecting a hand-made wrong allocation, and every case of
``cases/sched/sched.allocate.yaml`` is shown able to fail: at least one plausible wrong
scheduler (the reference with one rule broken) gets a verdict other than passed on it.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from flux_conformance.reference import allocate
from flux_conformance.reference.errors import FormatError
from flux_conformance.reference.operations import DEFAULT_EDITION, EDITIONS, run
from flux_conformance.runner.adapters.base import Reply
from flux_conformance.runner.cases import load_suite
from flux_conformance.runner.comparators import COMPARATORS
from flux_conformance.runner.comparators.allocation import CHECKS, facts, rule_breaches
from flux_conformance.runner.engine import Outcome, judge
from flux_conformance.runner.oracle import reference_oracle

OLDER, NEWER = EDITIONS[0], EDITIONS[-1]
rules = COMPARATORS["allocation_rules"]

POOL = {
    "version": 1,
    "execution": {
        "R_lite": [{"rank": "0-3", "children": {"core": "0-3", "gpu": "0"}}],
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


def nodes(count: Any, cores: int = 1, **extra: Any) -> list[Any]:
    slot = {"type": "slot", "label": "s", "count": 1, "with": [{"type": "core", "count": cores}]}
    return [{"type": "node", "count": count, "with": [slot], **extra}]


def r_doc(entries: list[tuple[str, str]], hosts: str, **execution: Any) -> dict[str, Any]:
    return {
        "version": 1,
        "execution": {
            "R_lite": [{"rank": r, "children": {"core": c}} for r, c in entries],
            "nodelist": [hosts],
            **execution,
        },
    }


def verdict(value: dict[str, Any], actual: Any, expected: Any = None, edition: str = OLDER) -> Any:
    return rules(expected or {}, actual, reference_oracle(edition), value)


def test_the_reference_answer_conforms() -> None:
    value = {"pool": POOL, "jobspec": jobspec(nodes(2, 2))}
    for edition in EDITIONS:
        answer = run("sched.allocate", value, edition=edition)
        assert verdict(value, answer, {"nodes": 2, "cores": 4}, edition) is None


def slots(count: Any, *leaves: tuple[str, Any], label: str = "s") -> dict[str, Any]:
    """A slot vertex of ``count`` slots holding the given (type, count) leaves."""
    return {
        "type": "slot",
        "label": label,
        "count": count,
        "with": [{"type": kind, "count": n} for kind, n in leaves],
    }


def r_gpus(entries: list[tuple[str, str, str]], hosts: str, **execution: Any) -> dict[str, Any]:
    """An R whose entries are (ranks, cores, gpus)."""
    children = [
        {"rank": r, "children": {"core": c, "gpu": g} if g else {"core": c}} for r, c, g in entries
    ]
    return {"version": 1, "execution": {"R_lite": children, "nodelist": [hosts], **execution}}


def two_kinds(count: int) -> list[Any]:
    """``count`` nodes, each with a slot of 2 cores and a slot of a core and a GPU."""
    kinds = [slots(1, ("core", 2)), slots(1, ("core", 1), ("gpu", 1), label="a")]
    return [{"type": "node", "count": count, "with": kinds}]


def test_a_ranged_slot_holds_the_most_its_own_node_has_free() -> None:
    taken = r_doc([("1", "0-1")], "n1")
    value = {"pool": POOL, "jobspec": jobspec(nodes(2, {"min": 2})), "allocated": [taken]}
    # Ranks 0, 2 and 3 have 4 cores free and rank 1 has 2: each slot takes all of its node's.
    # Which two nodes is open (how the free part is shared among several slots).
    assert verdict(value, r_doc([("0", "0-3"), ("2", "0-3")], "n[0,2]")) is None
    assert verdict(value, r_doc([("0", "0-3"), ("1", "2-3")], "n[0-1]")) is None
    assert (verdict(value, r_doc([("0-1", "2-3")], "n[0-1]")) or "").startswith("largest:")
    # One slot alone goes where the most is free.
    value["jobspec"] = jobspec(nodes(1, {"min": 2}))
    assert verdict(value, r_doc([("0", "0-3")], "n0")) is None
    assert (verdict(value, r_doc([("1", "2-3")], "n1")) or "").startswith("largest:")


_4 = {"pool": POOL}

#: For every check, inputs and wrong answers that this check alone refuses, with the edition
#: (None: every edition).  Removing any check from CHECKS fails a line.
ONLY: list[tuple[str, str | None, dict[str, Any], Any]] = [
    ("valid", None, {**_4, "jobspec": jobspec(nodes(1))}, {"version": 1}),
    ("subset", None, {**_4, "jobspec": jobspec(nodes(1))}, r_doc([("0", "0")], "x0")),
    (
        "subset",
        None,
        {**_4, "jobspec": jobspec(nodes(1)), "allocated": [r_doc([("0", "0")], "n0")], "now": 5},
        r_doc([("0", "0")], "n0", starttime=5),
    ),
    (
        "subset",
        None,
        {**_4, "jobspec": jobspec(nodes(1))},
        r_doc([("0", "0")], "n0", properties={"ssd": "0"}),
    ),
    (
        "constraint",
        None,
        {**_4, "jobspec": jobspec(nodes(1), constraints={"properties": ["ssd"]})},
        r_doc([("0", "0")], "n0"),
    ),
    # The 4-core slot split over two nodes (3 cores on rank 0, the rest on rank 1).
    (
        "division",
        None,
        {**_4, "jobspec": jobspec([slots(1, ("core", 4)), slots(1, ("core", 1), label="a")])},
        r_doc([("0", "0-2"), ("1", "0-1")], "n[0-1]"),
    ),
    # A GPU slot on a node where it holds no GPU.
    (
        "division",
        None,
        {**_4, "jobspec": jobspec(two_kinds(2))},
        r_gpus([("0", "0-2", "0"), ("1", "0-2", "")], "n[0-1]"),
    ),
    ("division", None, {**_4, "jobspec": jobspec(nodes(2))}, r_doc([("0", "0")], "n0")),
    ("division", None, {**_4, "jobspec": jobspec(nodes(1, 2))}, r_doc([("0", "0-2")], "n0")),
    # Exclusive, but the node's GPU is missing.
    (
        "division",
        None,
        {**_4, "jobspec": jobspec(nodes(1, exclusive=True))},
        r_doc([("0", "0-3")], "n0"),
    ),
    # Two nodes where four are free.
    (
        "largest",
        None,
        {**_4, "jobspec": jobspec(nodes({"min": 1}))},
        r_doc([("0-1", "0")], "n[0-1]"),
    ),
    ("largest", None, {**_4, "jobspec": jobspec(nodes(1, {"min": 1}))}, r_doc([("0", "0")], "n0")),
    # 1, 2 or 4 cores, and 3 are free on every node: 2.
    (
        "largest",
        None,
        {
            **_4,
            "jobspec": jobspec(nodes(1, {"min": 1, "max": 4, "operator": "*", "operand": 2})),
            "allocated": [r_doc([("0-3", "0")], "n[0-3]")],
            "now": 1,
        },
        r_doc([("0", "1")], "n0", starttime=1),
    ),
    # Two min-only slots on one node: how they share it is open, but a core left free is not.
    (
        "largest",
        None,
        {
            **_4,
            "jobspec": jobspec([slots(2, ("core", {"min": 1}))]),
            "allocated": [r_doc([("1-3", "0-3")], "n[1-3]")],
            "now": 1,
        },
        r_doc([("0", "0-2")], "n0", starttime=1),
    ),
    # First fit on a rank with fewer free cores than another free rank.
    (
        "largest",
        None,
        {
            **_4,
            "jobspec": jobspec([slots(1, ("core", {"min": 1}))]),
            "allocated": [r_doc([("0", "0-1")], "n0")],
            "now": 1,
        },
        r_doc([("0", "2-3")], "n0", starttime=1),
    ),
    # A correct R plus expiration 3600, with duration 0 and a pool that never expires.
    (
        "times",
        None,
        {**_4, "jobspec": jobspec(nodes(2, 2))},
        r_doc([("0-1", "0-1")], "n[0-1]", expiration=3600),
    ),
    # A start in the future, with no now given.
    (
        "times",
        None,
        {**_4, "jobspec": jobspec(nodes(1))},
        r_doc([("0", "0")], "n0", starttime=4_000_000_000),
    ),
    (
        "times",
        None,
        {**_4, "jobspec": jobspec(nodes(1), duration=60), "now": 100},
        r_doc([("0", "0")], "n0", starttime=100),
    ),
    (
        "times",
        None,
        {**_4, "jobspec": jobspec(nodes(1)), "now": 100},
        r_doc([("0", "0")], "n0", starttime=99),
    ),
    # nslots 1 where the request has 4 slots (2 nodes of 2 slot kinds).
    (
        "nslots",
        NEWER,
        {**_4, "jobspec": jobspec(two_kinds(2))},
        r_gpus([("0-1", "0-2", "0")], "n[0-1]", nslots=1),
    ),
    ("nslots", NEWER, {**_4, "jobspec": jobspec(nodes(2))}, r_doc([("0-1", "0")], "n[0-1]")),
    (
        "instance-local",
        NEWER,
        {**_4, "jobspec": jobspec(nodes(2))},
        r_doc([("0-1", "0")], "n[0-1]", nslots=2, properties={"+q": "0-1"}),
    ),
]

_GRAPH = {"graph": {"nodes": [], "edges": []}}
ONLY.append(
    (
        "scheduling",
        OLDER,
        {"pool": {**POOL, "scheduling": _GRAPH}, "jobspec": jobspec(nodes(1))},
        {**r_doc([("0", "0")], "n0"), "scheduling": _GRAPH},
    )
)


@pytest.mark.parametrize(
    ("check", "edition", "value", "actual"),
    ONLY,
    ids=[f"{check}-{index}" for index, (check, *_) in enumerate(ONLY)],
)
def test_each_check_alone_refuses_a_wrong_answer(
    check: str, edition: str | None, value: Any, actual: Any
) -> None:
    for each in [edition] if edition else EDITIONS:
        oracle = reference_oracle(each)
        found = rule_breaches(value, actual, oracle)
        if each == NEWER and edition is None:
            # The newer texts also want nslots: the answer with the nslots that breaks least.
            found = min(
                (rule_breaches(value, _with_nslots(actual, n), oracle) for n in range(1, 9)),
                key=len,
            )
        assert [rule for rule, _ in found] == [check], (each, found)


def _with_nslots(actual: Any, n: int) -> Any:
    if "execution" not in actual:
        return actual
    return {**actual, "execution": {**actual["execution"], "nslots": n}}


def test_every_check_has_a_wrong_answer_only_it_refuses() -> None:
    assert {"valid", *CHECKS} == {check for check, *_ in ONLY}


def test_the_scheduling_key_rides_along_in_the_newer_texts() -> None:
    _, _, value, actual = ONLY[-1]
    answer = {**actual, "execution": {**actual["execution"], "nslots": 1}}
    assert rule_breaches(value, answer, reference_oracle(NEWER)) == []


def test_without_now_the_clock_lies_between_the_floor_and_the_judgement() -> None:
    import time

    value = {"pool": POOL, "jobspec": jobspec(nodes(1), duration=60)}
    start = time.time()
    good = r_doc([("0", "0")], "n0", starttime=start, expiration=start + 60)
    assert verdict(value, good) is None
    assert verdict(value, r_doc([("0", "0")], "n0", expiration=start + 60)) is None
    early = r_doc([("0", "0")], "n0", expiration=3600)  # now read as 0: an R ended in 1970
    assert (verdict(value, early) or "").startswith("times: expiration is 3600")
    skew = r_doc([("0", "0")], "n0", starttime=start, expiration=start + 61)
    assert (verdict(value, skew) or "").startswith("times:")


def test_an_expired_allocation_frees_its_resources() -> None:
    ended = r_doc([("0-3", "0-3")], "n[0-3]", expiration=50)
    value = {"pool": POOL, "jobspec": jobspec(nodes(1)), "allocated": [ended], "now": 50}
    assert verdict(value, r_doc([("0", "0")], "n0", starttime=50)) is None
    value["now"] = 49
    assert (verdict(value, r_doc([("0", "0")], "n0", starttime=49)) or "").startswith("subset:")


def test_a_hostile_request_is_not_searched_past_the_budget() -> None:
    import time

    big = {
        "version": 1,
        "execution": {
            "R_lite": [{"rank": "0-63", "children": {"core": "0-63"}}],
            "nodelist": ["n[0-63]"],
        },
    }
    request = jobspec([slots({"min": 1}, ("core", {"min": 1}))])
    value = {"pool": big, "jobspec": request, "now": 1}
    answer = r_doc([("0-63", "0-63")], "n[0-63]", starttime=1)
    started = time.perf_counter()
    assert verdict(value, answer) is None
    assert time.perf_counter() - started < 20


def test_the_newer_texts_want_nslots_and_no_instance_local_property() -> None:
    value = {"pool": POOL, "jobspec": jobspec(nodes(2))}
    plain = r_doc([("0-1", "0")], "n[0-1]")
    assert verdict(value, plain, edition=OLDER) is None
    assert "nslots is None" in (verdict(value, plain, edition=NEWER) or "")
    wrong = r_doc([("0-1", "0")], "n[0-1]", nslots=3)
    assert "the allocation holds 2 slot(s)" in (verdict(value, wrong, edition=NEWER) or "")
    local = r_doc([("0-1", "0")], "n[0-1]", nslots=2, properties={"+q": "0-1"})
    assert "instance-local property '+q'" in (verdict(value, local, edition=NEWER) or "")
    assert verdict(value, r_doc([("0-1", "0")], "n[0-1]", nslots=2), edition=NEWER) is None


def test_determined_figures_are_compared() -> None:
    value = {"pool": POOL, "jobspec": jobspec(nodes({"min": 1}))}
    answer = run("sched.allocate", value, edition=OLDER)
    assert verdict(value, answer, {"nodes": 4, "ranks": "0-3", "cores_per_rank": 1}) is None
    assert "nodes is 4; the case determines 3" in (verdict(value, answer, {"nodes": 3}) or "")
    assert "outside '0-2'" in (verdict(value, answer, {"ranks_within": "0-2"}) or "")
    assert "properties is" in (verdict(value, answer, {"properties": ["ssd"]}) or "")


def test_against_another_answer_only_a_rule_one_breaks_is_a_disagreement() -> None:
    value = {"pool": POOL, "jobspec": jobspec(nodes(1))}
    first = r_doc([("0", "0")], "n0")
    second = r_doc([("2", "3")], "n2")
    assert verdict(value, second, first) is None  # different, both right
    wrong = r_doc([("0", "0-1")], "n0")
    assert "breaks the division rule" in (verdict(value, wrong, first) or "")
    assert "keeps the division rule" in (verdict(value, first, wrong) or "")


def test_facts_are_json() -> None:
    import json

    value = {"pool": POOL, "jobspec": jobspec(nodes(2)), "now": 5}
    known = facts(value, reference_oracle(OLDER))
    assert json.loads(json.dumps(known)) == known
    assert known["request"][0]["count"] == {"values": [2]}
    assert known["times"]["now"] == 5
    assert known["ranks"]["1"]["properties"] == ["+q", "ssd"]


# -- every case can fail ---------------------------------------------------------------------


@contextmanager
def _patched(target: Any, name: str, value: Any) -> Iterator[None]:
    saved = getattr(target, name)
    setattr(target, name, value)
    try:
        yield
    finally:
        setattr(target, name, saved)


@contextmanager
def _both(first: Any, second: Any) -> Iterator[None]:
    with first, second:
        yield


def _smallest(count: Any, available: int) -> int | None:
    return count.min if available >= count.min else None


def _everything(count: Any, available: int) -> int | None:
    return available if available >= count.min else None


def _load_ignoring(cls: Any, pool_doc: Any, allocated: Any = ()) -> Any:
    return _ORIGINAL_LOAD(pool_doc, ())


_ORIGINAL_LOAD = allocate.Pool.load
_ORIGINAL_READ = allocate._read_vertex


def _shared(vertex: Any, path: Any, edition: str) -> Any:
    read = _ORIGINAL_READ(vertex, path, edition)
    if hasattr(read, "exclusive"):
        return dataclasses.replace(read, exclusive=False)
    return read


#: Plausible wrong schedulers: the reference with one rule broken.
WRONG: dict[str, Callable[[], Any]] = {
    "smallest acceptable count": lambda: _patched(allocate, "_largest", _smallest),
    "every free resource": lambda: _both(
        _patched(allocate, "_largest", _everything),
        _patched(allocate, "_upper", lambda count: None),
    ),
    "allocations ignored": lambda: _patched(allocate.Pool, "load", classmethod(_load_ignoring)),
    "constraint ignored": lambda: _patched(allocate, "_eligible", lambda js, pool: pool.ranks),
    "nothing exclusive": lambda: _patched(allocate, "_read_vertex", _shared),
    "no times": lambda: _patched(allocate, "_times", lambda s, now, pool: (None, None)),
}


def _answer(case: Any, edition: str) -> Reply:
    try:
        return Reply("output", run(case.operation, copy.deepcopy(case.input), edition=edition))
    except FormatError as exc:
        return Reply("error", exc.category)


_SWAP = {"busy": "unsatisfiable", "unsatisfiable": "busy", "invalid": "unsatisfiable"}


def _variants(case: Any, edition: str) -> Iterator[tuple[str, Reply]]:
    for name, patch in WRONG.items():
        with patch():
            yield name, _answer(case, edition)
    right = _answer(case, edition)
    if right.kind == "error":
        yield "wrong error category", Reply("error", _SWAP.get(str(right.value), "invalid"))
    elif edition != OLDER:
        yield "older texts", _answer(case, OLDER)


_SUITE = load_suite()
_CASES = [c for c in _SUITE.cases if c.operation == "sched.allocate"]


@pytest.mark.parametrize("case", _CASES, ids=[c.id for c in _CASES])
def test_every_case_can_fail(case: Any) -> None:
    edition = case.edition or DEFAULT_EDITION
    op = _SUITE.operations["sched.allocate"]
    oracle = reference_oracle(edition)
    assert judge(case, _answer(case, edition), op, oracle).outcome is Outcome.PASSED
    caught = [
        name
        for name, reply in _variants(case, edition)
        if judge(case, reply, op, oracle).outcome is not Outcome.PASSED
    ]
    assert caught, f"{case.id}: no wrong scheduler fails it"


def test_breaches_list_every_rule_broken() -> None:
    value = {"pool": POOL, "jobspec": jobspec(nodes(1), duration=10), "now": 1}
    found = rule_breaches(value, r_doc([("0", "0-1")], "n0"), reference_oracle(OLDER))
    assert [rule for rule, _ in found] == ["division", "times"]


def test_the_adapters_doc_counts_flux_cores_scheduling_findings() -> None:
    import re
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parents[2]
    doc = (root / "docs" / "adapters.md").read_text(encoding="utf-8")
    stated = re.search(r"\*\*scheduling\*\* \(`sched\.allocate`, (\d+);", doc)
    assert stated is not None
    path = root / "runner" / "adapters" / "thirdparty" / "expectations" / "flux-core.yaml"
    entries = yaml.safe_load(path.read_text(encoding="utf-8"))["expectations"]
    assert int(stated.group(1)) == sum(e["id"].startswith("sched.allocate.") for e in entries)


def _case_input(case_id: str) -> Any:
    return copy.deepcopy(next(c for c in _CASES if c.id == f"sched.allocate.{case_id}").input)


def _right(value: Any, edition: str) -> dict[str, Any]:
    return run("sched.allocate", copy.deepcopy(value), edition=edition)


def test_the_answers_that_used_to_be_accepted_are_refused() -> None:
    """Wrong answers built from the suite's own inputs, each once accepted by the comparator."""
    value = _case_input("two-requests-one-after-another")
    split = r_doc([("0", "0-2"), ("1", "0-1")], "n[0-1]")  # the 4-core slot: 3 + 1
    for edition in EDITIONS:
        found = rule_breaches(value, split, reference_oracle(edition))
        assert next(rule for rule, _ in found) == "division"
    value = _case_input("two-slot-kinds-per-node")
    no_gpu = r_gpus([("0", "0-2", "0"), ("1", "0-2", "")], "g[0-1]")
    assert verdict(value, no_gpu, edition=OLDER).startswith("division:")
    right = _right(value, NEWER)
    assert verdict(value, right, edition=NEWER) is None
    one = {**right, "execution": {**right["execution"], "nslots": 1}}
    assert verdict(value, one, edition=NEWER).startswith("nslots:")
    for case_id, extra in (
        ("fixed-nodes-two-of-four", {"expiration": 3600}),
        ("fixed-one-core-of-four", {"starttime": 99999}),
        ("fixed-one-core-of-four", {"starttime": 4_000_000_000}),
    ):
        value = _case_input(case_id)
        for edition in EDITIONS:
            right = _right(value, edition)
            assert verdict(value, right, edition=edition) is None
            # (as the reference answered then: no starttime without now)
            kept = {k: v for k, v in right["execution"].items() if k != "starttime"}
            wrong = {**right, "execution": {**kept, **extra}}
            assert (verdict(value, wrong, edition=edition) or "").startswith("times:"), case_id
