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
from flux_conformance.runner.cli import main


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
