"""The runner's one error root: what stops a command, and with which exit status.

Every error the runner raises on purpose derives from :class:`ConformanceError`, so the command
line catches one class, prints its :meth:`~ConformanceError.lines` and exits with its
:attr:`~ConformanceError.exit_status`.  The exit statuses every command, the pytest plugin and
the GitHub action share:

* 0 (:data:`EXIT_OK`) -- nothing is new against the baseline (the verdict's words, from
  :mod:`runner.verdicts`, say ``conforms`` only when every case run passed);
* 1 (:data:`EXIT_FAILED`) -- it does not conform (a case failed, errored or passed unexpectedly,
  or an operation ``--require-operation`` / ``--require-all`` asks for is unsupported);
* 2 (:data:`EXIT_USAGE`) -- a usage error, or a case, requirements or expectations file that
  does not load;
* 3 (:data:`EXIT_UNRUNNABLE`) -- the implementation could not be run: it is not installed, does
  not start, does not greet, or answers no trivial request.  The
classes live beside the code that raises them; this module only gives them their root:

* :class:`runner._yaml.YamlError` -- a YAML file is malformed (with lines);
* :class:`runner.cases.SuiteError` -- the suite cannot load (every problem, file and line);
* :class:`runner.operations.RegistryError` -- an operation registration is malformed;
* :class:`runner.adapters.base.AdapterError` -- an implementation cannot be loaded or started
  (exit status 3); :class:`runner.adapters.base.ImplSpecError` -- an ``--impl`` value is
  malformed (exit status 2);
* :class:`runner.expectations.ExpectationsError` -- an expectations file is malformed or stale.

A fault of the implementation under test is never one of these: it is reported case by case
(errored), and the run goes on.
"""

from __future__ import annotations

__all__ = [
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_UNRUNNABLE",
    "EXIT_USAGE",
    "ConformanceError",
    "Stopped",
    "exit_status_of",
]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_UNRUNNABLE = 0, 1, 2, 3


class ConformanceError(Exception):
    """Base of the runner's errors; ``exit_status`` is what the command exits with."""

    exit_status = EXIT_USAGE

    def lines(self) -> list[str]:
        """What to print, one problem a line (``error:`` prefixed unless it names a place)."""
        return [f"error: {self}"]


class Stopped(KeyboardInterrupt):
    """The run was stopped by a signal other than SIGINT (SIGTERM: ``timeout``, ``docker stop``).

    A :class:`KeyboardInterrupt`, so that every path that finishes its reports after Ctrl-C
    does the same for it.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def exit_status_of(interrupt: KeyboardInterrupt) -> int:
    """The shell's exit status for a run stopped by ``interrupt``: 128 + the signal number."""
    import signal

    return 128 + (interrupt.signum if isinstance(interrupt, Stopped) else signal.SIGINT)
