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

from flux_conformance.runner.errors import ConformanceError

if TYPE_CHECKING:
    from flux_conformance.runner.cases import Case, Suite
    from flux_conformance.runner.engine import Filters

__all__ = [
    "LEVELS",
    "UsageError",
    "add_cases_option",
    "add_selection",
    "checkout_drift",
    "filters_of",
    "load",
    "opened",
    "selected",
    "shipped_expectations",
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


def filters_of(args: argparse.Namespace, suite: Suite) -> Filters:
    """The :class:`~flux_conformance.runner.engine.Filters` the selection options describe.

    ``--edition`` is resolved against the suite's editions (an alias gives the edition's own
    name; none gives the default); an unknown name is an :class:`EditionError`.
    """
    from flux_conformance.runner.engine import Filters

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
    """``out`` for ``-`` or no path, else the file (written as UTF-8)."""
    if not path or path == "-":
        yield out
        return
    with Path(path).open("w", encoding="utf-8") as stream:
        yield stream
