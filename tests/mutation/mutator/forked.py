"""The forked-child machinery shared by the kill matrix and the hunt: installing a mutated
module in a child (served from code compiled once in the parent), and a pool of forked jobs
with a time budget each."""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import resource
import select
import signal
import sys
import time
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .operators import Mutant
from .suite import Target

__all__ = ["compiled_modules", "install", "quiet_child", "run_forked"]


class _CodeLoader(importlib.abc.Loader):
    def __init__(self, code: types.CodeType) -> None:
        self._code = code

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        exec(self._code, module.__dict__)  # the module's own (possibly mutated) code


class _CodeFinder(importlib.abc.MetaPathFinder):
    """Serves modules from code objects compiled ahead (one of them mutated)."""

    def __init__(self, codes: Mapping[str, tuple[str, types.CodeType]]) -> None:
        self._codes = codes

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        found = self._codes.get(fullname)
        if found is None:
            return None
        origin, code = found
        spec = importlib.util.spec_from_loader(fullname, _CodeLoader(code), origin=origin)
        if spec is not None:
            spec.has_location = True
        return spec


def install(
    target: Target,
    module: str,
    code: types.CodeType,
    compiled: Mapping[str, types.CodeType],
    users: frozenset[str],
) -> None:
    """In a child: import ``module`` mutated, and again every module that imports from it.

    Modules that do not depend on ``module`` keep their objects; the others are dropped and
    imported afresh (served from code compiled in the parent: no compiling per mutant), so a
    ``from package.module import name`` elsewhere binds the mutated object.
    """
    package = sys.modules[target.package]
    again = (users | {module, *target.entry}) - set(target.keep)
    for short in again:
        sys.modules.pop(target.qualified(short), None)
        # ``from package import mod`` looks at the package's attribute before importing.
        with contextlib.suppress(AttributeError):
            delattr(package, short)
    codes = {
        target.qualified(m): (str(target.path(m)), code if m == module else compiled[m])
        for m in again
        if m == module or m in compiled
    }
    sys.meta_path.insert(0, _CodeFinder(codes))
    for name in (*target.entry, module):
        importlib.import_module(target.qualified(name))


def quiet_child(memory: int) -> None:
    """Set up a forked child: cap its memory, silence its output, let Ctrl-C kill it.

    The libraries' chatter about a mutant's wrong answers is not the report, and a mutant that
    allocates without end must fail in its child, not take the machine.
    """
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@dataclass
class _Job:
    pid: int
    task: Any
    deadline: float
    chunks: list[bytes] = field(default_factory=list)


def run_forked(
    tasks: Sequence[Any],
    *,
    jobs: int,
    child: Callable[[Any, int], None],
    budget: Callable[[Any], float],
    done: Callable[[Any, bytes], None],
    timed_out: Callable[[Any], None],
    stop: float | None = None,
) -> list[Any]:
    """Run ``child(task, fd)`` in a forked process per task, ``jobs`` at a time.

    Each child writes its answer to ``fd`` and exits; ``done(task, answer)`` receives it.  A
    child still running ``budget(task)`` seconds after it started is killed and reported to
    ``timed_out``.  No task starts after the monotonic time ``stop``; those not started are
    returned, in order.
    """
    pending = list(reversed(tasks))
    running: dict[int, _Job] = {}
    sys.stdout.flush()
    sys.stderr.flush()
    while pending or running:
        while pending and len(running) < jobs and (stop is None or time.monotonic() < stop):
            task = pending.pop()
            read, write = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(read)
                child(task, write)
                os._exit(0)  # the child functions exit themselves; this is a backstop
            os.close(write)
            running[read] = _Job(pid, task, time.monotonic() + budget(task))
        if not running:
            break
        timeout = max(0.0, min(j.deadline for j in running.values()) - time.monotonic())
        ready, _, _ = select.select(list(running), [], [], timeout)
        for fd in ready:
            job = running[fd]
            data = os.read(fd, 1 << 16)
            if data:
                job.chunks.append(data)
                continue
            del running[fd]
            os.close(fd)
            os.waitpid(job.pid, 0)
            done(job.task, b"".join(job.chunks))
        now = time.monotonic()
        for fd, job in list(running.items()):
            if now >= job.deadline:
                del running[fd]
                os.kill(job.pid, signal.SIGKILL)
                os.waitpid(job.pid, 0)
                os.close(fd)
                timed_out(job.task)
    return list(reversed(pending))


def compiled_modules(
    target: Target, mutants: Sequence[Mutant]
) -> tuple[dict[str, str], dict[str, types.CodeType]]:
    """The source of each mutated module, and every module of ``target`` compiled once."""
    sources = {m: target.path(m).read_text() for m in {x.module for x in mutants}}
    compiled = {
        path.stem: compile(path.read_text(), str(path), "exec")
        for path in sorted(target.directory.glob("*.py"))
        if path.stem != "__init__"
    }
    return sources, compiled
