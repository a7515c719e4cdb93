"""Running cases in several worker processes (``run -j N``, ``compare -j N``).

Each worker is a forked copy of the command, so it holds the loaded cases, the operation
registry and the oracle already; it builds its own adapter for each implementation it is
given work for (an ``exec:`` command is started once per worker, an in-process library is
loaded once per worker) and judges its answers itself.  The parent hands out short chunks of
consecutive cases, one per idle worker, and yields the results in case order, so every report
is the one a serial run writes, durations aside.

A worker that dies (a library that crashes its process) costs only the chunk it held: those
cases come back errored, saying so, and a fresh worker takes its place.  An answer too deeply
nested for pickle to carry back is taken again in the parent, so the report shows it as a
serial run would.  Where ``fork`` is not
available the cases run serially, in this process.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import signal
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

from flux_conformance.runner.adapters.base import Adapter, AdapterError, Reply
from flux_conformance.runner.cases import Case
from flux_conformance.runner.engine import CaseResult, OracleFactory, Outcome, run_cases
from flux_conformance.runner.operations import OperationSpec

__all__ = ["Job", "can_fork", "run_jobs", "run_parallel"]

#: Cases handed to a worker at a time: short enough to balance two workers near the end of a
#: run, long enough that the pipe's traffic does not show.
CHUNK = 16


@dataclass(frozen=True)
class Job:
    """One implementation's share of a run: how to build its adapter, expectations, edition."""

    make_adapter: Callable[[], Adapter]
    skip: Callable[[Case], str | None] | None = None
    decide: Callable[[CaseResult], CaseResult] | None = None
    #: The edition of the specs the run follows (see :func:`runner.engine.run_cases`).
    edition: str | None = None
    #: Filled during the run: why an adapter gave up on the implementation (a subprocess
    #: adapter after ``--max-timeouts`` timeouts in a row, say), once per distinct reason,
    #: whichever process's adapter it was.
    gave_up: list[str] = field(default_factory=list)

    def note_gave_up(self, adapter: Adapter | None = None, reason: str | None = None) -> None:
        """Record ``reason``, or the one ``adapter`` gives, if any and not yet recorded."""
        if reason is None and adapter is not None:
            reason = getattr(adapter, "gave_up", None)
        if reason and reason not in self.gave_up:
            self.gave_up.append(reason)


def can_fork() -> bool:
    """Whether worker processes can be forked here (Linux, the BSDs, macOS)."""
    return "fork" in multiprocessing.get_all_start_methods()


def run_parallel(
    cases: Sequence[Case],
    job: Job,
    operations: Mapping[str, OperationSpec],
    *,
    oracle: OracleFactory,
    workers: int,
    chunk: int = CHUNK,
) -> Iterator[CaseResult]:
    """:func:`runner.engine.run_cases` for one implementation, on ``workers`` processes.

    Results come in case order as soon as every earlier case is judged.  Stopping the
    iteration early (``-x``) stops the workers after the chunk each holds.
    """
    expected = 0
    held: dict[int, list[CaseResult]] = {}
    found = run_jobs(cases, [job], operations, oracle=oracle, workers=workers, chunk=chunk)
    for _, start, results in found:
        held[start] = results
        while expected in held:
            ready = held.pop(expected)
            yield from ready
            expected += len(ready)


def run_jobs(
    cases: Sequence[Case],
    jobs: Sequence[Job],
    operations: Mapping[str, OperationSpec],
    *,
    oracle: OracleFactory,
    workers: int,
    chunk: int = CHUNK,
) -> Iterator[tuple[int, int, list[CaseResult]]]:
    """Every job over every case, on ``workers`` processes: (job index, first case, results).

    Chunks are handed out in order, the jobs' chunks interleaved, so several implementations
    advance side by side; each chunk's results are yielded as it comes back.
    """
    tasks = [
        (j, start, min(start + chunk, len(cases)))
        for start in range(0, len(cases), chunk)
        for j in range(len(jobs))
    ]
    if workers <= 1 or not can_fork() or len(tasks) <= 1:
        yield from _serial(cases, jobs, operations, oracle, tasks)
        return
    pool = _Pool(cases, jobs, operations, oracle)
    try:
        for _ in range(min(workers, len(tasks))):
            pool.spawn()
        queue = list(reversed(tasks))
        for idle in list(pool.idle):
            if queue:
                pool.give(idle, queue.pop())
        while pool.busy:
            for worker, task, results in pool.collect():
                yield (task[0], task[1], results)
                if queue and worker is not None:
                    pool.give(worker, queue.pop())
                elif queue:
                    pool.give(pool.spawn(), queue.pop())
    finally:
        pool.stop()


