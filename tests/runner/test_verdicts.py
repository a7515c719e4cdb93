"""Verdicts that can be trusted: scope, exit statuses, the check before the run, smoke,
refusals without a category and adapter bounds (docs/verdicts.md)."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from support import MINI, fake_command

from flux_conformance.runner.adapters.base import Reply, reply_from_outcome
from flux_conformance.runner.baseline import write_baseline
from flux_conformance.runner.cases import load_suite
from flux_conformance.runner.cli import main
from flux_conformance.runner.commands import run as run_command
from flux_conformance.runner.engine import CaseResult, Outcome, Summary, judge
from flux_conformance.runner.expectations import Expectations
from flux_conformance.runner.oracle import reference_oracle
from flux_conformance.runner.report.badge import badge


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _mini_case(case_id: str):  # type: ignore[no-untyped-def]
    suite = load_suite(MINI)
    case = next(c for c in suite.cases if c.id == case_id)
    return case, suite.operations[case.operation]


# -- judging refusals without a category and adapter bounds ----------------------------------


def test_a_refusal_without_category_is_unchecked_where_a_refusal_is_expected() -> None:
    case, op = _mini_case("mini.leading-zero")  # expects error syntax
    result = judge(case, Reply("error", "unknown", "ValueError"), op, reference_oracle(None))
    assert result.outcome is Outcome.UNCHECKED
    assert "category not checked" in result.reason
    assert not result.outcome.is_bad


def test_a_refusal_without_category_fails_where_an_output_is_expected() -> None:
    case, op = _mini_case("mini.range")  # expects [1, 2, 3]
    result = judge(case, Reply("error", "unknown", "ValueError"), op, reference_oracle(None))
    assert result.outcome is Outcome.FAILED


def test_an_operation_with_one_category_leaves_nothing_unchecked() -> None:
    suite = load_suite()
    op = suite.operations["hostlist.encode"]
    assert list(op.errors) == ["invalid"]
    case = next(
        c
        for c in suite.cases
        if c.operation == "hostlist.encode" and any(e.kind == "error" for e in c.expected)
    )
    result = judge(case, Reply("error", "unknown"), op, reference_oracle(case.edition))
    assert result.outcome is Outcome.PASSED


def test_no_operation_registers_the_unknown_category() -> None:
    assert all("unknown" not in op.errors for op in load_suite().operations.values())


def test_an_adapter_bound_is_never_a_limit() -> None:
    case, op = _mini_case("mini.leading-zero")  # expects a refusal
    seen = Reply("bound", "output", "listed 4,000,000 and stopped")
    failed = judge(case, seen, op, reference_oracle(None))
    assert failed.outcome is Outcome.FAILED
    assert "answered with an output" in failed.reason
    unseen = judge(case, Reply("bound", None, "not asked"), op, reference_oracle(None))
    assert unseen.outcome is Outcome.SKIPPED
    assert unseen.reason == "adapter bound: not asked"
    case, op = _mini_case("mini.range")  # expects an output: the adapter could not list it
    skipped = judge(case, seen, op, reference_oracle(None))
    assert skipped.outcome is Outcome.SKIPPED


def test_the_protocol_carries_adapter_bounds() -> None:
    reply = reply_from_outcome({"adapter_bound": {"reason": "too long", "seen": "output"}})
    assert (reply.kind, reply.value, reply.message) == ("bound", "output", "too long")
    assert reply.to_json() == {"adapter_bound": {"reason": "too long", "seen": "output"}}
    assert reply_from_outcome({"adapter_bound": {"reason": "r"}}).value is None
    for broken in (
        {"adapter_bound": {}},
        {"adapter_bound": {"reason": "r", "seen": "error"}},
        {"adapter_bound": {"reason": "r"}, "output": 1},
    ):
        assert reply_from_outcome(broken).kind == "errored"


def test_an_unchecked_refusal_under_an_xfail_entry_is_xpassed(tmp_path: Path) -> None:
    case, op = _mini_case("mini.leading-zero")
    path = tmp_path / "e.yaml"
    path.write_text("expectations:\n  - id: mini.leading-zero\n    status: xfail\n    reason: r\n")
    result = judge(case, Reply("error", "unknown"), op, reference_oracle(None))
    decided = Expectations.load(path).decide(result)
    assert decided.outcome is Outcome.XPASSED
    assert "remove the entry" in decided.reason


def test_write_expectations_keeps_the_skip_entries(tmp_path: Path) -> None:
    case, op = _mini_case("mini.range")
    path = tmp_path / "e.yaml"
    path.write_text(
        "expectations:\n  - id: mini.list\n    status: skip\n    reason: never returns\n"
    )
    failed = judge(case, Reply("output", []), op, reference_oracle(None))
    out = tmp_path / "new.yaml"
    write_baseline(out, [failed], impl="x", keep=Expectations.load(path))
    entries = Expectations.load(out).entries
    assert [(e.pattern, e.status) for e in entries] == [
        ("mini.list", "skip"),
        ("mini.range", "xfail"),
    ]


# -- scope ------------------------------------------------------------------------------------


def _summary(results: list[CaseResult], operations: int, cases: int) -> Summary:
    summary = Summary(suite_operations=operations, suite_cases=cases)
    for result in results:
        summary.add(result)
    return summary


def test_scope_names_what_ran_out_of_the_suite() -> None:
    case, _ = _mini_case("mini.range")
    passed = CaseResult(case, Outcome.PASSED, Reply("output", [1, 2, 3]))
    other = case.__class__(**{**case.__dict__, "operation": "hostlist.decode"})
    unsupported = CaseResult(other, Outcome.SKIPPED, Reply("unsupported", message="no"))
    # A case an expectations file keeps from being asked does not make it supported.
    kept_out = CaseResult(other, Outcome.SKIPPED, None, "expectations: never returns")
    scope = _summary([passed, unsupported, kept_out], operations=21, cases=1624).scope()
    assert scope.run_operations == ("idset.decode",)
    assert scope.unsupported_operations == ("hostlist.decode",)
    assert scope.describe() == (
        "on 1 of 21 operations (1 of 1,624 cases); 1 operation unsupported; 19 not selected"
    )
    assert scope.partial


def test_nothing_run_is_not_conformance(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(
        capsys, "run", "--cases", str(MINI), "--impl", "python:inprocess_fakes:Unsupporting"
    )
    assert code == 1
    assert "nothing was run on 0 of 1 operations (0 of 5 cases); 1 operation unsupported" in out


def test_two_operations_get_a_verdict_and_badge_that_say_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    suite = load_suite()
    default = suite.editions.resolve(None)
    ops = {c.operation for c in suite.cases if c.edition in (None, default)}
    total = sum(1 for c in suite.cases if c.edition in (None, default))
    idset_cases = sum(
        1 for c in suite.cases if c.operation.startswith("idset.") and c.edition in (None, default)
    )
    files = {name: tmp_path / name for name in ("b.json", "r.jsonl", "j.xml", "r.md", "r.html")}
    code, out, _ = _run(
        capsys,
        "run",
        "--impl",
        "python:inprocess_fakes:TwoOperations",
        "--badge",
        str(files["b.json"]),
        "--json",
        str(files["r.jsonl"]),
        "--junit",
        str(files["j.xml"]),
        "--markdown",
        str(files["r.md"]),
        "--html",
        str(files["r.html"]),
    )
    assert code == 0
    line = (
        f"conforms on 2 of {len(ops)} operations ({idset_cases:,} of {total:,} cases); "
        f"{len(ops) - 2} operations unsupported"
    )
    assert line in out
    doc = json.loads(files["b.json"].read_text())
    assert doc["message"].endswith(f"must, 2/{len(ops)} ops")
    assert doc["color"] == "blue"  # every case it ran passed, but most of the suite did not run
    footer = json.loads(files["r.jsonl"].read_text().splitlines()[-1])["footer"]
    assert footer["verdict"].startswith(line)
    assert footer["scope"]["run_operations"] == ["idset.decode", "idset.encode"]
    assert footer["scope"]["cases"] == total
    props = {
        p.get("name"): p.get("value") for p in ET.parse(files["j.xml"]).getroot().iter("property")
    }
    assert props["verdict"].startswith(line)
    assert props["scope.run_operations"] == "idset.decode idset.encode"
    markdown = files["r.md"].read_text()
    assert line in markdown
    assert "- run: idset.decode, idset.encode" in markdown
    assert "- unsupported: R.decode," in markdown
    page = files["r.html"].read_text()
    assert line in page
    assert "<p>Operations run: idset.decode, idset.encode</p>" in page


def test_badge_counts_unchecked_refusals_as_not_passed() -> None:
    case, op = _mini_case("mini.leading-zero")  # a must case
    unchecked = judge(case, Reply("error", "unknown"), op, reference_oracle(None))
    summary = _summary([unchecked], operations=1, cases=1)
    doc = badge([unchecked], summary.scope())
    assert doc["message"] == "passes what could be checked: 0/1 must (1 unchecked), 1/1 ops"
    assert doc["color"] == "red"


# -- requiring operations -----------------------------------------------------------------------


def test_require_operation_fails_on_an_unsupported_operation(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["run", "--cases", str(MINI), "--require-operation", "idset.*"]
    assert _run(capsys, *argv)[0] == 0
    code, _, err = _run(capsys, *argv, "--impl", "python:inprocess_fakes:Unsupporting")
    assert code == 1
    assert "required operation idset.decode was not run: the implementation does not" in err
    code, _, err = _run(capsys, "run", "--cases", str(MINI), "--require-operation", "R.*")
    assert code == 2
    assert "matches no selected operation" in err
    code, _, _ = _run(
        capsys, "run", "--cases", str(MINI), "--require-all", "--impl", "inprocess_fakes"
    )
    assert code == 2  # a malformed --impl is a usage error


def test_compare_follows_the_exit_statuses(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["compare", "--cases", str(MINI), "--impl", "reference"]
    code, out, err = _run(capsys, *base)
    assert code == 0
    assert "reference: conforms on 1 of 1 operations (5 of 5 cases)" in err
    assert "## Verdicts\n\n- **flux-conformance reference" in out  # the matrix says it too
    assert _run(capsys, *base, "--impl", "python:inprocess_fakes:Wrong")[0] == 1
    assert _run(capsys, *base, "--impl", "python:inprocess_fakes:Raising")[0] == 3
    unsupporting = [*base, "--impl", "python:inprocess_fakes:Unsupporting"]
    assert _run(capsys, *unsupporting, "--require-all")[0] == 1


# -- broken set-ups -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("impl", "at_once"),
    [
        ("exec:/nonexistent/implementation", True),
        ("exec:false", True),
        (f"exec:{sys.executable} /nonexistent/impl.py", True),
        ("exec:" + fake_command("no-hello"), True),
        # These start, and are found out by the first trivial request, after the suite loads.
        ("python:inprocess_fakes:Raising", False),
        ("python:inprocess_fakes:Broken", False),
    ],
)
def test_a_broken_set_up_is_one_message_and_status_3(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, impl: str, at_once: bool
) -> None:
    loaded: list[object] = []
    real_load = run_command.load

    def load(args: Any) -> Any:
        loaded.append(args)
        return real_load(args)

    monkeypatch.setattr(run_command, "load", load)
    code, out, err = _run(capsys, "run", "--impl", impl, "--json", "-")
    # Told at once: before the suite is loaded (which takes seconds for the bundled one).
    assert len(loaded) == (0 if at_once else 1)
    assert code == 3
    assert out == ""  # no report of errored cases
    assert err.startswith("error: the implementation could not be run")
    assert "ERRORED" not in err


def test_a_missing_library_is_status_3_and_an_unknown_name_status_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert _run(capsys, "run", "--impl", "python:no_such_module_here:X")[0] == 3
    assert _run(capsys, "run", "--impl", "no-such-implementation")[0] == 2


def test_one_error_shared_by_every_case_of_an_operation_is_told_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = _run(
        capsys, "run", "--cases", str(MINI), "--impl", "python:inprocess_fakes:RaisingAfterFirst"
    )
    assert code == 1
    assert "ERRORED every case of idset.decode (5 cases), each with the same reason:" in out
    assert out.count("raised RuntimeError: boom") == 1


def test_smoke_shows_what_the_implementation_announces(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(
        capsys, "smoke", "--cases", str(MINI), "--impl", "exec:" + fake_command("good")
    )
    assert code == 0
    count = len(load_suite(MINI).operations)
    assert f"announces {count} of the suite's {count} operations: R.decode," in out
    assert 'sent:     {"cmd": "run", "operation": "idset.decode"' in out
    assert "verdict:  passed" in out
    code, _, err = _run(capsys, "smoke", "--impl", "exec:false")
    assert code == 3
    assert "could not be run" in err
