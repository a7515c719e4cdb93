"""The flux-core adapter's ``sched.allocate``: flux-core's steps with a job, in flux-core's order.

A fake ``validate_jobspec`` and a fake ``ResourcePool`` record what the adapter asks; they pin
the order of the steps, what each refusal becomes, and sched-fifo's stamp of the times.  They
are never evidence about flux-core (the expectations file is, measured on a build).
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from flux_conformance.runner.adapters.thirdparty.fluxcore_sched import allocate

POOL = {"version": 1, "execution": {"R_lite": [], "nodelist": []}}


def _jobspec(duration: float = 0.0, **extra: Any) -> dict[str, Any]:
    return {"version": 1, "attributes": {"system": {"duration": duration}}, **extra}


class Flux:
    """flux-core's pieces, faked, with a log of every call in order."""

    def __init__(self, *, pool_expiration: float = 0.0) -> None:
        self.log: list[Any] = []
        self.pool_expiration = pool_expiration
        flux = self

        class InsufficientResources(Exception):
            pass

        class InfeasibleRequest(Exception):
            pass

        class Request:
            def __init__(self, jobspec: dict[str, Any]) -> None:
                self.duration = float(jobspec["attributes"]["system"]["duration"])
                self.ask = jobspec.get("ask", "fits")

        class ResourcePool:
            def __init__(self, text: str) -> None:
                doc = json.loads(text)
                if doc.get("version") != 1:
                    raise ValueError("R version not supported")
                self.doc = doc
                self.expiration = float(doc.get("execution", {}).get("expiration", 0))
                if doc is not None and doc.get("execution", {}).get("R_lite") == []:
                    self.expiration = flux.pool_expiration
                self.times: dict[str, float] = {}
                flux.log.append(("pool", doc.get("name", "pool")))

            def register_alloc(self, jobid: int, taken: ResourcePool) -> None:
                flux.log.append(("register_alloc", jobid, taken.doc["name"]))

            def parse_resource_request(self, jobspec: dict[str, Any]) -> Request:
                flux.log.append("parse")
                if "boom" in jobspec:
                    raise RecursionError("too deep")
                return Request(jobspec)

            def alloc(self, jobid: int, request: Request) -> ResourcePool:
                flux.log.append(("alloc", jobid))
                if request.ask == "never":
                    raise InfeasibleRequest("node count specifies discrete valid values")
                if request.ask == "later":
                    raise InsufficientResources("insufficient resources")
                if request.ask == "crash":
                    raise ValueError("unknown constraint operator")
                return ResourcePool(json.dumps({"version": 1, "name": "R"}))

            def set_starttime(self, when: float) -> None:
                self.times["starttime"] = when

            def set_expiration(self, when: float) -> None:
                self.times["expiration"] = when

            def to_dict(self) -> dict[str, Any]:
                return {"version": 1, "execution": {"R_lite": [], **self.times}}

        ResourcePool.InsufficientResources = InsufficientResources  # type: ignore[attr-defined]
        ResourcePool.InfeasibleRequest = InfeasibleRequest  # type: ignore[attr-defined]
        self.ResourcePool = ResourcePool

    def validate_jobspec(self, text: str, require_version: int | None = None) -> Any:
        doc = json.loads(text)
        self.log.append(("validate", require_version))
        if doc is None:
            return (1, "Unable to parse JSON")  # the ingest plugin ignores what it returns
        if "bad" in doc:
            raise ValueError("resource count must be an integer")
        if "eio" in doc:
            raise OSError(5, "Input/output error")
        if "odd" in doc:
            raise AttributeError("'list' object has no attribute 'keys'")
        return (True, object())

    def run(self, **value: Any) -> dict[str, Any]:
        value.setdefault("pool", POOL)
        return dict(allocate(value, self.validate_jobspec, self.ResourcePool))


def _held(name: str, expiration: float = 0.0) -> dict[str, Any]:
    return {"version": 1, "name": name, "execution": {"expiration": expiration}}


def test_steps_in_flux_cores_order() -> None:
    flux = Flux()
    out = flux.run(jobspec=_jobspec(60), allocated=[_held("a")], now=1000)
    assert flux.log == [
        ("validate", 1),  # job-ingest's jobspec plugin asks for version 1
        ("pool", "pool"),
        ("pool", "a"),
        ("register_alloc", 1, "a"),
        "parse",
        ("alloc", 2),
        ("pool", "R"),
    ]
    assert out["output"]["execution"] == {"R_lite": [], "starttime": 1000, "expiration": 1060}


def test_ingest_refusal_is_flux_cores_and_the_scheduler_never_sees_the_job() -> None:
    for refused_by_ingest in (_jobspec(bad=1), _jobspec(eio=1)):
        flux = Flux()
        out = flux.run(jobspec=refused_by_ingest)
        assert out["error"]["category"] == "unknown"
        assert out["error"]["message"].startswith("job-ingest refused the jobspec")
        assert flux.log == [("validate", 1)]
    # What the validator does not catch escapes it: the case is errored.
    with pytest.raises(AttributeError):
        Flux().run(jobspec=_jobspec(odd=1))


def test_stamp_duration_pool_expiration_or_nothing() -> None:
    assert Flux().run(jobspec=_jobspec(30.5), now=100)["output"]["execution"] == {
        "R_lite": [],
        "starttime": 100,
        "expiration": 130.5,
    }
    with_end = Flux(pool_expiration=5000).run(jobspec=_jobspec(0), now=100)
    assert with_end["output"]["execution"]["expiration"] == 5000
    # A duration wins over the pool's end, as in sched-fifo.
    past = Flux(pool_expiration=5000).run(jobspec=_jobspec(9000), now=100)
    assert past["output"]["execution"]["expiration"] == 9100
    unset = Flux().run(jobspec=_jobspec(0), now=100)["output"]["execution"]
    assert unset == {"R_lite": [], "starttime": 100}


def test_without_now_the_clock_is_the_real_one() -> None:
    before = time.time()
    execution = Flux().run(jobspec=_jobspec(60))["output"]["execution"]
    assert before <= execution["starttime"] <= time.time()
    assert execution["expiration"] == execution["starttime"] + 60


def test_ended_allocations_are_not_registered() -> None:
    flux = Flux()
    held = [_held("ended", 900), _held("ends-now", 1000), _held("running", 1001), _held("open")]
    flux.run(jobspec=_jobspec(), allocated=held, now=1000)
    registered = [entry[2] for entry in flux.log if entry[0] == "register_alloc"]
    assert registered == ["running", "open"]
    # Every R is still read by flux-core (a malformed ended one is refused).
    bad = Flux().run(jobspec=_jobspec(), allocated=[{"version": 2}], now=1000)
    assert bad["error"]["category"] == "unknown"


def test_refusals_keep_flux_cores_own_kinds_only() -> None:
    assert Flux().run(jobspec=_jobspec(ask="later"))["error"]["category"] == "busy"
    # The discrete-values refusal is an InfeasibleRequest like any other: never unsupported.
    never = Flux().run(jobspec=_jobspec(ask="never"))
    assert never["error"]["category"] == "unsatisfiable"
    # parse_resource_request's refusals (any exception) deny the job: no category, whatever
    # the message says.
    assert Flux().run(jobspec=_jobspec(boom=1))["error"]["category"] == "unknown"
    assert Flux().run(jobspec=None)["error"]["category"] == "unknown"
    assert Flux().run(pool={"version": 2}, jobspec=_jobspec())["error"]["category"] == "unknown"
    with pytest.raises(ValueError, match="unknown constraint operator"):
        Flux().run(jobspec=_jobspec(ask="crash"))
