"""A pytest plugin: every case of the suite as a pytest item.

Inert unless ``--conformance-impl`` is given.  Then each selected case becomes an item
named by its case id, located at its YAML file and line, so pytest's ``-k``, ``-x``,
``--junitxml`` and pytest-xdist work as for any test.  A failure prints the same details
as ``flux-conformance run``: input, expected, actual, reason, diff and a replay command.

    pytest --conformance-impl 'exec:./my-impl' -k 'idset'

(the plugin is registered through the ``pytest11`` entry point, so ``-p`` is only needed
when the package is not installed).
"""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flux_conformance.runner.adapters.base import Adapter, AdapterError
from flux_conformance.runner.cases import Case, Suite, SuiteError, load_suite
from flux_conformance.runner.engine import CaseResult, Filters, Outcome, judge, select
from flux_conformance.runner.oracle import reference_oracle
from flux_conformance.runner.report import compact_json

__all__ = ["ConformanceFailure", "ConformanceItem"]

_SUITE = pytest.StashKey[Suite]()
_ADAPTER = pytest.StashKey[Adapter]()


class ConformanceFailure(Exception):
    """A case did not pass; carries the result for :meth:`ConformanceItem.repr_failure`."""

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
        help="run the conformance suite against IMPL (reference, python:m:o, exec:CMD)",
    )
    group.addoption("--conformance-cases", default=None, metavar="DIR", help="case directory")
    group.addoption(
        "--conformance-edition",
        default=None,
        metavar="NAME",
        help="the edition of the spec texts to follow (default: the latest)",
    )
    group.addoption(
        "--conformance-operation",
        action="append",
        default=[],
        metavar="GLOB",
        help="only these operations",
    )
    group.addoption(
        "--conformance-exclude-operation",
        action="append",
        default=[],
        metavar="GLOB",
        help="leave out these operations",
    )
    group.addoption(
        "--conformance-exclude-id",
        action="append",
        default=[],
        metavar="GLOB",
        help="leave out matching case ids",
    )
    group.addoption(
        "--conformance-level",
        action="append",
        default=[],
        choices=("must", "should", "may", "clarification"),
        help="only these levels",
    )
    group.addoption(
        "--conformance-exclude-level",
        action="append",
        default=[],
        choices=("must", "should", "may", "clarification"),
        help="leave out these levels",
    )
    group.addoption(
        "--conformance-tag", action="append", default=[], metavar="TAG", help="only these tags"
    )
    group.addoption(
        "--conformance-exclude-tag",
        action="append",
        default=[],
        metavar="TAG",
        help="leave out cases with these tags",
    )
    group.addoption("--conformance-timeout", type=float, default=10.0, help="seconds per case")


def pytest_configure(config: pytest.Config) -> None:
    """Load the suite and start the implementation, when asked to."""
    config.addinivalue_line("markers", "conformance: a case of the flux-conformance suite")
    spec = config.getoption("conformance_impl")
    if not spec:
        return
    cases = config.getoption("conformance_cases")
    try:
        config.stash[_SUITE] = load_suite(Path(cases) if cases else None)
    except SuiteError as exc:
        raise pytest.UsageError("flux-conformance: the suite cannot load:\n" + str(exc)) from None
    from flux_conformance.runner.adapters.factory import make_adapter

    try:
        adapter = make_adapter(spec, timeout=config.getoption("conformance_timeout"))
    except AdapterError as exc:
        raise pytest.UsageError(f"flux-conformance: {exc}") from None
    with contextlib.suppress(AdapterError):
        adapter.start()  # on failure, every case is reported as errored, with the reason
    config.stash[_ADAPTER] = adapter


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop the implementation."""
    adapter = config.stash.get(_ADAPTER, None)
    if adapter is not None:
        adapter.close()


class ConformanceFile(pytest.File):
    """One case file of the suite."""

    def collect(self) -> Iterator[ConformanceItem]:
        """One item per selected case of this file."""
        for case in self.stash[_CASES]:
            yield ConformanceItem.from_parent(self, name=case.id, case=case)


_CASES = pytest.StashKey[list[Case]]()


class ConformanceItem(pytest.Item):
    """One case, run against the implementation under test."""

    def __init__(self, *, case: Case, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.add_marker(pytest.mark.conformance)
        self.user_properties.append(("operation", case.operation))
        self.user_properties.append(("level", case.level))

    def runtest(self) -> None:
        """Run the case; raise :class:`ConformanceFailure` or skip."""
        config = self.config
        adapter = config.stash[_ADAPTER]
        suite = config.stash[_SUITE]
        case = self.case
        if not adapter.supports(case.operation):
            pytest.skip("operation not supported by the implementation")
        edition = case.edition or suite.editions.resolve(config.getoption("conformance_edition"))
        reply = adapter.run(case.operation, case.input, edition=edition)
        op = suite.operations[case.operation]
        result = judge(case, reply, op, reference_oracle(edition))
        if result.outcome is Outcome.SKIPPED:
            pytest.skip(result.reason)
        if result.outcome is not Outcome.PASSED:
            raise ConformanceFailure(result)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        """The case's details instead of a traceback."""
        if not isinstance(excinfo.value, ConformanceFailure):
            return str(super().repr_failure(excinfo, style))
        r = excinfo.value.result
        impl = self.config.getoption("conformance_impl")
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
        cases = self.config.getoption("conformance_cases")
        argv = ["flux-conformance", "run", "--impl", impl, "--id", r.case.id]
        argv += ["--cases", cases] if cases else []
        lines.append(f"  replay:      {shlex.join(argv)}")
        return "\n".join(lines)

    def reportinfo(self) -> tuple[Path, int, str]:
        """Point at the case's YAML file and line."""
        return self.case.file, self.case.line - 1, f"conformance: {self.case.id}"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Add the suite's cases to the items, before -k and other selection apply."""
    suite = config.stash.get(_SUITE, None)
    if suite is None:
        return

    def option(name: str) -> tuple[str, ...]:
        return tuple(config.getoption(f"conformance_{name}"))

    filters = Filters(
        operations=option("operation"),
        levels=option("level"),
        tags=option("tag"),
        edition=suite.editions.resolve(config.getoption("conformance_edition")),
        exclude_operations=option("exclude_operation"),
        exclude_ids=option("exclude_id"),
        exclude_levels=option("exclude_level"),
        exclude_tags=option("exclude_tag"),
    )
    by_file: dict[Path, list[Case]] = {}
    for case in select(suite.cases, filters):
        by_file.setdefault(case.file, []).append(case)
    for path, cases in by_file.items():
        node = ConformanceFile.from_parent(session, path=path)
        node.stash[_CASES] = cases
        items.extend(node.collect())
