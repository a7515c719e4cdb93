"""``flux-conformance diff`` finds the wrong readers of R, constraints and jobspecs by itself.

Each member named here is found by a bounded ``diff`` run (seed 1, at most 200 inputs a round
and 30 seconds), through the same bounded worker as any implementation: the R, constraint and
jobspec strategies reach the inputs these mistakes touch (ids past 2**31 and 2**32, host names
RFC 29 forbids, counts past 32 bits, undefined vertex keys, tasks naming no slot).  Members the
strategies do not reach within that bound are caught by the cases alone (tests/zoo/test_zoo.py).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from flux_conformance.runner.cli import main
from zoo.members import MEMBERS

FOUND_BY_DIFF = (
    "R.decode/r-ids-wrap-at-2-32",
    "R.decode/host-cut-at-whitespace",
    "R.validate/host-names-unchecked",
    "R.union/union-ids-wrap-at-2-32",
    "constraint.validate/hostlist-values-unchecked",
    "constraint.validate/ranks-past-2-31-invalid",
    "jobspec.validate/count-past-2-31-invalid",
    "jobspec.validate/unknown-vertex-key-refused",
    "jobspec.validate/task-slot-unchecked",
)


def test_the_chosen_members_exist() -> None:
    assert set(FOUND_BY_DIFF) <= {m.name for m in MEMBERS}


@pytest.mark.slow
@pytest.mark.parametrize("name", FOUND_BY_DIFF)
def test_diff_finds_the_member(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    operation = name.split("/", maxsplit=1)[0]
    attribute = re.sub(r"\W", "_", name.replace("/", "__"))
    out = tmp_path / "found.yaml"
    argv = ["diff", "--impl", f"python:zoo.members:{attribute}", "-o", operation, "--seed", "1"]
    status = main([*argv, "--examples", "200", "--seconds", "30", "--max", "1", "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 1, err
    cases = yaml.safe_load(out.read_text())["cases"]
    assert len(cases) == 1
    assert cases[0]["id"].startswith(f"{operation}.diff-")
