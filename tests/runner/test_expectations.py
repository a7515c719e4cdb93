"""Expectations files: strict xfail, globs, skips, stale entries, baselines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import MINI

from flux_conformance.runner.cases import load_suite
from flux_conformance.runner.cli import main
from flux_conformance.runner.engine import CaseResult, Outcome
from flux_conformance.runner.expectations import Entry, Expectations, ExpectationsError


def _run(capsys, *argv: str) -> tuple[int, list[dict], str]:
    code = main(["run", "--cases", str(MINI), "--json", "-", *argv])
    out, err = capsys.readouterr()
    lines = [json.loads(line) for line in out.splitlines()]
    return code, [line["case"] for line in lines if "case" in line], err


def _file(tmp_path: Path, body: str) -> str:
    path = tmp_path / "exp.yaml"
    path.write_text(body)
    return str(path)


def test_xfail_turns_failures_into_xfailed(capsys, tmp_path):
    exp = _file(
        tmp_path, "expectations:\n  - id: 'mini.*'\n    status: xfail\n    reason: returns []\n"
    )
    code, cases, _ = _run(capsys, "--impl", "python:inprocess_fakes:Wrong", "--expectations", exp)
    # mini.degenerate and mini.leading-zero fail too: [] is neither [3] nor an error.
    assert {c["outcome"] for c in cases} == {"xfailed"}
    assert code == 0


def test_xpass_is_strict(capsys, tmp_path):
    exp = _file(
        tmp_path, "expectations:\n  - id: mini.range\n    status: xfail\n    reason: was broken\n"
    )
    code, cases, _ = _run(capsys, "--expectations", exp)
    assert code == 1
    by_id = {c["id"]: c for c in cases}
    assert by_id["mini.range"]["outcome"] == "xpassed"
    assert "remove the entry" in by_id["mini.range"]["reason"]


def test_exact_id_beats_glob_and_skip_does_not_run(capsys, tmp_path):
    exp = _file(
        tmp_path,
        "expectations:\n  - id: 'mini.*'\n    status: xfail\n    reason: r\n"
        "  - id: mini.range\n    status: skip\n    reason: hangs\n",
    )
    code, cases, _ = _run(
        capsys, "--impl", "python:inprocess_fakes:RaisingAfterFirst", "--expectations", exp
    )
    by_id = {c["id"]: c for c in cases}
    assert by_id["mini.range"]["outcome"] == "skipped"
    assert by_id["mini.range"]["reason"] == "expectations: hangs"
    assert by_id["mini.list"]["outcome"] == "xfailed"
    assert code == 0


def test_stale_entry_is_an_error(capsys, tmp_path):
    exp = _file(tmp_path, "expectations:\n  - id: gone.case\n    status: xfail\n    reason: r\n")
    code, _cases, err = _run(capsys, "--expectations", exp)
    assert code == 2
    assert "matches no case" in err
    assert ":2:" in err


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("expectations:\n  - id: x\n    status: maybe\n    reason: r\n", "status"),
        ("expectations:\n  - id: x\n    status: xfail\n", "reason"),
        ("expectations:\n  - status: xfail\n    reason: r\n", "'id'"),
        (
            "expectations:\n  - id: x\n    status: xfail\n    reason: r\n    why: 1\n",
            "unknown fields",
        ),
        ("expect: []\n", "expectations"),
        (
            "expectations:\n  - id: x\n    status: xfail\n    reason: r\n    editions: latest\n",
            "'editions' is a list",
        ),
        (
            "expectations:\n  - id: x\n    status: xfail\n    reason: r\n    editions: [5]\n",
            "'editions' is a list",
        ),
        (
            "expectations:\n  - id: x\n    status: xfail\n    reason: r\n    editions: ['']\n",
            "'editions' is a list",
        ),
        ("expectations:\n  - id: x\n    status: xfail\n    reason: r\n    issue: 5\n", "'issue'"),
        ("expectations:\n  - [x, xfail, r]\n", "exp.yaml:2: an entry is a mapping"),
        ("implementation: x\nexpectations: []\nnotes: n\n", "unknown top-level keys"),
        ("expectations: [\n", "exp.yaml"),
    ],
)
def test_malformed_files(tmp_path, body, message):
    with pytest.raises(ExpectationsError, match=message):
        Expectations.load(Path(_file(tmp_path, body)))


def test_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ExpectationsError, match=r"missing\.yaml"):
        Expectations.load(tmp_path / "missing.yaml")


@pytest.mark.parametrize(
    ("outcome", "said"),
    [(Outcome.PASSED, "passed"), (Outcome.UNCHECKED, "refused (category not checked)")],
)
def test_an_expected_failure_that_does_not_fail_says_what_the_case_did(outcome, said) -> None:
    case = load_suite(MINI).cases[0]
    entry = Entry(case.id, "xfail", "was broken", None, 3)
    result = Expectations(Path("exp.yaml"), (entry,)).decide(CaseResult(case, outcome, None))
    assert result.outcome is Outcome.XPASSED
    assert result.reason == (
        f"{said}, but exp.yaml:3 expects it to fail (was broken): remove the entry"
    )


def test_write_baseline_then_gate(capsys, tmp_path):
    base = tmp_path / "baseline.yaml"
    code, _, _ = _run(
        capsys, "--impl", "python:inprocess_fakes:Wrong", "--write-expectations", str(base)
    )
    assert code == 1
    loaded = Expectations.load(base)
    assert len(loaded.entries) == 5
    assert all(e.status == "xfail" and "answers" in e.reason for e in loaded.entries)
    code, cases, _ = _run(
        capsys, "--impl", "python:inprocess_fakes:Wrong", "--expectations", str(base)
    )
    assert code == 0
    assert {c["outcome"] for c in cases} == {"xfailed"}


def _faulty_adapter(library_raises: bool):
    """An adapter whose handler fails in the library or in the suite's own adapter code."""
    from flux_conformance.runner.adapters.thirdparty._base import ThirdPartyImplementation, output
    from flux_conformance.runner.adapters.thirdparty.clustershell import _range_size

    def library(text: str) -> list[int]:
        raise ValueError(f"the library cannot read {text!r}")

    calls = []

    def handler(value):
        calls.append(value)
        if len(calls) == 1:  # the runner's first request, checking that it runs at all
            return output([])
        if library_raises:
            return output(library(value))
        return output([_range_size("x", value)])  # decimal refuses 'x' inside runner code

    return ThirdPartyImplementation({"idset.decode": handler})


