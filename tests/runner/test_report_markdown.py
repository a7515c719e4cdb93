"""The Markdown report as its reader gets it: within a GitHub job summary, saying what it left out.

A GitHub job summary takes 1 MiB a step, and the action adds a line or two: the report keeps
its cases to 999,000 bytes of UTF-8 and counts the ones past that.  The sizes are numbers
written here, never the module's constants, so a bound moved by one byte fails a test.  The
cases come from case files written by each test and are answered by the in-process
``report_fakes.ByInput``, which does what each input's first word says.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from support import write_suite

from flux_conformance.runner.cli import main

IMPL = "python:report_fakes:ByInput"
#: The line that counts the cases past the bound, and the outcomes it gives.
LEFT_OUT = re.compile(
    r"^\*([\d,]+) more cases that did not pass are not shown here \((.*)\): this report "
    r"keeps under 1,000,000 bytes, what a GitHub job summary takes\. The JSON Lines, JUnit "
    r"and HTML reports hold every case\.\*$",
    re.MULTILINE,
)
SHOWN = re.compile(r"^### `(c\d+)`: (\w+)$", re.MULTILINE)


def _skipped_cases(descriptions: list[int]) -> list[dict]:
    """A case per description length, answered unsupported with a reason cut at 2,000
    characters (the input and the answer are cut at 500)."""
    return [
        {"id": f"c{i:04d}", "description": "d" * n, "input": "skip " + "1" * 600, "error": "syntax"}
        for i, n in enumerate(descriptions)
    ]


def _markdown(tmp_path: Path, descriptions: list[int]) -> bytes:
    cases = write_suite(tmp_path / "suite", {"idset.decode": _skipped_cases(descriptions)})
    report = tmp_path / "r.md"
    assert main(["run", "--cases", str(cases), "--impl", IMPL, "--markdown", str(report)]) == 1
    return report.read_bytes()


def test_a_report_of_999000_bytes_shows_every_case_and_one_byte_more_leaves_one_out(
    tmp_path: Path, capsys
) -> None:
    count = 200
    # A first report of short descriptions (all shown) measures the rest of each case's block
    # (paths differ from machine to machine); a description's characters are its bytes.
    first = _markdown(tmp_path, [100] * count)
    assert not LEFT_OUT.search(first.decode())
    assert len(SHOWN.findall(first.decode())) == count
    more, spread = divmod(999_000 - len(first), count)
    lengths = [100 + more + (i < spread) for i in range(count)]
    assert max(lengths) <= 2000  # a description is shown whole up to 2,000 characters

    exact = _markdown(tmp_path, lengths).decode()
    assert len(exact.encode()) == 999_000
    assert exact.endswith("\n\n")
    assert not LEFT_OUT.search(exact)
    assert [i for i, _ in SHOWN.findall(exact)] == [f"c{i:04d}" for i in range(count)]

    lengths[-1] += 1
    over = _markdown(tmp_path, lengths).decode()
    shown = SHOWN.findall(over)
    assert [i for i, _ in shown] == [f"c{i:04d}" for i in range(count - 1)]
    left = LEFT_OUT.search(over)
    assert left
    assert left.groups() == ("1", "1 skipped")
    assert over.endswith(left.group(0) + "\n\n")
    assert len(over.encode()) < 1_000_000
    capsys.readouterr()


def test_a_hostile_run_of_many_failures_fits_and_counts_every_case_it_leaves_out(
    tmp_path: Path, capsys
) -> None:
    kinds = ("fail", "raise", "skip", "wrong", "1")  # "1" passes: never in this report
    cases = [
        {
            "id": f"c{i:04d}",
            "description": "<b>|`~*" + "d" * 3000,
            "input": "1" if kinds[i % 5] == "1" else f"{kinds[i % 5]} " + "\x00\x1b|`<&" * 200,
            "output": [1],
        }
        for i in range(400)
    ]
    folder = write_suite(tmp_path / "suite", {"idset.decode": cases})
    reports = {"--markdown": tmp_path / "r.md", "--json": tmp_path / "r.jsonl"}
    argv = ["run", "--cases", str(folder), "--impl", IMPL]
    assert main(argv + [x for o, p in reports.items() for x in (o, str(p))]) == 1
    capsys.readouterr()
    text = reports["--markdown"].read_text(encoding="utf-8")
    assert len(text.encode()) < 1_000_000
    assert "\x00" not in text
    assert "\x1b" not in text

    lines = reports["--json"].read_text(encoding="utf-8").splitlines()
    outcomes = {
        c["id"]: c["outcome"] for c in (json.loads(line).get("case") for line in lines) if c
    }
    not_passed = [i for i, outcome in outcomes.items() if outcome != "passed"]
    assert len(not_passed) == 320
    shown = SHOWN.findall(text)
    assert 200 < len(shown) < 300
    assert shown == [(i, outcomes[i]) for i in not_passed[: len(shown)]]

    left = LEFT_OUT.search(text)
    assert left
    count, tally = left.groups()
    hidden = Counter(outcomes[i] for i in not_passed[len(shown) :])
    assert int(count.replace(",", "")) == sum(hidden.values())
    told = dict(part.split(" ")[::-1] for part in tally.split(", "))
    assert {outcome: int(n) for outcome, n in told.items()} == hidden
    assert set(hidden) == {"failed", "errored", "skipped"}
