"""The command line: exit codes, filters, reports, in-process implementations, serve."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from support import MINI, fake_command

from flux_conformance.runner.cli import main


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_reference_passes_mini_suite(capsys):
    code, out, _ = _run(capsys, "run", "--cases", str(MINI))
    assert code == 0
    assert "conforms on 1 of 1 operations (5 of 5 cases): 5 passed, 0 failed" in out


def test_failure_output_has_everything_needed(capsys):
    code, out, _ = _run(
        capsys, "run", "--cases", str(MINI), "--impl", "python:inprocess_fakes:Wrong"
    )
    assert code == 1
    assert "FAILED mini.range" in out
    assert "idset.decode.yaml:3" in out
    assert 'input:       "1-3"' in out
    assert 'expected:    {"output": [1, 2, 3]}' in out
    assert 'actual:      {"output": []}' in out
    assert (
        "replay:      flux-conformance run --impl python:inprocess_fakes:Wrong --id mini.range"
        in out
    )
    assert "does not conform" in out


@pytest.mark.parametrize(
    ("impl", "outcome"),
    [
        ("python:inprocess_fakes:RaisingAfterFirst", "errored"),
        ("python:inprocess_fakes:BrokenAfterFirst", "errored"),
        ("python:inprocess_fakes:WrongCategory", "failed"),
    ],
)
def test_faulty_inprocess_implementations(capsys, impl, outcome):
    code, out, _ = _run(capsys, "run", "--cases", str(MINI), "--impl", impl, "--json", "-")
    assert code == 1
    lines = [json.loads(line) for line in out.splitlines()]
    assert "header" in lines[0]
    assert "footer" in lines[-1]
    cases = [line["case"] for line in lines[1:-1]]
    assert len(cases) == 5
    assert {c["outcome"] for c in cases} == {outcome}
    assert lines[-1]["footer"]["total"][outcome] == 5


def test_function_implementation(capsys):
    code, _, _ = _run(capsys, "run", "--cases", str(MINI), "--impl", "python:inprocess_fakes:good")
    assert code == 0


def test_filters(capsys):
    code, out, _ = _run(capsys, "list", "--cases", str(MINI), "--tag", "range")
    assert code == 0
    assert [line.split("\t")[0] for line in out.splitlines()] == ["mini.range"]
    _, out, _ = _run(
        capsys, "list", "--cases", str(MINI), "--level", "should", "--level", "clarification"
    )
    assert [line.split("\t")[0] for line in out.splitlines()] == [
        "mini.brackets",
        "mini.degenerate",
    ]
    _, out, _ = _run(capsys, "list", "--cases", str(MINI), "--id", "mini.l*")
    assert [line.split("\t")[0] for line in out.splitlines()] == ["mini.list", "mini.leading-zero"]
    code, _, err = _run(capsys, "run", "--cases", str(MINI), "--id", "nothing*")
    assert code == 2
    assert "--id 'nothing*' matches no case id" in err
    # Filters that each match something but no case together: still a usage error.
    code, _, err = _run(
        capsys, "run", "--cases", str(MINI), "--id", "mini.range", "--level", "should"
    )
    assert code == 2
    assert "no case matches" in err


def test_bad_impl_strings_are_usage_errors(capsys):
    code, _, err = _run(capsys, "run", "--cases", str(MINI), "--impl", "python:nomodule")
    assert code == 2
    assert "module:object" in err
    code, _, err = _run(capsys, "run", "--cases", str(MINI), "--impl", "python:no_such_mod_xyz:x")
    assert code == 3  # well formed, but the implementation cannot be loaded
    assert "cannot import" in err
    code, _, err = _run(capsys, "run", "--cases", str(MINI), "--impl", "ruby:x")
    assert code == 2
    assert "unknown implementation" in err


def test_broken_suite_exits_2(capsys, tmp_path):
    (tmp_path / "requirements").mkdir()
    (tmp_path / "bad.yaml").write_text("operation: nope.op\ncases: []\n")
    code, _, err = _run(capsys, "run", "--cases", str(tmp_path))
    assert code == 2
    assert f"{tmp_path / 'bad.yaml'}:1: unknown operation" in err
    code, _, _ = _run(capsys, "check", "--cases", str(tmp_path))
    assert code == 2


def test_reports_are_written(capsys, tmp_path):
    junit, md, html, jsonl = (tmp_path / n for n in ("r.xml", "r.md", "r.html", "r.jsonl"))
    code, _, _ = _run(
        capsys,
        "run",
        "--cases",
        str(MINI),
        "--impl",
        "python:inprocess_fakes:Wrong",
        "--junit",
        str(junit),
        "--markdown",
        str(md),
        "--html",
        str(html),
        "--json",
        str(jsonl),
    )
    assert code == 1
    root = ET.parse(junit).getroot()
    suite = root.find("testsuite")
    assert suite is not None
    assert suite.get("name") == "idset.decode"
    assert suite.get("tests") == "5"
    assert int(suite.get("failures", "0")) == 5
    assert len(root.findall(".//testcase")) == 5
    text = md.read_text()
    assert "| idset.decode | 0 | 5 |" in text
    assert "### `mini.range`: failed" in text
    page = html.read_text()
    assert page.startswith("<!doctype html>")
    assert "mini.leading-zero" in page
    assert len(jsonl.read_text().splitlines()) == 7


def test_exitfirst_stops_after_first_failure(capsys):
    code, out, _ = _run(
        capsys,
        "run",
        "--cases",
        str(MINI),
        "--impl",
        "python:inprocess_fakes:Wrong",
        "-x",
        "--json",
        "-",
    )
    assert code == 1
    assert len(out.splitlines()) == 3


def test_check_and_coverage(capsys):
    code, out, _ = _run(capsys, "check", "--cases", str(MINI))
    assert code == 0
    assert "ok: 5 cases, 4 requirements" in out
    code, out, _ = _run(capsys, "coverage", "--cases", str(MINI))
    assert code == 0
    assert "2/4" in out
    assert "mini.uncited [MAY, Implementation] NO CASE" in out
    assert "mini.background [informative, Background] untestable: Background only." in out


def test_list_operations(capsys):
    code, out, _ = _run(capsys, "list", "--operations")
    assert code == 0
    assert "idset.decode" in out
    assert "error syntax:" in out


def test_serve_speaks_the_protocol():
    requests = [
        {"cmd": "hello", "protocol": 1},
        {"cmd": "run", "seq": 1, "operation": "idset.decode", "input": "1-2"},
        {"cmd": "run", "seq": 2, "operation": "idset.decode", "input": "x"},
        {"cmd": "run", "seq": 3, "operation": "no.such", "input": 1},
        {"cmd": "run", "seq": 4},
        {"cmd": "stop"},
    ]
    text = "".join(json.dumps(r) + "\n" for r in requests) + "not json\n"
    proc = subprocess.run(
        [sys.executable, "-m", "flux_conformance.runner.cli", "serve"],
        input=text,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    replies = [json.loads(line) for line in proc.stdout.splitlines()]
    assert replies[0]["protocol"] == 1
    assert "idset.decode" in replies[0]["operations"]
    assert replies[1] == {"seq": 1, "output": [1, 2]}
    assert replies[2]["seq"] == 2
    assert replies[2]["error"]["category"] == "syntax"
    assert replies[3]["seq"] == 3
    assert "unsupported" in replies[3]
    assert replies[4]["error"]["category"] == "protocol"
    assert len(replies) == 5  # nothing after stop


def test_exec_transport_through_cli(capsys):
    code, out, _ = _run(
        capsys,
        "run",
        "--cases",
        str(MINI),
        "--impl",
        f"exec:{fake_command('crash', '1,5')}",
        "--json",
        "-",
        "--timeout",
        "5",
    )
    assert code == 1
    cases = [json.loads(line)["case"] for line in out.splitlines()[1:-1]]
    crashed = next(c for c in cases if c["id"] == "mini.list")
    assert crashed["outcome"] == "errored"
    assert "crashing on purpose" in crashed["actual"]["errored"]["stderr"]


class _DeepOutput:
    """Answers every case with an output nested ``DEPTH`` levels deep.

    Deep enough for no JSON encoder to follow, and small enough to be judged (a larger answer
    is too large to judge); an answer of more than 10,000 values is kept, in every report, only
    as the start of its JSON text.
    """

    DEPTH = 5_000

    def run(self, operation, input, **options):
        deep: list = []
        for _ in range(self.DEPTH):
            deep = [deep]
        return {"output": deep}


@pytest.mark.parametrize("depth", [5_000, 50_000])
def test_deep_output_is_reported_not_crashed(capsys, tmp_path, monkeypatch, depth):
    import sys
    import types

    module = types.ModuleType("deep_output_impl")
    module.Impl = type("Impl", (_DeepOutput,), {"DEPTH": depth})
    monkeypatch.setitem(sys.modules, "deep_output_impl", module)
    jsonl, md, html, junit = (tmp_path / n for n in ("r.jsonl", "r.md", "r.html", "r.xml"))
    code, out, _ = _run(
        capsys,
        "run",
        "--cases",
        str(MINI),
        "--impl",
        "python:deep_output_impl:Impl",
        "--json",
        str(jsonl),
        "--markdown",
        str(md),
        "--html",
        str(html),
        "--junit",
        str(junit),
    )
    assert code == 1
    assert "does not conform" in out
    lines = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert len(lines) == 7
    assert lines[1]["case"]["outcome"] == "failed"
    if depth > 10_000:  # kept as the start of its JSON text
        assert lines[1]["case"]["actual"]["cut"] is True
        assert lines[1]["case"]["actual"]["output"].startswith("[[[[")
    else:
        assert "not representable" in json.dumps(lines[1])
