"""Which files loading a case folder reads: its ``*.yaml`` files, and its own indexes.

Only regular files inside the folder are read.  A symbolic link is followed only to a regular
file inside the folder; anything else (a link out of it, a dangling or looping link, a
directory named ``*.yaml``, a FIFO or a device) is a :class:`~runner.case_checks.Problem`,
and nothing is read from it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from flux_conformance.runner.case_checks import Problem
from flux_conformance.runner.editions import FILE_NAME as EDITIONS_FILE

__all__ = ["INDEXES", "own_index", "yaml_files"]


def yaml_files(
    folder: Path, root: Path, problems: list[Problem], *, recursive: bool
) -> Iterator[Path]:
    """The ``*.yaml`` files under ``folder`` that may be read: regular files inside ``root``.

    Symbolic links are not followed out of ``root``: a link to a file inside it is read (as
    that file), a link to anything else, a dangling or looping link, a directory named
    ``*.yaml``, a FIFO or a device is a problem, and nothing is read from it.  Linked
    directories are not walked into (a problem says so).  ``requirements/`` is left out of
    a recursive listing (it holds the index, not cases), and so is the editions file.
    """
    real_root = os.path.realpath(root)
    pending = [folder]
    found: list[Path] = []
    while pending:
        current = pending.pop()
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name)
        except OSError as exc:
            problems.append(Problem(current, 1, f"cannot list the folder: {exc.strerror}"))
            continue
        for entry in entries:
            path = Path(entry.path)
            if entry.is_symlink():
                if recursive and current == root and entry.name in INDEXES:
                    continue  # checked, and read or not, on its own (_own_index)
                if entry.name.endswith(".yaml") or os.path.isdir(path):
                    target = _link_target(path, real_root, problems)
                    if target is not None and entry.name.endswith(".yaml"):
                        found.append(path)
                continue
            if entry.is_dir(follow_symlinks=False):
                if entry.name.endswith(".yaml"):
                    problems.append(Problem(path, 1, "is a directory, not a case file"))
                if recursive and not (current == root and entry.name == "requirements"):
                    pending.append(path)
                continue
            if not entry.name.endswith(".yaml"):
                continue
            if recursive and current == root and entry.name == EDITIONS_FILE:
                continue  # the editions index, read on its own
            if not entry.is_file(follow_symlinks=False):
                problems.append(
                    Problem(
                        path,
                        1,
                        "is not a regular file (a FIFO, device or socket): not read",
                    )
                )
                continue
            found.append(path)
    return iter(sorted(found))


#: The entries of a case folder's top level read on their own, not as case files.
INDEXES = ("requirements", EDITIONS_FILE)


def own_index(path: Path, real_root: str, problems: list[Problem]) -> bool:
    """Whether ``requirements/`` or the editions file at ``path`` is the case folder's own.

    It is, when it exists and is no link or a link to somewhere inside the case folder (as a
    case file's link must be).  A link out of the folder, or a dangling one, is a problem
    and nothing is read through it: the bundled index is not used in its place either.
    """
    if not path.is_symlink():
        return path.exists()
    return _inside(path, real_root, problems) is not None


def _inside(path: Path, real_root: str, problems: list[Problem]) -> str | None:
    """Where the link ``path`` leads, when that is inside the case folder; else a problem."""
    try:
        target = os.path.realpath(path, strict=True)
    except OSError:
        problems.append(Problem(path, 1, "is a dangling or looping symbolic link: not read"))
        return None
    if os.path.commonpath([real_root, target]) != real_root:
        problems.append(Problem(path, 1, "is a symbolic link to outside the case folder: not read"))
        return None
    return target


def _link_target(path: Path, real_root: str, problems: list[Problem]) -> str | None:
    """Where the link ``path`` leads, when that is a regular file inside the case folder."""
    target = _inside(path, real_root, problems)
    if target is None:
        return None
    if os.path.isdir(target):
        problems.append(
            Problem(
                path,
                1,
                "is a symbolic link to a directory: not followed (list it instead)",
            )
        )
        return None
    return target
