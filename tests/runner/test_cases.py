"""Loading case files: every problem is reported with file and line, and nothing runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support import MINI

from flux_conformance.runner.cases import SuiteError, default_cases_dir, load_suite


@pytest.fixture
def suite_dir(tmp_path: Path) -> Path:
    shutil.copytree(MINI, tmp_path / "suite")
    return tmp_path / "suite"


def _problems(root: Path) -> list[str]:
    with pytest.raises(SuiteError) as info:
        load_suite(root)
    return [str(p) for p in info.value.problems]


def _write(root: Path, text: str, name: str = "extra.yaml") -> Path:
    path = root / "rfc22" / name
    path.write_text(text)
    return path


def test_mini_suite_loads(mini_suite):
    assert [c.id for c in mini_suite.cases][:2] == ["mini.range", "mini.list"]
    case = mini_suite.by_id()["mini.degenerate"]
    assert case.level == "clarification"
    assert [e.kind for e in case.expected] == ["output", "error"]
    assert case.line == 25
    assert mini_suite.by_id()["mini.range"].level == "must"


def test_duplicate_yaml_key_names_the_line(suite_dir):
    path = _write(
        suite_dir,
        "operation: idset.decode\ncases:\n  - id: a.b\n    description: x\n"
        "    input: '1'\n    input: '2'\n    output: [1]\n    requirements: [mini.ascending]\n",
    )
    assert _problems(suite_dir) == [f"{path}:6: duplicate key 'input' (first on line 5)"]


def test_unknown_field_names_the_line(suite_dir):
    path = _write(
        suite_dir,
        "operation: idset.decode\ncases:\n  - id: a.b\n    description: x\n"
        "    input: '1'\n    output: [1]\n    expect: [1]\n    requirements: [mini.ascending]\n",
    )
    (problem,) = _problems(suite_dir)
    assert problem.startswith(f"{path}:3: cases.0: unknown field")
    assert "expect" in problem


def test_two_expectations_are_refused(suite_dir):
    _write(
        suite_dir,
        "operation: idset.decode\ncases:\n  - id: a.b\n    description: x\n"
        "    input: '1'\n    output: [1]\n    error: syntax\n    requirements: [mini.ascending]\n",
    )
    (problem,) = _problems(suite_dir)
    assert "exactly one of output, error or one_of" in problem


def test_duplicate_ids_across_files(suite_dir):
    path = _write(
        suite_dir,
        "operation: idset.decode\ncases:\n  - id: mini.range\n    description: x\n"
        "    input: '1'\n    output: [1]\n    requirements: [mini.ascending]\n",
    )
    (problem,) = _problems(suite_dir)
    # Files load in name order, so the new file holds the first occurrence.
    assert problem.endswith(f"duplicate case id 'mini.range' (first at {path}:3)")


def test_unknown_operation(suite_dir):
    path = _write(suite_dir, "operation: idset.explode\ncases: []\n")
    (problem,) = _problems(suite_dir)
    assert problem.startswith(f"{path}:1: unknown operation 'idset.explode'")


def test_unregistered_category_and_requirement(suite_dir):
    path = _write(
        suite_dir,
        "operation: idset.decode\ncases:\n  - id: a.b\n    description: x\n"
        "    input: '1'\n    error: wrong\n    requirements: [mini.ascending, nope]\n",
    )
    problems = _problems(suite_dir)
    assert problems[0].startswith(f"{path}:6: error category 'wrong' is not registered")
    assert problems[1] == f"{path}:7: unknown requirement id 'nope'"


def test_input_and_output_checked_against_operation_schemas(suite_dir):
    path = _write(
        suite_dir,
        "operation: idset.decode\ncases:\n  - id: a.b\n    description: x\n"
        "    input: 5\n    output: [-1]\n    requirements: [mini.ascending]\n",
    )
    problems = _problems(suite_dir)
    assert problems[0].startswith(f"{path}:5: input is not valid for idset.decode")
    assert problems[1].startswith(f"{path}:6: expected output is not valid for idset.decode")


def test_yaml_11_surprises_are_refused(suite_dir):
    path = _write(
        suite_dir,
        "operation: idset.decode\ncases:\n  - id: a.b\n    description: x\n"
        "    input: 0755\n    output: [1]\n    requirements: [mini.ascending]\n"
        "    tags: [yes, 1e3, .inf, on]\n",
    )
    problems = _problems(suite_dir)
    assert [p.split(": ", 1)[0] for p in problems] == [f"{path}:5"] + [f"{path}:8"] * 4
    assert "0755" in problems[0]


def test_aliases_are_refused(suite_dir):
    path = _write(
        suite_dir,
        "operation: idset.decode\ncases:\n  - id: a.b\n    description: &d x\n"
        "    input: *d\n    output: [1]\n    requirements: [mini.ascending]\n",
    )
    (problem,) = _problems(suite_dir)
    assert problem.startswith(f"{path}:")
    assert "aliases" in problem


def test_broken_yaml_syntax(suite_dir):
    path = _write(suite_dir, "operation: idset.decode\ncases:\n  - id: [unclosed\n")
    (problem,) = _problems(suite_dir)
    assert problem.startswith(f"{path}:")


def test_every_problem_is_reported_at_once(suite_dir):
    _write(suite_dir, "operation: idset.explode\ncases: []\n", "a.yaml")
    _write(suite_dir, "operation: idset.decode\ncases: 5\n", "b.yaml")
    assert len(_problems(suite_dir)) == 2


def test_requirements_checked(suite_dir):
    (suite_dir / "requirements" / "x.yaml").write_text(
        "spec: X\ntitle: t\nrequirements:\n  - id: mini.ascending\n    keyword: MAY\n"
        "    section: s\n    text: dup\n"
    )
    (problem,) = _problems(suite_dir)
    assert "duplicate requirement id 'mini.ascending'" in problem


def test_missing_directory():
    with pytest.raises(SuiteError, match="no such case directory"):
        load_suite(Path("/nonexistent/cases"))


def test_default_cases_dir_is_the_checkout_in_a_source_tree():
    assert default_cases_dir().name in ("cases", "_cases")
    assert (default_cases_dir() / "requirements").is_dir()


@pytest.mark.parametrize("levels", [300, 50_000])
def test_deeply_nested_yaml_is_a_problem_not_a_crash(suite_dir, levels):
    deep = "[" * levels + "]" * levels
    path = _write(
        suite_dir,
        f"operation: idset.decode\ncases:\n  - id: a.b\n    description: x\n"
        f"    input: {deep}\n    output: [1]\n    requirements: [mini.ascending]\n",
    )
    (problem,) = _problems(suite_dir)
    assert problem.startswith(f"{path}:5:")
    if levels == 300:
        assert "nested more than 256 levels deep" in problem
    else:
        # Past libyaml's own limit (PyYAML 6.0.4 and later) the parser says so in its words.
        assert "nest" in problem


def test_document_size_and_node_limits(suite_dir, monkeypatch):
    import flux_conformance.runner._yaml as loader

    monkeypatch.setattr(loader, "MAX_DOCUMENT_BYTES", 200)
    path = _write(suite_dir, "operation: idset.decode\ncases: []\n# " + "x" * 300 + "\n")
    assert any(p.startswith(f"{path}:1: file is ") for p in _problems(suite_dir))
    monkeypatch.setattr(loader, "MAX_DOCUMENT_BYTES", 16 * 1024 * 1024)
    monkeypatch.setattr(loader, "MAX_NODES", 50)
    _write(suite_dir, "operation: idset.decode\ncases: []\nextra: [" + "0, " * 60 + "0]\n")
    assert any("more than 50 nodes" in p for p in _problems(suite_dir))
