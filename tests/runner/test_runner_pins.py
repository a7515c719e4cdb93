"""The runner's own rules, each pinned by behaviour (found by mutation testing of the runner).

Each test kills mutants that the other tests let live: a refusal in a real but wrong category
judged a pass; JUnit written without escaping (the subprocess transport escapes first, so only
an in-process implementation can carry a NUL into a report); judging bounds loosened, which
tests written with the bounds' own constants cannot see (so these use fixed sizes).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from support import MINI

from flux_conformance.runner import bounds
from flux_conformance.runner.adapters.inprocess import InProcessAdapter
from flux_conformance.runner.cases import load_suite
from flux_conformance.runner.cli import main
from flux_conformance.runner.engine import CaseResult, Outcome


def _cases(out: str) -> list[dict]:
    return [json.loads(line)["case"] for line in out.splitlines()[1:-1]]


def test_a_refusal_in_a_real_but_wrong_category_fails(capsys) -> None:
    argv = ["run", "--cases", str(MINI), "--impl", "python:inprocess_fakes:RealWrongCategory"]
    code = main([*argv, "--json", "-"])
    cases = {c["id"]: c for c in _cases(capsys.readouterr().out)}
    assert code == 1
    # mini.leading-zero expects syntax and got limit: a refusal, but not the one asked for.
    assert cases["mini.leading-zero"]["outcome"] == "failed"
    assert cases["mini.range"]["outcome"] == "failed"
    assert all(c["outcome"] == "failed" for c in cases.values())


def test_every_report_stays_valid_with_a_nul_from_an_in_process_implementation(
    tmp_path: Path, capsys
) -> None:
    reports = {o: tmp_path / f"r.{o[2:]}" for o in ("--junit", "--markdown", "--html", "--json")}
    argv = ["run", "--cases", str(MINI), "--impl", "python:inprocess_fakes:HostileReasons"]
    argv += [x for option, path in reports.items() for x in (option, str(path))]
    assert main(argv) == 1
    capsys.readouterr()
    ET.parse(reports["--junit"])  # well-formed XML 1.0: no NUL, no U+FFFF, no lone surrogate
    for path in reports.values():
        text = path.read_text(encoding="utf-8")  # UTF-8: no lone surrogate written raw
        assert "\x00" not in text
        assert "\x1b" not in text
        assert "\uffff" not in text
    for line in reports["--json"].read_text(encoding="utf-8").splitlines():
        json.loads(line)


# Fixed sizes, not the constants: a loosened bound must fail here.
@pytest.mark.parametrize(
    ("answer", "judged"),
    [
        (list(range(99_999)), True),  # 100,000 JSON values with the list itself
        (list(range(100_000)), False),  # 100,001
        ("x" * (1024 * 1024), True),
        ("x" * (1024 * 1024 + 1), False),
        (["x" * 262_144] * 4, True),  # 1 MiB of strings in all
        (["x" * 262_144] * 4 + ["y"], False),
    ],
    ids=["100000-values", "100001-values", "1MiB", "1MiB+1", "4x256KiB", "4x256KiB+1"],
)
def test_the_judging_bounds_are_100000_values_and_1_mib_of_strings(answer, judged) -> None:
    assert (bounds.too_large_to_judge([[1]], answer) is None) is judged


def test_an_answer_four_times_the_expected_size_is_still_judged() -> None:
    expected = list(range(50_000))  # 50,001 values: four times is 200,004
    assert bounds.too_large_to_judge([expected], list(range(200_003))) is None
    assert bounds.too_large_to_judge([expected], list(range(200_004))) is not None


def test_differences_are_shown_by_deepdiff_up_to_2000_values_only() -> None:
    from flux_conformance.runner.engine import _diff

    at_bound = _diff(list(range(1_999)), [*range(1_998), -1])  # 2,000 values with the list
    over = _diff(list(range(2_000)), [*range(1_999), -1])  # 2,001
    assert at_bound == "Value of root[1998] changed from 1998 to -1."
    assert over == "value[1999]: expected 1999, got -1"


def test_an_integer_past_64_bits_is_described_and_one_within_is_written() -> None:
    assert bounds.first_difference(2**64, 1) == (
        "value: expected an integer of about 20 digits, got 1"
    )
    assert bounds.first_difference(2**64 - 1, 1) == "value: expected 18446744073709551615, got 1"


def test_a_key_difference_names_five_missing_and_five_unexpected_keys_at_most() -> None:
    want = {f"m{i}": 0 for i in range(7)} | {"same": 1}
    got = {f"u{i}": 0 for i in range(7)} | {"same": 1}
    text = bounds.first_difference(want, got)
    assert text == (
        "value: keys differ (missing ['m0', 'm1', 'm2', 'm3', 'm4'], "
        "unexpected ['u0', 'u1', 'u2', 'u3', 'u4'])"
    )


def test_the_json_record_of_a_case_gives_its_time_to_the_microsecond() -> None:
    case = load_suite(MINI).cases[0]
    record = CaseResult(case, Outcome.PASSED, None, seconds=0.123456789).to_json()
    assert record["seconds"] == 0.123457
    assert CaseResult(case, Outcome.PASSED, None, seconds=2.5000004).to_json()["seconds"] == 2.5


def _junit_errors(tmp_path: Path, impl: str) -> list[str]:
    report = tmp_path / "r.xml"
    argv = ["run", "--cases", str(MINI), "--impl", f"python:inprocess_fakes:{impl}"]
    assert main([*argv, "--junit", str(report)]) == 1
    errors = ET.parse(report).getroot().iter("error")
    return [element.text or "" for element in errors]


def test_junit_gives_an_errored_case_a_stderr_section_only_when_there_is_stderr(
    tmp_path: Path, capsys
) -> None:
    # BrokenAfterFirst answers what is not an outcome: errored, with no stderr to show.
    broken = _junit_errors(tmp_path, "BrokenAfterFirst")
    assert broken
    assert all("stderr:" not in text for text in broken)
    # RaisingAfterFirst: errored, with the traceback's tail as stderr.
    raising = _junit_errors(tmp_path, "RaisingAfterFirst")
    assert raising
    assert all("\nstderr:\n" in text and "RuntimeError: boom" in text for text in raising)
    capsys.readouterr()


_LONG_NAME = """
from inprocess_fakes import good


