"""Adapter for Fluxion, flux-sched's graph-based scheduler: ``--impl fluxion``.

Fluxion has no library API a Python process could load; its command-line front end,
``resource-query``, loads a resource graph from an R (``--load-format=rv1exec``) and answers
``match`` commands read from stdin with the allocation as R (``--match-format=rv1_nosched``).
``implementations/flux-sched/build.sh SRC PREFIX BUILD`` builds it, with Fluxion's jobspec
parser program ``flux-jobspec-validate``, from a flux-sched source tree on top of an installed
flux-core; ``FLUXION_BUILD=BUILD`` names the build here.  Each case runs one fresh
``resource-query`` (or ``flux-jobspec-validate``) process.  :class:`Fluxion` drives them;
the runner reaches it through :class:`FluxionAdapter`, the adapters' shared worker process
(``_worker``), which ends when Fluxion crashes, hangs or fails without a category
(:class:`FluxionFailed`), so that such a case is reported as errored by the implementation,
with Fluxion's message.

``sched.allocate`` (input ``{"pool": R, "jobspec": ..., "allocated": [R, ...], "now": t}``):

* ``resource-query -L pool.json -f rv1exec -F rv1_nosched -d`` (the default match policy,
  ``first``), fed one command per line;
* the clock: resource-query's starts at 0 when it starts, where Fluxion's scheduler module
  matches at the wall clock (epoch seconds).  The adapter sets resource-query's 0 at ``now``
  when the input gives it, else at the wall clock (whole seconds, as the module reads it),
  and translates every time between the two;
* each R of ``allocated``, in order, with its own times: ``update allocate rv1exec
  alloc-N.json N AT DURATION``.  ``update`` is Fluxion's own way to mark an existing
  allocation in its graph (what its scheduler module does with running jobs when it
  restarts), so exactly those resources are taken, from the R's ``starttime`` (0 when it
  started before the clock) to its ``expiration`` (rounded up to whole seconds); an R whose
  expiration is unset (0) is held for :data:`HORIZON` seconds, as long as resource-query's
  clock runs (the module holds it for ever).  An R whose expiration is at or before the
  clock has ended, and is not given to Fluxion;
* ``match allocate_with_satisfiability jobspec.json``: allocate now, and when that fails, say
  whether the request could ever be satisfied; then ``quit``.  Only when nothing is allocated
  and the match failed without a word, a second session asks ``match satisfiability
  jobspec.json`` (Fluxion's own check of "ever"; asked only then, since on some pools the
  question aborts resource-query).

resource-query prints its answer per job id on stdout (the R, then ``RESOURCES=ALLOCATED``;
or ``No matching resources found``, followed by ``Unsatisfiable request`` when the traverser
said ENODEV, i.e. the request can never be met) and its error messages on stderr; it exits
with status 0 in every case except a pool it cannot load.  The adapter reads that:

* an allocated R -> the output, its ``starttime`` and ``expiration`` moved from
  resource-query's clock to the input's (the only change made to the R);
* ``Unsatisfiable request`` -> ``unsatisfiable``;
* no match, not unsatisfiable, and ``Jobspec error`` on stderr (Fluxion's jobspec parser threw
  its ``parse_error``), or ``traverser: Invalid argument`` (the traverser's errno EINVAL, which
  resource-query writes with ``strerror``) -> ``invalid``;
* no match, not unsatisfiable, nothing on stderr (the traverser's EBUSY, which
  resource-query reports without a message): ``busy`` when something is allocated; when
  nothing is, "not now" cannot be the answer, and the adapter reports Fluxion's satisfiability
  check: ``unsatisfiable`` when it says never, else a refusal of no category (``unknown``);
* no match with another error message on stderr, or resource-query killed by a signal (an
  uncaught C++ exception aborts it): the case is errored (:class:`FluxionFailed`);
* a pool resource-query cannot load (exit status 1, ``error generating resources``), or an
  ``allocated`` R that ``update`` refuses (not in the pool, or taken twice): a refusal of no
  category (``unknown``), with Fluxion's message.

``jobspec.validate`` and ``constraint.validate`` run ``flux-jobspec-validate`` with the
document on stdin (as YAML, of which JSON is a subset): exit status 0 is valid (no
warnings), 2 is Fluxion's ``parse_error`` -> ``invalid``, anything else errors the case.
``constraint.validate`` puts the constraint in ``attributes.system.constraints`` of a minimal
jobspec Fluxion accepts: Fluxion's constraint parser is reached only there.
``constraint.match`` is not offered: Fluxion evaluates constraints only while allocating,
and a "which ranks match" answer would have to be built from allocations.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flux_conformance.runner.adapters.base import AdapterError
from flux_conformance.runner.adapters.thirdparty._base import (
    Handler,
    ThirdPartyImplementation,
    constraint_carrier,
    error,
    output,
    refused,
    unsupported,
)
from flux_conformance.runner.adapters.thirdparty._worker import (
    ImplementationFailed,
    WorkerAdapter,
)

__all__ = [
    "ENV",
    "HORIZON",
    "RESOURCE_QUERY",
    "VALIDATOR",
    "Fluxion",
    "FluxionAdapter",
    "FluxionFailed",
    "MatchResult",
    "parse_satisfiability",
    "parse_session",
]

#: The environment variable naming the build directory of ``build.sh``.
ENV = "FLUXION_BUILD"
#: resource-query, inside the build directory (``cmake --install`` does not install it).
RESOURCE_QUERY = "resource/utilities/resource-query"
#: Fluxion's jobspec parser program, inside the build directory.
VALIDATOR = "resource/libjobspec/flux-jobspec-validate"
#: How long an ``allocated`` R is held: the duration resource-query gives a job without one
#: (its expiration for such a job, in seconds from its clock's start).
HORIZON = 3153600000
#: Seconds one resource-query session may take.
TIMEOUT = 120.0

_HOW = (
    "build Fluxion with: implementations/flux-sched/build.sh SRC PREFIX BUILD, then set "
    f"{ENV}=BUILD (see implementations/flux-sched/README.md)"
)


#: What resource-query writes for a traverser error with errno EINVAL and no message of its
#: own (``traverser: `` and ``strerror(EINVAL)``).
_EINVAL = "ERROR: traverser: Invalid argument"


_SEPARATOR = "INFO: ============================="


class FluxionFailed(ImplementationFailed):
    """Fluxion crashed, hung, or failed without saying why: the case is errored."""


@dataclass
class MatchResult:
    """What resource-query printed for one job id."""

    jobid: int
    R: str | None = None
    mode: str = ""
    unsatisfiable: bool = False

    @property
    def allocated(self) -> bool:
        """Whether resource-query allocated resources now."""
        return self.mode == "ALLOCATED"

    @property
    def taken(self) -> bool:
        """Whether resource-query took the resources, now or from a later time (``update``)."""
        return self.mode in ("ALLOCATED", "RESERVED")


def parse_session(stdout: str) -> dict[int, MatchResult]:
    """resource-query's stdout, job by job (``-d``: no prompts; R lines precede their block)."""
    results: dict[int, MatchResult] = {}
    pending: str | None = None
    current: MatchResult | None = None
    unsat = False
    for raw in stdout.splitlines():
        line = raw.strip()
        if line.startswith("{"):
            pending = line
        elif line == "INFO: Unsatisfiable request":
            unsat = True
        elif line.startswith("INFO: JOBID="):
            current = MatchResult(int(line.split("=", 1)[1]), R=pending, unsatisfiable=unsat)
            results[current.jobid] = current
        elif line.startswith("INFO: RESOURCES=") and current is not None:
            current.mode = line.split("=", 1)[1]
        elif line == _SEPARATOR and current is not None:
            # The separator closing a job's block: the next R belongs to the next job.
            current, pending, unsat = None, None, False
        elif line == _SEPARATOR:
            # Opening a block, or closing one of ``match satisfiability`` (no job id): its
            # verdict is not a job's.
            unsat = False
    return results


