"""The bounds ``diff`` holds every implementation to, in-process or not.

A differential search sends an implementation thousands of inputs no case author chose, some of
which make it expand billions of ids or loop.  In-process, one such input would stall the search
or take the machine's memory with it; so ``diff`` runs every implementation but the bundled
reference (its own judge, with limits of its own) in a worker process of its own, under the same
three bounds whatever its transport:

* **time**: an input unanswered within the per-input bound (``--timeout``, never beyond what is
  left of the run's ``--seconds``) is reported as over the time bound, the worker is killed and
  a new one answers the next input;
* **memory**: the worker's address space is capped (``--memory``, 1 GiB by default) before the
  implementation is loaded, so an expansion fails inside it (Python's ``MemoryError``, or the
  library's own allocation failure) instead of growing without end.  A ``MemoryError`` is
  reported as over the memory bound;
* **answer size**: an answer whose JSON text is longer than ``--max-answer-bytes`` (8 MiB by
  default) is not sent; the worker reports that it was giving an output over the bound.

An input over a bound is reported as such (an ``adapter_bound`` reply: the search does not
compare it, unless the other implementation refused that input while this one was producing an
output) and the search goes on.  An implementation shipped as a subprocess (a worker of its own,
such as librlist or Fluxion) is started by this module's worker too, which caps the address space
and then becomes that program (``exec``), so its bounds are the same.

Run as ``python -m flux_conformance.runner.tools.diff_bounds [--memory MIB] [--answer-bytes N]
(--exec PROGRAM ARGS... | module:object)``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flux_conformance.runner.adapters.base import Adapter, AdapterError, Reply
from flux_conformance.runner.adapters.subprocess import SubprocessAdapter

__all__ = ["Bounds", "WorkerLate", "bounded", "peak_memory"]

MIB = 1024 * 1024


@dataclass(frozen=True)
class Bounds:
    """The per-input bounds of one search."""

    #: Seconds an implementation may take on one input.
    timeout: float = 10.0
    #: The address space of a worker, in bytes (0: not capped).
    memory: int = 1024 * MIB
    #: The longest JSON text of an output a worker sends.
    answer_bytes: int = 8 * MIB


class WorkerLate(AdapterError):
    """A worker that did not start within the time left of the run."""


class BoundedAdapter:
    """A worker process holding one implementation, every input answered within :class:`Bounds`.

    ``deadline`` (a ``time.monotonic()`` value, set by the search) caps the time of every
    input further, so that no input runs past the end of the search.
    """

    def __init__(self, inner: SubprocessAdapter, bounds: Bounds, *, name: str) -> None:
        self._inner = inner
        self.bounds = bounds
        self.per_input = inner.timeout
        self._start_timeout = inner.start_timeout
        self.deadline: float | None = None
        self.name = name
        self.version = ""
        #: Inputs over each bound, by bound ("time", "memory", "answer size").
        self.over: dict[str, int] = {}

    def start(self, deadline: float | None = None) -> None:
        """Start the worker and shake hands, by ``deadline`` (a ``time.monotonic()`` value).

        Raises :class:`WorkerLate` when the worker has not answered by then.
        """
        if deadline is not None:
            self._inner.start_timeout = max(0.0, deadline - time.monotonic())
        started = time.monotonic()
        try:
            self._inner.start()
        except AdapterError:
            waited = time.monotonic() - started
            if deadline is not None and waited >= self._inner.start_timeout:
                raise WorkerLate(
                    f"{self.name} did not start within the time left of the run ({waited:.1f} s)"
                ) from None
            raise
        self.version = self._inner.version

    def supports(self, operation: str) -> bool:
        """Whether the implementation announced ``operation``."""
        return self._inner.supports(operation)

    def run(self, operation: str, input: Any, *, edition: str | None) -> Reply:
        """One answer, or a ``bound`` reply saying which bound the input went over."""
        limit = self.per_input
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                return Reply("bound", None, "not sent: the run's time was up")
            limit = min(limit, left)
        # A worker killed on the input before is started again within the same time, and
        # never more than its own start bound.
        self._inner.timeout = limit
        self._inner.start_timeout = min(self._start_timeout, limit)
        started = time.monotonic()
        reply = self._inner.run(operation, input, edition=edition)
        if reply.kind == "errored" and time.monotonic() - started >= limit:
            self.over["time"] = self.over.get("time", 0) + 1
            return Reply("bound", None, f"no answer within the time bound of {limit:g} s")
        if reply.kind == "bound":
            which = "answer size" if reply.value == "output" else "memory"
            self.over[which] = self.over.get(which, 0) + 1
        return reply

    def close(self, grace: float = 2.0) -> None:
        """Stop the worker: ask it, and kill it after ``grace`` seconds."""
        self._inner.close(grace)


def _worker_command(bounds: Bounds, tail: list[str]) -> str:
    head = [sys.executable, "-m", __name__, "--memory", str(bounds.memory)]
    return shlex.join([*head, "--answer-bytes", str(bounds.answer_bytes), *tail])


def _worker_environment() -> dict[str, str]:
    """The environment of the worker: this one, with its module path (it imports the same)."""
    paths = [p for p in sys.path if p and os.path.isdir(p)]
    old = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([*paths, *([old] if old else [])])}


def bounded(spec: str, bounds: Bounds) -> Adapter:
    """The adapter ``diff`` uses for ``spec``: the reference in-process, anything else bounded.

    Raises what :func:`runner.adapters.factory.make_adapter` raises for a spec that names
    nothing, or an implementation that is not built.
    """
    from flux_conformance.runner.adapters import KNOWN
    from flux_conformance.runner.adapters.factory import make_adapter

    if spec == "reference":
        return make_adapter(spec)
    made = make_adapter(spec, timeout=bounds.timeout)  # checks the spec and the build
    if isinstance(made, SubprocessAdapter):
        # Its own worker program, started under the same cap and held to the same time per
        # input (whatever floor its adapter sets for a whole run of cases).
        tail = ["--exec", *shlex.split(made.command)]
    else:
        tail = [KNOWN.get(spec) or spec.removeprefix("python:")]
    inner = SubprocessAdapter(
        _worker_command(bounds, tail),
        timeout=bounds.timeout,
        env=_worker_environment(),
        max_timeouts=0,  # an input over the time bound is a finding; the search goes on
    )
    return BoundedAdapter(inner, bounds, name=spec)


def peak_memory() -> tuple[int, int]:
    """The peak resident memory, in bytes, of this process and of its largest ended child."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    return own, children


