"""The JUnit report as a CI reads it: parsed as XML, each case under its outcome's element.

What a CI shows comes from the elements and attributes (a ``failure``'s message, the counts of
a ``testsuite``, the run's properties) and from a failure's text, which is cut at 20,000
characters; names and properties at 1,000.  The sizes are numbers written here, never the
module's constants.  The cases come from case files written by each test and are answered by
the in-process ``report_fakes.ByInput``, which does what each input's first word says.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from support import write_suite

from flux_conformance.runner.cli import main


def _junit(tmp_path: Path, cases: dict[str, list[dict]], *argv: str) -> ET.Element:
    folder = write_suite(tmp_path / "suite", cases)
    report = tmp_path / "r.xml"
    main(["run", "--cases", str(folder), *argv, "--junit", str(report)])
    assert report.read_text(encoding="utf-8").endswith("</testsuites>\n")  # a text file
    return ET.parse(report).getroot()


def _failure_text(tmp_path: Path, id_length: int) -> str:
    case = {"id": "c" * id_length, "description": "d", "input": "fail", "output": [1]}
    root = _junit(tmp_path, {"idset.decode": [case]}, "--impl", "python:report_fakes:ByInput")
    (failure,) = root.iter("failure")
    assert failure.get("message") == "reported error 'limit'; expected an output"
    return failure.text or ""


def test_a_failures_text_is_whole_up_to_20000_characters_and_cut_past_them(
    tmp_path: Path, capsys
) -> None:
    # The case's id is in the text once (in its replay command), a character a character.
    first = _failure_text(tmp_path, 1000)
    lines = first.split("\n")
    assert [line.split(": ", 1)[0] for line in lines] == ["input", "expected", "actual", "replay"]
    assert lines[0] == 'input: "fail"'
    assert lines[1] == 'expected: {"output": [1]}'
    assert lines[3].startswith("replay: flux-conformance run --impl python:report_fakes:ByInput")
    assert f" --id {'c' * 1000} " in lines[3]
    length = 1000 + 20_000 - len(first)

    whole = _failure_text(tmp_path, length)
    assert len(whole) == 20_000
    assert whole.endswith(lines[3][-50:])

    cut = _failure_text(tmp_path, length + 1)
    longer = whole.replace(f" --id {'c' * length} ", f" --id {'c' * (length + 1)} ")
    assert cut == longer[:20_000] + "... (20001 characters)"
    capsys.readouterr()


def test_each_outcome_has_its_element_and_the_suites_counts_add_up(tmp_path: Path, capsys) -> None:
    words = ["1", "fail", "unknown", "skip", "wrong", "raise", "1"]
    expected = [{"output": [1]}, {"output": [1]}, {"error": "syntax"}] + [{"output": [1]}] * 4
    cases = [
        {"id": f"c{i}", "description": "d", "input": f"{word} x" if word != "1" else "1", **exp}
        for i, (word, exp) in enumerate(zip(words, expected, strict=True))
    ]
    expectations = tmp_path / "expected.yaml"
    expectations.write_text(
        "expectations:\n"
        "  - {id: c0, status: xfail, reason: thought broken}\n"
        "  - {id: c1, status: xfail, reason: known to refuse}\n"
    )
    impl = ["--impl", "python:report_fakes:ByInput", "--expectations", str(expectations)]
    root = _junit(tmp_path, {"idset.decode": cases}, *impl)
    capsys.readouterr()
    (suite,) = root.iter("testsuite")
    # c0 xpassed and c4 failed; c5 errored; c1 xfailed, c2 unchecked and c3 skipped.
    assert dict(suite.attrib) == {
        "name": "idset.decode",
        "tests": "7",
        "failures": "2",
        "errors": "1",
        "skipped": "3",
    }
    shown = {
        case.get("name"): [(child.tag, child.get("message", "")) for child in case]
        for case in suite.iter("testcase")
    }
    assert shown["c6"] == []  # passed
    assert shown["c0"][0][0] == "failure"
    assert shown["c0"][0][1]  # an xpass says why it fails the run
    assert shown["c4"] == [
        ("failure", "output is not of the operation's form: [0]: '\\x00' is not of type 'integer'")
    ]
    assert [tag for tag, _ in shown["c5"]] == ["error"]
    assert shown["c5"][0][1] == "raised RuntimeError: " + "r" * 1979 + "... (3021 characters)"
    for name, outcome in (("c1", "xfailed"), ("c2", "unchecked"), ("c3", "skipped")):
        ((tag, message),) = shown[name]
        assert tag == "skipped"
        assert message.startswith(f"{outcome}: ")


def _properties(suite: ET.Element) -> dict[str, str]:
    return {p.get("name", ""): p.get("value", "") for p in suite.iter("property")}


def test_a_property_is_cut_at_1000_characters(tmp_path: Path, capsys) -> None:
    case = {"id": "c", "description": "d", "input": "1", "output": [1]}
    root = _junit(tmp_path, {"idset.decode": [case]}, "--impl", "python:report_fakes:LongVersion")
    capsys.readouterr()
    (suite,) = root.iter("testsuite")
    assert _properties(suite)["implementation.version"] == "v" * 1000 + "... (1500 characters)"


def test_the_scope_names_every_operation_run_and_every_one_unsupported(
    tmp_path: Path, capsys
) -> None:
    cases = {
        "idset.decode": [{"id": "a", "description": "d", "input": "1", "output": [1]}],
        "idset.encode": [{"id": "b", "description": "d", "input": [1], "output": "1"}],
        "hostlist.decode": [{"id": "c", "description": "d", "input": "n1", "output": ["n1"]}],
        "hostlist.encode": [{"id": "d", "description": "d", "input": ["n1"], "output": "n1"}],
    }
    # TwoOperations supports idset.decode and idset.encode only.
    root = _junit(tmp_path, cases, "--impl", "python:inprocess_fakes:TwoOperations")
    capsys.readouterr()
    properties = {suite.get("name"): _properties(suite) for suite in root.iter("testsuite")}
    for found in properties.values():
        assert found["scope.run_operations"] == "idset.decode idset.encode"
        assert found["scope.unsupported_operations"] == "hostlist.decode hostlist.encode"
    assert sorted(properties) == sorted(cases)
