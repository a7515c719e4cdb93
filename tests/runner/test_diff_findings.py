"""The findings run: how a disagreement is classified, and the table docs/diff.md shows."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

from flux_conformance.reference.errors import FormatError
from flux_conformance.reference.operations import run as reference_run
from flux_conformance.runner.adapters.base import Reply
from flux_conformance.runner.adapters.inprocess import InProcessAdapter, ReferenceImplementation
from flux_conformance.runner.cases import load_suite
from flux_conformance.runner.tools.diff import Disagreement
from flux_conformance.runner.tools.diff_findings import classify, features

ROOT = Path(__file__).resolve().parents[2]


def _run_all() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "run_all", ROOT / "tests" / "differential" / "run_all.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class WrapsRanks:
    """The reference, except that R ranks and core ids are read modulo 2**32."""

    def run(self, operation: str, value: Any, /, **options: Any) -> dict[str, Any]:
        text = json.dumps(value).replace("4294967296", "0")
        try:
            return {"output": reference_run(operation, json.loads(text))}
        except FormatError as exc:
            return {"error": {"category": exc.category, "message": str(exc)}}


def _r(rank: str, core: str = "0", host: str = "n0") -> dict[str, Any]:
    entry = {"rank": rank, "children": {"core": core}}
    return {"version": 1, "execution": {"R_lite": [entry], "nodelist": [host]}}


def _classify(found: list[Disagreement], known: dict[str, list[str]]) -> list[str]:
    suite = load_suite()
    cases = suite.by_id()
    findings = classify(
        found,
        implementation="planted",
        edition="2026-08-13",
        known_failures=lambda op: [cases[i] for i in known.get(op, [])],
        cases=suite.cases,
        impl=InProcessAdapter(WrapsRanks()),
        reference=InProcessAdapter(ReferenceImplementation()),
    )
    return [f"{f.kind}:{f.covered_by}" for f in findings]


def test_features_say_what_an_input_is_made_of() -> None:
    found = features({"ranks": ["4294967296", "h 0"], "n": 2**64, "x": [], "é": None})
    assert {"key:ranks", "int<2^53", "int>=2^64", "whitespace", "char: ", "[]", "None"} <= found
    assert "char:é" not in found  # keys are named whole, not by character
    assert features("nöde") >= {"char:ö", "string"}


def test_each_kind_of_finding() -> None:
    wrapped = _r("4294967296")
    found = [
        # The implementation crashed: an artefact, never a case.
        Disagreement(
            "R.decode", wrapped, Reply("errored", message="boom"), Reply("output"), "", ()
        ),
        # A case of the suite has this very input.
        Disagreement(
            "R.decode",
            load_suite().by_id()["R.decode.rank-past-2-32"].input,
            Reply("output", []),
            Reply("output", []),
            "",
            (),
        ),
        # The reference refuses with limit, the implementation answers: the readings allow it.
        Disagreement(
            "R.decode",
            _r("7", "18446744073709551617", "x9"),
            Reply("output"),
            Reply("error", "limit"),
            "",
            (),
        ),
        # A wrapped rank, with no known failure of its kind: new.
        Disagreement("R.decode", _r("0,4294967296"), Reply("output"), Reply("output"), "", ()),
    ]
    assert _classify(found, {}) == [
        "artefact:",
        "covered:a case with this input",
        "limit:",
        "new:",
    ]


def test_a_known_failure_of_the_same_kind_covers_a_finding() -> None:
    finding = Disagreement(
        "R.decode", _r("4294967296", core="1"), Reply("output"), Reply("output"), "", ()
    )
    assert _classify([finding], {"R.decode": ["R.decode.rank-past-2-32"]}) == [
        "covered:R.decode.rank-past-2-32"
    ]
    # Without the number range past 2**32 in the known failure, it covers nothing.
    assert _classify([finding], {"R.decode": ["R.decode.no-gpu"]}) == ["new:"]


def test_a_set_operation_is_classified_by_its_invalid_side() -> None:
    union = {"a": _r("0"), "b": _r("0,4294967296", host="n[0-1]")}
    finding = Disagreement("R.union", union, Reply("output"), Reply("error", "invalid"), "", ())
    (kind,) = _classify([finding], {})
    assert kind.startswith("new:R.validate of b")


def test_the_findings_table_is_generated_from_the_findings_file() -> None:
    run_all = _run_all()
    data = json.loads((ROOT / "docs" / "diff-findings.json").read_text())
    block = run_all.render_block(data)
    assert block in (ROOT / "docs" / "diff.md").read_text()
    assert "/tmp" not in block


def test_the_recorded_command_leaves_out_where_it_wrote() -> None:
    run_all = _run_all()
    argv = ["--per-pair", "5", "--out", "DIR", "--table=docs/diff.md", "--impl", "pdsh"]
    assert run_all._command(argv) == "tox -e diff -- --per-pair 5 --impl pdsh"


class RoundsDown:
    """idset.encode that writes every id past 2**64 - 1 as 2**64 - 1 (libslurm's reading)."""

    def run(self, operation: str, value: Any, /, **options: Any) -> dict[str, Any]:
        clamped = sorted({min(i, 2**64 - 1) for i in value})
        return {"output": ",".join(map(str, clamped))}


def test_an_encoder_past_the_limit_is_judged_by_its_ids() -> None:
    suite = load_suite()
    for value, kind in (([5, 2**64 + 5], "new"), ([5, 6], "limit")):
        found = Disagreement(
            "idset.encode", value, Reply("output"), Reply("error", "limit"), "", ()
        )
        (finding,) = classify(
            [found],
            implementation="planted",
            edition="2026-08-13",
            known_failures=lambda op: [],
            cases=suite.cases,
            impl=InProcessAdapter(RoundsDown()),
            reference=InProcessAdapter(ReferenceImplementation()),
        )
        assert finding.kind == kind


def test_a_clarification_the_implementation_passes_covers_a_finding_it_permits() -> None:
    # flux-core reads "n|ot a a" as (n|ot) & a & a, the reference as n | (ot & a & a): the text
    # leaves the precedence of | against a blank open, and a clarification case says so.
    finding = Disagreement(
        "constraint.parse_query", "n|ot a a", Reply("output", {}), Reply("output", {}), "", ()
    )
    (kind,) = _classify([finding], {})
    assert kind == "covered:constraint.parse_query.or-then-juxtaposition"
    # A refusal no clarification case permits stays new.
    refused = Disagreement(
        "constraint.parse_query", "n|ot a a", Reply("error", "syntax"), Reply("output"), "", ()
    )
    assert _classify([refused], {}) == ["new:"]
