"""What the commands share: the case selection options, loading the suite, shipped expectations."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import filecmp
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from flux_conformance.runner.commands._numbers import whole
from flux_conformance.runner.errors import ConformanceError

if TYPE_CHECKING:
    from flux_conformance.runner.cases import Case, Suite
    from flux_conformance.runner.engine import Filters, Scope
    from flux_conformance.runner.expectations import Expectations

__all__ = [
    "LEVELS",
    "UsageError",
    "add_cases_option",
    "add_jobs_option",
    "add_require",
    "add_scope_filters",
    "add_selection",
    "check_names",
    "check_writable",
    "checkout_drift",
    "expectations_for",
    "expectations_path",
    "filters_of",
    "load",
    "opened",
    "required_operations",
    "retire_edition_name",
    "scope_of",
    "selected",
    "shipped_expectations",
    "suite_size",
    "unmet_requirements",
]

# The levels of a case (runner.cases.LEVELS, repeated so that `serve` need not load it).
LEVELS = ("must", "should", "may", "clarification")


class UsageError(ConformanceError):
    """The command line asks for something that cannot be done."""


def add_cases_option(p: argparse.ArgumentParser) -> None:
    """``--cases DIR``."""
    p.add_argument(
        "--cases",
        metavar="DIR",
        help="case directory (default: the bundled suite; a directory without its own "
        "requirements/ cites the bundled requirements index)",
    )


#: The selection filters: (option word, metavar or choices, what it selects).
_SELECTORS: tuple[tuple[str, str | tuple[str, ...], str], ...] = (
    ("operation", "GLOB", "operations (glob), e.g. 'idset.*'"),
    ("id", "GLOB", "case ids matching (glob)"),
    ("level", LEVELS, "levels"),
    ("tag", "TAG", "cases with this tag"),
)


def retire_edition_name(args: argparse.Namespace, err: IO[str]) -> None:
    """Turn a retired ``--edition`` name into the edition's own, with a warning on ``err``.

    Names that older versions gave the editions keep old command lines working; the warning
    names the edition by its date and newest spec revision.  The editions are those of the
    ``--cases`` folder when it has its own ``editions.yaml``, else the bundled ones.
    """
    from flux_conformance.runner.editions import FILE_NAME, bundled, load_editions

    name = getattr(args, "edition", None)
    if not name:
        return
    cases = getattr(args, "cases", None)
    own = Path(cases) / FILE_NAME if cases else None
    editions = load_editions(own) if own is not None and own.is_file() else bundled()
    warning = editions.retired_name(name)
    if warning is not None:
        print(f"warning: {warning}", file=err)
        args.edition = editions.resolve(name)


def add_selection(p: argparse.ArgumentParser) -> None:
    """The options that select cases, inclusions and exclusions alike (all repeatable)."""
    add_cases_option(p)
    for word, values, what in _SELECTORS:
        kind: dict[str, Any] = (
            {"choices": values} if isinstance(values, tuple) else {"metavar": values}
        )
        include = ["-o", f"--{word}"] if word == "operation" else [f"--{word}"]
        p.add_argument(*include, action="append", help=f"only {what} (repeatable)", **kind)
        p.add_argument(
            f"--exclude-{word}", action="append", help=f"leave out {what} (repeatable)", **kind
        )
    p.add_argument(
        "--edition",
        metavar="NAME",
        help="the edition of the spec texts to follow, by name or alias (`list --editions`; "
        "default: the latest)",
    )


def add_require(p: argparse.ArgumentParser) -> None:
    """``--require-operation GLOB`` (repeatable) and ``--require-all``."""
    p.add_argument(
        "--require-operation",
        action="append",
        metavar="GLOB",
        help="fail (exit status 1) unless the operations matching GLOB are run, i.e. the "
        "implementation supports them (repeatable)",
    )
    p.add_argument(
        "--require-all",
        action="store_true",
        help="fail (exit status 1) unless every selected operation is run",
    )


def required_operations(args: argparse.Namespace, cases: list[Case]) -> tuple[str, ...]:
    """The selected operations the ``--require-*`` options ask for.

    Raises :class:`UsageError` for a glob that matches no selected operation (a typo, or an
    operation the filters leave out), so that a gate never passes by requiring nothing.
    """
    import fnmatch

    chosen = sorted({c.operation for c in cases})
    if getattr(args, "require_all", False):
        return tuple(chosen)
    required: set[str] = set()
    for glob in getattr(args, "require_operation", None) or ():
        matched = [op for op in chosen if fnmatch.fnmatchcase(op, glob)]
        if not matched:
            raise UsageError(
                f"--require-operation {glob!r} matches no selected operation "
                f"(selected: {', '.join(chosen)})"
            )
        required.update(matched)
    return tuple(sorted(required))


def unmet_requirements(required: tuple[str, ...], scope: Scope) -> list[str]:
    """One line per required operation that was not run, saying why."""
    lines = []
    for op in required:
        if op in scope.run_operations:
            continue
        why = (
            "the implementation does not support it"
            if op in scope.unsupported_operations
            else "every case of it was skipped"
        )
        lines.append(f"required operation {op} was not run: {why}")
    return lines


def add_jobs_option(p: argparse.ArgumentParser) -> None:
    """``-j N``: worker processes (:mod:`runner.parallel`)."""
    p.add_argument(
        "-j",
        "--jobs",
        type=whole(1, 1024, what="a number of worker processes"),
        default=1,
        metavar="N",
        help="run the cases in N worker processes, each with its own copy of the "
        "implementation (results and reports as a serial run's; default 1)",
    )


def add_max_timeouts_option(p: argparse.ArgumentParser) -> None:
    """``--max-timeouts N`` for run, compare and diff.

    None unless given, so that the adapter's own default applies
    (``runner.adapters.subprocess.MAX_TIMEOUTS``, not imported here to keep start-up short).
    """
    p.add_argument(
        "--max-timeouts",
        type=whole(0),
        default=None,
        metavar="N",
        help="give an exec: implementation up after N timeouts in a row (default 5; 0: never)",
    )


def add_scope_filters(p: argparse.ArgumentParser) -> None:
    """``--spec`` and ``-o/--operation``: the narrower filters of ``clarify`` and ``coverage``."""
    p.add_argument(
        "--spec",
        action="append",
        metavar="SPEC",
        help="only this spec, e.g. rfc22 or 'RFC 22' (repeatable)",
    )
    p.add_argument(
        "-o",
        "--operation",
        action="append",
        metavar="GLOB",
        help="only operations matching (glob), e.g. 'idset.*' (repeatable)",
    )


def scope_of(args: argparse.Namespace, suite: Suite) -> tuple[set[str], set[str]]:
    """The specs and operations ``--spec`` and ``-o`` leave in (all when neither is given).

    Raises :class:`UsageError` when a filter matches nothing, so a typo is not an empty report.
    """
    import fnmatch

    def plain(name: str) -> str:  # `rfc22`, `RFC 22` and `rfc-22` name the same spec
        return "".join(ch for ch in name.lower() if ch.isalnum())

    known_specs = {plain(r.spec): r.spec for r in suite.requirements.values()}
    known_specs.update((plain(op.spec), op.spec) for op in suite.operations.values())
    asked = list(getattr(args, "spec", None) or ())
    unknown = [name for name in asked if plain(name) not in known_specs]
    if unknown:
        raise UsageError(
            f"unknown spec {', '.join(unknown)}; the suite has "
            + ", ".join(sorted(set(known_specs.values())))
        )
    specs = {known_specs[plain(name)] for name in asked}
    globs = tuple(getattr(args, "operation", None) or ())
    operations = {
        name
        for name, op in suite.operations.items()
        if (not specs or op.spec in specs)
        and (not globs or any(fnmatch.fnmatchcase(name, g) for g in globs))
    }
    if globs and not operations:
        from flux_conformance.runner._suggest import glob_suggestion

        raise UsageError(
            f"-o {' '.join(map(repr, globs))} matches no operation"
            + ("" if specs else glob_suggestion(globs[0], suite.operations))
        )
    if globs:
        specs = {suite.operations[name].spec for name in operations}
    elif not specs:
        specs = set(known_specs.values())
    return specs, operations


def check_writable(*paths: str | None) -> None:
    """Raise :class:`UsageError` for an output path that cannot be written, before any work.

    ``-`` and ``None`` (stdout, or no report) are fine.  A path is refused when it names a
    folder, when the first of its folders that exists is not a folder or is read-only, or
    when it exists read-only.  The command still reports a write that fails later (a full
    disk) the same way, through :func:`runner.cli.main`.
    """
    import os

    for path in paths:
        if not path or path == "-":
            continue
        target = Path(path)
        problem = None
        if target.is_dir():
            problem = "it is a folder"
        elif target.exists():
            if not os.access(target, os.W_OK):
                problem = "permission denied"
        else:
            folder = target.parent
            while not folder.exists() and folder != folder.parent:
                folder = folder.parent
            if not folder.is_dir():
                problem = f"{folder} is not a folder"
            elif not os.access(folder, os.W_OK | os.X_OK):
                problem = f"permission denied in {folder}"
        if problem:
            raise UsageError(f"cannot write {path}: {problem}")


def check_names(args: argparse.Namespace, suite: Suite) -> None:
    """Raise :class:`UsageError` for a selection option that names nothing in ``suite``.

    Every ``-o``/``--operation``, ``--id`` and ``--tag`` value (and its ``--exclude-`` twin)
    must match at least one operation, case id or tag of the suite, whatever the edition: a
    typo gets the closest name (``did you mean 'idset.decode'?``), never an empty selection.
    """
    from flux_conformance.runner._suggest import glob_suggestion, matches_any

    kinds = (
        ("operation", "operation", lambda: suite.operations),
        ("id", "case id", lambda: [c.id for c in suite.cases]),
        ("tag", "tag", lambda: {t for c in suite.cases for t in c.tags}),
    )
    for word, what, known in kinds:
        for option in (word, f"exclude_{word}"):
            for glob in getattr(args, option, None) or ():
                names = list(known())
                if not matches_any(glob, names):
                    flag = "-o" if option == "operation" else f"--{option.replace('_', '-')}"
                    wild = any(ch in glob for ch in "*?[")
                    problem = (
                        f"{flag} {glob!r} matches no {what}"
                        if wild
                        else (f"unknown {what} {glob!r}")
                    )
                    raise UsageError(problem + glob_suggestion(glob, names))


def filters_of(args: argparse.Namespace, suite: Suite) -> Filters:
    """The :class:`~flux_conformance.runner.engine.Filters` the selection options describe.

    ``--edition`` is resolved against the suite's editions (an alias gives the edition's own
    name; none gives the default); an unknown name is an :class:`EditionError`.  A value that
    names nothing in the suite is a :class:`UsageError` (:func:`check_names`).
    """
    from flux_conformance.runner.engine import Filters

    check_names(args, suite)

    def values(name: str) -> tuple[str, ...]:
        return tuple(getattr(args, name, None) or ())

    return Filters(
        operations=values("operation"),
        ids=values("id"),
        levels=values("level"),
        tags=values("tag"),
        edition=suite.editions.resolve(getattr(args, "edition", None)),
        exclude_operations=values("exclude_operation"),
        exclude_ids=values("exclude_id"),
        exclude_levels=values("exclude_level"),
        exclude_tags=values("exclude_tag"),
    )


def load(args: argparse.Namespace) -> Suite:
    """Load the suite ``--cases`` names (default: the bundled one); raises ``SuiteError``."""
    from flux_conformance.runner.cases import load_suite

    return load_suite(Path(args.cases) if getattr(args, "cases", None) else None)


def selected(suite: Suite, args: argparse.Namespace) -> tuple[list[Case], int]:
    """The cases the options select, and how many the edition alone left out.

    A case of another edition counts only when every other filter would have selected it.

    Raises :class:`UsageError` when nothing is selected.
    """
    from flux_conformance.runner.engine import select

    filters = filters_of(args, suite)
    cases = select(suite.cases, filters)
    if not cases:
        raise UsageError("no case matches the filters")
    # The cases every other filter lets through that belong to another edition only.
    anywhere = dataclasses.replace(filters, edition=None)
    other = sum(
        1 for c in select(suite.cases, anywhere) if c.edition not in (None, filters.edition)
    )
    return cases, other


def suite_size(suite: Suite, edition: str) -> tuple[int, int]:
    """(operations, cases) of the whole suite under ``edition``: the scope's denominators."""
    cases = [c for c in suite.cases if c.edition is None or c.edition == edition]
    return len({c.operation for c in cases}), len(cases)


