"""The one worker entry of the third-party adapters that run their library in a process of its own.

librlist and libslurm are C libraries called through ctypes, and Fluxion is a set of programs
that may hang or abort: each runs in a worker process, so that a crash ends one case, not the
run.  The runner's side of each is a :class:`WorkerAdapter` (a subprocess transport); the
worker's side is this module, started as ``python -m`` it with the implementation to serve::

    python -m flux_conformance.runner.adapters.thirdparty._worker MODULE:CLASS [--memory BYTES]

It caps the address space (``--memory``), builds the implementation, and serves it over the
suite's protocol (:func:`~runner.tools.serve.serve`).  What a library does on one case is
reported the same way for every worker:

* an answer (output, refusal, ``unsupported``, adapter bound) is the reply;
* :class:`ImplementationFailed` -- the implementation crashed, hung, or failed without a
  category, and the adapter says so -- and any other exception escaping the implementation
  end the worker with one line on stderr naming the implementation.  The runner reports that
  case as errored with the line, and starts a fresh worker for the next case.  (``serve``
  alone would answer an exception with the category ``internal``, which the runner would judge
  as a refusal: a crash must never pass for one.)
* an implementation that cannot be built (its library missing) ends the worker before it
  answers ``hello``, with the :class:`~runner.adapters.base.AdapterError`'s message.
"""

from __future__ import annotations

import argparse
import importlib
import os
import shlex
import sys
import traceback
from collections.abc import Callable, Mapping
from typing import Any, NoReturn

from flux_conformance.runner.adapters.base import AdapterError
from flux_conformance.runner.adapters.subprocess import SubprocessAdapter

__all__ = [
    "FAILED_STATUS",
    "ImplementationFailed",
    "WorkerAdapter",
    "main",
    "serve_worker",
    "worker_command",
]

#: The worker's exit status when a case ends it (the implementation failed, or raised).
FAILED_STATUS = 3


class ImplementationFailed(Exception):
    """The implementation crashed, hung, or failed without a category: the case is errored."""


def worker_command(target: str, *, memory: int | None = None) -> str:
    """The command line of a worker serving ``target`` (``module:Class``)."""
    argv = [sys.executable, "-m", __name__, target]
    if memory is not None:
        argv += ["--memory", str(memory)]
    return shlex.join(argv)


class WorkerAdapter(SubprocessAdapter):
    """The runner's side: a subprocess transport to a worker serving ``target``."""

    def __init__(
        self,
        target: str,
        *,
        timeout: float,
        memory: int | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        super().__init__(worker_command(target, memory=memory), timeout=timeout, env=env)


class _EndOnFailure:
    """The implementation, ending the worker process when a case fails it."""

    def __init__(self, impl: Any, end: Callable[[str], NoReturn]) -> None:
        self._impl = impl
        self._end = end

    def run(self, operation: str, input: Any, /, **options: Any) -> Mapping[str, Any]:
        try:
            answer: Mapping[str, Any] = self._impl.run(operation, input, **options)
        except ImplementationFailed as exc:
            self._end(f"{self._impl.name}: {exc}")
        except Exception as exc:
            tail = "".join(traceback.format_exception(exc)[-6:])
            self._end(f"{self._impl.name}: raised {type(exc).__name__}: {exc}\n{tail}")
        return answer


def _exit(message: str) -> NoReturn:
    print(message, file=sys.stderr, flush=True)
    # os._exit: the case is over, and nothing of the library (atexit handlers, threads, a
    # stuck child) may delay or change that.
    os._exit(FAILED_STATUS)


def _cap_memory(limit: int) -> None:
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def serve_worker(
    make: Callable[[], Any],
    *,
    memory: int | None = None,
    end: Callable[[str], NoReturn] = _exit,
    **streams: Any,
) -> int:
    """Cap the memory, build the implementation with ``make()``, serve it until ``stop``.

    ``end`` ends the process with a message (tests pass one that raises); ``streams`` are
    ``stdin``/``stdout`` for :func:`~runner.tools.serve.serve`.
    """
    from flux_conformance.runner.tools.serve import serve

    if memory is not None:
        _cap_memory(memory)
    try:
        impl = make()
    except AdapterError as exc:
        end(str(exc))
    return serve(
        _EndOnFailure(impl, end),
        name=impl.name,
        version=impl.version,
        operations=list(impl.operations),
        **streams,
    )


def _load(target: str) -> Callable[[], Any]:
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    """The worker process: ``MODULE:CLASS [--memory BYTES]``."""
    parser = argparse.ArgumentParser(prog="worker", description=__doc__.splitlines()[0])
    parser.add_argument("target", help="the implementation to serve, as module:Class")
    parser.add_argument("--memory", type=int, help="cap the address space at BYTES")
    args = parser.parse_args(argv)
    return serve_worker(_load(args.target), memory=args.memory)


if __name__ == "__main__":
    # Run as ``python -m``, this file is ``__main__``; the implementations raise the
    # ImplementationFailed of the imported module, so the entry must be that module's.
    from flux_conformance.runner.adapters.thirdparty import _worker

    sys.exit(_worker.main())
