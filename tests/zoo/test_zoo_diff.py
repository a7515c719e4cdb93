"""``flux-conformance diff`` finds zoo members by itself, in seconds.

The cases catch every member (test_zoo.py); this checks the other tool that finds missing
cases: a bounded differential run of the reference against a wrong implementation must find a
disagreement, and write it as a case.  The members chosen span the operations that have input
strategies and the kinds of bug (off-by-one at the end of long ranges, wrapping, sorting,
padding, defaults, precedence, trimming), and every wrong scheduler of ``sched.allocate`` (the
reference's twins, tests/zoo/members_allocate.py): each within the run's time bound, marked
slow (about half a minute each).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from flux_conformance.runner.cli import main
from zoo.members import MEMBERS

FOUND_BY_DIFF = (
    "idset.decode/long-range-drops-last",
    "idset.decode/wraps-at-2-32",
    "hostlist.decode/padding-per-element",
    "range.decode/default-operator-star",
    "constraint.parse_query/or-binds-tighter",
    "slurm.extra.match/missing-key-not-equal",
)


#: Every wrong scheduler: diff must find each one too.
SCHEDULERS = tuple(m.name for m in MEMBERS if m.operation == "sched.allocate")

#: A larger budget (examples, seconds) where the input a bug needs is rare in the generator: a
#: slot of two whole free nodes.
BUDGETS = {"sched.allocate/slot-of-nodes-one-node": ("400", "40")}


def test_the_chosen_members_exist() -> None:
    assert set(FOUND_BY_DIFF) <= {m.name for m in MEMBERS}
    assert len(SCHEDULERS) >= 40


@pytest.mark.parametrize(
    "name",
    [*FOUND_BY_DIFF, *(pytest.param(n, marks=pytest.mark.slow) for n in SCHEDULERS)],
)
def test_diff_finds_the_member(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    operation = name.split("/", maxsplit=1)[0]
    attribute = re.sub(r"\W", "_", name.replace("/", "__"))
    out = tmp_path / "found.yaml"
    status = main(
        [
            "diff",
            "--impl",
            f"python:zoo.members:{attribute}",
            "-o",
            operation,
            "--seed",
            "1",
            "--examples",
            BUDGETS.get(name, ("200", "30"))[0],
            "--seconds",
            BUDGETS.get(name, ("200", "30"))[1],
            "--max",
            "1",
            "--out",
            str(out),
        ]
    )
    err = capsys.readouterr().err
    assert status == 1, err
    cases = yaml.safe_load(out.read_text())["cases"]
    assert len(cases) == 1
    assert cases[0]["id"].startswith(f"{operation}.diff-")