def expectations_path(impl: str, given: str | None, *, no_shipped: bool) -> Path | None:
    """The expectations file a run of ``impl`` is held to.

    ``given``, else the one shipped with a named adapter (unless ``no_shipped``), else none:
    ``run`` and the pytest plugin follow this one rule.
    """
    if given:
        return Path(given)
    if no_shipped:
        return None
    return shipped_expectations(impl)


def expectations_for(path: Path | None, suite: Suite, edition: str) -> Expectations | None:
    """The expectations file at ``path``, checked against ``suite`` and kept to ``edition``.

    Raises :class:`~runner.expectations.ExpectationsError` for a file that does not load, an
    entry that matches no case of the suite (stale), or one naming an unknown edition.
    """
    if path is None:
        return None
    from flux_conformance.runner.expectations import Expectations

    loaded = Expectations.load(path)
    loaded.check_not_stale(c.id for c in suite.cases)
    return loaded.in_edition(edition, suite.editions.names)


def shipped_expectations(impl: str) -> Path | None:
    """The expectations file shipped with a named adapter (``--impl clustershell``), if any."""
    folder = resources.files("flux_conformance.runner").joinpath("adapters").joinpath("thirdparty")
    candidate = folder.joinpath("expectations").joinpath(f"{impl}.yaml")
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        if candidate.is_file():
            return Path(str(candidate))
    return None


