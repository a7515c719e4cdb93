"""``flux-conformance run``: the selected cases against one implementation, with reports.

Expectations: ``--expectations FILE`` gives an implementation's known failures.  Without it, a
shipped adapter (``--impl clustershell``, ...) is held to the expectations file that ships with
it, exactly as ``compare`` does; ``--no-shipped-expectations`` runs it bare.

Before any case, the implementation is checked (:func:`runner.adapters.preflight.preflight`):
one that cannot be started or answers no trivial request stops the command with one message
and exit status 3.  Every verdict states its scope (operations and cases run, out of the
suite's); ``--require-operation`` / ``--require-all`` turn unsupported operations into a
failing verdict.
"""

from __future__ import annotations

import argparse
import datetime as dt
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING

from flux_conformance import runner
from flux_conformance.runner.bounds import shown
from flux_conformance.runner.commands._common import (
    add_jobs_option,
    add_max_timeouts_option,
    add_require,
    add_selection,
    check_writable,
    checkout_drift,
    expectations_for,
    expectations_path,
    filters_of,
    load,
    required_operations,
    selected,
    suite_size,
    unmet_requirements,
)
from flux_conformance.runner.commands._numbers import seconds
from flux_conformance.runner.errors import EXIT_FAILED, EXIT_OK, exit_status_of
from flux_conformance.runner.signals import deferred

if TYPE_CHECKING:
    from flux_conformance.runner.adapters.base import Adapter
    from flux_conformance.runner.engine import CaseResult, Summary
    from flux_conformance.runner.report import Reporter

__all__ = ["DEFAULT_TIMEOUT", "add_parser", "main"]

#: Seconds an ``exec:`` implementation has for one case.
DEFAULT_TIMEOUT = 10.0


def _reporters(args: argparse.Namespace, out: IO[str]) -> list[Reporter]:
    from flux_conformance.runner.report.jsonl import JsonLinesFileReporter, JsonLinesReporter
    from flux_conformance.runner.report.junit import JUnitReporter
    from flux_conformance.runner.report.markdown import MarkdownReporter
    from flux_conformance.runner.report.terminal import TerminalReporter

    reporters: list[Reporter] = []
    if args.json == "-":
        reporters.append(JsonLinesReporter(out))
    else:
        reporters.append(TerminalReporter(out, verbose=args.verbose, show_skips=args.show_skips))
        if args.json:
            # Written line by line beside the report, renamed over it with the footer.
            reporters.append(JsonLinesFileReporter(args.json))
    if args.junit:
        reporters.append(JUnitReporter(Path(args.junit)))
    if args.markdown:
        reporters.append(MarkdownReporter(Path(args.markdown)))
    if args.html:
        from flux_conformance.runner.report.html import HtmlReporter

        reporters.append(HtmlReporter(Path(args.html)))
    if args.badge:
        from flux_conformance.runner.report.badge import BadgeReporter

        reporters.append(BadgeReporter(Path(args.badge)))
    return reporters


def _finish(reporters: list[Reporter], summary: Summary, *, interrupted: bool) -> None:
    """Finish every report; one that cannot be written (a full disk) does not stop the others."""
    failure: OSError | None = None
    for reporter in reporters:
        try:
            reporter.finish(summary, interrupted=interrupted)
        except OSError as exc:
            failure = failure or exc
    if failure is not None:
        raise failure


def _replay_options(args: argparse.Namespace) -> tuple[str, ...]:
    if args.expectations:
        return ("--expectations", args.expectations)
    return ("--no-shipped-expectations",) if args.no_shipped_expectations else ()