def parse_satisfiability(stdout: str) -> bool | None:
    """The verdict of the last ``match satisfiability`` of a session (None: there is none).

    Its block carries no job id: the verdict line after the last ``JOBID=`` line.
    """
    verdict: bool | None = None
    for raw in stdout.splitlines():
        line = raw.strip()
        if line.startswith("INFO: JOBID="):
            verdict = None
        elif line == "INFO: Satisfiable request":
            verdict = True
        elif line == "INFO: Unsatisfiable request":
            verdict = False
    return verdict


def _shift(document: Any, now: float) -> Any:
    """The allocation with resource-query's clock (0 at its start) moved to ``now``."""
    execution = document.get("execution") if isinstance(document, dict) else None
    if isinstance(execution, dict):
        for key in ("starttime", "expiration"):
            when = execution.get(key)
            if isinstance(when, int | float) and not isinstance(when, bool):
                execution[key] = when + now
    return document


def _span(held: Any, clock: float) -> tuple[int, int] | str | None:
    """An allocated R's ``(AT, DURATION)`` on resource-query's clock (0 at ``clock``).

    None when it has ended (its expiration at or before the clock); a reason (a string) when
    its times cannot be put on the clock.  An unset expiration (0) holds it for
    :data:`HORIZON` seconds.
    """
    execution = held.get("execution") if isinstance(held, dict) else None
    times = execution if isinstance(execution, dict) else {}
    start, end = times.get("starttime", 0), times.get("expiration", 0)
    for when in (start, end):
        if isinstance(when, bool) or not isinstance(when, int | float) or not math.isfinite(when):
            return "an allocated R's starttime or expiration is not a number of seconds"
    if end > 0 and end <= clock:
        return None
    at = max(0, math.floor(start - clock))
    until = math.ceil(end - clock) if end > 0 else HORIZON
    if until <= at:
        return "an allocated R ends before it starts, so it has no span on Fluxion's clock"
    return at, until - at


