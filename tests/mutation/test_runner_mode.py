"""``mutate.py --runner``: mutants of the runner's modules, each run against the runner's tests."""

from __future__ import annotations

from mutation.mutator.runner_mode import RUNNER_TESTS, TESTS, RunnerResult, report, runner_mutants


def test_every_listed_module_has_mutants_and_tests_that_exist() -> None:
    for module, tests in TESTS.items():
        assert runner_mutants([module]), module
        for name in tests:
            assert (RUNNER_TESTS / name).is_file(), (module, name)


def test_the_areas_the_runner_is_judged_by_are_all_listed() -> None:
    areas = {module.split(".")[0] for module in TESTS}
    assert {"engine", "comparators", "expectations", "report", "bounds", "adapters"} <= areas


def test_the_report_scores_each_module_and_shows_each_survivor() -> None:
    mutants = runner_mutants(["bounds"])[:3]
    results = [
        RunnerResult(mutants[0], True, "test failed", 1.0),
        RunnerResult(mutants[1], True, "timeout", 2.0),
        RunnerResult(mutants[2], False, "survived", 3.0),
    ]
    text = report(results, planned=5)
    assert "bounds" in text
    assert "66.7%" in text
    assert "(2 not run)" in text
    assert f"survived: {mutants[2].id}" in text
    assert mutants[2].changed in text
