"""``-j N``: cases in worker processes, results and reports exactly as a serial run's."""

from __future__ import annotations

import json
import os
import re

import pytest
from support import MINI, fake_command, fake_module

from flux_conformance.runner.adapters.factory import make_adapter
from flux_conformance.runner.cli import main
from flux_conformance.runner.engine import Outcome, run_cases
from flux_conformance.runner.oracle import reference_oracle
from flux_conformance.runner.parallel import Job, can_fork, run_jobs, run_parallel

pytestmark = pytest.mark.skipif(not can_fork(), reason="worker processes are forked")

#: Enough cases for many chunks, a few of every outcome with the Wrong fake.
SELECTION = ["-o", "idset.*", "-o", "hostlist.decode"]


def _normalised(path, kind: str) -> str:
    """A report without what differs between any two runs: durations and the start time."""
    text = path.read_text(encoding="utf-8")
    if kind == "json":
        lines = []
        for line in text.splitlines():
            record = json.loads(line)
            record.get("case", {}).pop("seconds", None)
            record.get("header", {}).pop("started", None)
            lines.append(json.dumps(record, sort_keys=True))
        return "\n".join(lines)
    text = re.sub(r' time="[0-9.]+"', "", text)
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", "DATE", text)


@pytest.mark.parametrize(
    "impl",
    [f"exec:{fake_command('wrong')}", "python:inprocess_fakes:Wrong"],
    ids=["exec", "in-process"],
)
def test_reports_of_j2_are_those_of_j1(capsys, tmp_path, impl):
    outs = []
    for jobs in ("1", "2"):
        folder = tmp_path / jobs
        code = main(
            [
                "run",
                "--impl",
                impl,
                *SELECTION,
                "-j",
                jobs,
                "--json",
                str(folder / "r.jsonl"),
                "--junit",
                str(folder / "r.xml"),
                "--markdown",
                str(folder / "r.md"),
                "--html",
                str(folder / "r.html"),
            ]
        )
        outs.append((code, capsys.readouterr().out))
    assert outs[0][0] == outs[1][0]
    for name, kind in (("r.jsonl", "json"), ("r.xml", "xml"), ("r.md", "md"), ("r.html", "md")):
        assert _normalised(tmp_path / "1" / name, kind) == _normalised(tmp_path / "2" / name, kind)

    # The terminal report too, but for the time it took.
    def strip(out: str) -> str:
        return re.sub(r"in \d+\.\d+ ?s", "", out)

    assert strip(outs[0][1]) == strip(outs[1][1])


def test_results_come_in_case_order_with_small_chunks(mini_suite):
    job = Job(lambda: make_adapter("python:inprocess_fakes:Wrong"))
    serial = list(
        run_cases(
            mini_suite.cases, job.make_adapter(), mini_suite.operations, oracle=reference_oracle
        )
    )
    parallel = list(
        run_parallel(
            mini_suite.cases,
            job,
            mini_suite.operations,
            oracle=reference_oracle,
            workers=3,
            chunk=1,
        )
    )
    assert [(r.case.id, r.outcome, r.reason) for r in parallel] == [
        (r.case.id, r.outcome, r.reason) for r in serial
    ]


class _DiesOnLeadingZero:
    """A library that takes its process down on one input (a crash in C, say)."""

    def run(self, operation, input, **options):
        if input == "01":
            os._exit(3)
        from flux_conformance.reference.operations import run

        return {"output": run(operation, input)}


def test_a_worker_that_dies_costs_only_its_chunk(monkeypatch, mini_suite):
    fake_module(monkeypatch, "dies_fake", Impl=_DiesOnLeadingZero)
    job = Job(lambda: make_adapter("python:dies_fake:Impl"))
    results = list(
        run_parallel(
            mini_suite.cases,
            job,
            mini_suite.operations,
            oracle=reference_oracle,
            workers=2,
            chunk=1,
        )
    )
    by_id = {r.case.id: r for r in results}
    assert [r.case.id for r in results] == [c.id for c in mini_suite.cases]
    dead = by_id["mini.leading-zero"]
    assert dead.outcome is Outcome.ERRORED
    assert "worker process running this case died (exit status 3)" in dead.reason
    others = [r for i, r in by_id.items() if i != "mini.leading-zero"]
    assert all("worker process" not in r.reason for r in others)
    assert by_id["mini.range"].outcome is Outcome.PASSED