def _version(build: Path) -> str:
    stamp = build / "flux-sched.ver"
    if stamp.is_file():
        return stamp.read_text(encoding="utf-8").strip()
    return "unknown"


class Fluxion(ThirdPartyImplementation):
    """Fluxion's resource-query and jobspec parser, as subprocesses (see the module doc)."""

    name = "fluxion"

    def __init__(self, build: str | None = None, *, timeout: float = TIMEOUT) -> None:
        root = Path(_build_or_fail(build))
        self.resource_query = root / RESOURCE_QUERY
        self.validator = root / VALIDATOR
        self.timeout = timeout
        self.version = _version(root)
        handlers: dict[str, Handler] = {"sched.allocate": self._allocate}
        if os.access(self.validator, os.X_OK):
            handlers["jobspec.validate"] = self._jobspec_validate
            handlers["constraint.validate"] = self._constraint_validate
        super().__init__(handlers)

    # -- sched.allocate -------------------------------------------------------------------

    def _allocate(self, value: Any) -> Mapping[str, Any]:
        if not isinstance(value, dict) or not {"pool", "jobspec"} <= value.keys():
            return unsupported("resource-query needs a pool and a jobspec to load and match")
        allocated = value.get("allocated", [])
        if isinstance(allocated, dict):
            allocated = [allocated]
        if not isinstance(allocated, list):
            return unsupported("allocated is neither an R nor a list of them")
        now = value.get("now")
        if now is not None and (isinstance(now, bool) or not isinstance(now, int | float)):
            return unsupported("now is not a number, so Fluxion's clock cannot be moved to it")
        # Fluxion's scheduler module matches at the wall clock, in whole seconds.
        clock = now if now is not None else int(time.time())
        spans = []
        for held in allocated:
            span = _span(held, clock)
            if isinstance(span, str):
                return unsupported(span)
            spans.append(span)
        with tempfile.TemporaryDirectory(prefix="fluxion-") as tmp:
            work = Path(tmp)
            (work / "pool.json").write_text(json.dumps(value["pool"]), encoding="utf-8")
            (work / "jobspec.json").write_text(json.dumps(value["jobspec"]), encoding="utf-8")
            commands: list[str] = []
            for held, span in zip(allocated, spans, strict=True):
                if span is None:  # ended before the clock: no longer allocated
                    continue
                n = len(commands) + 1
                (work / f"alloc-{n}.json").write_text(json.dumps(held), encoding="utf-8")
                commands.append(f"update allocate rv1exec alloc-{n}.json {n} {span[0]} {span[1]}")
            taken = len(commands)
            commands += ["match allocate_with_satisfiability jobspec.json", "quit"]
            done = self._session(work, commands)

            def satisfiable() -> bool | None:
                # Asked only when needed: on some pools the question aborts resource-query.
                asked = self._session(work, ["match satisfiability jobspec.json", "quit"])
                if asked.returncode != 0:
                    raise FluxionFailed(
                        f"resource-query (match satisfiability) exited with status "
                        f"{asked.returncode}: {asked.stderr.strip()}"
                    )
                return parse_satisfiability(asked.stdout)

            return self._judge_session(done, taken, clock, satisfiable)

    def _session(self, work: Path, commands: list[str]) -> subprocess.CompletedProcess[str]:
        argv = [
            str(self.resource_query),
            "-L",
            "pool.json",
            "-f",
            "rv1exec",
            "-F",
            "rv1_nosched",
            "-d",
        ]
        try:
            return subprocess.run(
                argv,
                input="\n".join(commands) + "\n",
                cwd=work,
                capture_output=True,
                text=True,
                errors="surrogateescape",
                timeout=self.timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise FluxionFailed(f"resource-query did not finish within {self.timeout} s") from None

    @staticmethod
    def _judge_session(
        done: subprocess.CompletedProcess[str],
        held: int,
        clock: float,
        satisfiable: Callable[[], bool | None],
    ) -> Mapping[str, Any]:
        stderr = done.stderr.strip()
        if done.returncode != 0:
            if "error generating resources" in stderr:
                return refused(f"resource-query cannot load the pool: {stderr}")
            raise FluxionFailed(f"resource-query exited with status {done.returncode}: {stderr}")
        results = parse_session(done.stdout)
        for n in range(1, held + 1):
            took = results.get(n)
            if took is None or not took.taken:
                return refused(f"update refused allocated R number {n}: {stderr}")
        answer = results.get(held + 1)
        if answer is None:
            raise FluxionFailed(f"resource-query printed no answer for the match: {stderr}")
        if answer.allocated and answer.R is not None:
            return output(_shift(json.loads(answer.R), clock))
        if answer.unsatisfiable:
            return error("unsatisfiable", "resource-query: Unsatisfiable request")
        if "Jobspec error" in stderr or _EINVAL in stderr:
            return error("invalid", stderr)
        if stderr:
            raise FluxionFailed(f"resource-query found no match and said: {stderr}")
        if held:
            return error("busy", "resource-query: No matching resources found (satisfiable)")
        # Nothing is allocated, so "not now" cannot be the answer: what Fluxion's own
        # satisfiability check says is.
        if satisfiable() is False:
            return error("unsatisfiable", "resource-query: match satisfiability: Unsatisfiable")
        return refused(
            "resource-query found no match with nothing allocated, and calls the request "
            "satisfiable"
        )

    # -- Fluxion's jobspec parser ---------------------------------------------------------

    def _parse(self, document: Any) -> Mapping[str, Any]:
        try:
            done = subprocess.run(
                [str(self.validator)],
                input=json.dumps(document),
                capture_output=True,
                text=True,
                errors="surrogateescape",
                timeout=self.timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise FluxionFailed(
                f"flux-jobspec-validate did not finish within {self.timeout} s"
            ) from None
        if done.returncode == 0:
            return output({"warnings": []})
        # The program names itself by its path in each message; its name is enough.
        said = done.stderr.strip().replace(str(self.validator), self.validator.name)
        if done.returncode == 2:  # Flux::Jobspec::parse_error
            return error("invalid", said)
        raise FluxionFailed(f"flux-jobspec-validate exited with status {done.returncode}: {said}")

    def _jobspec_validate(self, document: Any) -> Mapping[str, Any]:
        return self._parse(document)

    def _constraint_validate(self, constraint: Any) -> Mapping[str, Any]:
        return self._parse(constraint_carrier(constraint))


def _build_or_fail(build: str | None = None) -> str:
    """``build`` (default: ``$FLUXION_BUILD``) when it holds resource-query, else AdapterError."""
    if build is None:
        build = os.environ.get(ENV, "")
    if not build:
        raise AdapterError(f"fluxion needs a build of flux-sched: {ENV} is not set; {_HOW}")
    if not os.access(Path(build) / RESOURCE_QUERY, os.X_OK):
        raise AdapterError(f"{ENV}={build} holds no {RESOURCE_QUERY}; {_HOW}")
    return build


class FluxionAdapter(WorkerAdapter):
    """The runner's side: the shared worker process (``_worker``) serving :class:`Fluxion`.

    When Fluxion crashes, hangs or fails without a category (:class:`FluxionFailed`), the
    worker ends with its message on stderr: the runner reports that case as errored by the
    implementation, with the message, and starts a new worker for the next case.
    """

    def __init__(self, *, timeout: float = 10.0) -> None:
        _build_or_fail()
        super().__init__(f"{__name__}:Fluxion", timeout=max(timeout, TIMEOUT + 30.0))
