"""The case model: what a loaded suite holds (cases, requirements, input classes, the suite).

Value objects only, frozen; :mod:`runner.case_loading` makes them from the files, after
:mod:`runner.case_checks` has found nothing wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from flux_conformance.runner.editions import Editions
    from flux_conformance.runner.operations import OperationSpec

__all__ = ["LEVELS", "Case", "Expected", "InputClass", "Requirement", "Suite"]

LEVELS = ("must", "should", "may", "clarification")


@dataclass(frozen=True)
class Expected:
    """One permitted outcome: an output value, or an error category."""

    kind: Literal["output", "error"]
    value: Any

    def to_json(self) -> dict[str, Any]:
        """The outcome as written in a case file."""
        return {self.kind: self.value}


@dataclass(frozen=True)
class Case:
    """One case of the suite."""

    id: str
    operation: str
    description: str
    input: Any
    expected: tuple[Expected, ...]
    level: str
    requirements: tuple[str, ...]
    tags: tuple[str, ...]
    edition: str | None
    file: Path
    line: int
    #: The input classes of its operation that the case exercises (see :class:`InputClass`).
    classes: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        """``valid`` when some output is permitted, ``invalid`` when only errors are.

        A ``one_of`` that permits an output and a refusal is valid: the input is valid, even if
        the text lets an implementation refuse it.
        """
        return "valid" if any(e.kind == "output" for e in self.expected) else "invalid"

    @property
    def location(self) -> str:
        """``file:line`` of the case, for reports."""
        return f"{self.file}:{self.line}"

    def expected_json(self) -> Any:
        """The expectation as written: ``output``, ``error`` or ``one_of`` and its value."""
        if len(self.expected) == 1:
            return self.expected[0].to_json()
        return {"one_of": [e.to_json() for e in self.expected]}


@dataclass(frozen=True)
class Requirement:
    """One normative statement of a spec, paraphrased."""

    id: str
    spec: str
    keyword: str
    section: str
    text: str
    untestable: str | None
    file: Path
    line: int
    #: The editions whose text makes the statement (empty: every edition).
    editions: tuple[str, ...] = ()

    def applies_in(self, edition: str) -> bool:
        """Whether the statement is part of ``edition``'s text."""
        return not self.editions or edition in self.editions


@dataclass(frozen=True)
class InputClass:
    """A class of input that the specs tell apart for one operation.

    Declared in the operation's case file under ``classes:``.  ``kinds`` holds the outcomes
    the class must have cases for: ``valid`` (an output) and ``invalid`` (an error), both
    unless ``why`` says why one cannot exist.
    """

    id: str
    operation: str
    description: str
    kinds: tuple[str, ...]
    why: str | None
    file: Path
    line: int


@dataclass(frozen=True)
class Suite:
    """Every case and requirement, checked."""

    root: Path
    cases: tuple[Case, ...]
    requirements: Mapping[str, Requirement]
    operations: Mapping[str, OperationSpec]
    #: The editions of the spec texts the cases follow (``editions.yaml``).
    editions: Editions
    #: Per operation, the input classes its case files declare, in file order.
    classes: Mapping[str, tuple[InputClass, ...]] = field(default_factory=dict)

    def by_id(self) -> dict[str, Case]:
        """The cases keyed by id."""
        return {c.id: c for c in self.cases}

    def rule(self, case: Case) -> str:
        """The requirement ``case`` cites first, as ``spec, section: text (id)`` (paraphrased)."""
        req = self.requirements.get(case.requirements[0]) if case.requirements else None
        return f"{req.spec}, {req.section}: {req.text} ({req.id})" if req else ""

    def digest(self) -> str:
        """A SHA-256 of what the cases assert, whatever their files look like.

        Ids, operations, inputs, expectations, levels and editions are hashed; file layout,
        comments and descriptions are not, so two suites with the same digest judge every
        implementation alike.
        """
        import hashlib
        import json

        hasher = hashlib.sha256()
        for case in sorted(self.cases, key=lambda c: c.id):
            record = [
                case.id,
                case.operation,
                case.level,
                case.edition,
                case.input,
                case.expected_json(),
            ]
            hasher.update(json.dumps(record, sort_keys=True, ensure_ascii=True).encode())
            hasher.update(b"\n")
        return hasher.hexdigest()
