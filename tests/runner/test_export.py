"""The exported suite: valid against its schema, judges as the YAML does, judgeable without
the runner's comparators."""

from __future__ import annotations

import json
import time
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from flux_conformance.runner._schemas import schema
from flux_conformance.runner.adapters.inprocess import InProcessAdapter, ReferenceImplementation
from flux_conformance.runner.cases import load_suite
from flux_conformance.runner.cli import main
from flux_conformance.runner.engine import Filters, run_cases
from flux_conformance.runner.oracle import reference_oracle
from flux_conformance.runner.tools.export import (
    export_suite,
    large_integers,
    source_of,
    suite_from_export,
)


@cache
def _export() -> dict[str, Any]:
    suite = load_suite()
    filters = Filters()
    cases = [c for c in suite.cases if filters.accepts(c)]
    # A round trip through JSON text, as a consumer reads it.
    return json.loads(
        json.dumps(export_suite(suite, cases, oracle=reference_oracle, filters=filters))
    )


def test_export_follows_its_schema():
    jsonschema.Draft202012Validator(schema("export.json")).validate(_export())


def test_export_command_and_schema_option(capsys, tmp_path):
    out = tmp_path / "suite.json"
    assert (
        main(["export", "-o", "idset.*", "--exclude-level", "clarification", "--out", str(out)])
        == 0
    )
    doc = json.loads(out.read_text())
    assert doc["suite"]["filters"] == {
        "operations": ["idset.*"],
        "exclude_levels": ["clarification"],
    }
    assert {c["operation"] for c in doc["cases"]} == {"idset.decode", "idset.encode"}
    assert all(c["level"] != "clarification" for c in doc["cases"])
    capsys.readouterr()
    assert main(["export", "--schema"]) == 0
    assert json.loads(capsys.readouterr().out)["$id"] == "flux-conformance/export.json"


class _OneWrongOutput:
    """Right everywhere except that every output gets one element more (or a stray key)."""

    def run(self, operation: str, input: Any, /, **options: Any) -> Any:
        reply = ReferenceImplementation().run(operation, input, **options)
        if "output" in reply:
            value = reply["output"]
            if isinstance(value, list):
                return {"output": [*value, value[-1] if value else 0]}
            if isinstance(value, dict):
                return {"output": {**value, "stray": 1}}
        return reply


@pytest.mark.parametrize("impl", [ReferenceImplementation, _OneWrongOutput])
def test_the_suite_rebuilt_from_its_export_judges_alike(impl, tmp_path):
    suite = load_suite()
    rebuilt = suite_from_export(_export(), source=tmp_path / "export.json")
    by_id = suite.by_id()
    originals = [by_id[c.id] for c in rebuilt.cases]
    verdicts = []
    for cases, operations in ((originals, suite.operations), (rebuilt.cases, rebuilt.operations)):
        adapter = InProcessAdapter(impl())
        verdicts.append(
            [
                (r.case.id, r.outcome.value)
                for r in run_cases(cases, adapter, operations, oracle=reference_oracle)
            ]
        )
    assert verdicts[0] == verdicts[1]
    assert len(verdicts[0]) == len(_export()["cases"])
    if impl is _OneWrongOutput:
        assert {v for _, v in verdicts[0]} >= {"passed", "failed"}


# -- a consumer in another language, written from docs/export.md alone --------------------------
#
# It has its own implementation of every operation (here: the reference, standing for the
# implementation under test, whose decoders the decode cases test) and uses only the export's
# data to judge: no runner comparator and no second opinion from the reference.


