"""The reference within its documented bounds: small inputs never make huge outputs or messages.

``docs/limits.md`` lists the bounds; each test here names the input that used to break one.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from flux_conformance.reference import _limits, _rset_build, _rset_read, query
from flux_conformance.reference.errors import MAX_REASON, FormatError, LimitError
from flux_conformance.reference.operations import run
from flux_conformance.runner.cases import load_suite


def r_of(ranks: str, nodelist: str, **execution: Any) -> dict[str, Any]:
    return {
        "version": 1,
        "execution": {
            "R_lite": [{"rank": ranks, "children": {"core": "0-127", "gpu": "0-7"}}],
            "nodelist": [nodelist],
            **execution,
        },
    }


def test_a_short_r_naming_millions_of_ranks_is_refused_before_it_is_built() -> None:
    # 121 bytes that named 4,000,000 ranks: R.decode built a 346 MB answer in 2.4 GB.
    small = r_of("0-3999999", "node[0-3999999]", properties={"abc": "0-3999999"})
    assert len(json.dumps(small)) < 200
    for operation, value in (
        ("R.decode", small),
        ("R.validate", small),
        ("R.union", {"a": small, "b": r_of("0", "m0")}),
        ("R.diff", {"a": small, "b": r_of("0", "m0")}),
    ):
        with pytest.raises(LimitError, match="limit is 1000000"):
            run(operation, value)


def test_one_more_rank_than_the_bound_is_refused_and_the_bound_itself_is_not() -> None:
    limit = _limits.MAX_RANKS
    assert run("R.validate", r_of(f"0-{limit - 1}", f"n[0-{limit - 1}]")) == {"warnings": []}
    with pytest.raises(LimitError):
        run("R.validate", r_of(f"0-{limit}", f"n[0-{limit}]"))


@pytest.mark.parametrize("case_id", ["R.decode.alternating-long-property-lists-on-scattered-ranks"])
def test_the_decoded_size_estimate_is_a_lower_bound(case_id: str) -> None:
    cases = load_suite().by_id()
    inputs = [c.input for c in cases.values() if c.operation == "R.decode"]
    inputs.append(r_of("0-20000", "host[0-20000]", properties={"ssd": "5-9999,15000"}))
    assert case_id in cases
    for value in inputs:
        try:
            rset = _rset_read.load(value)[0]
        except FormatError:
            continue
        assert _rset_read._decoded_size(rset) <= len(json.dumps(rset.to_ranks()))


def test_a_decoded_form_over_the_answer_bound_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    value = r_of("0-9999", "host[0-9999]")
    size = len(json.dumps(run("R.decode", value)))
    monkeypatch.setattr(_limits, "MAX_ANSWER_BYTES", size // 2)
    with pytest.raises(LimitError, match="would take at least"):
        run("R.decode", value)


def test_r_encode_refuses_a_rank_r_validate_would_refuse() -> None:
    # R.encode wrote rank 2**64 into an R that R.validate then refused.
    entry = {"rank": 2**64, "hostname": "n", "cores": "0"}
    with pytest.raises(LimitError):
        run("R.encode", [entry])
    with pytest.raises(LimitError):
        run("R.validate", r_of(str(2**64), "n"))
    top = run("R.encode", [{**entry, "rank": 2**64 - 1}])
    assert run("R.validate", top) == {"warnings": []}


def test_r_encode_takes_at_most_the_rank_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_rset_build, "MAX_RANKS", 10)
    ranks = [{"rank": i, "hostname": f"n{i}", "cores": "0"} for i in range(11)]
    with pytest.raises(LimitError, match="11 rank entries"):
        run("R.encode", ranks)
    assert run("R.encode", ranks[:10])["execution"]["nodelist"] == ["n[0-9]"]


@pytest.mark.parametrize("key", ["per_slot", "total"])
def test_a_task_count_has_the_bound_of_every_count(key: str) -> None:
    # A resource count of 2**64 was limit while a task count of 2**64 was accepted.
    value = {"shape": "slot=1/core", "command": ["a"]}
    assert run("jobspec.from_shape", {**value, "tasks": {key: 2**64 - 1}})
    with pytest.raises(LimitError):
        run("jobspec.from_shape", {**value, "tasks": {key: 2**64}})
    with pytest.raises(LimitError):
        run("jobspec.from_shape", {**value, "shape": f"slot={2**64}/core"})
    doc = run("jobspec.from_shape", value)
    doc["tasks"][0]["count"] = {key: 2**64}
    with pytest.raises(LimitError):
        run("jobspec.validate", doc)


def test_a_query_longer_than_its_bound_is_refused_at_once() -> None:
    # 10 MB of "a " took 78 s and 2.2 GB; a 40 MB term 26 s and 4.6 GB.
    with pytest.raises(LimitError, match="the limit is 262144"):
        run("constraint.parse_query", "a " * 5_000_000)
    with pytest.raises(LimitError):
        run("constraint.parse_query", "a" * 40_000_000)
    longest = "a" * query.MAX_QUERY_LENGTH
    assert run("constraint.parse_query", longest) == {"properties": [longest]}


@pytest.mark.parametrize(
    ("operation", "value"),
    [
        ("idset.decode", "1," * 2_000_000 + "x"),
        ("hostlist.decode", "a" * 4_000_000 + "["),
        ("constraint.validate", {"properties": ["a" * 4_000_000 + "|"]}),
        ("jobspec.validate", {"version": 1, "resources": [], "tasks": [], "x" * 4_000_000: 1}),
        ("R.validate", {"version": 1, "execution": {"R_lite": [], "nodelist": ["x" * 10**6]}}),
        ("count.values", "1-" + "9" * 4000),
    ],
)
def test_error_messages_do_not_repeat_a_long_input(operation: str, value: Any) -> None:
    with pytest.raises(FormatError) as info:
        run(operation, value)
    assert len(info.value.reason) <= MAX_REASON + 80
    assert len(str(info.value)) <= 2 * MAX_REASON + 400