class LongName:
    name = "n" * 250
    version = "v" * 250

    def run(self, operation, input, **options):
        return good(operation, input, **options)
"""


def test_reports_cut_an_implementations_name_at_200_characters(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    (tmp_path / "long_name_impl.py").write_text(_LONG_NAME)
    monkeypatch.syspath_prepend(str(tmp_path))
    report = tmp_path / "r.xml"
    argv = ["run", "--cases", str(MINI), "--impl", "python:long_name_impl:LongName"]
    assert main([*argv, "--junit", str(report)]) == 0
    capsys.readouterr()
    name = ET.parse(report).getroot().get("name")
    assert name == "flux-conformance: " + "n" * 200 + "... (250 characters)"


class _RaisesInItsOwnCode:
    def run(self, operation, input, **options):
        raise ValueError("the implementation's own defect")


class _RaisesInTheRunner:
    """Calls a runner function wrongly: the innermost frame is the runner's own code."""

    def run(self, operation, input, **options):
        return bounds.cut(None, 1)  # type: ignore[arg-type]


def test_an_exception_is_the_adapters_fault_only_when_raised_in_the_runners_code() -> None:
    own = InProcessAdapter(_RaisesInItsOwnCode()).run("idset.decode", "1", edition=None)
    assert own.kind == "errored"
    assert not own.adapter_fault
    runner = InProcessAdapter(_RaisesInTheRunner()).run("idset.decode", "1", edition=None)
    assert runner.kind == "errored"
    assert runner.adapter_fault


def test_a_kept_result_holds_10000_characters_of_each_text_and_of_an_output() -> None:
    from flux_conformance.runner.adapters.base import Reply
    from flux_conformance.runner.engine import kept

    case = load_suite(MINI).cases[0]

    def message_kept(size: int) -> str:
        reply = Reply("error", value="syntax", message="m" * size)
        return kept(CaseResult(case, Outcome.FAILED, reply, reason="r")).reply.message

    assert message_kept(10_000) == "m" * 10_000
    assert message_kept(10_001) == "m" * 10_000 + "... (10001 characters)"

    def output_kept(size: int) -> Reply:
        reply = Reply("output", value=["x" * size])
        return kept(CaseResult(case, Outcome.FAILED, reply)).reply

    assert not output_kept(10_000).cut
    assert output_kept(10_000).value == ["x" * 10_000]
    assert output_kept(10_001).cut