class _Capped:
    """An implementation whose memory failures and over-long outputs become bound replies."""

    def __init__(self, impl: Any, answer_bytes: int) -> None:
        self._impl = impl
        self._answer_bytes = answer_bytes

    def run(self, operation: str, input: Any, /, **options: Any) -> Mapping[str, Any]:
        try:
            outcome: Mapping[str, Any] = self._impl.run(operation, input, **options)
        except MemoryError:
            return {"adapter_bound": {"reason": "over the memory bound"}}
        if isinstance(outcome, Mapping) and "output" in outcome:
            try:
                size = len(json.dumps(outcome["output"]))
            except (TypeError, ValueError, RecursionError):
                return outcome  # not JSON: the transport reports it
            if size > self._answer_bytes:
                reason = f"an output of {size} bytes, over the bound of {self._answer_bytes}"
                return {"adapter_bound": {"reason": reason, "seen": "output"}}
        return outcome


def main(argv: list[str] | None = None) -> int:
    """The worker: cap the address space, then serve the implementation (or become it)."""
    parser = argparse.ArgumentParser(prog=__name__)
    parser.add_argument("--memory", type=int, default=Bounds.memory)
    parser.add_argument("--answer-bytes", type=int, default=Bounds.answer_bytes)
    parser.add_argument("--exec", dest="program", nargs=argparse.REMAINDER)
    parser.add_argument("target", nargs="?")
    args = parser.parse_args(argv)
    if args.memory > 0:
        resource.setrlimit(resource.RLIMIT_AS, (args.memory, args.memory))
    else:  # not capped: not even by the cap diff's own process holds itself to
        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
    if args.program:
        os.execvp(args.program[0], args.program)
    from flux_conformance.runner.adapters.inprocess import as_implementation, load_python_object
    from flux_conformance.runner.operations import load_registry
    from flux_conformance.runner.tools.serve import serve

    impl = as_implementation(load_python_object(args.target))
    return serve(
        _Capped(impl, args.answer_bytes),
        name=str(getattr(impl, "name", args.target)),
        version=str(getattr(impl, "version", "")),
        operations=list(getattr(impl, "operations", load_registry())),
    )


if __name__ == "__main__":
    sys.exit(main())
