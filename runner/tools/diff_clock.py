"""The one clock of a ``diff`` run: every phase takes its time from the same deadline.

``--seconds`` bounds the whole command, measured from its start, not only the search: starting
the workers, the search and its shrinking, closing the workers and writing the cases all take
their time from one :class:`Budget`.  A small part of it (:func:`reserve_for`) is kept for the
last phase, closing the workers and writing what was found, so that the search and its
shrinking stop early enough for the report to be written in time.  A phase that ends past its
part of the budget is noted (:attr:`Budget.over`) and reported in the summary.

The judging of each answer, which runs in the command's own process, is held to the per-input
time bound of the workers (:class:`TimedJudge`): an answer too long to judge in time is counted
and not compared.  The command's own process (the reference judging, hypothesis, the shrinking)
is held to a memory bound too (:func:`cap_own_memory`): its address space is capped at
:data:`OWN_MEMORY` while the command runs, so an expansion fails with a ``MemoryError`` the
command reports, instead of taking the machine's memory.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flux_conformance.runner.operations import OperationSpec

__all__ = [
    "OWN_MEMORY",
    "Budget",
    "TimedJudge",
    "cap_own_memory",
    "process_age",
    "reserve_for",
]

#: The address space ``diff``'s own process may use while the command runs.
OWN_MEMORY = 1024 * 1024 * 1024


def reserve_for(seconds: float) -> float:
    """The part of a budget of ``seconds`` kept for closing the workers and writing the report.

    A tenth of the budget, at least half a second and at most three seconds.
    """
    return min(3.0, max(0.5, seconds / 10))


@dataclass
class Budget:
    """The deadline of a whole run, and what each phase took of it."""

    seconds: float
    clock: Callable[[], float] = time.monotonic
    start: float = -1.0
    #: Seconds kept for the last phase (default: :func:`reserve_for` of ``seconds``).
    reserve: float = -1.0
    #: Each phase's name and seconds, in the order they ended.
    phases: list[tuple[str, float]] = field(default_factory=list)
    #: The phases that ended past their part of the budget, each with how far past.
    over: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.start < 0:
            self.start = self.clock()
        if self.reserve < 0:
            self.reserve = min(reserve_for(self.seconds), self.seconds / 2)

    @property
    def deadline(self) -> float:
        """When the whole run must have ended (a ``clock()`` value)."""
        return self.start + self.seconds

    @property
    def work_deadline(self) -> float:
        """When every phase but the last must have ended: the deadline less the reserve."""
        return self.deadline - self.reserve

    def left(self, *, last: bool = False) -> float:
        """Seconds left before the work deadline (``last``: before the deadline itself)."""
        return (self.deadline if last else self.work_deadline) - self.clock()

    def elapsed(self) -> float:
        """Seconds since the run started."""
        return self.clock() - self.start

    def ended(self, phase: str, since: float, *, last: bool = False) -> None:
        """Note that ``phase``, begun at ``since``, has ended, and whether it ended too late."""
        now = self.clock()
        self.phases.append((phase, now - since))
        late = now - (self.deadline if last else self.work_deadline)
        if late > 0:
            bound = (
                "--seconds" if last else f"its part, into the {self.reserve:g} s kept for the end"
            )
            self.over.append(f"{phase} ended {late:.1f} s past {bound}")

    def summary(self) -> str:
        """One line: what each phase took, and the whole against the budget."""
        parts = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in self.phases)
        return f"{self.elapsed():.1f} s of --seconds {self.seconds:g}" + (
            f" ({parts})" if parts else ""
        )


def process_age() -> float:
    """Seconds since this process started, where ``/proc`` says (0 elsewhere).

    A command's budget counts from there: starting Python and importing the runner is part of
    the command's time too.
    """
    try:
        with open("/proc/uptime", encoding="ascii") as uptime:
            now = float(uptime.read().split()[0])
        with open("/proc/self/stat", encoding="ascii", errors="replace") as stat:
            # The fields after the command name, which is in parentheses and may hold spaces.
            fields = stat.read().rsplit(")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0
    return max(0.0, now - started)


def _address_space() -> int | None:
    """The address space of this process in bytes, where ``/proc`` says (None elsewhere)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def cap_own_memory(limit: int = OWN_MEMORY) -> tuple[bool, Callable[[], None]]:
    """Cap this process's address space at ``limit`` bytes, for the time of one command.

    Returns whether it was capped, and how to put the previous cap back.  It is not capped when
    it already uses more than half of ``limit`` (a test process, say), when a lower cap is
    already in place, or where the platform has no such limit; its peak is still reported.
    Only the soft limit is lowered: a worker raises its own to its ``--memory`` bound.
    """
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    except (AttributeError, OSError, ValueError):
        return False, lambda: None
    used = _address_space()
    lower = soft == resource.RLIM_INFINITY or soft > limit
    if used is None or used > limit // 2 or not lower:
        return False, lambda: None
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (OSError, ValueError):
        return False, lambda: None

    def restore() -> None:
        with contextlib.suppress(OSError, ValueError):
            resource.setrlimit(resource.RLIMIT_AS, (soft, hard))

    return True, restore


class _OverTime(Exception):
    """Raised by the timer inside a judging that took longer than its bound."""


@contextlib.contextmanager
def _timer(seconds: float) -> Iterator[None]:
    """Raise :class:`_OverTime` in this thread after ``seconds`` (a no-op off the main thread)."""

    def ring(signum: int, frame: Any) -> None:
        raise _OverTime

    try:
        previous = signal.signal(signal.SIGALRM, ring)
    except (ValueError, AttributeError):  # not the main thread, or no such signal here
        yield
        return
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class TimedJudge:
    """An operation whose judging of one answer (its schema, its comparator) is time-bound.

    The judging runs in ``diff``'s own process, and a valid answer of a million ids takes tens
    of seconds to check against the output schema.  Each check stops after ``seconds``, and never
    runs past ``deadline``; one that stops is counted in ``over["judge time"]`` and the answer is
    not compared (the check says nothing against it), as an input over a worker's bound is not.
    """

    def __init__(
        self,
        op: OperationSpec,
        seconds: float,
        deadline: float,
        over: Counter[str],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._op = op
        self._seconds = seconds
        self._deadline = deadline
        self._over = over
        self._clock = clock

    def __getattr__(self, name: str) -> Any:
        return getattr(self._op, name)

    def _within(self, check: Callable[..., str | None], *args: Any) -> str | None:
        limit = min(self._seconds, self._deadline - self._clock())
        try:
            with _timer(limit):
                return check(*args)
        except _OverTime:
            self._over["judge time"] += 1
            return None

    def first_output_problem(self, value: Any) -> str | None:
        """The operation's first schema problem with ``value``, if found in time."""
        return self._within(self._op.first_output_problem, value)

    def compare(self, expected: Any, actual: Any, oracle: Any, value: Any) -> str | None:
        """The operation's comparator on the two outputs, if it is done in time."""
        return self._within(self._op.compare, expected, actual, oracle, value)
