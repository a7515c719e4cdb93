"""The ``flux-conformance`` command: builds the parser from :mod:`runner.commands` and runs one.

Exit statuses, the same for every command (and the pytest plugin; docs/verdicts.md):

* 0 -- nothing is new against the baseline: every case run passed (the verdict says
  ``conforms``) or departs as its expectations file records (the verdict says which; see
  :mod:`runner.verdicts`);
* 1 -- it does not conform: a case failed, errored or passed against its expectations file, a
  required operation (``--require-operation``, ``--require-all``) was not run, or nothing ran;
* 2 -- a usage error, or a case, requirements or expectations file that does not load (every
  problem is printed with file and line);
* 3 -- the implementation could not be run: not installed, does not start or greet, or answers
  no trivial request (checked before the first case);
* 141 -- the reader of stdout went away (``flux-conformance list | head``), without a traceback.

Every error a command raises on purpose is a :class:`~runner.errors.ConformanceError`, caught
here once, and carries its exit status.

Signals: SIGTERM (``timeout``, ``docker stop``, a CI cancel) and SIGHUP stop a command as
SIGINT does: the case under way is abandoned, the implementation is killed, and every report
is completed (``interrupted`` in its footer) before the command exits with 128 + the
signal's number (130 for SIGINT, 143 for SIGTERM).  A second signal while the reports are
being written is ignored, so that they are complete; a signal that comes while they are
written, or while the implementation's processes are killed, waits for that work to end
(:mod:`runner.signals`).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import signal
import sys
from collections.abc import Iterator, Sequence
from types import FrameType

from flux_conformance import runner
from flux_conformance.runner.adapters.factory import make_adapter
from flux_conformance.runner.bounds import shown
from flux_conformance.runner.commands import COMMANDS
from flux_conformance.runner.commands._common import retire_edition_name
from flux_conformance.runner.errors import (
    EXIT_USAGE,
    ConformanceError,
    exit_status_of,
)
from flux_conformance.runner.signals import STOPPING, held, interrupt_for

__all__ = ["EXIT_BROKEN_PIPE", "build_parser", "main", "make_adapter"]

#: Exit status when the reader of stdout went away (128 + SIGPIPE, as a shell reports it).
EXIT_BROKEN_PIPE = 141


class _Version(argparse.Action):
    """``--version``: the suite's version, its number of cases and their digest."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the suite's version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        from flux_conformance.runner._version import describe_suite

        try:
            count, digest, root = describe_suite()
        except ConformanceError as exc:
            parser.exit(2, f"flux-conformance {runner.__version__} (cases do not load: {exc})\n")
        print(f"flux-conformance {runner.__version__}: {count} cases, sha256 {digest} ({root})")
        parser.exit(0)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(
        prog="flux-conformance",
        description="Conformance suite for Flux RFC 14/20/22/29/31/35/45/46 formats and "
        "Slurm --extra expressions.",
        epilog="Exit status: 0 nothing new against the baseline (the verdict says 'conforms' "
        "only when every case run passed), 1 does not conform, 2 usage or case-file error, "
        "3 the implementation could not be run.",
    )
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        importlib.import_module(f"flux_conformance.runner.commands.{name}").add_parser(sub)
    return parser


@contextlib.contextmanager
def _stopping_signals() -> Iterator[None]:
    """While a command runs, SIGTERM and SIGHUP interrupt it as SIGINT does (once)."""
    stopped: list[int] = []

    def stop(signum: int, frame: FrameType | None) -> None:
        del frame
        if stopped:
            return  # the reports are being completed: a second signal does not cut them
        if held(signum):
            return  # raised when the work that must not be cut is done (runner.signals)
        stopped.append(signum)
        raise interrupt_for(signum)

    previous = {}
    try:
        for signum in STOPPING:
            previous[signum] = signal.signal(signum, stop)
    except ValueError:  # not the main thread: signals stay as they are
        pass
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``flux-conformance`` command."""
    args = build_parser().parse_args(argv)
    try:
        retire_edition_name(args, sys.stderr)
        with _stopping_signals():
            code: int = args.func(args, sys.stdout, sys.stderr)
        with contextlib.suppress(ValueError):  # `serve` closes stdout when it is done
            sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (`flux-conformance list | head`): stop quietly, as a C tool
        # killed by SIGPIPE would, and keep Python from complaining when it flushes at exit.
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except ConformanceError as exc:
        for line in exc.lines():
            print(shown(line), file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt as exc:
        # A command without reports to complete (run completes its own and returns).
        print("interrupted", file=sys.stderr)
        return exit_status_of(exc)
    except OSError as exc:
        # A report that cannot be written after all (a full disk, a folder removed mid-run):
        # the commands check their output paths first, so this is the rare late failure.
        if exc.filename is None:
            raise
        print(f"error: cannot write {exc.filename}: {exc.strerror}", file=sys.stderr)
        return EXIT_USAGE
    return code


def _silence_stdout() -> None:
    with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