def _serial(
    cases: Sequence[Case],
    jobs: Sequence[Job],
    operations: Mapping[str, OperationSpec],
    oracle: OracleFactory,
    tasks: Sequence[tuple[int, int, int]],
) -> Iterator[tuple[int, int, list[CaseResult]]]:
    adapters: dict[int, Adapter] = {}
    try:
        for j, start, stop in tasks:
            adapter = adapters.get(j)
            if adapter is None:
                adapter = adapters[j] = _started(jobs[j])
            results = _run_chunk(cases[start:stop], jobs[j], adapter, operations, oracle)
            jobs[j].note_gave_up(adapter)
            yield (j, start, results)
    finally:
        for adapter in adapters.values():
            adapter.close()


def _started(job: Job) -> Adapter:
    adapter = job.make_adapter()
    # If it does not start, its cases come back errored with the reason, as in a serial run.
    with contextlib.suppress(AdapterError):
        adapter.start()
    return adapter


def _run_chunk(
    cases: Sequence[Case],
    job: Job,
    adapter: Adapter,
    operations: Mapping[str, OperationSpec],
    oracle: OracleFactory,
) -> list[CaseResult]:
    return list(
        run_cases(
            cases,
            adapter,
            operations,
            oracle=oracle,
            skip=job.skip,
            decide=job.decide,
            edition=job.edition,
        )
    )


class _Pool:
    """Forked workers, each on its own pipe; one task at a time per worker."""

    def __init__(
        self,
        cases: Sequence[Case],
        jobs: Sequence[Job],
        operations: Mapping[str, OperationSpec],
        oracle: OracleFactory,
    ) -> None:
        self.context = multiprocessing.get_context("fork")
        self.cases, self.jobs, self.operations, self.oracle = cases, jobs, operations, oracle
        self.idle: list[_Worker] = []
        self.busy: dict[Connection, tuple[_Worker, tuple[int, int, int]]] = {}
        self.all: list[_Worker] = []
        #: Adapters of this process, for the rare case run again here (see :meth:`rerun`).
        self.own: dict[int, Adapter] = {}

    def spawn(self) -> _Worker:
        """Start one more worker (idle)."""
        parent, child = self.context.Pipe()
        process = self.context.Process(
            target=_work,
            args=(child, self.cases, self.jobs, self.operations, self.oracle),
            daemon=True,
        )
        process.start()
        child.close()
        worker = _Worker(process, parent)
        self.idle.append(worker)
        self.all.append(worker)
        return worker

    def give(self, worker: _Worker, task: tuple[int, int, int]) -> None:
        """Hand ``task`` (job, start, stop) to an idle worker."""
        self.idle.remove(worker)
        worker.connection.send(task)
        self.busy[worker.connection] = (worker, task)

    def collect(self) -> Iterator[tuple[_Worker | None, tuple[int, int, int], list[CaseResult]]]:
        """Wait for workers to finish their tasks: (the worker, None if lost; task; results)."""
        for connection in wait(list(self.busy)):
            assert isinstance(connection, Connection)
            worker, task = self.busy.pop(connection)
            gave_up = None
            try:
                kind, payload, gave_up = connection.recv()
            except (EOFError, OSError):
                worker.process.join(5)
                kind, payload = "died", f"exit status {worker.process.exitcode}"
            self.jobs[task[0]].note_gave_up(reason=gave_up)
            if kind == "results":
                self.idle.append(worker)
                cases = self.cases[task[1] : task[2]]
                yield (
                    worker,
                    task,
                    [
                        _dress(c, raw) if raw is not None else self.rerun(task[0], c)
                        for c, raw in zip(cases, payload, strict=True)
                    ],
                )
                continue
            worker.close()
            self.all.remove(worker)
            cases = self.cases[task[1] : task[2]]
            yield None, task, [_lost(case, kind, payload) for case in cases]

    def rerun(self, job: int, case: Case) -> CaseResult:
        """Run one case in this process, as a serial run would.

        Its answer could not cross the pipe (nested deeper than pickle can write).
        """
        adapter = self.own.get(job)
        if adapter is None:
            adapter = self.own[job] = _started(self.jobs[job])
        result = _run_chunk([case], self.jobs[job], adapter, self.operations, self.oracle)[0]
        self.jobs[job].note_gave_up(adapter)
        return result

    def stop(self) -> None:
        """Let every worker finish its task, close its adapters and exit."""
        # A busy worker may be blocked writing its results: read them (and drop them), so it
        # gets to the request to stop and closes its adapters itself.
        for connection in list(self.busy):
            if connection.poll(60):
                with contextlib.suppress(EOFError, OSError):
                    connection.recv()
        self.busy.clear()
        for worker in self.all:
            worker.close()
        for adapter in self.own.values():
            adapter.close()


