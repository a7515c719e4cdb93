"""``mutate.py --runner``: mutants of the runner's modules, each run against the runner's tests."""

from __future__ import annotations

import ast
import importlib
import json
import re
import sys
from pathlib import Path

from mutation.mutator.runner_cover import (
    Coverage,
    Fresh,
    import_time_readers,
    module_name,
    runner_users,
    select,
)
from mutation.mutator.runner_mode import (
    RUNNER,
    RUNNER_TESTS,
    TESTS,
    RunnerResult,
    load_coverage,
    run_mutants,
    runner_mutants,
)
from mutation.mutator.runner_report import (
    as_json,
    markdown_table,
    merge,
    module_rows,
    portable,
    text_report,
)

PINS = "tests/runner/test_runner_pins.py"
BOUND_TEST = f"{PINS}::test_the_judging_bounds_are_100000_values_and_1_mib_of_strings"


def _mutant(module: str, source: str, change: str, *, runtime: bool | None = None):
    """The one mutant of ``module`` on the line ``source`` whose id holds ``change``."""
    found = [
        m
        for m in runner_mutants([module])
        if m.source == source and change in m.id and (runtime is None or m.runtime == runtime)
    ]
    assert len(found) == 1, [m.id for m in found]
    return found[0]


def test_every_listed_module_has_mutants_and_tests_that_exist() -> None:
    for module, tests in TESTS.items():
        assert runner_mutants([module]), module
        for name in tests:
            assert (RUNNER_TESTS / name).is_file(), (module, name)


def test_the_areas_the_runner_is_judged_by_are_all_listed() -> None:
    areas = {module.split(".")[0] for module in TESTS}
    assert {"engine", "comparators", "expectations", "report", "bounds", "adapters"} <= areas


def test_the_report_scores_each_module_and_shows_each_survivor() -> None:
    mutants = runner_mutants(["bounds"])[:4]
    results = [
        RunnerResult(mutants[0], True, "test failed", 1.0),
        RunnerResult(mutants[1], True, "timeout", 2.0),
        RunnerResult(mutants[2], False, "survived", 3.0),
        RunnerResult(mutants[3], False, "no test executes it", 0.0),
    ]
    data = as_json(results, wall=1, cpu=1, planned={"bounds": 6}, listed={})
    (row, total) = module_rows(data)
    # 2 killed of the 4 run: a mutant no test executes counts as a survivor.
    assert row == {
        "module": "bounds",
        "mutants": 6,
        "killed": 2,
        "survived": 1,
        "unexecuted": 1,
        "equivalent": 0,
        "not run": 2,
        "errors": 0,
        "score": "50.0%",
    }
    assert total["module"] == "total"
    text = text_report(data)
    assert f"survived: {mutants[2].id}" in text
    assert f"no test executes it: {mutants[3].id}" in text
    assert mutants[2].changed in text
    assert "| bounds | 6 | 2 | 1 | 1 | 0 | 2 | 0 | 50.0% |" in markdown_table(data)


def test_a_listed_equivalent_leaves_the_score_and_a_later_run_replaces_an_earlier() -> None:
    mutants = runner_mutants(["bounds"])[:2]

    class Entry:
        kind = "equivalent"

    listed = {mutants[1].id: Entry()}
    first = as_json(
        [
            RunnerResult(mutants[0], False, "survived", 1.0),
            RunnerResult(mutants[1], False, "survived", 1.0),
        ],
        wall=10,
        cpu=5,
        planned={"bounds": 2},
        listed=listed,
    )
    assert module_rows(first)[0]["score"] == "0.0%"
    again = as_json(
        [RunnerResult(mutants[0], True, "test failed", 1.0)],
        wall=3,
        cpu=2,
        planned={"bounds": 1},
        listed=listed,
    )
    both = merge([first, again], {"bounds": 2}, listed)
    row = module_rows(both)[0]
    assert (row["killed"], row["equivalent"], row["score"]) == (1, 1, "100.0%")
    assert both["wall_seconds"] == 13
    assert f"equivalent: {mutants[1].id}" in text_report(both)


def test_a_merge_leaves_out_the_fates_of_mutants_the_code_no_longer_has() -> None:
    mutants = runner_mutants(["bounds"])[:2]
    run = as_json(
        [RunnerResult(m, True, "test failed", 1.0) for m in mutants],
        wall=1,
        cpu=1,
        planned={"bounds": 2},
        listed={},
    )
    moved = dict(run["mutants"][1], source="an older line")  # measured on other code
    older = {**run, "mutants": [moved]}
    current = {m.id: (m.source, m.changed) for m in mutants}
    both = merge([run, older], {"bounds": 2}, {}, current)
    assert both["stale"] == 1
    assert [e["source"] for e in both["mutants"]] == [m.source for m in mutants]
    row = module_rows(both)[0]
    assert (row["killed"], row["not run"]) == (2, 0)
    gone = merge([older], {"bounds": 2}, {}, {})  # no such mutant now: nothing counted
    assert (gone["stale"], gone["mutants"]) == (1, [])


