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
from flux_conformance.runner.comparators.allocation import facts, rule_breaches
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


def test_a_ranged_slot_holds_the_most_its_own_node_has_free() -> None:
    taken = r_doc([("1", "0-1")], "n1")
    value = {"pool": POOL, "jobspec": jobspec(nodes(2, {"min": 2})), "allocated": [taken]}
    # Rank 0 has 4 cores free and rank 1 has 2: each slot takes all of its node's.
    assert verdict(value, r_doc([("0", "0-3"), ("1", "2-3")], "n[0-1]")) is None
    assert "rank 0 holds 2 core(s)" in verdict(value, r_doc([("0-1", "2-3")], "n[0-1]"))
    known = facts(value, reference_oracle(OLDER))["counts"]
    assert known["held_per_rank"] == {"0": [4, 0], "1": [2, 0], "2": [4, 0], "3": [4, 0]}
    assert known["slots_per_rank"] == dict.fromkeys("0123", 1)
    assert known["nodes"] == 2


@pytest.mark.parametrize(
    ("value", "actual", "reason"),
    [
        ({"pool": POOL, "jobspec": jobspec(nodes(1))}, {"version": 1}, "valid: not a valid R"),
        (
            {"pool": POOL, "jobspec": jobspec(nodes(1))},
            r_doc([("7", "0")], "n7"),
            "subset: rank 7 is not in the pool",
        ),
        (
            {"pool": POOL, "jobspec": jobspec(nodes(1))},
            r_doc([("0", "0")], "x0"),
            "subset: rank 0 is host 'x0'",
        ),
        (
            {
                "pool": POOL,
                "jobspec": jobspec(nodes(1)),
                "allocated": [r_doc([("0", "0")], "n0")],
            },
            r_doc([("0", "0")], "n0"),
            "subset: rank 0 holds cores or GPUs that are not free",
        ),
        (
            {"pool": POOL, "jobspec": jobspec(nodes(1))},
            r_doc([("0", "0")], "n0", properties={"ssd": "0"}),
            "subset: rank 0 has properties the pool does not give it",
        ),
        (
            {"pool": POOL, "jobspec": jobspec(nodes(1), constraints={"properties": ["ssd"]})},
            r_doc([("0", "0")], "n0"),
            "constraint: rank 0 does not satisfy the constraint",
        ),
        (
            {"pool": POOL, "jobspec": jobspec(nodes(2))},
            r_doc([("0", "0")], "n0"),
            "counts: holds 1 node(s); the node count asks for 2",
        ),
        (
            {"pool": POOL, "jobspec": jobspec(nodes({"min": 1}))},
            r_doc([("0-1", "0")], "n[0-1]"),
            "counts: holds 2 node(s); the node count asks for 4",
        ),
        (
            {"pool": POOL, "jobspec": jobspec(nodes(1, 2))},
            r_doc([("0", "0-2")], "n0"),
            "counts: rank 0 holds 3 core(s)",
        ),
        (
            {"pool": POOL, "jobspec": jobspec(nodes(1, {"min": 1}))},
            r_doc([("0", "0")], "n0"),
            "counts: rank 0 holds 1 core(s) and 0 GPU(s); its slot holds the largest acceptable "
            "count free there: 4 and 0",
        ),
        (
            {
                "pool": POOL,
                "jobspec": jobspec(nodes(1, {"min": 1, "max": 3, "operator": "+", "operand": 1})),
            },
            r_doc([("0", "0-3")], "n0"),
            "counts: rank 0 holds 4 core(s) and 0 GPU(s); its slot holds the largest acceptable "
            "count free there: 3 and 0",
        ),
        (
            {
                "pool": POOL,
                "jobspec": jobspec(nodes(1, {"min": 1, "max": 4, "operator": "*", "operand": 2})),
                "allocated": [r_doc([("0", "0")], "n0")],
            },
            r_doc([("0", "1-3")], "n0"),  # 1, 2 or 4 cores, and 3 are free here: 2
            "counts: rank 0 holds 3 core(s) and 0 GPU(s); its slot holds the largest acceptable "
            "count free there: 2 and 0",
        ),
        (
            {"pool": POOL, "jobspec": jobspec(nodes(1, exclusive=True))},
            r_doc([("0", "0-3")], "n0"),
            "counts: rank 0 is exclusive but not allocated whole",  # the GPU is missing
        ),
        (
            {
                "pool": POOL,
                "jobspec": jobspec(
                    [
                        {
                            "type": "slot",
                            "label": "s",
                            "count": 2,
                            "with": [{"type": "core", "count": 2}],
                        }
                    ]
                ),
            },
            r_doc([("0", "0-2"), ("1", "0")], "n[0-1]"),
            "counts: rank 0 holds 3 core(s) and 0 GPU(s): not a whole number of slots",
        ),
        (
            {"pool": POOL, "jobspec": jobspec(nodes(1), duration=60), "now": 100},
            r_doc([("0", "0")], "n0", starttime=100),
            "times: expiration is None; now + duration is 160",
        ),
        (
            {"pool": POOL, "jobspec": jobspec(nodes(1)), "now": 100},
            r_doc([("0", "0")], "n0", starttime=99),
            "times: starttime is 99; now is 100",
        ),
    ],
)
def test_each_rule_rejects_a_wrong_allocation(value: Any, actual: Any, reason: str) -> None:
    found = verdict(value, actual)
    assert found is not None
    assert found.startswith(reason)


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
    assert "breaks the counts rule" in (verdict(value, wrong, first) or "")
    assert "keeps the counts rule" in (verdict(value, first, wrong) or "")


def test_facts_are_json() -> None:
    import json

    value = {"pool": POOL, "jobspec": jobspec(nodes(2)), "now": 5}
    known = facts(value, reference_oracle(OLDER))
    assert json.loads(json.dumps(known)) == known
    assert known["counts"]["nodes"] == 2
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
    assert [rule for rule, _ in found] == ["counts", "times"]


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
