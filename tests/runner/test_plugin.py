"""The pytest plugin, exercised with pytester: inert by default, cases as items when asked."""

from __future__ import annotations

import pytest
from support import FAKES, MINI

pytest_plugins = ["pytester"]


def test_inert_without_option(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_x():\n    assert True\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)


def test_cases_become_items(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(
        "--conformance-impl", "reference", "--conformance-cases", str(MINI), "-v"
    )
    result.assert_outcomes(passed=5)
    result.stdout.fnmatch_lines(["*idset.decode.yaml::mini.range PASSED*"])


def test_failure_output_and_k_selection(pytester: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(FAKES))
    result = pytester.runpytest(
        "--conformance-impl",
        "python:inprocess_fakes:Wrong",
        "--conformance-cases",
        str(MINI),
        "-k",
        "range or list",
    )
    result.assert_outcomes(failed=2, deselected=3)
    result.stdout.fnmatch_lines(
        [
            "*FAILED mini.range (*idset.decode.yaml:3) [[]must[]]*",
            '*expected:    {"output": [[]1, 2, 3[]]}*',
            "*replay:      flux-conformance run --impl python:inprocess_fakes:Wrong --id mini.range*",
        ]
    )


def test_exitfirst_and_junitxml(pytester: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(FAKES))
    result = pytester.runpytest(
        "--conformance-impl",
        "python:inprocess_fakes:Wrong",
        "--conformance-cases",
        str(MINI),
        "-x",
        "--junitxml",
        "out.xml",
    )
    result.assert_outcomes(failed=1)
    assert "mini.range" in (pytester.path / "out.xml").read_text()


def test_bad_suite_is_a_usage_error(pytester: pytest.Pytester) -> None:
    bad = pytester.mkdir("bad")
    (bad / "requirements").mkdir()
    (bad / "x.yaml").write_text("operation: no.op\ncases: []\n")
    result = pytester.runpytest("--conformance-impl", "reference", "--conformance-cases", str(bad))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*x.yaml:1: unknown operation*"])


# -- collection as pytest does it ---------------------------------------------------------------


def test_the_header_counts_the_cases(pytester: pytest.Pytester) -> None:
    from flux_conformance.runner.cases import load_suite
    from flux_conformance.runner.engine import Filters, select

    expected = len(select(load_suite().cases, Filters()))  # the default edition
    result = pytester.runpytest("--conformance-impl", "reference", "--collect-only", "-q")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines([f"{expected} tests collected*"])
    result = pytester.runpytest("--conformance-impl", "reference", f"--conformance-cases={MINI}")
    result.stdout.fnmatch_lines(["collected 5 items"])
    result.assert_outcomes(passed=5)


def test_a_failing_node_id_pasted_back_runs_just_that_case(
    pytester: pytest.Pytester, monkeypatch
) -> None:
    monkeypatch.syspath_prepend(str(FAKES))
    options = [
        "--conformance-impl",
        "python:inprocess_fakes:Wrong",
        f"--conformance-cases={MINI}",
        "-p",
        "no:cacheprovider",
    ]
    result = pytester.runpytest(*options, "-rf")
    failed = [line.split()[1] for line in result.stdout.lines if line.startswith("FAILED ")]
    assert "rfc22/idset.decode.yaml::mini.range" in failed
    again = pytester.runpytest(*options, "rfc22/idset.decode.yaml::mini.range", "-v")
    again.stdout.fnmatch_lines(["*collected 1 item", "*mini.range FAILED*"])
    again.assert_outcomes(failed=1)


def test_last_failed_reruns_the_failures(pytester: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(FAKES))
    options = [
        "--conformance-impl",
        "python:inprocess_fakes:Wrong",
        f"--conformance-cases={MINI}",
    ]
    first = pytester.runpytest(*options)
    first.assert_outcomes(failed=5)
    narrowed = pytester.runpytest(*options, "-k", "range or list")
    narrowed.assert_outcomes(failed=2, deselected=3)
    # The two still fail; --lf takes the five failures of the whole run, not more.
    again = pytester.runpytest(*options, "--lf", "-k", "range")
    again.stdout.fnmatch_lines(["collected 5 items / 4 deselected / 1 selected"])
    again.assert_outcomes(failed=1, deselected=4)


def test_junit_names_are_file_and_case(pytester: pytest.Pytester) -> None:
    import xml.etree.ElementTree as ET

    pytester.runpytest(
        "--conformance-impl", "reference", f"--conformance-cases={MINI}", "--junitxml", "j.xml"
    )
    cases = ET.parse(pytester.path / "j.xml").getroot().iter("testcase")
    names = {(c.get("classname"), c.get("name")) for c in cases}
    assert ("rfc22.idset.decode.yaml", "mini.range") in names
    assert all(not classname.startswith(".") for classname, _ in names)


def test_the_suite_is_collected_beside_the_tests_named(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_mine="def test_x():\n    assert True\n")
    result = pytester.runpytest(
        "--conformance-impl", "reference", f"--conformance-cases={MINI}", "test_mine.py"
    )
    result.assert_outcomes(passed=6)


def test_selection_options_narrow_what_is_collected(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(
        "--conformance-impl",
        "reference",
        f"--conformance-cases={MINI}",
        "--conformance-level",
        "must",
        "--conformance-exclude-id",
        "mini.list",
    )
    result.stdout.fnmatch_lines(["collected 2 items"])


def test_an_expectations_file_turns_known_failures_into_xfails(
    pytester: pytest.Pytester, monkeypatch
) -> None:
    monkeypatch.syspath_prepend(str(FAKES))
    known = pytester.path / "known.yaml"
    known.write_text(
        "expectations:\n"
        "  - id: mini.range\n    status: xfail\n    reason: it answers []\n"
        "  - id: mini.list\n    status: skip\n    reason: not today\n"
    )
    options = [
        "--conformance-impl",
        "python:inprocess_fakes:Wrong",
        f"--conformance-cases={MINI}",
    ]
    result = pytester.runpytest(*options, "--conformance-expectations", str(known), "-rxs")
    result.assert_outcomes(xfailed=1, skipped=1, failed=3)
    result.stdout.fnmatch_lines(["*not today*"])
    # Strict: a case that passes against its xfail entry fails the run.
    passing = pytester.runpytest(
        "--conformance-impl",
        "reference",
        f"--conformance-cases={MINI}",
        "--conformance-expectations",
        str(known),
    )
    passing.assert_outcomes(failed=1, skipped=1, passed=3)


def test_a_stale_expectations_file_is_a_usage_error(pytester: pytest.Pytester) -> None:
    stale = pytester.path / "stale.yaml"
    stale.write_text("expectations:\n  - id: no.such.case\n    status: xfail\n    reason: r\n")
    result = pytester.runpytest(
        "--conformance-impl",
        "reference",
        f"--conformance-cases={MINI}",
        "--conformance-expectations",
        str(stale),
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*'no.such.case' matches no case*"])


def test_an_unrunnable_implementation_stops_with_status_3(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(
        "--conformance-impl", "exec:/nonexistent/impl", "--conformance-cases", str(MINI)
    )
    assert result.ret == 3
    result.stderr.fnmatch_lines(["*could not be run*"])


def test_a_malformed_impl_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--conformance-impl", "ruby:x", "--conformance-cases", str(MINI))
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_required_operations_fail_the_session(pytester: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(FAKES))
    common = ["--conformance-cases", str(MINI), "--conformance-require-operation", "idset.*"]
    ran = pytester.runpytest("--conformance-impl", "reference", *common)
    assert ran.ret == pytest.ExitCode.OK
    unsupported = pytester.runpytest(
        "--conformance-impl", "python:inprocess_fakes:Unsupporting", *common
    )
    unsupported.assert_outcomes(skipped=5)
    assert unsupported.ret == pytest.ExitCode.TESTS_FAILED
    unsupported.stdout.fnmatch_lines(["*required operations with no case run: idset.decode*"])


def test_selection_typos_are_usage_errors_as_in_run(pytester: pytest.Pytester) -> None:
    # The plugin reads its filters with run's own helper: the same check, the same words.
    result = pytester.runpytest(
        "--conformance-impl",
        "reference",
        "--conformance-cases",
        str(MINI),
        "--conformance-operation",
        "idset.decod",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown operation 'idset.decod'; did you mean 'idset.decode'?*"])


def test_the_engine_loop_skips_an_unsupported_operation_with_its_reason(
    pytester: pytest.Pytester, monkeypatch
) -> None:
    monkeypatch.syspath_prepend(str(FAKES))
    result = pytester.runpytest(
        "--conformance-impl",
        "python:inprocess_fakes:Unsupporting",
        "--conformance-cases",
        str(MINI),
        "-rs",
    )
    result.assert_outcomes(skipped=5)
    result.stdout.fnmatch_lines(["*operation not supported by the implementation*"])
