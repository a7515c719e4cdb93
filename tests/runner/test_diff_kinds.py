"""What ``diff`` counts as a disagreement of a new kind, and that it finds independent bugs."""

from __future__ import annotations

import json
from typing import Any

from flux_conformance.reference.errors import FormatError
from flux_conformance.reference.operations import run as reference_run
from flux_conformance.runner.adapters.inprocess import InProcessAdapter, ReferenceImplementation
from flux_conformance.runner.tools.diff import differential
from flux_conformance.runner.tools.diff_kinds import (
    Baseline,
    baseline,
    document_features,
    draw_sample,
    explained,
    kind_of,
)
from flux_conformance.runner.tools.strategies import STRATEGIES

PAIR = ("output", "error:invalid")


def _r(nodelist: list[str], **execution: Any) -> dict[str, Any]:
    lite = [{"rank": str(i), "children": {"core": "0"}} for i in range(len(nodelist))]
    return {"version": 1, "execution": {"R_lite": lite, "nodelist": nodelist, **execution}}


def test_features_name_the_place_of_each_thing() -> None:
    found = document_features(_r(["h 0"], starttime=2**32))
    assert ".execution.nodelist[]:!whitespace" in found
    assert ".execution.starttime:big" in found
    assert ".execution.starttime:int" in found
    # The JSON text's own braces, quotes and separators are no feature.
    assert not any(f.endswith(('char:"', "char::")) for f in found)


def test_characters_count_by_class_where_they_make_one() -> None:
    tab, nul, accent = (document_features(["a\tb"]), document_features(["a\0b"]), ["aéb"])
    assert "[]:!whitespace" in tab
    assert "[]:!control" in nul
    assert "[]:!non-ASCII" in document_features(accent)
    assert "[]:char:-" in document_features(["a-b"])


def test_a_minimal_document_finding_does_not_explain_every_document() -> None:
    # The old test (punctuation of the JSON text) let {"version": 1} explain every R.
    shared = baseline([_r(["n0"]), _r(["n0", "n1"]), _r([])])
    missing = kind_of(PAIR, {"version": 1}, shared)
    assert any(f.startswith("lacks ") for f in missing.features)
    assert not explained(kind_of(PAIR, _r(["n0"], starttime=-1), shared), [missing])


def test_a_version_finding_does_not_explain_a_host_name_finding() -> None:
    shared = baseline([_r(["n0"]), _r(["n0", "n1"]), _r([])])
    version = kind_of(PAIR, {**_r([]), "version": 1.0}, shared)
    host = kind_of(PAIR, _r(["h 0"]), shared)
    assert not explained(host, [version])
    assert explained(kind_of(PAIR, {**_r(["n0"]), "version": 1.0}, shared), [version])
    # Critical features are judged by class and together: a tab is of the kind of a space,
    # and a host name with a space and a NUL is explained by one of each.
    assert explained(kind_of(PAIR, _r(["h\t0"]), shared), [host])
    nul = kind_of(PAIR, _r(["h\x000"]), shared)
    assert not explained(nul, [host])
    assert explained(kind_of(PAIR, _r(["h 0,h\x000"]), shared), [host, nul])


def test_other_outcomes_are_always_new() -> None:
    shared = Baseline()
    assert not explained(
        kind_of(("output", "output"), _r(["n0"]), shared), [kind_of(PAIR, _r(["n0"]), shared)]
    )


def test_text_inputs_keep_the_punctuation_test() -> None:
    bracket = kind_of(PAIR, "n[0-1]", Baseline())
    assert explained(kind_of(PAIR, "n[0-1],m[2]", Baseline()), [bracket])
    assert not explained(kind_of(PAIR, "n0", Baseline()), [bracket])
    assert not explained(kind_of(PAIR, "n,0", Baseline()), [kind_of(PAIR, "n0", Baseline())])


def test_keys_of_data_are_one_place() -> None:
    sample = [_r(["n0"], properties={name: "0"}) for name in "abcdefghijkl"]
    shared = baseline(sample)
    assert ".execution.properties" in shared.maps
    ssd = kind_of(PAIR, _r([], properties={"ssd": "0"}), shared)
    assert explained(kind_of(PAIR, _r([], properties={"amd-mi50@gpu": "0"}), shared), [ssd])


def test_the_baseline_sample_is_the_same_for_the_same_seed() -> None:
    strategy = STRATEGIES["R.validate"]()
    first = draw_sample(strategy, seed=5, count=20)
    assert json.dumps(first) == json.dumps(draw_sample(strategy, seed=5, count=20))
    assert len(first) == 20


def _lax(value: Any) -> Any:
    """The document as a reader with two independent faults sees it."""
    execution = value.get("execution") if isinstance(value, dict) else None
    if not isinstance(execution, dict):
        return value
    execution = dict(execution)
    start, end = execution.get("starttime"), execution.get("expiration")
    if type(start) is type(end) is int and 0 < end < start:
        del execution["expiration"]  # an expiration before the start is ignored
    if isinstance(execution.get("nodelist"), list):
        # whitespace is dropped from host names instead of refused
        execution["nodelist"] = [
            "".join(c for c in h if not c.isspace()) if isinstance(h, str) else h
            for h in execution["nodelist"]
        ]
    return {**value, "execution": execution}


class TwoDocumentBugs:
    """R.validate with two independent faults, each accepting what RFC 20 refuses."""

    def run(self, operation: str, value: Any, /, **options: Any) -> dict[str, Any]:
        try:
            return {"output": reference_run(operation, _lax(value))}
        except FormatError as exc:
            return {"error": {"category": exc.category, "message": str(exc)}}


def test_two_independent_bugs_of_one_outcome_pair_are_both_found() -> None:
    impl = InProcessAdapter(TwoDocumentBugs(), name="planted")
    against = InProcessAdapter(ReferenceImplementation())
    # Both show as an output where the reference refuses, on documents whose JSON text has the
    # same punctuation: the old test of novelty (that punctuation) found only the first.
    result = differential(
        "R.validate", impl, against, examples=300, seconds=60, seed=1, max_found=2
    )
    found = [d.input for d in result.disagreements]
    assert [(d.actual.kind, d.expected.kind) for d in result.disagreements] == [
        ("output", "error"),
        ("output", "error"),
    ]
    hosts = [v for v in found if any(c.isspace() for h in v["execution"]["nodelist"] for c in h)]
    times = [v for v in found if "expiration" in v["execution"]]
    assert hosts, found
    assert times, found