def test_a_recorded_test_id_names_no_path_of_the_machine() -> None:
    test = "tests/runner/t.py::test_x[exec:/PREFIX/bin/python3.11 /SRC/tests/f.py a]"
    assert portable(test) == "tests/runner/t.py::test_x[exec:PYTHON SRC/tests/f.py a]"
    assert portable("tests/runner/t.py::test_y[1-4095]") == "tests/runner/t.py::test_y[1-4095]"
    data = json.loads(SCORE.read_text())
    assert not [e["by"] for e in data["mutants"] if re.search(r"[\s\[:]/", e["by"])]


def test_the_users_of_a_module_are_those_importing_it_even_through_others() -> None:
    users = runner_users(RUNNER)
    assert "engine" in users["bounds"]
    assert "cli" in users["bounds"]  # cli imports the engine, which imports bounds
    assert "bounds" not in users["engine"]
    assert "report.junit" in users["report"] or "report" in users["report.junit"]


def _coverage(lines: dict[str, dict[str, list[int]]], passed: dict[str, bool]) -> Coverage:
    return Coverage(
        tests=list(lines),
        passed=passed,
        seconds=dict.fromkeys(lines, 0.1),
        lines=lines,
    )


def test_selection_picks_the_passing_tests_that_execute_the_mutated_line() -> None:
    mutant = _mutant("bounds", "if values > max_values:", "-> >=")
    line = mutant.line
    coverage = _coverage(
        {
            "t.py::covers": {"bounds": [line - 1, line]},
            "t.py::elsewhere": {"bounds": [line + 40], "engine": [10]},
            "t.py::fails_unmutated": {"bounds": [line]},
        },
        {"t.py::covers": True, "t.py::elsewhere": True, "t.py::fails_unmutated": False},
    )
    assert select(mutant, coverage, runner_users(RUNNER)) == ["t.py::covers"]
    # A file whose collection ran the line (a parametrize value) is selected whole.
    coverage.collected = {"t.py": {"bounds": [line]}}
    assert select(mutant, coverage, runner_users(RUNNER)) == ["t.py::covers", "t.py::elsewhere"]


def test_an_import_time_change_selects_the_tests_reaching_its_module_or_its_users() -> None:
    mutant = _mutant("bounds", "JUDGE_MAX_VALUES = 100_000", "-> 100001")
    assert not mutant.runtime
    users = runner_users(RUNNER)
    unrelated = next(m for m in users if m not in users["bounds"] and m != "bounds")
    coverage = _coverage(
        {"t.py::engine": {"engine": [1]}, "t.py::other": {unrelated: [1]}},
        {"t.py::engine": True, "t.py::other": True},
    )
    assert select(mutant, coverage, users) == ["t.py::engine"]


def test_the_line_map_records_what_each_test_executed(tmp_path: Path) -> None:
    coverage = load_coverage([PINS], tmp_path / "map.json")
    test = f"{BOUND_TEST}[100001-values]"
    assert coverage.passed[test]
    judged = _mutant("bounds", "if values > max_values:", "-> >=")
    assert judged.line in coverage.lines[test]["bounds"]
    assert "report.junit" not in coverage.lines[test]
    # Built from the same sources, the map is read back, not built again; a test file added
    # is traced alone, and the tests already mapped keep their lines.
    assert load_coverage([PINS], tmp_path / "map.json").lines == coverage.lines
    other = "tests/runner/test_comparators.py"
    both = load_coverage([PINS, other], tmp_path / "map.json")
    assert {t.split("::")[0] for t in both.tests} == {PINS, other}
    assert all(both.lines[t] == coverage.lines[t] for t in coverage.tests)
    assert set(both.file_keys) == {PINS, other}


def _trees() -> dict[str, ast.Module]:
    """Every runner module's syntax tree, by short name."""
    return {
        module_name(RUNNER, p): ast.parse(p.read_text())
        for p in RUNNER.rglob("*.py")
        if p != RUNNER / "__init__.py"
    }


def _line(module: str, text: str) -> int:
    """The number of the one line of runner ``module`` that holds ``text``."""
    lines = (RUNNER / f"{module}.py").read_text().splitlines()
    (number,) = [i + 1 for i, line in enumerate(lines) if text in line]
    return number


