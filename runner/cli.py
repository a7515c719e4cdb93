"""The ``flux-conformance`` command: run, check, list, coverage, serve.

Exit status: 0 when nothing failed or errored, 1 when something did, 2 for a usage error
or a suite that cannot load (every problem is printed with file and line).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import runner
from runner.adapters.base import Adapter, AdapterError

if TYPE_CHECKING:
    from runner.cases import Suite
    from runner.engine import Filters
    from runner.report import Reporter

# The levels of a case (runner.cases.LEVELS, repeated so that `serve` need not load it).
LEVELS = ("must", "should", "may", "clarification")

__all__ = ["main", "make_adapter"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def make_adapter(spec: str, *, timeout: float = 10.0) -> Adapter:
    """Build the adapter an ``--impl`` value names (``reference``, ``python:``, ``exec:``)."""
    from runner.adapters import KNOWN
    from runner.adapters.inprocess import (
        InProcessAdapter,
        ReferenceImplementation,
        load_python_object,
    )
    from runner.adapters.subprocess import SubprocessAdapter

    if spec == "reference":
        return InProcessAdapter(ReferenceImplementation())
    if spec in KNOWN:
        return InProcessAdapter(load_python_object(KNOWN[spec]), name=spec)
    kind, sep, rest = spec.partition(":")
    if sep and kind == "python":
        return InProcessAdapter(load_python_object(rest))
    if sep and kind == "exec":
        return SubprocessAdapter(rest, timeout=timeout)
    raise AdapterError(
        f"unknown implementation {spec!r}: use 'reference', 'python:module:object', "
        f"'exec:COMMAND' (e.g. --impl 'exec:flux-conformance serve') or one of: "
        f"{', '.join(sorted(KNOWN)) or 'no shipped adapters'}"
    )


def _load(args: argparse.Namespace, err: IO[str]) -> Suite | None:
    from runner.cases import SuiteError, load_suite

    try:
        return load_suite(Path(args.cases) if args.cases else None)
    except SuiteError as exc:
        for problem in exc.problems:
            print(problem, file=err)
        print(f"{len(exc.problems)} problem(s): the suite cannot run", file=err)
        return None


def _filters(args: argparse.Namespace) -> Filters:
    from runner.engine import Filters

    return Filters(
        operations=tuple(args.operation or ()),
        ids=tuple(args.id or ()),
        levels=tuple(args.level or ()),
        tags=tuple(args.tag or ()),
        edition=args.edition,
    )


@contextlib.contextmanager
def _reporters(args: argparse.Namespace, out: IO[str]) -> Iterator[list[Reporter]]:
    from runner.report.jsonl import JsonLinesReporter
    from runner.report.junit import JUnitReporter
    from runner.report.markdown import MarkdownReporter
    from runner.report.terminal import TerminalReporter

    reporters: list[Reporter] = []
    with contextlib.ExitStack() as stack:
        if args.json == "-":
            reporters.append(JsonLinesReporter(out))
        else:
            reporters.append(
                TerminalReporter(out, verbose=args.verbose, show_skips=args.show_skips)
            )
            if args.json:
                stream = stack.enter_context(Path(args.json).open("w", encoding="utf-8"))
                reporters.append(JsonLinesReporter(stream))
        if args.junit:
            reporters.append(JUnitReporter(Path(args.junit)))
        if args.markdown:
            reporters.append(MarkdownReporter(Path(args.markdown)))
        if args.html:
            from runner.report.html import HtmlReporter

            reporters.append(HtmlReporter(Path(args.html)))
        yield reporters


def cmd_run(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """Run the selected cases against one implementation and report."""
    from runner.engine import Summary, run_cases, select
    from runner.report import Header

    suite = _load(args, err)
    if suite is None:
        return EXIT_USAGE
    filters = _filters(args)
    cases = select(suite.cases, filters)
    if not cases:
        print("no case matches the filters", file=err)
        return EXIT_USAGE
    try:
        adapter = make_adapter(args.impl, timeout=args.timeout)
    except AdapterError as exc:
        print(f"error: {exc}", file=err)
        return EXIT_USAGE
    try:
        adapter.start()
    except AdapterError as exc:
        # Still run: every case is reported (errored), so the report is complete.
        print(f"warning: {exc}", file=err)
    decide = skip = None
    if args.expectations:
        from runner.expectations import Expectations, ExpectationsError

        try:
            expectations = Expectations.load(Path(args.expectations))
        except ExpectationsError as exc:
            print(f"error: {exc}", file=err)
            adapter.close()
            return EXIT_USAGE
        stale = expectations.stale(c.id for c in suite.cases)
        if stale:
            for entry in stale:
                print(
                    f"error: {expectations.path}:{entry.line}: {entry.pattern!r} matches no case "
                    "(stale entry: remove or fix it)",
                    file=err,
                )
            adapter.close()
            return EXIT_USAGE
        decide, skip = expectations.decide, expectations.skip_reason
    header = Header(
        implementation=adapter.name,
        impl_spec=args.impl,
        version=adapter.version,
        runner_version=runner.__version__,
        edition=args.edition,
        cases_dir=args.cases or "",
        selected=len(cases),
        started=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        filters={
            k: v for k, v in vars(args).items() if k in ("operation", "id", "level", "tag") and v
        },
    )
    summary = Summary()
    interrupted = False
    results = []
    with _reporters(args, out) as reporters:
        for reporter in reporters:
            reporter.start(header)
        try:
            for result in run_cases(cases, adapter, suite.operations, skip=skip, decide=decide):
                summary.add(result)
                results.append(result)
                for reporter in reporters:
                    reporter.case(result)
                if args.exitfirst and result.outcome.is_bad:
                    break
        except KeyboardInterrupt:
            interrupted = True
        finally:
            adapter.close()
            for reporter in reporters:
                reporter.finish(summary, interrupted=interrupted)
    if args.write_expectations:
        from runner.expectations import write_baseline

        write_baseline(Path(args.write_expectations), results, impl=adapter.name)
        print(f"wrote {args.write_expectations}", file=err)
    if interrupted:
        return 130
    return EXIT_OK if summary.ok else EXIT_FAILED


def cmd_check(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """Load and check every case file; print counts."""
    suite = _load(args, err)
    if suite is None:
        return EXIT_USAGE
    per_op: dict[str, int] = {}
    for case in suite.cases:
        per_op[case.operation] = per_op.get(case.operation, 0) + 1
    for op, n in sorted(per_op.items()):
        print(f"{op:28} {n:5} cases", file=out)
    print(
        f"ok: {len(suite.cases)} cases, {len(suite.requirements)} requirements, "
        f"{len(suite.operations)} operations",
        file=out,
    )
    return EXIT_OK


def cmd_list(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """List the selected cases, or the operations with ``--operations``."""
    if args.operations:
        from runner.operations import load_registry

        for op in load_registry().values():
            print(f"{op.name}  ({op.spec}) {op.summary}", file=out)
            for category, meaning in op.errors.items():
                print(f"    error {category}: {meaning}", file=out)
            print(f"    comparator {op.comparator_name}: {op.comparator_doc}", file=out)
        return EXIT_OK
    from runner.engine import select

    suite = _load(args, err)
    if suite is None:
        return EXIT_USAGE
    for case in select(suite.cases, _filters(args)):
        print(f"{case.id}\t{case.operation}\t{case.level}\t{case.location}", file=out)
    return EXIT_OK


def cmd_coverage(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """Per spec: the share of requirements some case cites, and which have none."""
    from runner.coverage import coverage_report

    suite = _load(args, err)
    if suite is None:
        return EXIT_USAGE
    print(coverage_report(suite, missing=not args.summary), file=out, end="")
    return EXIT_OK


def cmd_serve(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """Serve an implementation (default: the reference) over the subprocess protocol."""
    from runner.adapters.inprocess import (
        ReferenceImplementation,
        _as_implementation,
        load_python_object,
    )
    from runner.serve import serve

    del out, err
    impl: Any
    if args.impl == "reference":
        impl = ReferenceImplementation()
        name, version, ops = impl.name, impl.version, list(impl.operations)
    else:
        kind, _, rest = args.impl.partition(":")
        if kind != "python":
            print("serve takes --impl reference or python:module:object", file=sys.stderr)
            return EXIT_USAGE
        try:
            impl = _as_implementation(load_python_object(rest))
        except AdapterError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        from runner.operations import load_registry

        name = str(getattr(impl, "name", rest))
        version = str(getattr(impl, "version", ""))
        ops = list(getattr(impl, "operations", load_registry()))
    return serve(impl, name=name, version=version, operations=ops)


def cmd_compare(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """Run every implementation on every selected case; write the matrix."""
    from runner.compare import run_matrix, shipped_expectations
    from runner.engine import select
    from runner.expectations import ExpectationsError

    suite = _load(args, err)
    if suite is None:
        return EXIT_USAGE
    cases = select(suite.cases, _filters(args))
    if not cases:
        print("no case matches the filters", file=err)
        return EXIT_USAGE
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
            print(f"error: --expectations takes IMPL=FILE with IMPL one of {impls}", file=err)
            return EXIT_USAGE
        expectations[impl] = Path(file)
    try:
        for impl in impls:
            make_adapter(impl, timeout=args.timeout)  # fail early on a bad --impl
        matrix = run_matrix(
            suite,
            cases,
            impls,
            expectations=expectations,
            make_adapter=lambda spec: make_adapter(spec, timeout=args.timeout),
            progress=lambda spec: print(f"running {len(cases)} cases against {spec}", file=err),
        )
    except AdapterError as exc:
        print(f"error: {exc}", file=err)
        return EXIT_USAGE
    except ExpectationsError as exc:
        print(f"error: {exc}", file=err)
        return EXIT_USAGE
    argv = ["flux-conformance", "compare", *(f"--impl={i}" for i in impls)]
    argv += [f"-o={op}" for op in args.operation or ()]
    markdown = matrix.to_markdown(all_rows=args.all_rows, command=" ".join(argv))
    if args.markdown:
        Path(args.markdown).write_text(markdown, encoding="utf-8")
    else:
        print(markdown, file=out, end="")
    if args.html:
        Path(args.html).write_text(matrix.to_html(), encoding="utf-8")
        print(f"wrote {args.html}", file=err)
    return EXIT_OK


def cmd_clarify(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """Render the clarification cases (and shipped findings) for spec authors."""
    from runner.clarify import clarify_report, collect_readings
    from runner.expectations import ExpectationsError

    suite = _load(args, err)
    if suite is None:
        return EXIT_USAGE
    try:
        for impl in args.impl or ():
            make_adapter(impl, timeout=args.timeout)
        readings = collect_readings(
            suite, args.impl or [], lambda spec: make_adapter(spec, timeout=args.timeout)
        )
        argv = ["flux-conformance", "clarify", *(f"--impl={i}" for i in args.impl or ())]
        text = clarify_report(suite, readings, fmt=args.format, command=" ".join(argv))
    except (AdapterError, ExpectationsError) as exc:
        print(f"error: {exc}", file=err)
        return EXIT_USAGE
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        print(text, file=out, end="")
    return EXIT_OK


def _add_selection(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cases", metavar="DIR", help="case directory (default: the bundled suite)")
    p.add_argument(
        "-o",
        "--operation",
        action="append",
        metavar="GLOB",
        help="only these operations (glob; repeatable), e.g. 'idset.*'",
    )
    p.add_argument(
        "--id", action="append", metavar="GLOB", help="only case ids matching (repeatable)"
    )
    p.add_argument(
        "--level", action="append", choices=LEVELS, help="only these levels (repeatable)"
    )
    p.add_argument(
        "--tag", action="append", metavar="TAG", help="only cases with this tag (repeatable)"
    )
    p.add_argument(
        "--edition",
        choices=("seed", "upstream"),
        default="seed",
        help="RFC 14 range-dict edition whose cases run (default: seed)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(
        prog="flux-conformance",
        description="Conformance suite for Flux RFC 14/20/22/29/31/35/45/46 formats and "
        "Slurm --extra expressions.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {runner.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run the suite against an implementation")
    run.add_argument(
        "--impl",
        default="reference",
        help="reference (default), python:module:object, or exec:COMMAND",
    )
    _add_selection(run)
    run.add_argument("--timeout", type=float, default=10.0, help="seconds per case (exec: only)")
    run.add_argument("--json", metavar="FILE", help="JSON Lines report ('-' for stdout alone)")
    run.add_argument("--junit", metavar="FILE", help="JUnit XML report")
    run.add_argument("--markdown", metavar="FILE", help="Markdown report")
    run.add_argument("--html", metavar="FILE", help="self-contained HTML report")
    run.add_argument("--expectations", metavar="FILE", help="YAML of known failures (xfail/skip)")
    run.add_argument(
        "--write-expectations",
        metavar="FILE",
        help="write a baseline expectations file from this run's failures",
    )
    run.add_argument("-x", "--exitfirst", action="store_true", help="stop at the first bad case")
    run.add_argument("-v", "--verbose", action="store_true", help="one line per case")
    run.add_argument("--show-skips", action="store_true", help="detail skipped cases too")
    run.set_defaults(func=cmd_run)

    cmp_ = sub.add_parser("compare", help="run several implementations; write a matrix")
    cmp_.add_argument(
        "--impl",
        action="append",
        metavar="IMPL",
        help="an implementation (repeatable; default: the reference)",
    )
    _add_selection(cmp_)
    cmp_.add_argument("--timeout", type=float, default=10.0, help="seconds per case (exec: only)")
    cmp_.add_argument(
        "--expectations",
        action="append",
        metavar="IMPL=FILE",
        help="expectations file for one implementation (repeatable)",
    )
    cmp_.add_argument(
        "--no-shipped-expectations",
        action="store_true",
        help="ignore the expectations files shipped with named adapters",
    )
    cmp_.add_argument("--markdown", metavar="FILE", help="write the Markdown matrix here")
    cmp_.add_argument("--html", metavar="FILE", help="write the HTML page here")
    cmp_.add_argument(
        "--all-rows",
        action="store_true",
        help="Markdown: every case, not only those some implementation did not pass",
    )
    cmp_.set_defaults(func=cmd_compare)

    clar = sub.add_parser("clarify", help="report the open points of the specs for their authors")
    clar.add_argument(
        "--impl",
        action="append",
        metavar="IMPL",
        help="also show which reading this implementation takes (repeatable)",
    )
    clar.add_argument("--cases", metavar="DIR", help="case directory")
    clar.add_argument("--format", choices=("markdown", "rst"), default="markdown")
    clar.add_argument("--timeout", type=float, default=10.0, help="seconds per case (exec: only)")
    clar.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    clar.set_defaults(func=cmd_clarify)

    check = sub.add_parser("check", help="check every case file; print counts")
    check.add_argument("--cases", metavar="DIR", help="case directory")
    check.set_defaults(func=cmd_check)

    lst = sub.add_parser("list", help="list cases (or --operations)")
    _add_selection(lst)
    lst.add_argument("--operations", action="store_true", help="list the registered operations")
    lst.set_defaults(func=cmd_list)

    cov = sub.add_parser("coverage", help="requirements covered by cases, per spec")
    cov.add_argument("--cases", metavar="DIR", help="case directory")
    cov.add_argument("--summary", action="store_true", help="only the per-spec shares")
    cov.set_defaults(func=cmd_coverage)

    serve = sub.add_parser("serve", help="serve the reference over the subprocess protocol")
    serve.add_argument("--impl", default="reference", help="reference or python:module:object")
    serve.set_defaults(func=cmd_serve)

    from runner.diff import add_parser as add_diff_parser

    add_diff_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``flux-conformance`` command."""
    args = build_parser().parse_args(argv)
    code: int = args.func(args, sys.stdout, sys.stderr)
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