def main(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """Run the selected cases against one implementation and report."""
    from flux_conformance.runner.adapters.factory import make_adapter
    from flux_conformance.runner.adapters.preflight import start

    adapter = make_adapter(args.impl, timeout=args.timeout, max_timeouts=args.max_timeouts)
    try:
        # Started before the suite loads, so that a broken set-up is told at once.
        start(adapter)
        return _run(args, adapter, out, err)
    finally:
        # After the reports: an implementation slow to stop (or a signal while it stops)
        # cannot cost them.  An adapter that fails to close does not hide the run's verdict.
        try:
            adapter.close()
        except Exception as exc:
            print(f"warning: closing the implementation failed: {shown(repr(exc), 500)}", file=err)


def _run(args: argparse.Namespace, adapter: Adapter, out: IO[str], err: IO[str]) -> int:
    from flux_conformance.runner.adapters.factory import make_adapter
    from flux_conformance.runner.adapters.preflight import preflight
    from flux_conformance.runner.engine import Summary, run_cases
    from flux_conformance.runner.oracle import reference_oracle
    from flux_conformance.runner.report import Header

    check_writable(
        args.json, args.junit, args.markdown, args.html, args.badge, args.write_expectations
    )
    suite = load(args)
    cases, other_edition = selected(suite, args)
    required = required_operations(args, cases)
    warning = None if args.cases else checkout_drift(suite.root)
    if warning:
        print(warning, file=err)
    decide = skip = None
    edition = suite.editions.resolve(args.edition)
    path = expectations_path(args.impl, args.expectations, no_shipped=args.no_shipped_expectations)
    expectations = expectations_for(path, suite, edition)
    if expectations is not None:
        decide, skip = expectations.decide, expectations.skip_reason
    if args.write_expectations and Path(args.write_expectations).exists():
        from flux_conformance.runner.expectations import Expectations

        # The baseline to update must load, before the run rather than after it.
        Expectations.load(Path(args.write_expectations)).check_not_stale(c.id for c in suite.cases)
    preflight(adapter, cases, skip=skip, edition=edition)
    header = Header(
        implementation=adapter.name,
        impl_spec=args.impl,
        version=adapter.version,
        suite_version=runner.__version__,
        suite_digest=suite.digest(),
        edition=edition,
        cases_dir=str(suite.root),
        cases_given=bool(args.cases),
        timeout=None if args.timeout == DEFAULT_TIMEOUT else args.timeout,
        replay_options=_replay_options(args),
        selected=len(cases),
        other_edition=other_edition,
        started=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        filters=filters_of(args, suite).to_json(),
        expectations=str(path) if path else "",
    )
    stream: Iterator[CaseResult]
    job = None
    if args.jobs > 1:
        from flux_conformance.runner.parallel import Job, run_parallel

        # Each worker starts its own; this one only told the header its name and version.
        adapter.close()
        job = Job(
            lambda: make_adapter(args.impl, timeout=args.timeout, max_timeouts=args.max_timeouts),
            skip,
            decide,
            header.edition,
        )
        stream = run_parallel(
            cases, job, suite.operations, oracle=reference_oracle, workers=args.jobs
        )
    else:
        stream = run_cases(
            cases,
            adapter,
            suite.operations,
            oracle=reference_oracle,
            edition=header.edition,
            skip=skip,
            decide=decide,
        )
    operations, suite_cases = suite_size(suite, header.edition)
    summary = Summary(suite_operations=operations, suite_cases=suite_cases)
    interrupted: KeyboardInterrupt | None = None
    unwritten: OSError | None = None  # a report's line that could not be written (a full disk)
    results = []
    reporters = _reporters(args, out)
    for reporter in reporters:
        reporter.start(header)
    try:
        for result in stream:
            summary.add(result)
            results.append(result)
            try:
                for reporter in reporters:
                    reporter.case(result)
            except OSError as exc:
                unwritten = exc  # the run stops here, and every report says it stopped early
                break
            if args.exitfirst and result.outcome.is_bad:
                break
    except KeyboardInterrupt as exc:  # SIGINT, or SIGTERM and SIGHUP (see runner.cli)
        interrupted = exc
    finally:
        # The reports first, whole, whatever signal comes meanwhile (it is raised after
        # them); the implementation is stopped after that, by main().
        try:
            with deferred():
                stopped = interrupted is not None or unwritten is not None
                _finish(reporters, summary, interrupted=stopped)
        finally:
            if isinstance(stream, Generator):
                stream.close()  # stops the workers of a parallel run
    if unwritten is not None:
        raise unwritten  # told as the error it is (runner.cli), after the other reports
    # Serially the adapter itself says why it gave up; in parallel, each worker's said so.
    gave_up = job.gave_up if job is not None else [getattr(adapter, "gave_up", None)]
    for reason in gave_up:
        if reason:
            print(f"warning: {shown(reason)}", file=err)
    if args.write_expectations and interrupted is None and not any(gave_up):
        from flux_conformance.runner.baseline import write_baseline

        ids = [c.id for c in suite.cases if c.edition in (None, header.edition)]
        write_baseline(
            Path(args.write_expectations),
            results,
            impl=adapter.name,
            keep=expectations,
            suite_ids=ids,
            edition=header.edition,
            editions=suite.editions.names,
        )
        print(f"wrote {shown(args.write_expectations)}", file=err)
    elif args.write_expectations:
        why = "the run was interrupted"
        if interrupted is None:
            why = "the implementation could not be run to the end"
        print(f"not written: {shown(args.write_expectations)} ({why})", file=err)
    if interrupted is not None:
        return exit_status_of(interrupted)
    unmet = unmet_requirements(required, summary.scope())
    for line in unmet:
        print(f"does not conform: {shown(line)}", file=err)
    return EXIT_OK if summary.ok and not unmet else EXIT_FAILED


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``run``."""
    p = sub.add_parser(
        "run",
        help="run the suite against an implementation",
        description="Run the selected cases against one implementation. Exit status: 0 "
        "nothing new against the baseline (the verdict says 'conforms' only when every case "
        "run passed), 1 it does not conform (or a required operation was not run), 2 a usage "
        "or case-file error, 3 the implementation could not be run.",
    )
    p.add_argument(
        "--impl",
        default="reference",
        help="reference (default), a shipped adapter's name, python:module:object, or exec:COMMAND",
    )
    add_selection(p)
    add_require(p)
    p.add_argument(
        "--timeout",
        type=seconds(),
        default=DEFAULT_TIMEOUT,
        help=f"seconds per case (exec: only; default {DEFAULT_TIMEOUT:g})",
    )
    add_max_timeouts_option(p)
    p.add_argument("--json", metavar="FILE", help="JSON Lines report ('-' for stdout alone)")
    p.add_argument("--junit", metavar="FILE", help="JUnit XML report")
    p.add_argument("--markdown", metavar="FILE", help="Markdown report")
    p.add_argument("--html", metavar="FILE", help="self-contained HTML report")
    p.add_argument(
        "--badge", metavar="FILE", help="shields.io-style endpoint JSON summarising the run"
    )
    p.add_argument(
        "--expectations",
        metavar="FILE",
        help="YAML of known failures (xfail/skip); default: the file shipped with a named "
        "adapter, if any",
    )
    p.add_argument(
        "--no-shipped-expectations",
        action="store_true",
        help="do not apply the expectations file shipped with a named adapter",
    )
    p.add_argument(
        "--write-expectations",
        metavar="FILE",
        help="update FILE (or a copy of the expectations file in use) with this run's "
        "failures: only the entries of the cases run change, kept reasons and comments stay; "
        "not written after an interrupted run",
    )
    add_jobs_option(p)
    p.add_argument("-x", "--exitfirst", action="store_true", help="stop at the first bad case")
    p.add_argument("-v", "--verbose", action="store_true", help="one line per case")
    p.add_argument("--show-skips", action="store_true", help="detail skipped cases too")
    p.set_defaults(func=main)
