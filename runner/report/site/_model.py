"""What the results site shows, worked out once: implementations, cells, verdicts, departures.

The pages (:mod:`.index`, :mod:`.implementation`, :mod:`.case`, :mod:`.spec`) and the badges
read this model only; none of them runs anything.  Every name in a URL comes from here:
:func:`slug` of an implementation's ``--impl`` name and :func:`case_file` of a case id, so a
link keeps working from one release of the suite to the next.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from flux_conformance.runner.adapters.base import Reply
from flux_conformance.runner.cases import Case, Requirement, Suite
from flux_conformance.runner.editions import EditionError
from flux_conformance.runner.engine import CaseResult, Summary
from flux_conformance.runner.report.comparison import CELLS, NOT_PASSED, Column, Matrix, cell_of
from flux_conformance.runner.report.site.history import History
from flux_conformance.runner.verdicts import judged, verdict_line

__all__ = ["Impl", "Site", "case_file", "slug"]

#: Cells that earn a case its own page: it departs, or a refusal was left unchecked.
NOTED = NOT_PASSED

_UNSAFE = re.compile(r"[^a-z0-9.-]")


def slug(name: str) -> str:
    """A file name for ``name``: lower case, ``-`` for anything but letters, digits and dots.

    A name that had to change gets a short hash of itself, so two names never share a slug
    (``exec:./a b`` and ``exec:./a-b`` differ), and the same name always gets the same one.
    """
    import hashlib

    plain = _UNSAFE.sub("-", name.lower()).strip("-.")[:60] or "x"
    if plain == name:
        return plain
    return f"{plain}-{hashlib.sha256(name.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"


def case_file(case_id: str) -> str:
    """The file name of a case's page: its id, with ``:`` and ``/`` (allowed in ids) escaped.

    ``_`` introduces an escape (``_3a`` for ``:``), so the mapping is one to one.
    """
    return re.sub(r"[^A-Za-z0-9.-]", lambda m: f"_{ord(m.group()):02x}", case_id) + ".html"


@dataclass(frozen=True)
class Impl:
    """One column of the comparison, with what its pages say about it."""

    index: int
    column: Column
    slug: str
    summary: Summary
    #: The verdict with its counts and scope (:func:`runner.verdicts.verdict_line`).
    verdict: str
    #: What the implementation is and how it got here (the adapter's own description).
    description: str

    @property
    def label(self) -> str:
        """Name and version."""
        return self.column.label

    @property
    def word(self) -> str:
        """The verdict's opening words (``conforms``, ``matches its baseline``, ...)."""
        return str(judged(self.summary.total))