def _json_equal(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_json_equal, a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    return bool(a == b)


def _collapse(node: Any) -> Any:
    while isinstance(node, dict) and "children" in node and len(node["children"]) == 1:
        node = node["children"][0]
    if isinstance(node, dict) and "children" in node:
        return {**node, "children": [_collapse(c) for c in node["children"]]}
    return node


def _count_means(count: Any, mine: Any) -> Any:
    if isinstance(count, int) and not isinstance(count, bool):
        return {"values": [count]}
    if isinstance(count, str):
        reply = mine("range.decode", count)
        if "output" in reply:
            count = reply["output"]
        else:
            return {"values": mine("idset.decode", count)["output"]}
    low, high = count["min"], count.get("max")
    operator, operand = count.get("operator", "+"), count.get("operand", 1)
    if high is None:
        return {"min": low, "operator": operator, "operand": operand}
    values, value = [], low
    while value <= high:
        values.append(value)
        following = {"+": value + operand, "*": value * operand, "^": value**operand}[operator]
        if following <= value:
            break
        value = following
    return {"values": values}


def _normalise(resources: Any, mine: Any) -> Any:
    return [
        {
            **v,
            **({"count": _count_means(v["count"], mine)} if "count" in v else {}),
            **({"with": _normalise(v["with"], mine)} if "with" in v else {}),
        }
        for v in resources
    ]


def _conforms(comparator: str, expected: dict[str, Any], actual: Any, mine: Any) -> bool:
    hint = expected.get("hint", {})
    if comparator == "exact":
        return _json_equal(expected["output"], actual)
    if comparator == "idset_string":
        ids = mine("idset.decode", actual).get("output")
        return ids == [i for lo, hi in hint["intervals"] for i in range(lo, hi + 1)]
    if comparator == "hostlist_string":
        return mine("hostlist.decode", actual).get("output") == hint["hosts"]
    if comparator == "slurm_tree":
        return _json_equal(_collapse(actual), hint["tree"])
    if comparator in ("validation", "validation_warnings"):
        ok = isinstance(actual, dict) and set(actual) == {"warnings"}
        return ok and (comparator == "validation" or bool(actual["warnings"]) == hint["warnings"])
    if comparator in ("rset_decoded", "rset_document"):
        same = mine("R.decode", actual).get("output") == hint["ranks"]
        times = all(
            actual["execution"].get(k) == hint[k]
            for k in ("starttime", "expiration")
            if comparator == "rset_document"
        )
        return same and times
    if comparator == "constraint_semantic":
        return all(
            mine("constraint.match", {"constraint": actual, "R": p["R"]}).get("output")
            == p["selects"]
            for p in hint["probes"]
        )
    if comparator == "shape_counts":
        return _json_equal(_normalise(actual, mine), hint["resources"])
    if comparator == "jobspec_from_shape":
        return _json_equal(_normalise(actual["resources"], mine), hint["resources"])
    if comparator == "allocation_rules":
        return _allocation_conforms(expected["output"], hint["facts"], actual, mine)
    raise AssertionError(f"the export names a comparator docs/export.md does not: {comparator}")


def _allocation_conforms(figures: Any, facts: Any, actual: Any, mine: Any) -> bool:
    """docs/export.md, "Judging an allocation", step by step."""
    decoded = mine("R.decode", actual).get("output")
    if decoded is None:
        return False
    ids = lambda text: set(mine("idset.decode", text)["output"])  # noqa: E731
    got = {
        d["rank"]: (d["hostname"], ids(d["cores"]), ids(d["gpus"]), set(d["properties"]))
        for d in decoded
    }
    for rank, (host, cores, gpus, props) in got.items():  # steps 1 and 2
        entry = facts["ranks"].get(str(rank))
        if entry is None or entry["host"] != host:
            return False
        if not (cores <= set(entry["cores"]) and gpus <= set(entry["gpus"])):
            return False
        if not props <= set(entry["properties"]) or not entry["eligible"]:
            return False
    # Step 3 (the division) is left out: docs/export.md allows it, at the cost of accepting
    # answers the suite refuses.
    execution = actual["execution"]
    times = facts["times"]  # step 4
    start, end = execution.get("starttime"), execution.get("expiration")
    low = times["now"] if times["now"] is not None else times["floor"]
    high = times["now"] if times["now"] is not None else time.time() + 1
    if start not in (None, 0) and not low <= start <= high:
        return False
    bound = times["pool_expiration"]
    if times["duration"] > 0:
        cut = bound is not None and bound < high + times["duration"] and end == bound
        if not cut and not (
            isinstance(end, int | float)
            and low + times["duration"] <= end <= high + times["duration"]
            and (times["now"] is None or end == times["now"] + times["duration"])
            and (start in (None, 0) or end == start + times["duration"])
        ):
            return False
    elif end != bound and not (bound is None and end in (None, 0)):
        return False
    if facts["newer"]:  # step 5
        nslots = execution.get("nslots")
        if not isinstance(nslots, int) or nslots < 1:
            return False
        if any(k.startswith("+") for k in execution.get("properties", {})):
            return False
    elif (
        facts["pool_scheduling"] is not None
        and actual.get("scheduling") == facts["pool_scheduling"]
    ):
        return False
    have = {  # step 6
        "nodes": len(got),
        "cores": sum(len(c) for _, c, _, _ in got.values()),
        "gpus": sum(len(g) for _, _, g, _ in got.values()),
        "nslots": execution.get("nslots"),
        "properties": sorted(execution.get("properties", {})),
        "starttime": start or None,
        "expiration": end or None,
    }
    for key, want in figures.items():
        if key in have and have[key] != want:
            return False
        if key == "cores_per_rank" and any(len(c) != want for _, c, _, _ in got.values()):
            return False
        if key in ("ranks", "ranks_within"):
            allowed = ids(want)
            if not set(got) <= allowed or (key == "ranks" and set(got) != allowed):
                return False
    return True


def test_a_consumer_judges_every_case_from_the_export_alone():
    doc = _export()
    impl = ReferenceImplementation()

    def mine(operation: str, value: Any) -> Any:
        return impl.run(operation, value)

    for case in doc["cases"]:
        reply = impl.run(case["operation"], case["input"], edition=case["edition"])
        comparator = doc["operations"][case["operation"]]["comparator"]
        if "error" in reply:
            assert any(o.get("error") == reply["error"]["category"] for o in case["expected"]), (
                case["id"]
            )
            continue
        outputs = [o for o in case["expected"] if "output" in o]
        assert any(_conforms(comparator, o, reply["output"], mine) for o in outputs), case["id"]


def test_a_consumer_catches_wrong_answers_from_the_export_alone():
    doc = _export()
    impl = ReferenceImplementation()

    def mine(operation: str, value: Any) -> Any:
        return impl.run(operation, value)

    def expected_of(case_id: str) -> tuple[str, dict[str, Any]]:
        case = next(c for c in doc["cases"] if c["id"] == case_id)
        return doc["operations"][case["operation"]]["comparator"], case["expected"][0]

    comparator, expected = expected_of("idset.encode.run-of-three")
    assert not _conforms(comparator, expected, "1-4", mine)
    assert _conforms(comparator, expected, "[1,2,3]", mine)
    comparator, expected = expected_of("shape.parse.count-three-digits")
    wrong = [
        {"type": "slot", "count": 12, "label": "default", "with": [{"type": "node", "count": 1}]}
    ]
    assert not _conforms(comparator, expected, wrong, mine)
    right = [
        {"type": "slot", "count": "123", "label": "default", "with": [{"type": "node", "count": 1}]}
    ]
    assert _conforms(comparator, expected, right, mine)
    comparator, expected = expected_of("sched.allocate.fixed-nodes-two-of-four")
    pool = next(c for c in doc["cases"] if c["id"] == "sched.allocate.fixed-nodes-two-of-four")
    right = impl.run("sched.allocate", pool["input"])["output"]
    assert _conforms(comparator, expected, right, mine)
    whole = {
        **right,
        "execution": {
            **right["execution"],
            "R_lite": [{"rank": "0-1", "children": {"core": "0-3"}}],
        },
    }
    assert not _conforms(comparator, expected, whole, mine)


def test_exported_case_sources_are_paths_in_the_repository():
    root = Path(__file__).resolve().parents[2]
    for case in _export()["cases"]:
        path, line = case["source"].rsplit(":", 1)
        assert path.startswith("cases/"), case["source"]
        lines = (root / path).read_text(encoding="utf-8").splitlines()
        assert f"id: {case['id']}" in lines[int(line) - 1], case["source"]


def test_a_suite_of_its_own_is_named_from_its_folder():
    from support import MINI

    suite = load_suite(MINI)
    case = suite.cases[0]
    assert source_of(case, suite) == f"mini-suite/rfc22/idset.decode.yaml:{case.line}"


def test_each_comparator_has_its_own_description():
    doc = _export()
    comparators = doc["comparators"]
    used = {op["comparator"] for op in doc["operations"].values()}
    assert set(comparators) == used
    # Not an operation's words: no description is the comparator_doc of an operation that
    # shares its comparator with others, and no two comparators share a description.
    assert len(set(comparators.values())) == len(comparators)
    for name, text in comparators.items():
        sharing = [op for op in doc["operations"].values() if op["comparator"] == name]
        if len(sharing) > 1:
            assert all(text != op["comparator_doc"] for op in sharing), name
    assert comparators["exact"].startswith("JSON equality")


# -- integers a double cannot hold -------------------------------------------------------------


def test_integers_past_2_53_are_present_and_documented():
    found = [
        value
        for case in _export()["cases"]
        for value in large_integers([case["input"], case["expected"]])
    ]
    # The docs say some integers exceed 2**53, some 2**64 too; counted here, never by hand.
    assert found
    assert any(v > 2**64 for v in found)
    root = Path(__file__).resolve().parents[2]
    for doc in ("docs/export.md", "docs/protocol.md"):
        text = (root / doc).read_text(encoding="utf-8")
        assert "2**53" in text, doc
        assert "UseNumber" in text, doc
        assert "BigInt" in text, doc


def test_large_integers_walks_json_values():
    assert list(large_integers({"a": [2**53, 2**53 + 1, True, -(2**60)], "b": "9" * 30})) == [
        2**53 + 1,
        -(2**60),
    ]


def test_every_registered_comparator_is_described():
    from flux_conformance.runner.comparators import COMPARATORS, DESCRIPTIONS

    assert set(COMPARATORS) <= set(DESCRIPTIONS)
    assert all(DESCRIPTIONS[name].strip() for name in COMPARATORS)