def checkout_drift(cases_dir: Path, cwd: Path | None = None) -> str | None:
    """A warning when run inside a checkout whose ``cases/`` differ from the ones being read.

    After ``pip install .`` the installed copy of the cases is read, and edits to the
    checkout's ``cases/`` are silently ignored; this says so (``pip install -e .`` or
    ``--cases cases`` reads the checkout).
    """
    here = (cwd or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "cases"
        if (folder / "pyproject.toml").is_file() and (candidate / "requirements").is_dir():
            break
    else:
        return None
    candidate = candidate.resolve()
    if candidate == cases_dir.resolve():
        return None
    if _same_tree(candidate, cases_dir):
        return None
    return (
        f"warning: this checkout's {candidate} differs from the cases being read "
        f"({cases_dir}); use `pip install -e .` or `--cases {candidate}` to run your edits"
    )


def _same_tree(a: Path, b: Path) -> bool:
    compared = filecmp.dircmp(a, b, ignore=["__pycache__"])
    stack = [compared]
    while stack:
        node = stack.pop()
        if node.left_only or node.right_only or node.diff_files or node.funny_files:
            return False
        _, mismatch, errors = filecmp.cmpfiles(
            node.left, node.right, node.common_files, shallow=False
        )
        if mismatch or errors:
            return False
        stack.extend(node.subdirs.values())
    return True


@contextlib.contextmanager
def opened(path: str | None, out: IO[str]) -> Iterator[IO[str]]:
    """``out`` for ``-`` or no path, else the file (UTF-8, replaced whole: :mod:`runner.atomic`)."""
    if not path or path == "-":
        yield out
        return
    from flux_conformance.runner.atomic import replacing

    with replacing(path) as stream:
        yield stream
