"""``flux-conformance diff`` finds zoo members by itself, in seconds.

The cases catch every member (test_zoo.py); this checks the other tool that finds missing
cases: a bounded differential run of the reference against a wrong implementation must find a
disagreement, and write it as a case.  The members chosen span the operations that have input
strategies and the kinds of bug (off-by-one at the end of long ranges, wrapping, sorting,
padding, defaults, precedence, trimming), the wrong readers of R, constraints and jobspecs
that the document strategies reach (ids past 2**31 and 2**32, host names RFC 29 forbids, counts
past 32 bits, undefined vertex keys, tasks naming no slot), and every wrong scheduler of
``sched.allocate`` (the reference's twins, tests/zoo/members_allocate.py): each within the run's
time bound, the documents and schedulers marked slow (about half a minute each).  Members the
strategies do not reach within that bound are caught by the cases alone (test_zoo.py).
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

#: Wrong readers of documents (R, constraints, jobspecs), found through the same bounded worker.
DOCUMENTS = (
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


#: Every wrong scheduler: diff must find each one too.
SCHEDULERS = tuple(m.name for m in MEMBERS if m.operation == "sched.allocate")

#: A larger budget (examples, seconds) where the input a bug needs is rare in the generator: a
#: slot of two whole free nodes.
BUDGETS = {"sched.allocate/slot-of-nodes-one-node": ("400", "40")}


def test_the_chosen_members_exist() -> None:
    assert set(FOUND_BY_DIFF) | set(DOCUMENTS) <= {m.name for m in MEMBERS}
    assert len(SCHEDULERS) >= 40


@pytest.mark.parametrize(
    "name",
    [
        *FOUND_BY_DIFF,
        *(pytest.param(n, marks=pytest.mark.slow) for n in (*DOCUMENTS, *SCHEDULERS)),
    ],
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