@pytest.mark.parametrize("library_raises", [True, False])
def test_an_adapter_fault_is_never_excused(capsys, tmp_path, monkeypatch, library_raises):
    import inprocess_fakes

    monkeypatch.setattr(inprocess_fakes, "Faulty", _faulty_adapter(library_raises), raising=False)
    exp = _file(
        tmp_path, "expectations:\n  - id: 'mini.*'\n    status: xfail\n    reason: crashes\n"
    )
    code, cases, _ = _run(capsys, "--impl", "python:inprocess_fakes:Faulty", "--expectations", exp)
    if library_raises:
        assert {c["outcome"] for c in cases} == {"xfailed"}
        assert code == 0
    else:
        assert {c["outcome"] for c in cases} == {"errored"}
        assert all(c["actual"]["errored"]["adapter_fault"] for c in cases)
        assert all("the adapter is at fault" in c["reason"] for c in cases)
        assert code == 1
        baseline = tmp_path / "baseline.yaml"
        # A fresh adapter: its first request is again the runner's check that it runs.
        monkeypatch.setattr(inprocess_fakes, "Faulty", _faulty_adapter(library_raises))
        main(
            [
                "run",
                "--cases",
                str(MINI),
                "--impl",
                "python:inprocess_fakes:Faulty",
                "--write-expectations",
                str(baseline),
            ]
        )
        capsys.readouterr()
        assert "mini." not in baseline.read_text()


def test_an_entry_limited_to_an_edition_applies_only_in_its_runs(capsys, tmp_path):
    body = (
        "expectations:\n  - id: 'mini.*'\n    status: xfail\n    reason: returns []\n"
        "    editions: ['2025-07-31']\n"
    )
    exp = _file(tmp_path, body)
    impl = ("--impl", "python:inprocess_fakes:Wrong", "--expectations", exp)
    code, cases, _ = _run(capsys, *impl, "--edition", "2025-07-31")
    assert {c["outcome"] for c in cases} == {"xfailed"}
    assert code == 0
    code, cases, _ = _run(capsys, *impl)  # the latest edition: the entry does not apply
    assert "failed" in {c["outcome"] for c in cases}
    assert "xfailed" not in {c["outcome"] for c in cases}
    assert code == 1
    wrong = _file(tmp_path, body.replace("2025-07-31", "2019-01-01"))
    code, _, err = _run(capsys, "--impl", "python:inprocess_fakes:Wrong", "--expectations", wrong)
    assert code == 2
    assert "editions ['2019-01-01'] are not all among" in err


# -- the shipped files' headers -----------------------------------------------------------------


def _shipped_files() -> list[Path]:
    from flux_conformance.runner.adapters import KNOWN
    from flux_conformance.runner.commands._common import shipped_expectations

    return [p for p in (shipped_expectations(name) for name in sorted(KNOWN)) if p is not None]


@pytest.mark.parametrize("path", _shipped_files(), ids=lambda p: p.name)
def test_a_shipped_files_header_counts_are_its_entries(path: Path) -> None:
    """Every "EDITION: N failed, M errored" of a header counts the entries for that edition.

    (The entries' reasons start with the outcome the recording run gave: ``failed:`` or
    ``errored:``.)  A count that no longer matches is a stale header: regenerate it.
    """
    import re
    from collections import Counter

    import yaml

    text = path.read_text(encoding="utf-8")
    header = "".join(
        line.lstrip("#") for line in text.splitlines() if line.startswith("#")
    ).replace("\n", " ")
    doc = yaml.safe_load(text)
    editions = ("2025-07-31", "2026-08-13")
    counted: Counter[tuple[str, str]] = Counter()
    for entry in doc.get("expectations") or ():
        if entry.get("status") != "xfail":
            continue
        kind = str(entry.get("reason", "")).split(":", 1)[0]
        for edition in entry.get("editions") or editions:
            counted[edition, kind] += 1
    claims = re.findall(r"(\d{4}-\d{2}-\d{2}): ((?:\d[\d,]* \w+(?:, )?)+)", header)
    for edition, counts in claims:
        for number, kind in re.findall(r"(\d[\d,]*) (failed|errored)", counts):
            assert int(number.replace(",", "")) == counted[edition, kind], (edition, kind)


def test_the_header_check_reads_the_fluxion_counts() -> None:
    path = next(p for p in _shipped_files() if p.name == "fluxion.yaml")
    assert "2025-07-31: " in path.read_text(encoding="utf-8")
