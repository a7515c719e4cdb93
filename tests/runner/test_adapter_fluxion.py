"""The fluxion adapter: reading resource-query's sessions, and real runs on a Fluxion build.

The first tests read resource-query output laid out as the real program prints it (the
adapter's parsing only).  The others run the real ``resource-query`` and
``flux-jobspec-validate`` of the build ``FLUXION_BUILD`` names
(``implementations/flux-sched/build.sh`` makes one) on small pools and jobspecs of their own,
and skip without a build.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import time
from typing import Any

import pytest

from flux_conformance.reference.idset import decode as decode_idset
from flux_conformance.runner.adapters import KNOWN
from flux_conformance.runner.adapters.base import AdapterError
from flux_conformance.runner.adapters.subprocess import SubprocessAdapter
from flux_conformance.runner.adapters.thirdparty import expectations_file
from flux_conformance.runner.adapters.thirdparty.fluxion import (
    ENV,
    HORIZON,
    Fluxion,
    FluxionAdapter,
    FluxionFailed,
    _span,
    parse_satisfiability,
    parse_session,
)
from flux_conformance.runner.cli import main, make_adapter
from flux_conformance.runner.expectations import Expectations

_SEP = "INFO: ============================="

#: Two jobs as resource-query prints them with -d: the first allocated, the second not, and
#: never satisfiable.
_SESSION = "\n".join(
    [
        '{"version": 1, "execution": {"R_lite": [{"rank": "2", "children": {"core": "0"}}]}}',
        _SEP,
        "INFO: JOBID=1",
        "INFO: RESOURCES=ALLOCATED",
        "INFO: SCHEDULED AT=Now",
        _SEP,
        _SEP,
        "INFO: No matching resources found",
        "INFO: Unsatisfiable request",
        "INFO: JOBID=2",
        _SEP,
        _SEP,
        "INFO: No matching resources found",
        "INFO: JOBID=3",
        _SEP,
    ]
)


def test_registered_as_a_worker_adapter() -> None:
    assert KNOWN["fluxion"] == "flux_conformance.runner.adapters.thirdparty.fluxion:FluxionAdapter"
    assert issubclass(FluxionAdapter, SubprocessAdapter)


def test_session_is_read_job_by_job() -> None:
    found = parse_session(_SESSION)
    assert sorted(found) == [1, 2, 3]
    assert found[1].allocated
    assert found[1].R is not None
    assert json.loads(found[1].R)["execution"]["R_lite"][0]["rank"] == "2"
    assert not found[2].allocated
    assert found[2].unsatisfiable
    assert found[2].R is None
    assert not found[3].allocated
    assert not found[3].unsatisfiable


#: A session whose match found nothing, said nothing, and whose satisfiability check followed.
def _no_match(verdict: str, *, held: int = 0) -> str:
    lines = []
    for n in range(1, held + 1):
        lines += ['{"version": 1}', _SEP, f"INFO: JOBID={n}", "INFO: RESOURCES=ALLOCATED", _SEP]
    lines += [_SEP, "INFO: No matching resources found", f"INFO: JOBID={held + 1}", _SEP]
    return "\n".join([*lines, _SEP, f"INFO: {verdict} request", _SEP])


def _judged(
    stdout: str, *, held: int = 0, stderr: str = "", status: int = 0, asked: list[str] | None = None
) -> Any:
    done = subprocess.CompletedProcess(["resource-query"], status, stdout, stderr)

    def satisfiable() -> bool | None:  # the second session, here given the same printout
        if asked is not None:
            asked.append("match satisfiability")
        return parse_satisfiability(stdout)

    return Fluxion._judge_session(done, held, 1000, satisfiable)


def test_satisfiability_is_read_after_the_last_job() -> None:
    assert parse_satisfiability(_SESSION) is None  # JOBID=3 closes the last verdict
    assert parse_satisfiability(_no_match("Satisfiable")) is True
    assert parse_satisfiability(_no_match("Unsatisfiable")) is False
    # The satisfiability block carries no job id: it never leaks into a job of its own.
    assert not parse_session(_no_match("Unsatisfiable"))[1].unsatisfiable


def test_silence_is_busy_only_when_something_is_allocated() -> None:
    asked: list[str] = []
    busy = _judged(_no_match("Satisfiable", held=1), held=1, asked=asked)
    assert busy["error"]["category"] == "busy"
    assert asked == []  # something is allocated: Fluxion's "not now" stands
    # Nothing allocated: "not now" cannot be the answer; Fluxion's own check of "ever" is.
    never = _judged(_no_match("Unsatisfiable"), asked=asked)
    assert never["error"]["category"] == "unsatisfiable"
    unknown = _judged(_no_match("Satisfiable"), asked=asked)
    assert unknown["error"]["category"] == "unknown"
    assert asked == ["match satisfiability"] * 2


def test_refusals_without_a_kind_are_unknown() -> None:
    pool = _judged("", status=1, stderr="ERROR: error generating resources")
    assert pool["error"]["category"] == "unknown"
    refused = _judged(_no_match("Satisfiable"), held=1, stderr="ERROR: traverser run () returned")
    assert refused["error"]["category"] == "unknown"
    assert "update refused allocated R number 1" in refused["error"]["message"]
    with pytest.raises(FluxionFailed, match="status -6"):
        _judged("", status=-6, stderr="terminate called")


def test_an_allocation_moves_to_the_clock() -> None:
    stdout = "\n".join(
        [
            '{"version": 1, "execution": {"R_lite": [], "starttime": 0, "expiration": 60}}',
            _SEP,
            "INFO: JOBID=1",
            "INFO: RESOURCES=ALLOCATED",
            _SEP,
        ]
    )
    execution = _judged(stdout)["output"]["execution"]
    assert (execution["starttime"], execution["expiration"]) == (1000, 1060)


def _times(**times: Any) -> dict[str, Any]:
    return {"version": 1, "execution": {"R_lite": [], **times}}


def test_allocated_rs_keep_their_own_times_on_fluxions_clock() -> None:
    assert _span(_times(starttime=900, expiration=1600), 1000) == (0, 600)
    assert _span(_times(starttime=900, expiration=1600.2), 1000) == (0, 601)  # never shorter
    assert _span(_times(starttime=1200, expiration=1600), 1000) == (200, 400)
    assert _span(_times(), 1000) == (0, HORIZON)  # unset: held as long as the clock runs
    assert _span(_times(expiration=0), 1000) == (0, HORIZON)
    assert _span(_times(starttime=100, expiration=1000), 1000) is None  # ended
    assert _span(_times(expiration=999.5), 1000) is None
    assert isinstance(_span(_times(expiration="soon"), 1000), str)
    assert isinstance(_span(_times(starttime=1500, expiration=1200), 1000), str)


def test_without_a_build_the_adapter_says_how_to_make_one(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Any
) -> None:
    monkeypatch.delenv(ENV, raising=False)
    with pytest.raises(AdapterError, match=r"flux-sched/build\.sh SRC PREFIX BUILD"):
        make_adapter("fluxion")
    # Exit status 3: the implementation could not be run (docs/verdicts.md).
    assert main(["run", "--impl", "fluxion", "-o", "jobspec.validate"]) == 3
    assert "FLUXION_BUILD" in capsys.readouterr().err
    with pytest.raises(AdapterError, match="holds no resource/utilities/resource-query"):
        Fluxion(str(tmp_path))


def test_expectations_file_loads_and_is_not_stale() -> None:
    from flux_conformance.runner.cases import load_suite

    expectations = Expectations.load(expectations_file("fluxion"))
    assert expectations.entries
    assert all(e.status in ("xfail", "xerror") and e.reason.strip() for e in expectations.entries)
    assert expectations.stale(c.id for c in load_suite().cases) == []


# -- the real resource-query ----------------------------------------------------------------


def _r(ranks: str, cores: str, hosts: str, **extra: Any) -> dict[str, Any]:
    execution = {"R_lite": [{"rank": ranks, "children": {"core": cores}}], "nodelist": [hosts]}
    execution.update(extra)
    return {"version": 1, "execution": execution}


#: Four nodes of four cores; ranks 0 and 1 have the property ssd.
POOL = _r("0-3", "0-3", "node[0-3]", properties={"ssd": "0-1"})


def _jobspec(nodes: int, cores: int, *, duration: int = 3600, **system: Any) -> dict[str, Any]:
    slot = {"type": "slot", "count": 1, "label": "task", "with": [{"type": "core", "count": cores}]}
    return {
        "version": 1,
        "resources": [{"type": "node", "count": nodes, "with": [slot]}],
        "tasks": [{"command": ["app"], "slot": "task", "count": {"per_slot": 1}}],
        "attributes": {"system": {"duration": duration, **system}},
    }


def _cores(allocation: dict[str, Any]) -> dict[int, list[int]]:
    """rank -> cores of an R (rank idsets expanded with the reference's decoder)."""
    found: dict[int, list[int]] = {}
    for entry in allocation["execution"]["R_lite"]:
        for rank in decode_idset(entry["rank"]):
            found.setdefault(rank, []).extend(decode_idset(entry["children"]["core"]))
    return found


@pytest.fixture
def fluxion() -> Fluxion:
    if not os.environ.get(ENV):
        pytest.skip(f"{ENV} is not set (implementations/flux-sched/build.sh makes a build)")
    return Fluxion()


def _allocate(fluxion: Fluxion, **value: Any) -> dict[str, Any]:
    return dict(fluxion.run("sched.allocate", {"pool": POOL, **value}))


def test_real_allocation_has_the_asked_shape(fluxion: Fluxion) -> None:
    out = _allocate(fluxion, jobspec=_jobspec(2, 3))
    cores = _cores(out["output"])
    assert len(cores) == 2
    assert all(len(c) == 3 and set(c) <= {0, 1, 2, 3} for c in cores.values())
    execution = out["output"]["execution"]
    # Without now, resource-query's clock starts at the wall clock, as Fluxion's module's does.
    assert abs(execution["starttime"] - time.time()) < 60
    assert execution["expiration"] == execution["starttime"] + 3600


def test_real_clock_is_moved_to_now(fluxion: Fluxion) -> None:
    out = _allocate(fluxion, jobspec=_jobspec(1, 1, duration=60), now=1000)
    execution = out["output"]["execution"]
    assert (execution["starttime"], execution["expiration"]) == (1000, 1060)


def test_real_allocated_resources_are_taken_exactly(fluxion: Fluxion) -> None:
    held = [_r("0-1", "0-3", "node[0-1]"), _r("2", "0-1", "node2")]
    out = _allocate(fluxion, jobspec=_jobspec(2, 2), allocated=held)
    # Only node2's cores 2-3 and node3 are free: the two slots must be there.
    cores = _cores(out["output"])
    assert sorted(cores) == [2, 3]
    assert sorted(cores[2]) == [2, 3]


def test_real_never_and_not_now_differ(fluxion: Fluxion) -> None:
    never = _allocate(fluxion, jobspec=_jobspec(5, 1))
    assert never["error"]["category"] == "unsatisfiable"
    everything = [copy.deepcopy(POOL)]
    busy = _allocate(fluxion, jobspec=_jobspec(1, 1), allocated=everything)
    assert busy["error"]["category"] == "busy"


def test_real_allocations_end_at_their_expiration(fluxion: Fluxion) -> None:
    ending = [_r("0-3", "0-3", "node[0-3]", starttime=0, expiration=2000)]
    # Held until 2000: not now, though a request can be met once they end.
    later = _allocate(fluxion, jobspec=_jobspec(1, 1), allocated=ending, now=1000)
    assert later["error"]["category"] == "busy"
    # Ended at 2000: nothing is held at 2500.
    free = _allocate(fluxion, jobspec=_jobspec(4, 4), allocated=ending, now=2500)
    assert len(_cores(free["output"])) == 4


def test_real_constraint_is_honoured(fluxion: Fluxion) -> None:
    jobspec = _jobspec(2, 1, constraints={"properties": ["^ssd"]})
    assert sorted(_cores(_allocate(fluxion, jobspec=jobspec)["output"])) == [2, 3]
    three = _jobspec(3, 1, constraints={"properties": ["^ssd"]})
    assert _allocate(fluxion, jobspec=three)["error"]["category"] == "unsatisfiable"


def test_real_refusals(fluxion: Fluxion) -> None:
    # Fluxion's jobspec parser names its refusal (parse_error); the others name none.
    assert _allocate(fluxion, jobspec={"version": 1})["error"]["category"] == "invalid"
    bad_pool = fluxion.run("sched.allocate", {"pool": {"version": 1}, "jobspec": _jobspec(1, 1)})
    assert bad_pool["error"]["category"] == "unknown"
    twice = [_r("0", "0-3", "node0"), _r("0", "0-3", "node0")]
    refused = _allocate(fluxion, jobspec=_jobspec(1, 1), allocated=twice)
    assert refused["error"]["category"] == "unknown"
    assert "update refused allocated R number 2" in refused["error"]["message"]


def test_real_unusable_inputs_are_unsupported(fluxion: Fluxion) -> None:
    assert "unsupported" in fluxion.run("sched.allocate", {"pool": POOL})
    assert "unsupported" in _allocate(fluxion, jobspec=_jobspec(1, 1), now="later")


def test_real_jobspec_parser(fluxion: Fluxion) -> None:
    assert fluxion.run("jobspec.validate", _jobspec(1, 1)) == {"output": {"warnings": []}}
    refused = fluxion.run("jobspec.validate", {"version": 1})
    assert refused["error"]["category"] == "invalid"
    assert "flux-jobspec-validate:" in refused["error"]["message"]
    assert fluxion.run("constraint.validate", {"properties": ["ssd"]}) == {
        "output": {"warnings": []}
    }
    bad = fluxion.run("constraint.validate", {"properties": "ssd"})
    assert bad["error"]["category"] == "invalid"


#: An empty pool and a min-only slot count: resource-query 0.54 aborts on it (an uncaught
#: std::out_of_range), which must be an errored case, not a verdict and not the adapter's fault.
_CRASH = {
    "pool": {"version": 1, "execution": {"R_lite": [], "nodelist": []}},
    "jobspec": {
        "version": 1,
        "resources": [
            {
                "type": "slot",
                "count": {"min": 1},
                "label": "task",
                "with": [{"type": "core", "count": 1}],
            }
        ],
        "tasks": [{"command": ["app"], "slot": "task", "count": {"per_slot": 1}}],
        "attributes": {"system": {"duration": 0}},
    },
}


def test_real_crash_is_errored_by_the_implementation(fluxion: Fluxion) -> None:
    with pytest.raises(FluxionFailed, match="status -6"):
        fluxion.run("sched.allocate", _CRASH)
    adapter = make_adapter("fluxion")
    adapter.start()
    try:
        crashed = adapter.run("sched.allocate", _CRASH, edition=None)
        assert crashed.kind == "errored"
        assert not crashed.adapter_fault
        assert "out_of_range" in (crashed.stderr or "")
        # The next case gets a fresh worker.
        again = adapter.run(
            "sched.allocate", {"pool": POOL, "jobspec": _jobspec(1, 1)}, edition=None
        )
        assert again.kind == "output"
    finally:
        adapter.close()


def test_real_build_matches_its_expectations(capsys: pytest.CaptureFixture[str]) -> None:
    if not os.environ.get(ENV):
        pytest.skip(f"{ENV} is not set (implementations/flux-sched/build.sh makes a build)")
    argv = ["run", "--impl", "fluxion", "--json", "-"]
    argv += ["--expectations", str(expectations_file("fluxion"))]
    code = main(argv)
    out = capsys.readouterr()
    assert code == 0, out.out[-3000:] + out.err[-2000:]
    results = [json.loads(line)["case"] for line in out.out.splitlines() if '"case"' in line]
    assert {r["outcome"] for r in results} <= {"passed", "xfailed", "skipped", "unchecked"}
    assert sum(r["outcome"] == "passed" for r in results) > 100
