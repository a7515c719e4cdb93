"""Editions: which revision of each spec text a case follows.

The specs change (RFC 14 made ``max`` optional, RFC 20 gained ``nslots``...), and a case can
hold under one revision and not under the next.  ``editions.yaml`` at the top of a case folder
names each edition by a date, with the flux-framework/rfc commit of every RFC it follows; a
case that holds under one edition only says which, and a run follows one edition (the file's
``default``, the latest, unless ``--edition`` names another or one of its aliases).

A case folder without its own ``editions.yaml`` follows the bundled one.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flux_conformance.runner.errors import ConformanceError

__all__ = [
    "Edition",
    "EditionError",
    "Editions",
    "Revision",
    "bundled",
    "editions_from_json",
    "load_editions",
]

#: The file, at the top of a case folder, that lists its editions.
FILE_NAME = "editions.yaml"


class EditionError(ConformanceError):
    """An edition name that no edition has, or an ``editions.yaml`` that does not load.

    ``line`` is the line of the problem in the file.
    """

    def __init__(self, message: str, line: int = 1) -> None:
        super().__init__(message)
        self.line = line


@dataclass(frozen=True)
class Revision:
    """The text of one spec that an edition follows: a commit of the spec's repository."""

    commit: str
    date: str
    note: str | None = None

    def __str__(self) -> str:
        return f"{self.commit} ({self.date})" + (f", {self.note}" if self.note else "")


@dataclass(frozen=True)
class Edition:
    """One edition: its name, other names, what it is, and the revision of each spec."""

    name: str
    aliases: tuple[str, ...]
    summary: str
    revisions: Mapping[str, Revision]
    #: Names older versions gave this edition: they still select it, with a warning
    #: (:meth:`Editions.retired_name`), and no list or message shows them.
    retired: tuple[str, ...] = ()

    @property
    def newest_revision(self) -> str:
        """The newest spec text this edition follows, e.g. ``RFC 20 at cfd3836 (2026-08-03)``."""
        spec, revision = max(self.revisions.items(), key=lambda item: item[1].date)
        return f"{spec} at {revision.commit} ({revision.date})"

    def to_json(self) -> dict[str, Any]:
        """The edition as the export and ``list --editions --json`` write it."""
        return {
            "name": self.name,
            "aliases": list(self.aliases),
            "summary": self.summary,
            "revisions": {
                spec: {"commit": r.commit, "date": r.date, **({"note": r.note} if r.note else {})}
                for spec, r in self.revisions.items()
            },
        }


@dataclass(frozen=True)
class Editions:
    """Every edition a case folder knows, and the one a run follows by default."""

    default: str
    repository: str
    editions: tuple[Edition, ...]

    @property
    def names(self) -> tuple[str, ...]:
        """The editions' own names (not their aliases), oldest first."""
        return tuple(e.name for e in self.editions)

    def named(self, name: str) -> Edition:
        """The edition called ``name`` (its own name or an alias)."""
        return next(e for e in self.editions if e.name == self.resolve(name))

    def resolve(self, name: str | None) -> str:
        """The own name of the edition ``name`` stands for (None: the default).

        Raises :class:`EditionError` for a name no edition has.
        """
        if name is None:
            return self.default
        for edition in self.editions:
            if name == edition.name or name in edition.aliases or name in edition.retired:
                return edition.name
        known = ", ".join(
            f"{e.name}" + (f" ({', '.join(e.aliases)})" if e.aliases else "") for e in self.editions
        )
        shown = [n for e in self.editions for n in (e.name, *e.aliases)]
        close = difflib.get_close_matches(name, shown, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise EditionError(f"unknown edition {name!r}; the editions are {known}{hint}")

    def retired_name(self, name: str | None) -> str | None:
        """The warning for ``name`` when it is a retired name of an edition (else None).

        The warning names the edition by its date and its newest spec revision, never by
        another retired name.
        """
        for edition in self.editions:
            if name is not None and name in edition.retired:
                return (
                    f"the edition name {name!r} is retired: it stands for edition "
                    f"{edition.name}, whose newest spec text is {edition.newest_revision}; "
                    f"use --edition {edition.name}"
                )
        return None


def load_editions(path: Path) -> Editions:
    """Read and check an ``editions.yaml``; raises :class:`EditionError` with the line."""
    import jsonschema

    from flux_conformance.runner._schemas import schema
    from flux_conformance.runner._yaml import YamlError, load_document

    try:
        doc = load_document(path)
    except YamlError as exc:
        first = exc.problems[0] if exc.problems else None
        raise EditionError(
            first.message if first else str(exc), first.line if first else 1
        ) from None
    validator = jsonschema.Draft202012Validator(schema("editions.json"))
    for error in validator.iter_errors(doc.data):
        where = list(error.absolute_path)
        raise EditionError(error.message, doc.line_of(where))
    loaded = editions_from_json(doc.data)
    names = list(loaded.names) + [a for e in loaded.editions for a in (*e.aliases, *e.retired)]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise EditionError(f"an edition name or alias is given twice: {twice}")
    if loaded.default not in loaded.names:
        raise EditionError(f"the default {loaded.default!r} is no edition's name")
    return loaded


def editions_from_json(data: Mapping[str, Any]) -> Editions:
    """:class:`Editions` from their JSON form (an ``editions.yaml``, or an export's key)."""
    return Editions(
        default=data["default"],
        repository=data["repository"],
        editions=tuple(
            Edition(
                name=item["name"],
                aliases=tuple(item.get("aliases", ())),
                retired=tuple(item.get("retired", ())),
                summary=" ".join(item["summary"].split()),
                revisions={
                    spec: Revision(r["commit"], r["date"], r.get("note"))
                    for spec, r in item["revisions"].items()
                },
            )
            for item in data["editions"]
        ),
    )


@functools.cache
def bundled() -> Editions:
    """The editions of the bundled case folder."""
    from flux_conformance.runner._cases_dir import default_cases_dir

    return load_editions(default_cases_dir() / FILE_NAME)
