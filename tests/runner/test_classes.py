"""Input classes: declared per operation, named by cases, reported by ``coverage``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support import MINI

from flux_conformance.runner.cases import SuiteError, load_suite
from flux_conformance.runner.cli import main
from flux_conformance.runner.tools.coverage import class_coverage, class_gaps, coverage_report

HEAD = "operation: idset.decode\n"
CLASSES = (
    "classes:\n"
    "  - id: range-long\n    description: five ids or more\n"
    "  - id: letters\n    description: letters\n    kinds: [invalid]\n    why: never valid\n"
)
CASES = (
    "cases:\n"
    "  - id: x.long\n    description: x\n    input: '0-4'\n    output: [0, 1, 2, 3, 4]\n"
    "    classes: [range-long]\n    requirements: [mini.ascending]\n"
    "  - id: x.letters\n    description: x\n    input: 'a'\n    error: syntax\n"
    "    classes: [letters]\n    requirements: [mini.ascending]\n"
)


@pytest.fixture
def suite_dir(tmp_path: Path) -> Path:
    shutil.copytree(MINI, tmp_path / "suite")
    return tmp_path / "suite"


def _write(root: Path, text: str) -> Path:
    path = root / "rfc22" / "classes.yaml"
    path.write_text(text)
    return path


def _problems(root: Path) -> list[str]:
    with pytest.raises(SuiteError) as info:
        load_suite(root)
    return [str(p) for p in info.value.problems]


def test_classes_load_and_cases_name_them(suite_dir: Path) -> None:
    _write(suite_dir, HEAD + CLASSES + CASES)
    suite = load_suite(suite_dir)
    assert [c.id for c in suite.classes["idset.decode"]] == ["range-long", "letters"]
    letters = suite.classes["idset.decode"][1]
    assert letters.kinds == ("invalid",)
    assert letters.why == "never valid"
    assert suite.by_id()["x.long"].classes == ("range-long",)
    assert suite.by_id()["mini.range"].classes == ()


def test_unknown_class_is_a_case_file_error_with_its_line(suite_dir: Path) -> None:
    path = _write(suite_dir, HEAD + CLASSES + CASES.replace("[letters]", "[letter]"))
    (problem,) = _problems(suite_dir)
    assert problem.startswith(f"{path}:20: case 'x.letters' names unknown input class 'letter'")
    assert "declared: letters, range-long" in problem


def test_class_declared_twice(suite_dir: Path) -> None:
    doubled = CLASSES + "  - id: letters\n    description: again\n"
    path = _write(suite_dir, HEAD + doubled + CASES)
    (problem,) = _problems(suite_dir)
    assert problem.startswith(f"{path}:9: duplicate input class 'letters' for idset.decode")


def test_one_kind_needs_a_reason(suite_dir: Path) -> None:
    path = _write(suite_dir, HEAD + CLASSES.replace("    why: never valid\n", "") + CASES)
    (problem,) = _problems(suite_dir)
    assert problem.startswith(f"{path}:5: classes.1: 'why' is a required property")


def test_bad_class_id(suite_dir: Path) -> None:
    _write(suite_dir, HEAD + CLASSES.replace("range-long", "Range Long") + CASES)
    assert any("does not match" in p for p in _problems(suite_dir))


def test_a_case_is_valid_when_an_output_is_permitted(suite_dir: Path) -> None:
    suite = load_suite(suite_dir)
    by_id = suite.by_id()
    assert by_id["mini.range"].kind == "valid"
    assert by_id["mini.degenerate"].kind == "valid"  # one_of: an output or an error
    assert {c.kind for c in suite.cases} == {"valid", "invalid"}


def test_gaps_name_the_missing_kind(suite_dir: Path) -> None:
    _write(
        suite_dir,
        HEAD + CLASSES.replace("    kinds: [invalid]\n    why: never valid\n", "") + CASES,
    )
    suite = load_suite(suite_dir)
    assert class_gaps(suite) == [
        "idset.decode range-long: no invalid case",
        "idset.decode letters: no valid case",
    ]
    rows = {r.input_class.id: r for r in class_coverage(suite)["idset.decode"]}
    assert (rows["range-long"].valid, rows["range-long"].invalid) == (1, 0)
    report = coverage_report(suite)
    assert "  range-long" in report
    assert "NO INVALID" in report
    assert "2 class gap(s)" in report


def test_operation_with_cases_but_no_classes_is_a_gap(suite_dir: Path) -> None:
    suite = load_suite(suite_dir)
    assert "idset.decode: no input classes declared" in class_gaps(suite)


def test_the_bundled_suite_has_every_class_covered() -> None:
    suite = load_suite()
    assert class_gaps(suite) == []
    assert set(suite.classes) == set(suite.operations)
    for op, items in suite.classes.items():
        assert len(items) >= 5, f"{op} declares only {len(items)} input classes"


def test_every_bundled_case_of_an_operation_names_a_class_or_most_do() -> None:
    suite = load_suite()
    untagged = [c.id for c in suite.cases if not c.classes]
    assert len(untagged) < len(suite.cases) // 4, untagged[:20]


def test_coverage_command_reports_classes_and_cases_per_requirement(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["coverage"]) == 0
    out = capsys.readouterr().out
    assert "input classes, per operation" in out
    assert "every input class has its cases" in out
    assert "cases per requirement:" in out
    assert "rfc22.ranges" in out.split("cases per requirement:")[1]