def test_an_import_time_constant_is_seen_where_a_function_reads_it() -> None:
    users = runner_users(RUNNER)
    trees = _trees()
    bound = _mutant("bounds", "JUDGE_MAX_VALUES = 100_000", "-> 100001")
    readers = import_time_readers(trees, "bounds", bound.line, users)
    assert readers is not None
    read = _line("bounds", "max_values, max_chars = JUDGE_MAX_VALUES, JUDGE_MAX_CHARS")
    assert read in readers["bounds"]
    # json_size's default is computed from it at import: every line of json_size sees it.
    assert _line("bounds", "def json_size(") + 1 in readers["bounds"]
    assert bound.line not in readers["bounds"]  # the assignment itself ran at import
    assert not readers.get("report.junit")


def test_a_mutant_is_killed_by_a_failing_test_and_survives_when_none_fails_or_runs() -> None:
    bound = _mutant("bounds", "JUDGE_MAX_VALUES = 100_000", "-> 100001")
    unexecuted = _mutant("bounds", "if chars > max_chars:", "-> >=")
    missed = _mutant("bounds", "SHOWN_NAME = 200", "-> 201")
    test = f"{BOUND_TEST}[100001-values]"
    passing = f"{BOUND_TEST}[1MiB]"
    read = _line("bounds", "max_values, max_chars = JUDGE_MAX_VALUES, JUDGE_MAX_CHARS")
    coverage = _coverage({test: {"bounds": [read]}}, {test: True})
    results = {
        r.mutant.id: r for r in run_mutants([bound, unexecuted], coverage, jobs=1, budget=120)
    }
    assert results[bound.id].killed
    assert results[bound.id].how == "test failed"
    assert results[bound.id].by == test
    assert not results[unexecuted.id].killed
    assert results[unexecuted.id].how == "no test executes it"
    # A shown name's length is no judging bound: the 1 MiB test passes against it.
    shown = _line("adapters/subprocess", "text[: SHOWN_NAME * 2]")
    only_passing = _coverage({passing: {"adapters.subprocess": [shown]}}, {passing: True})
    (survivor,) = run_mutants([missed], only_passing, jobs=1, budget=120)
    assert not survivor.killed
    assert survivor.how == "survived"
    assert survivor.tests == 1


SCORE = RUNNER.parent / "tests" / "mutation" / "runner_score.json"


def test_the_docs_show_the_recorded_runner_score_as_generated() -> None:
    # The table in docs/mutation.md is the one `--merge` prints from the recorded runs.
    data = json.loads(SCORE.read_text())
    docs = (RUNNER.parent / "docs" / "mutation.md").read_text()
    assert markdown_table(data) in docs
    wrong = [e["id"] for e in data["mutants"] if e["killed"] and e.get("equivalent")]
    assert not wrong


def test_a_run_of_some_modules_judges_only_their_listed_equivalents() -> None:
    from mutation.mutator.runner_mode import _equivalents

    bounds = runner_mutants(["bounds"])
    matched = _equivalents(bounds, ["bounds"])
    assert matched.covered
    assert not matched.stale
    assert {e.target_module for e, _ in matched.covered} == {"bounds"}
    assert _equivalents(runner_mutants(["baseline"]), ["baseline"]).stale == []


def test_a_value_kept_for_the_process_is_computed_in_every_test_that_needs_it(
    tmp_path: Path,
) -> None:
    # Every test of the file judges an answer, which asks which texts the oracle follows: the
    # answer is kept for the process, yet each test is mapped as computing it.
    times = "tests/runner/test_comparators_allocation_times.py"
    coverage = load_coverage([times], tmp_path / "map.json")
    probe = _line("comparators/allocation/inputs", "_NEWER[oracle.edition] = ")
    assert len(coverage.tests) > 2
    for test in coverage.tests:
        assert coverage.passed[test], test
        assert probe in coverage.lines[test]["comparators.allocation.inputs"], test
    source = '_NEWER[oracle.edition] = "nslots" in oracle("sched.allocate", _PROBE)["execution"]'
    mutant = _mutant("comparators.allocation.inputs", source, "not in")
    assert select(mutant, coverage, runner_users(RUNNER), _trees()) == coverage.tests


def test_fresh_puts_a_module_back_as_its_import_left_it(tmp_path: Path) -> None:
    (tmp_path / "kept_for_test.py").write_text(
        "import functools\n"
        "SEEN = {}\n"
        "TABLE = [1, 2]\n"
        "@functools.cache\n"
        "def ask(x):\n"
        "    SEEN[x] = True\n"
        "    return len(SEEN)\n"
    )
    fresh = Fresh(["kept_for_test"])
    sys.path.insert(0, str(tmp_path))
    sys.meta_path.insert(0, fresh)
    try:
        module = importlib.import_module("kept_for_test")
        assert module.ask("a") == 1
        module.TABLE.append(3)
        fresh.reset()
        assert module.SEEN == {}
        assert module.TABLE == [1, 2]
        assert module.ask("a") == 1  # computed again: its cache was emptied
    finally:
        sys.meta_path.remove(fresh)
        sys.path.remove(str(tmp_path))
        sys.modules.pop("kept_for_test", None)
