"""``flux-conformance diff``: it finds planted disagreements, shrinks them, and is repeatable."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings

from flux_conformance.reference.errors import FormatError
from flux_conformance.reference.operations import run as reference_run
from flux_conformance.runner.adapters.base import Reply
from flux_conformance.runner.adapters.inprocess import InProcessAdapter, ReferenceImplementation
from flux_conformance.runner.cases import load_suite
from flux_conformance.runner.cli import main
from flux_conformance.runner.operations import load_registry
from flux_conformance.runner.tools.diff import (
    DiffResult,
    Disagreement,
    compare_replies,
    differential,
)
from flux_conformance.runner.tools.diff_cases import REQUIREMENT_PLACEHOLDER, render_cases
from flux_conformance.runner.tools.strategies import STRATEGIES


def _reference(operation: str, value: Any) -> dict[str, Any]:
    try:
        return {"output": reference_run(operation, value)}
    except FormatError as exc:
        return {"error": {"category": exc.category, "message": str(exc)}}


class DropsBigIds:
    """idset.decode that loses every id above 1000 (a planted bug)."""

    def run(self, operation: str, value: Any, /, **options: Any) -> dict[str, Any]:
        outcome = _reference(operation, value)
        if "output" in outcome:
            outcome["output"] = [i for i in outcome["output"] if i <= 1000]
        return outcome


class RefusesBrackets:
    """hostlist.decode that refuses any input with a bracket (a planted bug)."""

    def run(self, operation: str, value: Any, /, **options: Any) -> dict[str, Any]:
        if "[" in value:
            return {"error": {"category": "syntax", "message": "no brackets here"}}
        return _reference(operation, value)


class Slow:
    """Right, but slow: each answer takes 20 ms."""

    def run(self, operation: str, value: Any, /, **options: Any) -> dict[str, Any]:
        time.sleep(0.02)
        return _reference(operation, value)


def _adapters(impl: Any) -> tuple[InProcessAdapter, InProcessAdapter]:
    return InProcessAdapter(impl, name="planted"), InProcessAdapter(ReferenceImplementation())


def test_finds_and_shrinks_planted_big_id_bug() -> None:
    impl, against = _adapters(DropsBigIds())
    result = differential("idset.decode", impl, against, examples=300, seconds=60, seed=7)
    assert result.disagreements
    first = result.disagreements[0]
    # Shrunk to the edge of the bug: the largest id is the first above 1000, and the input is
    # tiny ("1001" itself, or "0-1001": which one depends on hypothesis's shrinker version).
    ids = reference_run("idset.decode", first.input)
    assert max(ids) == 1001
    assert len(first.input) <= len("0-1001")
    assert first.expected == Reply("output", ids)
    assert first.actual == Reply("output", [i for i in ids if i <= 1000])
    # Every disagreement found is a real one, and each is a different kind.
    for found in result.disagreements:
        assert any(i > 1000 for i in reference_run("idset.decode", found.input))
    assert len({d.signature for d in result.disagreements}) == len(result.disagreements)


def test_finds_and_shrinks_planted_bracket_bug() -> None:
    impl, against = _adapters(RefusesBrackets())
    result = differential(
        "hostlist.decode", impl, against, examples=200, seconds=60, seed=3, max_found=1
    )
    inputs = [d.input for d in result.disagreements]
    assert inputs
    assert all("[" in text for text in inputs)
    # Shrunk: a single bracketed id, perhaps with a one-character prefix (the exact form
    # depends on hypothesis's shrinker version).
    assert len(min(inputs, key=len)) <= len("a[0]")


def test_same_seed_same_result() -> None:
    def run(seed: int) -> list[Any]:
        impl, against = _adapters(DropsBigIds())
        result = differential("idset.decode", impl, against, examples=150, seconds=60, seed=seed)
        return [(d.input, d.signature) for d in result.disagreements]

    assert run(11) == run(11)


def test_agreeing_implementations_find_nothing() -> None:
    impl, against = _adapters(ReferenceImplementation())
    result = differential("idset.decode", impl, against, examples=60, seconds=60, seed=1)
    assert result.disagreements == []
    assert result.rounds == 1
    assert 0 < result.evaluated <= 60


def test_bounded_by_seconds() -> None:
    impl, against = _adapters(Slow())
    start = time.monotonic()
    result = differential("idset.decode", impl, against, examples=10_000, seconds=1.0, seed=1)
    elapsed = time.monotonic() - start
    assert result.out_of_time
    assert elapsed < 5  # the budget, plus at most a few in-flight answers
    assert result.disagreements == []


def test_bounded_by_examples() -> None:
    impl, against = _adapters(ReferenceImplementation())
    result = differential("hostlist.decode", impl, against, examples=25, seconds=60, seed=2)
    assert result.evaluated <= 25


def test_bounded_by_max_found() -> None:
    impl, against = _adapters(RefusesBrackets())
    result = differential(
        "hostlist.decode", impl, against, examples=300, seconds=60, seed=3, max_found=1
    )
    assert len(result.disagreements) == 1


def test_compare_replies_uses_the_operation_comparator() -> None:
    from flux_conformance.runner.oracle import reference_oracle

    op = load_registry()["idset.encode"]
    oracle = reference_oracle()
    # Two different strings for one set agree: the comparator decodes both.
    assert compare_replies(op, Reply("output", "1,2,3"), Reply("output", "1-3"), oracle) is None
    assert compare_replies(op, Reply("output", "1-4"), Reply("output", "1-3"), oracle)
    assert compare_replies(op, Reply("error", "limit"), Reply("error", "limit"), oracle) is None
    assert compare_replies(op, Reply("error", "limit"), Reply("error", "invalid"), oracle)
    assert compare_replies(op, Reply("output", "1"), Reply("error", "invalid"), oracle)
    assert compare_replies(op, Reply("output", 5), Reply("output", "5"), oracle)  # not a string
    assert "failed to answer" in str(
        compare_replies(op, Reply("errored", message="boom"), Reply("output", "1"), oracle)
    )
    # A refusal without a category agrees with any refusal: there is no category to compare.
    assert compare_replies(op, Reply("error", "unknown"), Reply("error", "limit"), oracle) is None
    assert compare_replies(op, Reply("error", "unknown"), Reply("output", "1"), oracle)
    # An adapter bound is compared only when the implementation answered where the other refuses.
    seen = Reply("bound", "output", "too long to list")
    assert "adapter bound" in str(compare_replies(op, seen, Reply("error", "limit"), oracle))
    assert compare_replies(op, seen, Reply("output", "1"), oracle) is None
    assert (
        compare_replies(op, Reply("bound", None, "not asked"), Reply("error", "x"), oracle) is None
    )


@pytest.mark.parametrize("operation", sorted(STRATEGIES))
def test_strategies_give_inputs_of_the_operation(operation: str) -> None:
    op = load_registry()[operation]
    seen: list[Any] = []

    @settings(max_examples=60, database=None, deadline=None)
    @given(STRATEGIES[operation]())
    def check(value: Any) -> None:
        assert op.input_problems(value) == []
        seen.append(value)

    check()
    # Near-valid inputs really occur: some are refused by the reference, some accepted.
    outcomes = {"output" if "output" in _reference(operation, v) else "error" for v in seen}
    assert outcomes == {"output", "error"}


def _result(*found: Disagreement) -> DiffResult:
    result = DiffResult("idset.decode", seed=5)
    result.disagreements.extend(found)
    return result


def test_rendered_cases_load_as_a_case_file(tmp_path: Path) -> None:
    found = [
        Disagreement(
            "idset.decode", "1001", Reply("output", []), Reply("output", [1001]), "differs", ()
        ),
        Disagreement(
            "idset.decode", "no", Reply("output", [1]), Reply("error", "syntax"), "differs", ()
        ),
        Disagreement(
            "idset.decode", "1e3", Reply("output", [1]), Reply("errored", message="x"), "", ()
        ),
    ]
    text = render_cases(
        _result(*found),
        impl_name="planted",
        against_name="reference",
        requirement="rfc22.ascending",
    )
    assert "level: reviewer to choose" in text
    assert "replace it with the precise" in text
    assert "# not written: reference answered errored" in text
    suite_dir = tmp_path / "suite"
    (suite_dir / "requirements").mkdir(parents=True)
    (suite_dir / "requirements" / "rfc22.yaml").write_text(
        (Path(__file__).parents[2] / "cases" / "requirements" / "rfc22.yaml").read_text()
    )
    (suite_dir / "rfc22").mkdir()
    (suite_dir / "rfc22" / "idset.decode.yaml").write_text(text)
    suite = load_suite(suite_dir)
    cases = {c.input: c for c in suite.cases}
    assert set(cases) == {"1001", "no"}  # "no" stayed a string
    assert cases["1001"].expected_json() == {"output": [1001]}
    assert cases["no"].expected_json() == {"error": "syntax"}
    assert cases["no"].level == "must"
    assert "Found by flux-conformance diff (seed 5)" in cases["no"].description


def test_rendered_cases_of_one_edition_name_it(tmp_path: Path) -> None:
    found = Disagreement(
        "idset.decode", "1001", Reply("output", []), Reply("output", [1001]), "differs", ()
    )
    result = _result(found)
    result.edition = "2025-07-31"
    text = render_cases(result, impl_name="a", against_name="b", requirement="rfc22.ascending")
    assert "--edition 2025-07-31" in text.splitlines()[0]
    suite_dir = tmp_path / "suite"
    (suite_dir / "rfc22").mkdir(parents=True)
    (suite_dir / "rfc22" / "idset.decode.yaml").write_text(text)
    (case,) = load_suite(suite_dir).cases
    assert case.edition == "2025-07-31"


def test_rendered_cases_without_requirement_say_so() -> None:
    found = Disagreement(
        "idset.decode", "1", Reply("output", []), Reply("output", [1]), "differs", ()
    )
    text = render_cases(_result(found), impl_name="a", against_name="b", requirement=None)
    assert REQUIREMENT_PLACEHOLDER in text
    assert "will not" in text
    doc = yaml.safe_load(text)
    assert doc["cases"][0]["requirements"] == [REQUIREMENT_PLACEHOLDER]


# -- the command -------------------------------------------------------------------------------

_PLANTED = """
from flux_conformance.reference.errors import FormatError
from flux_conformance.reference.operations import run


