"""A pytest plugin: every case of the suite as a pytest item.

Inert unless ``--conformance-impl`` is given.  Then the suite's case files are collected the
way pytest collects any non-Python test file (``pytest_collect_file`` -> :class:`CaseFile` ->
:class:`CaseItem`), so the header counts the cases (``collected 1630 items``), ``-k``,
``--lf``, ``-x``, node ids, ``--junitxml`` and pytest-xdist behave as for any test.  An item's
node id is its file's path and its case id (``rfc22/idset.decode.yaml::idset.decode.leading-
zero``, relative to the suite folder, or to the rootdir when the suite lies inside it), and it
can be pasted back on the command line to run just that case.  A failure prints what
``flux-conformance run`` prints: input, expected, actual, reason, diff and a replay command.

    pytest --conformance-impl 'exec:./my-impl' -k 'idset'

Given no test paths, ``--conformance-impl`` collects the suite alone; given some, the suite is
collected beside them.  ``--conformance-expectations FILE`` holds the implementation to its
known failures (xfail, strict) and skips, as ``run --expectations`` does; a shipped adapter
(``--conformance-impl clustershell``) is held to the file shipped with it unless
``--conformance-no-shipped-expectations``.  The plugin is registered through the ``pytest11``
entry point, so ``-p`` is only needed when the package is not installed.

Exit statuses follow the command line's where pytest leaves room: an implementation that
cannot be run (not installed, does not start, answers no trivial request) stops the session
with exit status 3 before any case; a malformed ``--conformance-impl`` is a usage error.  A
refusal whose category the implementation did not say is reported as skipped (``unchecked:``),
never as a pass.  ``--conformance-require-operation GLOB`` and ``--conformance-require-all``
make the session fail (exit status 1) when a required operation had no case run.
"""

from __future__ import annotations

import argparse
import contextlib
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flux_conformance.runner.adapters.base import Adapter, AdapterError, ImplSpecError
from flux_conformance.runner.cases import LEVELS, Case, Suite, SuiteError, load_suite
from flux_conformance.runner.commands._common import (
    expectations_for,
    expectations_path,
    filters_of,
)
from flux_conformance.runner.commands._numbers import seconds
from flux_conformance.runner.engine import CaseResult, Filters, Outcome, run_cases
from flux_conformance.runner.errors import ConformanceError
from flux_conformance.runner.oracle import reference_oracle
from flux_conformance.runner.report import compact_json

__all__ = ["CaseFile", "CaseItem", "ConformanceFailure"]


@contextlib.contextmanager
def _usage() -> Iterator[None]:
    """The runner's own errors as pytest usage errors (exit status 4, no traceback)."""
    try:
        yield
    except ConformanceError as exc:
        raise pytest.UsageError("flux-conformance: " + "\n".join(exc.lines())) from None


class _State:
    """What a session with ``--conformance-impl`` holds: suite, filters, adapter, expectations."""

    def __init__(self, config: pytest.Config) -> None:
        self.spec: str = config.getoption("conformance_impl")
        cases = config.getoption("conformance_cases")
        try:
            self.suite: Suite = load_suite(Path(cases) if cases else None)
        except SuiteError as exc:
            raise pytest.UsageError(
                "flux-conformance: the suite cannot load:\n" + "\n".join(exc.lines())
            ) from None
        with _usage():
            given = config.getoption("conformance_edition")
            self.edition: str = self.suite.editions.resolve(given)
        warning = self.suite.editions.retired_name(given)
        if warning is not None:
            config.issue_config_time_warning(pytest.PytestConfigWarning(warning), stacklevel=2)
        # The selection options, read by run's own helper (unknown names are usage errors).
        options = argparse.Namespace(
            edition=self.edition, **{word: _option(config, word) for word in _SELECTION}
        )
        with _usage():
            self.filters: Filters = filters_of(options, self.suite)
        self.by_file: dict[Path, list[Case]] = {}
        for case in self.suite.cases:
            if self.filters.accepts(case):
                self.by_file.setdefault(case.file.resolve(), []).append(case)
        self.skip: Any = None
        self.decide: Any = None
        # The expectations file run would hold the implementation to, loaded as run loads it.
        self.expectations = expectations_path(
            self.spec,
            config.getoption("conformance_expectations"),
            no_shipped=config.getoption("conformance_no_shipped_expectations"),
        )
        with _usage():
            loaded = expectations_for(self.expectations, self.suite, self.edition)
        if loaded is not None:
            self.skip, self.decide = loaded.skip_reason, loaded.decide
        from flux_conformance.runner.adapters.factory import make_adapter
        from flux_conformance.runner.adapters.preflight import preflight

        try:
            self.adapter: Adapter = make_adapter(
                self.spec, timeout=config.getoption("conformance_timeout")
            )
        except ImplSpecError as exc:
            raise pytest.UsageError(f"flux-conformance: {exc}") from None
        except AdapterError as exc:
            pytest.exit(f"flux-conformance: {exc}", returncode=exc.exit_status)
        try:
            # A broken set-up stops the session (exit status 3) before any case.
            preflight(self.adapter, self.suite.cases, skip=self.skip, edition=self.edition)
        except AdapterError as exc:
            self.adapter.close()
            pytest.exit(f"flux-conformance: {exc}", returncode=exc.exit_status)
        #: Operations with a case selected, and with a case run (for ``--conformance-require``).
        self.selected: set[str] = set()
        self.ran: set[str] = set()

    @property
    def root(self) -> Path:
        """The suite's folder."""
        return self.suite.root.resolve()


