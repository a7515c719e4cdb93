"""The signals that stop a command, and the work they wait for.

SIGTERM (``timeout``, ``docker stop``, a CI cancel) and SIGHUP stop a command as SIGINT does
(:mod:`runner.cli` installs the handler).  Some work must not be cut by them: the reports of a
run once its cases are over, and the killing of an implementation's processes.  Such work runs
under :func:`deferred`; a signal that arrives meanwhile is held and raised when the work is
done, so the command still stops, after it.

A handler cannot be blocked per thread here (the reader threads of a subprocess adapter would
take the signal for the main thread), so the hold is kept by the handler itself:
:func:`held` tells it to note the signal instead of raising.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator

from flux_conformance.runner.errors import Stopped

__all__ = ["STOPPING", "deferred", "held", "interrupt_for"]

#: The signals that stop a command the way SIGINT does.
STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

#: How many blocks under :func:`deferred` are running (a list, so that no ``global`` is needed).
_depth = [0]
_pending: list[int] = []


def interrupt_for(signum: int) -> KeyboardInterrupt:
    """The exception a stopping signal raises: KeyboardInterrupt, or :class:`Stopped`."""
    return KeyboardInterrupt() if signum == signal.SIGINT else Stopped(signum)


def held(signum: int) -> bool:
    """For the handler: note ``signum`` and return True when work under :func:`deferred` runs."""
    if _depth[0]:
        _pending.append(signum)
        return True
    return False


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Run the block to its end; a stopping signal that came meanwhile is raised after it."""
    _depth[0] += 1
    try:
        yield
    finally:
        _depth[0] -= 1
    if not _depth[0] and _pending:
        signum = _pending[0]
        _pending.clear()
        raise interrupt_for(signum)