@dataclass(frozen=True)
class Site:
    """Everything the site shows (see the module's docstring)."""

    matrix: Matrix
    suite: Suite
    edition: str
    #: When the comparison ran (ISO 8601, UTC) and the command that ran it.
    started: str
    command: str
    #: The whole suite's size in the edition: (operations, cases), the verdicts' denominators.
    suite_size: tuple[int, int]
    #: Per implementation spec, what it is (see :func:`runner.adapters.factory.description`).
    descriptions: Mapping[str, str] = field(default_factory=dict)
    #: Which permitted reading an answer takes (``reading 2: error `syntax```), for the
    #: clarification cases; None leaves the readings out.
    reading_of: Callable[[Case, Reply], str] | None = None
    histories: Sequence[History] = ()

    @cached_property
    def digest(self) -> str:
        """The suite's digest (:meth:`runner.cases.Suite.digest`), worked out once."""
        return self.suite.digest()

    @property
    def suite_version(self) -> str:
        """The suite's version."""
        from flux_conformance.runner import __version__

        return __version__

    @cached_property
    def impls(self) -> tuple[Impl, ...]:
        """The implementations, in column order."""
        out = []
        taken: set[str] = set()
        for index, column in enumerate(self.matrix.columns):
            summary = Summary(suite_operations=self.suite_size[0], suite_cases=self.suite_size[1])
            for result in column.results:
                summary.add(result)
            name = slug(column.spec)
            while name in taken:  # the same --impl twice
                name += "-2"
            taken.add(name)
            out.append(
                Impl(
                    index,
                    column,
                    name,
                    summary,
                    verdict_line(summary),
                    self.descriptions.get(column.spec, ""),
                )
            )
        return tuple(out)

    @cached_property
    def cells(self) -> list[list[str]]:
        """Per case (row), per implementation: the cell name."""
        per_column = [[cell_of(r) for r in c.results] for c in self.matrix.columns]
        return [list(row) for row in zip(*per_column, strict=True)] if per_column else []

    @cached_property
    def noted(self) -> list[int]:
        """The rows that get a page: some implementation departs on it or left it unchecked."""
        return [i for i, row in enumerate(self.cells) if NOTED.intersection(row)]

    @cached_property
    def noted_set(self) -> frozenset[str]:
        """The ids of the cases with a page."""
        return frozenset(self.matrix.cases[i].id for i in self.noted)

    def spec_of(self, case: Case) -> str:
        """The spec a case's operation belongs to (``RFC 22``)."""
        return self.matrix.spec_of[case.operation]

    @cached_property
    def specs(self) -> dict[str, list[int]]:
        """Per spec, in suite order, its rows."""
        out: dict[str, list[int]] = {}
        for index, case in enumerate(self.matrix.cases):
            out.setdefault(self.spec_of(case), []).append(index)
        return out

    @cached_property
    def spec_slugs(self) -> dict[str, str]:
        """Per spec, the slug of its page."""
        out: dict[str, str] = {}
        for spec in self.specs:
            name = re.sub(r"[^a-z0-9]+", "-", spec.lower()).strip("-") or "spec"
            while name in out.values():
                name += "-2"
            out[spec] = name
        return out

    def requirements_of(self, spec: str) -> list[Requirement]:
        """The spec's requirements that apply in the edition, in file order."""
        return [
            r
            for r in self.suite.requirements.values()
            if r.spec == spec and r.applies_in(self.edition)
        ]

    def revision(self, spec: str) -> str:
        """The spec's revision in the edition (``78cbf27 (2023-11-30)``), or ""."""
        try:
            found = self.suite.editions.named(self.edition).revisions.get(spec)
        except (EditionError, StopIteration):  # an edition the suite lacks: nothing to cite
            return ""
        return str(found) if found else ""

    def counts(self, impl: Impl, rows: Sequence[int]) -> Counter[str]:
        """Cell counts of ``impl`` over ``rows``."""
        return Counter(self.cells[i][impl.index] for i in rows)

    def outcome_counts(self, impl: Impl, rows: Sequence[int]) -> Counter[str]:
        """Outcome counts (the engine's names, which verdicts read) of ``impl`` over ``rows``."""
        results = impl.column.results
        return Counter(results[i].outcome.value for i in rows)

    def reading(self, impl: Impl, row: int) -> str:
        """The reading ``impl`` takes of an open point, worked out once per cell.

        Its cell instead when it was not asked, or when no ``reading_of`` was given.
        """
        key = (impl.index, row)
        found = self._readings.get(key)
        if found is None:
            reply = impl.column.results[row].reply
            if self.reading_of is None or reply is None:
                found = self.cells[row][impl.index]
            else:
                found = self.reading_of(self.matrix.cases[row], reply)
            self._readings[key] = found
        return found

    @cached_property
    def _readings(self) -> dict[tuple[int, int], str]:
        return {}

    def result(self, impl: Impl, row: int) -> CaseResult:
        """One cell's result."""
        return impl.column.results[row]

    def location(self, case: Case) -> str:
        """Where the case is written, relative to the case folder (``rfc22/x.yaml:12``)."""
        try:
            where = case.file.relative_to(self.suite.root).as_posix()
        except ValueError:
            where = case.file.name
        return f"{where}:{case.line}"

    def history_of(self, impl: Impl) -> History | None:
        """The release history recorded for an implementation, if one was given."""
        for history in self.histories:
            if history.implementation == impl.column.spec:
                return history
        return None


#: The order cells are counted and shown in.
ORDER = CELLS