class DropsBigIds:
    def run(self, operation, value, **options):
        try:
            out = run(operation, value)
        except FormatError as exc:
            return {"error": {"category": exc.category, "message": str(exc)}}
        return {"output": [i for i in out if i <= 1000]}
"""


@pytest.fixture
def planted_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "planted_diff_impl.py").write_text(_PLANTED)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "python:planted_diff_impl:DropsBigIds"


def test_cli_diff_writes_cases_and_exits_1(
    planted_module: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "found.yaml"
    argv = ["diff", "--impl", planted_module, "-o", "idset.decode", "--seed", "4"]
    code = main([*argv, "--examples", "200", "--max", "1", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 1
    assert "seed 4" in err
    doc = yaml.safe_load(out.read_text())
    assert doc["operation"] == "idset.decode"
    found = doc["cases"][0]
    assert len(found["input"]) <= len("0-1001")  # shrunk (exact form depends on hypothesis)
    assert max(found["output"]) == 1001
    assert found["output"] == reference_run("idset.decode", found["input"])
    # The proposed requirement exists in the suite.
    assert doc["cases"][0]["requirements"][0] in load_suite().requirements


_OLDER_TEXTS = """
from flux_conformance.reference.errors import FormatError
from flux_conformance.reference.operations import run


class FollowsOlderTexts:
    # Whatever edition it is asked for, it allocates as the 2025-07-31 texts say (no nslots).
    def run(self, operation, value, **options):
        try:
            return {"output": run(operation, value, edition="2025-07-31")}
        except FormatError as exc:
            return {"error": {"category": exc.category, "message": str(exc)}}