def test_side_by_side_jobs_each_get_every_case(mini_suite):
    jobs = [
        Job(lambda: make_adapter("reference")),
        Job(lambda: make_adapter("python:inprocess_fakes:Wrong")),
    ]
    seen: dict[int, list[str]] = {0: [], 1: []}
    order = []
    for j, _start, results in run_jobs(
        mini_suite.cases, jobs, mini_suite.operations, oracle=reference_oracle, workers=2, chunk=2
    ):
        order.append(j)
        seen[j] += [r.case.id for r in sorted(results, key=lambda r: r.case.id)]
    ids = sorted(c.id for c in mini_suite.cases)
    assert sorted(seen[0]) == ids
    assert sorted(seen[1]) == ids
    # Interleaved: the second implementation does not wait for the first to finish.
    assert order.index(1) < len(order) - order[::-1].index(0) - 1


def test_exitfirst_stops_a_parallel_run_where_a_serial_one_stops(capsys):
    verdicts = []
    for jobs in ("1", "2"):
        argv = ["run", "--impl", "python:inprocess_fakes:Wrong", *SELECTION, "-j", jobs, "-x"]
        assert main(argv) == 1
        out = capsys.readouterr().out
        verdicts.append(next(line for line in out.splitlines() if "does not conform" in line))
    assert verdicts[0] == verdicts[1]
    assert verdicts[0].startswith("does not conform: 1 failed, ")


def test_compare_j2_writes_the_matrix_of_j1(capsys, tmp_path):
    texts = []
    for jobs in ("1", "2"):
        main(
            [
                "compare",
                "--cases",
                str(MINI),
                "--impl",
                "reference",
                "--impl",
                "python:inprocess_fakes:Wrong",
                "--impl",
                f"exec:{fake_command('wrong')}",
                "-j",
                jobs,
                "--markdown",
                str(tmp_path / f"{jobs}.md"),
                "--all-rows",
            ]
        )
        capsys.readouterr()
        texts.append(re.sub(r", run \S+", "", (tmp_path / f"{jobs}.md").read_text()))
    assert texts[0] == texts[1]


@pytest.mark.parametrize("value", ["0", "-1", "two"])
def test_jobs_must_be_a_positive_number(capsys, value):
    with pytest.raises(SystemExit) as info:
        main(["run", "-j", value])
    assert info.value.code == 2
    assert "from 1 to" in capsys.readouterr().err


class _DeepOnRange:
    """Answers one input with a list nested deeper than pickle can write."""

    def run(self, operation, input, **options):
        if input == "1-3":
            value: list = []
            for _ in range(50_000):
                value = [value]
            return {"output": value}
        return {"output": []}


def test_an_answer_pickle_cannot_carry_is_judged_as_a_serial_run_judges_it(monkeypatch, mini_suite):
    fake_module(monkeypatch, "deep_fake", Impl=_DeepOnRange)
    job = Job(lambda: make_adapter("python:deep_fake:Impl"))
    serial = list(
        run_cases(
            mini_suite.cases, job.make_adapter(), mini_suite.operations, oracle=reference_oracle
        )
    )
    parallel = list(
        run_parallel(
            mini_suite.cases,
            job,
            mini_suite.operations,
            oracle=reference_oracle,
            workers=2,
            chunk=1,
        )
    )
    assert [(r.case.id, r.outcome, r.reason) for r in parallel] == [
        (r.case.id, r.outcome, r.reason) for r in serial
    ]
    assert all("worker process" not in r.reason for r in parallel)
