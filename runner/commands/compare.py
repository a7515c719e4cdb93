"""``flux-conformance compare``: several implementations over the same cases, as a matrix.

Expectations follow the rule ``run`` follows: a shipped adapter is held to the expectations
file that ships with it unless ``--no-shipped-expectations``; ``--expectations IMPL=FILE``
replaces one implementation's file.

Exit statuses are ``run``'s: every implementation is checked before any case runs (one that
cannot be run stops the command, exit status 3); 1 when any implementation does not conform
or lacks an operation ``--require-operation`` / ``--require-all`` asks for; 0 when nothing is
new against any implementation's baseline; a verdict line with its scope, in the words of
:mod:`runner.verdicts`, is printed for each.
"""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path
from typing import IO, Any

from flux_conformance import runner
from flux_conformance.runner.atomic import write_atomic
from flux_conformance.runner.bounds import shown
from flux_conformance.runner.commands._common import (
    UsageError,
    add_jobs_option,
    add_max_timeouts_option,
    add_require,
    add_selection,
    check_writable,
    filters_of,
    load,
    opened,
    required_operations,
    selected,
    shipped_expectations,
    suite_size,
    unmet_requirements,
)
from flux_conformance.runner.commands._numbers import seconds
from flux_conformance.runner.errors import EXIT_FAILED, EXIT_OK
from flux_conformance.runner.report import shell_command

__all__ = ["add_parser", "command_line", "main"]


