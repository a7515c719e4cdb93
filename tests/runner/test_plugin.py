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