_STATE = pytest.StashKey[_State]()


#: The selection options, by the names ``run``'s parser gives them.
_SELECTION = (
    "operation",
    "id",
    "level",
    "tag",
    "exclude_operation",
    "exclude_id",
    "exclude_level",
    "exclude_tag",
)


def _option(config: pytest.Config, name: str) -> list[str]:
    return list(config.getoption(f"conformance_{name}") or ())


class ConformanceFailure(Exception):
    """A case did not pass; carries the result for :meth:`CaseItem.repr_failure`."""

    def __init__(self, result: CaseResult) -> None:
        super().__init__(result.reason)
        self.result = result


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register the plugin's options."""
    group = parser.getgroup("flux-conformance")
    group.addoption(
        "--conformance-impl",
        default=None,
        metavar="IMPL",
        help="run the conformance suite against IMPL (reference, a shipped adapter's name, "
        "python:module:object, exec:COMMAND)",
    )
    group.addoption("--conformance-cases", default=None, metavar="DIR", help="case directory")
    group.addoption(
        "--conformance-edition",
        default=None,
        metavar="NAME",
        help="the edition of the spec texts to follow (default: the latest)",
    )
    group.addoption(
        "--conformance-expectations",
        default=None,
        metavar="FILE",
        help="the implementation's known failures (xfail, strict) and skips; default: the "
        "file shipped with a named adapter, if any",
    )
    group.addoption(
        "--conformance-no-shipped-expectations",
        action="store_true",
        help="do not apply the expectations file shipped with a named adapter",
    )
    selectors: tuple[tuple[str, str, dict[str, Any]], ...] = (
        ("operation", "operations (glob)", {"metavar": "GLOB"}),
        ("id", "case ids (glob)", {"metavar": "GLOB"}),
        ("level", "levels", {"choices": LEVELS}),
        ("tag", "cases with this tag", {"metavar": "TAG"}),
    )
    for word, what, kind in selectors:
        group.addoption(
            f"--conformance-{word}",
            action="append",
            default=[],
            help=f"only {what} (repeatable)",
            **kind,
        )
        group.addoption(
            f"--conformance-exclude-{word}",
            action="append",
            default=[],
            help=f"leave out {what} (repeatable)",
            **kind,
        )
    group.addoption("--conformance-timeout", type=seconds(), default=10.0, help="seconds per case")
    group.addoption(
        "--conformance-require-operation",
        action="append",
        default=[],
        metavar="GLOB",
        help="fail unless some case of each matching operation runs (is supported)",
    )
    group.addoption(
        "--conformance-require-all",
        action="store_true",
        help="fail unless some case of every selected operation runs",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Load the suite, start the implementation and point collection at the suite's files."""
    config.addinivalue_line("markers", "conformance: a case of the flux-conformance suite")
    if not config.getoption("conformance_impl"):
        return
    state = _State(config)
    config.stash[_STATE] = state
    config.args = _collection_args(config, state.root)


def _collection_args(config: pytest.Config, root: Path) -> list[str]:
    """The paths to collect: the suite's folder, beside or instead of the usual ones.

    A node id of a case (``rfc22/idset.decode.yaml::<id>``, relative to the suite folder)
    given on the command line is resolved in the suite folder, so it can be pasted back.
    """
    explicit = config.args_source is pytest.Config.ArgsSource.ARGS
    args: list[str] = []
    into_suite = False
    for given in config.args if explicit else ():
        path, sep, rest = given.partition("::")
        here = Path(config.invocation_params.dir, path)
        if not here.exists() and (root / path).exists():
            here = root / path
            given = f"{here}{sep}{rest}"  # noqa: PLW2901 (the argument, resolved)
        with contextlib.suppress(OSError):
            into_suite = into_suite or here.resolve().is_relative_to(root)
        args.append(given)
    if not into_suite:
        args.append(str(root))
    return args


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the session when an operation ``--conformance-require-*`` asks for did not run."""
    import fnmatch

    config = session.config
    state = config.stash.get(_STATE, None)
    if state is None:
        return
    selected = sorted(state.selected)
    required: set[str] = set(selected) if config.getoption("conformance_require_all") else set()
    for glob in config.getoption("conformance_require_operation"):
        matched = {op for op in selected if fnmatch.fnmatchcase(op, glob)}
        required |= matched or {glob}  # a glob matching nothing is unmet, never vacuous
    missing = sorted(required - state.ran)
    if missing:
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(
                "flux-conformance: required operations with no case run: " + ", ".join(missing)
            )
        if exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop the implementation."""
    state = config.stash.get(_STATE, None)
    if state is not None:
        state.adapter.close()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> CaseFile | None:
    """A case file of the suite under test becomes a :class:`CaseFile`."""
    state = parent.config.stash.get(_STATE, None)
    if state is None or file_path.suffix != ".yaml":
        return None
    resolved = file_path.resolve()
    if not resolved.is_relative_to(state.root) or resolved.parent == state.root / "requirements":
        return None
    node: CaseFile = CaseFile.from_parent(parent, path=file_path, nodeid=_nodeid(parent, resolved))
    return node


def _nodeid(parent: pytest.Collector, path: Path) -> str:
    """The file's node id: its path from the rootdir, or from the suite's folder.

    The suite's folder is the base when the suite lies outside the rootdir (an installed
    copy); :func:`_collection_args` resolves such a path when it is given back.
    """
    rootpath = parent.config.rootpath.resolve()
    base = rootpath if path.is_relative_to(rootpath) else parent.config.stash[_STATE].root
    return path.relative_to(base).as_posix()


class CaseFile(pytest.File):
    """One case file of the suite: an item per selected case, in file order."""

    def collect(self) -> Iterator[CaseItem]:
        """One item per case of this file that the filters select."""
        state = self.config.stash[_STATE]
        for case in state.by_file.get(self.path.resolve(), ()):
            yield CaseItem.from_parent(self, name=case.id, case=case)


class CaseItem(pytest.Item):
    """One case, run against the implementation under test."""

    def __init__(self, *, case: Case, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.add_marker(pytest.mark.conformance)
        self.user_properties.append(("operation", case.operation))
        self.user_properties.append(("level", case.level))

    def runtest(self) -> None:
        """Run the case; raise :class:`ConformanceFailure`, skip, or xfail."""
        state = self.config.stash[_STATE]
        case = self.case
        state.selected.add(case.operation)
        # The engine's own loop, for this one case: skipped by the expectations file, not
        # sent when unsupported, judged in its edition, then decided by the expectations.
        (result,) = run_cases(
            [case],
            state.adapter,
            state.suite.operations,
            oracle=reference_oracle,
            skip=state.skip,
            decide=state.decide,
            edition=state.edition,
        )
        if result.outcome is Outcome.SKIPPED:
            pytest.skip(result.reason)
        state.ran.add(case.operation)
        if result.outcome is Outcome.UNCHECKED:
            pytest.skip(f"unchecked: {result.reason}")
        if result.outcome is Outcome.XFAILED:
            pytest.xfail(result.reason)
        if result.outcome is not Outcome.PASSED:
            raise ConformanceFailure(result)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        """The case's details instead of a traceback."""
        if not isinstance(excinfo.value, ConformanceFailure):
            return str(super().repr_failure(excinfo, style))
        r = excinfo.value.result
        state = self.config.stash[_STATE]
        lines = [
            f"{r.outcome.value.upper()} {r.case.id} ({r.case.location}) [{r.case.level}]",
            f"  description: {r.case.description}",
            f"  input:       {compact_json(r.case.input)}",
            f"  expected:    {compact_json(r.case.expected_json())}",
            f"  actual:      {compact_json(r.reply.to_json()) if r.reply else '-'}",
            f"  reason:      {r.reason}",
        ]
        if r.diff:
            lines += ["  diff:", *(f"    {line}" for line in r.diff.splitlines())]
        if r.reply is not None and r.reply.stderr:
            lines += ["  stderr (tail):", *(f"    {x}" for x in r.reply.stderr.splitlines()[-15:])]
        argv = ["flux-conformance", "run", "--impl", state.spec, "--id", r.case.id]
        argv += ["--edition", r.case.edition or state.edition]
        cases = self.config.getoption("conformance_cases")
        argv += ["--cases", cases] if cases else []
        if state.expectations is not None:
            argv += ["--expectations", str(state.expectations)]
        lines.append(f"  replay:      {shlex.join(argv)}")
        again = ["pytest", "--conformance-impl", state.spec]
        again += [f"--conformance-cases={cases}"] if cases else []
        lines.append(f"  or:          {shlex.join([*again, self.nodeid])}")
        return "\n".join(lines)

    def reportinfo(self) -> tuple[Path, int, str]:
        """Point at the case's YAML file and line."""
        return self.case.file, self.case.line - 1, f"conformance: {self.case.id}"