def main(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """Run every implementation on every selected case; write the matrix."""
    from flux_conformance.runner.adapters.base import Adapter
    from flux_conformance.runner.adapters.factory import make_adapter
    from flux_conformance.runner.adapters.preflight import preflight
    from flux_conformance.runner.engine import Summary
    from flux_conformance.runner.expectations import Expectations
    from flux_conformance.runner.report import verdict_line
    from flux_conformance.runner.report.markdown import md_escape
    from flux_conformance.runner.report.matrix import matrix_html, matrix_markdown
    from flux_conformance.runner.tools.compare import run_matrix

    check_writable(args.markdown, args.html)
    histories = _site_checks(args)
    suite = load(args)
    cases, _ = selected(suite, args)
    edition = suite.editions.resolve(args.edition)
    required = required_operations(args, cases)
    impls = args.impl or ["reference"]
    expectations: dict[str, Path] = {}
    if not args.no_shipped_expectations:
        for impl in impls:
            shipped = shipped_expectations(impl)
            if shipped is not None:
                expectations[impl] = shipped
    for item in args.expectations or ():
        impl, sep, file = item.partition("=")
        if not sep or impl not in impls:
            raise UsageError(f"--expectations takes IMPL=FILE with IMPL one of {impls}")
        expectations[impl] = Path(file)
    # Fail early on a bad --impl, or on an implementation that cannot be run at all; the
    # adapters checked are the ones the run goes on with.
    started: dict[str, Adapter] = {}
    try:
        for impl in impls:
            adapter = started[impl] = make_adapter(
                impl, timeout=args.timeout, max_timeouts=args.max_timeouts
            )
            skip = (
                Expectations.load(expectations[impl])
                .in_edition(edition, suite.editions.names)
                .skip_reason
                if impl in expectations
                else None
            )
            preflight(adapter, cases, skip=skip, edition=edition)
        filters = filters_of(args, suite).to_json()
        started_at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        about = (
            f"flux-conformance {runner.__version__} (cases {suite.digest()[:12]}), "
            f"edition {edition}, {len(cases)} cases"
            + ("".join(f"; {k} {', '.join(v)}" for k, v in filters.items()))
            + f", run {started_at}"
        )
        matrix = run_matrix(
            suite,
            cases,
            impls,
            expectations=expectations,
            make_adapter=lambda spec: make_adapter(
                spec, timeout=args.timeout, max_timeouts=args.max_timeouts
            ),
            progress=lambda line: print(line, file=err, flush=True),
            about=about,
            workers=args.jobs,
            edition=edition,
            started=started,
        )
    finally:  # (run_matrix closes them too; closing twice is harmless)
        for adapter in started.values():
            adapter.close()
    operations, suite_cases = suite_size(suite, edition)
    status = EXIT_OK
    verdicts = []
    for column in matrix.columns:
        summary = Summary(suite_operations=operations, suite_cases=suite_cases)
        for result in column.results:
            summary.add(result)
        unmet = unmet_requirements(required, summary.scope())
        line = verdict_line(summary, interrupted=False) + "".join(f"; {u}" for u in unmet)
        verdicts.append(f"- **{md_escape(column.label)}**: {line}")
        print(f"{shown(column.spec)}: {line}", file=err)
        if not summary.ok or unmet:
            status = EXIT_FAILED
    markdown = matrix_markdown(matrix, all_rows=args.all_rows, command=command_line(args, impls))
    # Each implementation's verdict, with its scope, right under the title.
    title, _, rest = markdown.partition("\n\n")
    markdown = "\n\n".join([title, "## Verdicts\n\n" + "\n".join(verdicts), rest])
    with opened(args.markdown, out) as stream:
        stream.write(markdown)
    if args.html:
        write_atomic(args.html, matrix_html(matrix))
        print(f"wrote {shown(args.html)}", file=err)
    if args.site:
        _write_site(
            args,
            matrix,
            suite,
            edition=edition,
            histories=histories,
            started=started_at,
            command=command_line(args, impls),
            err=err,
        )
    return status


def command_line(args: argparse.Namespace, impls: list[str]) -> str:
    """The command that compares the same implementations on the same cases, shell-quoted.

    Every option that changes what is compared or how it is judged is repeated (the selection,
    the edition, the expectations); the output options are not.
    """
    argv = ["flux-conformance", "compare", *(f"--impl={i}" for i in impls)]
    for name, flag in (
        ("operation", "-o"),
        ("id", "--id"),
        ("level", "--level"),
        ("tag", "--tag"),
        ("exclude_operation", "--exclude-operation"),
        ("exclude_id", "--exclude-id"),
        ("exclude_level", "--exclude-level"),
        ("exclude_tag", "--exclude-tag"),
        ("expectations", "--expectations"),
        ("require_operation", "--require-operation"),
    ):
        argv += [f"{flag}={value}" for value in getattr(args, name, None) or ()]
    if args.edition:
        argv.append(f"--edition={args.edition}")
    if args.cases:
        argv.append(f"--cases={args.cases}")
    for name, flag in (
        ("no_shipped_expectations", "--no-shipped-expectations"),
        ("require_all", "--require-all"),
        ("all_rows", "--all-rows"),
    ):
        if getattr(args, name, False):
            argv.append(flag)
    return shell_command(argv)


def _site_checks(args: argparse.Namespace) -> list[Any]:
    """Before anything runs: the site's folder is ours to write, the histories load."""
    if not args.site:
        if args.history:
            raise UsageError("--history is shown on the site: give --site DIR too")
        return []
    from flux_conformance.runner.report.site import check_target
    from flux_conformance.runner.report.site.history import load_history

    check_target(Path(args.site))
    return [load_history(Path(path)) for path in args.history or ()]


def _write_site(
    args: argparse.Namespace,
    matrix: Any,
    suite: Any,
    *,
    edition: str,
    histories: list[Any],
    started: str,
    command: str,
    err: IO[str],
) -> None:
    """Write the results site (``--site DIR``), and say how long it took."""
    import functools
    import time

    from flux_conformance.runner.adapters.factory import description
    from flux_conformance.runner.report.site import Site, write_site
    from flux_conformance.runner.tools.clarify import reading_taken

    began = time.perf_counter()
    site = Site(
        matrix,
        suite,
        edition,
        started=started,
        command=command,
        suite_size=suite_size(suite, edition),
        descriptions={c.spec: description(c.spec) for c in matrix.columns},
        reading_of=functools.partial(_reading, suite=suite, taken=reading_taken),
        histories=tuple(histories),
    )
    count = write_site(site, Path(args.site))
    seconds = time.perf_counter() - began
    print(f"wrote the site {args.site} ({count:,} files, {seconds:.1f} s)", file=err)


def _reading(case: Any, reply: Any, *, suite: Any, taken: Any) -> str:
    return str(taken(case, reply, suite))


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``compare``."""
    p = sub.add_parser(
        "compare",
        help="run several implementations; write a matrix",
        description="Run several implementations over the same cases and write a matrix. "
        "Exit status: 0 nothing new against any implementation's baseline, 1 one does not "
        "conform (or a required operation was not run), 2 a usage or case-file error, 3 an "
        "implementation could not be run.",
    )
    p.add_argument(
        "--impl",
        action="append",
        metavar="IMPL",
        help="an implementation (repeatable; default: the reference)",
    )
    add_selection(p)
    add_require(p)
    p.add_argument("--timeout", type=seconds(), default=10.0, help="seconds per case (exec: only)")
    add_max_timeouts_option(p)
    p.add_argument(
        "--expectations",
        action="append",
        metavar="IMPL=FILE",
        help="expectations file for one implementation (repeatable)",
    )
    p.add_argument(
        "--no-shipped-expectations",
        action="store_true",
        help="ignore the expectations files shipped with named adapters",
    )
    add_jobs_option(p)
    p.add_argument("--markdown", metavar="FILE", help="write the Markdown matrix here")
    p.add_argument("--html", metavar="FILE", help="write the HTML page here")
    p.add_argument(
        "--site",
        metavar="DIR",
        help="write a static results site here (pages per implementation, case and spec; "
        "badges); docs/site.md",
    )
    p.add_argument(
        "--history",
        action="append",
        metavar="FILE",
        help="a release history (implementations/flux-core/history.py) to show on the site "
        "(repeatable)",
    )
    p.add_argument(
        "--all-rows",
        action="store_true",
        help="Markdown: every case, not only those some implementation did not pass",
    )
    p.set_defaults(func=main)