"""


def test_cli_diff_follows_the_edition_it_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "older_texts_impl.py").write_text(_OLDER_TEXTS)
    monkeypatch.syspath_prepend(str(tmp_path))
    argv = ["diff", "--impl", "python:older_texts_impl:FollowsOlderTexts", "-o", "sched.allocate"]
    argv += ["--seed", "3", "--examples", "40", "--seconds", "60", "--max", "1"]
    # Judged by the latest texts, an allocation without nslots breaks a rule...
    out = tmp_path / "found.yaml"
    assert main([*argv, "--out", str(out)]) == 1
    doc = yaml.safe_load(out.read_text())
    assert "nslots" in doc["cases"][0]["output"]["execution"]
    assert "edition" not in doc["cases"][0]
    # ...and by the texts it follows, it keeps them all.
    assert main([*argv, "--edition", "2025-07-31"]) == 0
    assert "edition 2025-07-31" in capsys.readouterr().err
    assert main([*argv, "--edition", "no-such-edition"]) == 2


def test_cli_diff_agreement_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["diff", "--impl", "reference", "-o", "range.decode", "--seed", "1"]
    assert main([*argv, "--examples", "30", "--seconds", "30"]) == 0
    captured = capsys.readouterr()
    assert "no disagreement found" in captured.err
    assert captured.out == ""


def test_cli_diff_usage_errors(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["diff", "--impl", "reference", "-o", "no.such.op"]) == 2
    assert main(["diff", "--impl", "reference", "-o", "idset.decod"]) == 2
    assert "did you mean 'idset.decode'?" in capsys.readouterr().err
    monkeypatch.delitem(STRATEGIES, "R.decode")
    assert main(["diff", "--impl", "reference", "-o", "R.decode"]) == 2
    assert "no input strategy" in capsys.readouterr().err
    monkeypatch.undo()
    for bad in (["--timeout", "0"], ["--memory", "-1"], ["--max-answer-bytes", "0"]):
        with pytest.raises(SystemExit) as exc:
            main(["diff", "--impl", "reference", "-o", "idset.decode", *bad])
        assert exc.value.code == 2
    assert main(["diff", "--impl", "python:nonexistent_module_x:Y", "-o", "idset.decode"]) == 3
    with pytest.raises(SystemExit) as exc:
        main(["diff", "-o", "idset.decode"])  # --impl is required
    assert exc.value.code == 2


def test_cli_diff_without_hypothesis(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "hypothesis", None)
    assert main(["diff", "--impl", "reference", "-o", "idset.decode"]) == 2
    # An install line that works in a checkout, where the suite is no package index's name.
    assert "pip install '.[diff]'" in capsys.readouterr().err


def test_cli_diff_same_seed_same_file(
    planted_module: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    texts = []
    for name in ("a.yaml", "b.yaml"):
        argv = ["diff", "--impl", planted_module, "-o", "idset.decode", "--seed", "9"]
        main([*argv, "--examples", "100", "--max", "1", "--out", str(tmp_path / name)])
        texts.append((tmp_path / name).read_text())
    capsys.readouterr()
    assert texts[0] == texts[1]
    assert json.dumps(texts[0])  # non-empty, printable


def test_compare_replies_survives_a_very_deep_output() -> None:
    from flux_conformance.runner.oracle import reference_oracle

    deep: Any = [{"type": "a", "count": 1}]
    for _ in range(10_000):
        deep = [{"type": "a", "count": 1, "with": deep}]
    op = load_registry()["shape.parse"]
    reason = compare_replies(op, Reply("output", deep), Reply("error", "limit"), reference_oracle())
    assert reason  # different kinds: no need to look inside
    reason = compare_replies(op, Reply("output", deep), Reply("output", deep), reference_oracle())
    # A reason, not a RecursionError (from the registry's check or from diff's own guard).
    assert reason
    assert "deep" in reason


@pytest.mark.parametrize("brk", ["\n", "\r", "\r\n", "\x85", "\u2028", "\u2029"])
def test_a_name_cannot_write_yaml_into_the_case_file(brk: str) -> None:
    # `diff --impl` is typed by a person or pasted by a CI script: a line break in it would end
    # the comment it is shown in and start keys of its own.
    planted = f"exec:impl{brk}expected_injected: 1{brk}cases: []{brk}#"
    found = Disagreement(
        "idset.decode", "1001", Reply("output", []), Reply("output", [1001]), "differs", ()
    )
    result = _result(found)
    result.edition = f"2025-07-31{brk}edition_injected: 1"
    text = render_cases(result, impl_name=planted, against_name=planted, requirement=None)
    doc = yaml.safe_load(text)
    assert set(doc) == {"operation", "cases"}
    (case,) = doc["cases"]
    assert set(case) == {"id", "description", "input", "output", "requirements", "edition"}
    assert case["edition"] == result.edition  # the value itself goes through the dumper
    assert planted.split(brk, maxsplit=1)[0] in text.splitlines()[0]