def test_an_integer_of_14000_bits_is_written_and_one_of_14001_described() -> None:
    from flux_conformance.runner.compact import compact_json

    written = compact_json([2**13_999], 10**6)  # 14,000 bits: 4,215 digits
    assert written == f"[{2**13_999}]"
    described = compact_json([2**14_000], 10**6)  # 14,001 bits
    assert described == "[(an integer of about 4215 digits)]"


def test_a_reply_may_hold_an_integer_of_4300_digits_not_4301() -> None:
    from flux_conformance.runner.adapters import subprocess as transport

    assert transport._DECODER.decode("[" + "7" * 4300 + "]") == [int("7" * 4300)]
    with pytest.raises(transport._Fault, match="4301 digits"):
        transport._DECODER.decode("[" + "7" * 4301 + "]")


def test_a_case_files_plain_integer_may_have_4300_digits_not_4301(tmp_path: Path) -> None:
    from flux_conformance.runner._yaml import YamlError, load_document

    path = tmp_path / "c.yaml"
    path.write_text("value: " + "7" * 4300 + "\n")
    assert load_document(path).data["value"] == int("7" * 4300)
    path.write_text("value: " + "7" * 4301 + "\n")
    with pytest.raises(YamlError):
        load_document(path)


@pytest.mark.parametrize(
    ("value", "past"),
    [
        (list(range(99_999)), False),  # 100,000 JSON values with the list itself
        (list(range(100_000)), True),
        ("x" * (1024 * 1024), False),
        ("x" * (1024 * 1024 + 1), True),
    ],
    ids=["100000-values", "100001-values", "1MiB", "1MiB+1"],
)
def test_a_value_is_past_the_judging_bounds_from_100001_values_or_1_mib_and_1(value, past) -> None:
    assert bounds.past_judging_bounds(value) is past


_LONG_RAISER = """
class LongRaiser:
    calls = 0

    def run(self, operation, input, **options):
        LongRaiser.calls += 1
        if LongRaiser.calls == 1:  # the runner's check that it runs
            return {"unsupported": {"reason": "first request"}}
        raise RuntimeError("r" * 30_000)
"""


def test_junit_cuts_a_reason_at_2000_characters(tmp_path: Path, capsys, monkeypatch) -> None:
    (tmp_path / "long_raiser_impl.py").write_text(_LONG_RAISER)
    monkeypatch.syspath_prepend(str(tmp_path))
    report = tmp_path / "r.xml"
    argv = ["run", "--cases", str(MINI), "--impl", "python:long_raiser_impl:LongRaiser"]
    main([*argv, "--junit", str(report)])
    capsys.readouterr()
    errors = list(ET.parse(report).getroot().iter("error"))
    assert errors
    for element in errors:
        reason, _, told = element.get("message", "").partition("... (")
        assert len(reason) == 2000
        assert told.endswith(" characters)")


def test_an_answer_of_four_times_the_expected_strings_and_one_character_is_too_large() -> None:
    expected = ["x" * 300_000]  # four times is 1,200,000 characters, past the 1 MiB bound
    assert bounds.too_large_to_judge([expected], ["x" * 600_000, "x" * 600_000]) is None
    assert bounds.too_large_to_judge([expected], ["z", "x" * 600_000, "x" * 600_000]) is not None


@pytest.mark.parametrize(
    ("text", "table", "shown"),
    [
        ("a|b", True, "`a\\|b`"),
        ("a|b", False, "`a|b`"),
        ("x\ny", True, "`x y`"),
        ("a`b", True, "``a`b``"),
        ("`a", True, "`` `a ``"),
        ("a`", True, "`` a` ``"),
        ("a ", True, "` a  `"),
        (" a", True, "`  a `"),
        ("a``b`", True, "``` a``b` ```"),
        ("plain", True, "`plain`"),
    ],
)
def test_markdown_code_spans_show_any_text_as_written(text, table, shown) -> None:
    from flux_conformance.runner.report.markdown import md_code

    assert md_code(text, table=table) == shown


def test_markdown_text_is_one_line_with_its_active_punctuation_escaped() -> None:
    from flux_conformance.runner.report.markdown import md_escape

    assert md_escape("a\nb|<c> `d`") == "a b\\|\\<c\\> \\`d\\`"