@dataclass
class _Worker:
    process: Any
    connection: Connection

    def close(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.connection.send(None)
        self.connection.close()
        self.process.join(30)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(5)


def _strip(result: CaseResult) -> tuple[Any, ...]:
    """A result without its case, for the pipe."""
    return (
        result.outcome.value,
        result.reply,
        result.reason,
        result.diff,
        result.seconds,
        result.fault,
    )


def _packed(result: CaseResult) -> bytes | None:
    """A result as bytes for the pipe, or None when pickle cannot write it.

    That is an answer nested deeper than the interpreter's recursion limit; the parent then
    runs the case itself.
    """
    try:
        return pickle.dumps(_strip(result), protocol=pickle.HIGHEST_PROTOCOL)
    except (RecursionError, pickle.PicklingError, TypeError, AttributeError):
        return None


def _dress(case: Case, packed: bytes) -> CaseResult:
    """The result :func:`_packed` sent, with its case again."""
    outcome, reply, reason, diff, seconds, fault = pickle.loads(packed)
    return CaseResult(case, Outcome(outcome), reply, reason, diff, seconds, fault)


def _lost(case: Case, kind: str, detail: str) -> CaseResult:
    """A case whose worker did not send its result back."""
    what = "raised" if kind == "crashed" else "died"
    reason = f"the worker process running this case {what} ({detail.strip().splitlines()[-1]})"
    reply = Reply("errored", message=reason, stderr=detail if kind == "crashed" else "")
    return CaseResult(case, Outcome.ERRORED, reply, reason, fault="adapter")


def _work(
    connection: Connection,
    cases: Sequence[Case],
    jobs: Sequence[Job],
    operations: Mapping[str, OperationSpec],
    oracle: OracleFactory,
) -> None:
    """A worker's loop: take (job, start, stop), send back results, until None.

    What it sends is (``"results"``, packed results, why its adapter gave up or None), or
    (``"crashed"``, the traceback, None).
    """
    # Ctrl-C reaches the whole process group; the parent decides when workers stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    adapters: dict[int, Adapter] = {}
    try:
        while True:
            try:
                task = connection.recv()
            except EOFError:
                break
            if task is None:
                break
            j, start, stop = task
            try:
                adapter = adapters.get(j)
                if adapter is None:
                    adapter = adapters[j] = _started(jobs[j])
                results = _run_chunk(cases[start:stop], jobs[j], adapter, operations, oracle)
                # The parent has the cases: send back only what the run found.
                gave_up = getattr(adapter, "gave_up", None)
                connection.send(("results", [_packed(r) for r in results], gave_up))
            except Exception:
                connection.send(("crashed", traceback.format_exc(), None))
    finally:
        for adapter in adapters.values():
            adapter.close()
        connection.close()
        os._exit(0)  # no atexit handlers or buffers of the parent run twice
