"""The suite as plain JSON, for test runners in any language, and back.

:func:`export_suite` writes one document (its JSON Schema is ``runner/schemas/export.json``;
``docs/export.md`` explains how to consume it): the suite's identity (version, digest,
edition, filters), the operation registry (input and output schemas, error categories, the
comparator each uses and its rule), the requirements index, and every selected case with its
expectation.  Where a comparator accepts more than one right answer, each expected output
carries a *hint*: the expected value in the normalised form the comparator compares
(:mod:`runner.comparators.hints`), so no case needs the Python reference to be judged.

:func:`suite_from_export` rebuilds a :class:`~runner.cases.Suite` from such a document (the
operation registry comes from the document too), which is how the suite checks that its export
judges implementations exactly as its YAML does.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from flux_conformance import runner
from flux_conformance.runner.cases import Case, Expected, Requirement, Suite
from flux_conformance.runner.comparators import DESCRIPTIONS, Oracle
from flux_conformance.runner.comparators.hints import HINTS
from flux_conformance.runner.editions import Editions, bundled, editions_from_json
from flux_conformance.runner.engine import Filters
from flux_conformance.runner.operations import OperationSpec

__all__ = ["FORMAT", "export_suite", "large_integers", "source_of", "suite_from_export"]

#: The export's format name; a change that breaks consumers gets a new number.
FORMAT = "flux-conformance-export/1"


def source_of(case: Case, suite: Suite) -> str:
    """Where a case is written, as a path from the repository (``cases/rfc22/x.yaml:6``).

    The bundled suite's files are named as the repository holds them, under ``cases/``, an
    installed copy's too; another suite's as a path from the folder holding it.
    """
    from flux_conformance.runner.cases import default_cases_dir

    root = suite.root.resolve()
    relative = case.file.resolve().relative_to(root).as_posix()
    folder = "cases" if root == default_cases_dir().resolve() else root.name
    return f"{folder}/{relative}:{case.line}"


def large_integers(value: Any) -> Iterator[int]:
    """Every integer in ``value`` (a JSON value) past 2**53, which a double cannot hold."""
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        if abs(value) > 2**53:
            yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from large_integers(item)
    elif isinstance(value, list):
        for item in value:
            yield from large_integers(item)


def _case(case: Case, op: OperationSpec, oracle: Oracle) -> dict[str, Any]:
    hint = HINTS.get(op.comparator_name)
    outcomes = []
    for expected in case.expected:
        item = expected.to_json()
        if expected.kind == "output" and hint is not None:
            if getattr(hint, "needs_input", False):
                item["hint"] = hint(expected.value, oracle, case.input)  # type: ignore[call-arg]
            else:
                item["hint"] = hint(expected.value, oracle)
        outcomes.append(item)
    return {
        "id": case.id,
        "operation": case.operation,
        "description": case.description,
        "level": case.level,
        "tags": list(case.tags),
        "edition": case.edition,
        "requirements": list(case.requirements),
        "input": case.input,
        "expected": outcomes,
    }


def export_suite(
    suite: Suite,
    cases: Sequence[Case],
    *,
    oracle: Callable[[str | None], Oracle],
    filters: Filters,
) -> dict[str, Any]:
    """The export document of ``cases`` (selected from ``suite`` by ``filters``)."""
    # One description per comparator, its own (an operation's comparator_doc says what the
    # comparator means for that operation; the map must not take whichever came last).
    used = {op.comparator_name for op in suite.operations.values()}
    comparators = {name: DESCRIPTIONS[name] for name in used}
    return {
        "format": FORMAT,
        "suite": {
            "name": "flux-conformance",
            "version": runner.__version__,
            "digest": suite.digest(),
            "edition": filters.edition,
            "filters": filters.to_json(),
            "exported": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "cases": len(cases),
        },
        "editions": {
            "default": suite.editions.default,
            "repository": suite.editions.repository,
            "editions": [e.to_json() for e in suite.editions.editions],
        },
        "comparators": dict(sorted(comparators.items())),
        "operations": {name: op.to_json() for name, op in suite.operations.items()},
        "requirements": {
            r.id: {"spec": r.spec, "keyword": r.keyword, "section": r.section, "text": r.text}
            for r in suite.requirements.values()
        },
        "cases": [
            {
                **_case(case, suite.operations[case.operation], oracle(case.edition)),
                "source": source_of(case, suite),
            }
            for case in cases
        ],
    }


def suite_from_export(doc: Mapping[str, Any], *, source: Path) -> Suite:
    """A :class:`Suite` rebuilt from an export document (``source`` names it in reports)."""
    operations = {name: OperationSpec.from_json(raw) for name, raw in doc["operations"].items()}
    requirements = {
        rid: Requirement(
            id=rid,
            spec=raw["spec"],
            keyword=raw["keyword"],
            section=raw["section"],
            text=raw["text"],
            untestable=None,
            file=source,
            line=0,
        )
        for rid, raw in doc["requirements"].items()
    }
    cases = tuple(
        Case(
            id=raw["id"],
            operation=raw["operation"],
            description=raw["description"],
            input=raw["input"],
            expected=tuple(
                Expected("output", o["output"]) if "output" in o else Expected("error", o["error"])
                for o in raw["expected"]
            ),
            level=raw["level"],
            requirements=tuple(raw["requirements"]),
            tags=tuple(raw["tags"]),
            edition=raw["edition"],
            file=source,
            line=index + 1,
        )
        for index, raw in enumerate(doc["cases"])
    )
    return Suite(source, cases, requirements, operations, _editions(doc))


def _editions(doc: Mapping[str, Any]) -> Editions:
    """The editions an export lists (an export written before it listed them: the bundled)."""
    raw = doc.get("editions")
    return bundled() if raw is None else editions_from_json(raw)
