"""Loading the suite: the requirements index, the editions and every case file, checked.

:func:`load_suite` reads a case folder (the files :mod:`runner.case_folder` lists), checks
everything (:mod:`runner.case_checks`) and returns the :class:`~runner.case_model.Suite`, or
raises one :class:`~runner.case_checks.SuiteError` listing every problem with file and line.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from flux_conformance.runner._cases_dir import default_cases_dir
from flux_conformance.runner._schemas import schema
from flux_conformance.runner._yaml import YamlError, load_document
from flux_conformance.runner.case_checks import (
    Named,
    Problem,
    SuiteError,
    case_problems,
    check_classes,
    edition_problems,
    schema_problems,
)
from flux_conformance.runner.case_folder import own_index, yaml_files
from flux_conformance.runner.case_model import (
    Case,
    Expected,
    InputClass,
    Requirement,
    Suite,
)
from flux_conformance.runner.editions import FILE_NAME as EDITIONS_FILE
from flux_conformance.runner.editions import EditionError, Editions, load_editions
from flux_conformance.runner.operations import OperationSpec, load_registry

__all__ = ["load_suite"]


def _load_requirements(
    root: Path,
    problems: list[Problem],
    commits: list[tuple[Path, int, str, dict[str, str]]],
) -> dict[str, Requirement]:
    """Every requirement under ``root/requirements``.

    Each file's cited commits (per edition) are appended to ``commits`` as (file, line, spec,
    commits), to be checked against the editions.
    """
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema("requirements.json"))
    found: dict[str, Requirement] = {}
    folder = root / "requirements"
    paths = yaml_files(folder, root, problems, recursive=False) if folder.is_dir() else []
    for path in paths:
        try:
            doc = load_document(path, required=("spec", "requirements"), what="requirements file")
        except YamlError as exc:
            problems.extend(Problem(path, p.line, p.message) for p in exc.problems)
            continue
        bad = list(schema_problems(validator, doc.data))
        if bad:
            problems.extend(Problem(path, doc.line_of(where), msg) for where, msg in bad)
            continue
        source = doc.data.get("source")
        if isinstance(source, dict) and "commits" in source:
            where = doc.line_of(["source", "commits"])
            commits.append((path, where, doc.data["spec"], source["commits"]))
        for index, item in enumerate(doc.data["requirements"]):
            line = doc.line_of(["requirements", index])
            if item["id"] in found:
                first = found[item["id"]]
                problems.append(
                    Problem(
                        path,
                        line,
                        f"duplicate requirement id {item['id']!r} "
                        f"(first at {first.file}:{first.line})",
                    )
                )
                continue
            found[item["id"]] = Requirement(
                id=item["id"],
                spec=doc.data["spec"],
                keyword=item["keyword"],
                section=item["section"],
                text=item["text"],
                untestable=item.get("untestable"),
                file=path,
                line=line,
                editions=tuple(item.get("editions", ())),
            )
    return found


def _expected(raw: Mapping[str, Any]) -> tuple[Expected, ...]:
    if "one_of" in raw:
        return tuple(
            Expected("output", o["output"]) if "output" in o else Expected("error", o["error"])
            for o in raw["one_of"]
        )
    if "output" in raw:
        return (Expected("output", raw["output"]),)
    return (Expected("error", raw["error"]),)


def _input_classes(path: Path, doc: Any, op_name: str) -> list[InputClass]:
    return [
        InputClass(
            id=raw["id"],
            operation=op_name,
            description=raw["description"],
            kinds=tuple(raw.get("kinds", ("valid", "invalid"))),
            why=raw.get("why"),
            file=path,
            line=doc.line_of(["classes", index]),
        )
        for index, raw in enumerate(doc.data.get("classes", ()))
    ]


def _load_case_file(
    path: Path,
    registry: Mapping[str, OperationSpec],
    requirements: Mapping[str, Requirement],
    problems: list[Problem],
    *,
    classes: list[InputClass],
    named: list[Named],
) -> list[Case]:
    try:
        doc = load_document(path, required=("operation", "cases"))
    except YamlError as exc:
        problems.extend(Problem(path, p.line, p.message) for p in exc.problems)
        return []
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema("case-file.json"))
    bad = list(schema_problems(validator, doc.data))
    if bad:
        problems.extend(Problem(path, doc.line_of(where), msg) for where, msg in bad)
        return []
    op_name = doc.data["operation"]
    op = registry.get(op_name)
    if op is None:
        known = ", ".join(registry) or "none"
        problems.append(
            Problem(
                path,
                doc.line_of(["operation"]),
                f"unknown operation {op_name!r} (known: {known})",
            )
        )
        return []
    classes.extend(_input_classes(path, doc, op_name))
    cases = []
    for index, raw in enumerate(doc.data["cases"]):

        def here(*sub: str | int, index: int = index) -> int:
            return doc.line_of(["cases", index, *sub])

        expected = _expected(raw)
        found = case_problems(path, raw, expected, op, requirements, here=here)
        if found:
            problems.extend(found)
            continue
        named.extend(
            Named(op_name, name, raw["id"], path, here("classes", n))
            for n, name in enumerate(raw.get("classes", ()))
        )
        cases.append(
            Case(
                id=raw["id"],
                operation=op_name,
                description=raw["description"],
                input=raw["input"],
                expected=expected,
                level=raw.get("level", "must"),
                requirements=tuple(raw["requirements"]),
                tags=tuple(raw.get("tags", ())),
                edition=raw.get("edition"),
                file=path,
                line=here(),
                classes=tuple(raw.get("classes", ())),
            )
        )
    return cases


def load_suite(root: Path | None = None, *, files: Iterable[Path] | None = None) -> Suite:
    """Load and check the suite under ``root`` (default: :func:`default_cases_dir`).

    ``files`` restricts loading to those case files (the requirements index is still read
    from ``root``).  Raises :class:`SuiteError` listing every problem found.
    """
    # Loading makes some hundred thousand small objects (YAML nodes, the data, the schema
    # checks' validators) that the cycle collector would otherwise walk through dozens of
    # times, for about a tenth of the loading time.  It is paused while they are made; objects
    # are still freed as usual, and any cycle left behind is collected once it runs again.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _load_suite(root, files)
    finally:
        if collecting:
            gc.enable()


def _load_suite(root: Path | None, files: Iterable[Path] | None) -> Suite:
    root = (root or default_cases_dir()).resolve()
    problems: list[Problem] = []
    if not root.is_dir():
        raise SuiteError([Problem(root, 1, "no such case directory")])
    registry = load_registry()
    # A case directory without its own requirements index (or editions) cites the bundled one.
    # Its own is never read through a link out of it, as its case files are not.
    real_root = os.path.realpath(root)
    bundled_dir = default_cases_dir().resolve()
    own_requirements = own_index(root / "requirements", real_root, problems)
    cited: list[tuple[Path, int, str, dict[str, str]]] = []
    requirements: dict[str, Requirement] = {}
    if own_requirements or not (root / "requirements").is_symlink():
        index = root if own_requirements and (root / "requirements").is_dir() else bundled_dir
        requirements = _load_requirements(index, problems, cited)
    editions: Editions | None = None
    own_editions = own_index(root / EDITIONS_FILE, real_root, problems)
    if own_editions or not (root / EDITIONS_FILE).is_symlink():
        listed = root if own_editions else bundled_dir
        try:
            editions = load_editions(listed / EDITIONS_FILE)
        except EditionError as exc:
            problems.append(Problem(listed / EDITIONS_FILE, exc.line, str(exc)))
    names = editions.names if editions else ()
    if editions is not None:
        problems.extend(edition_problems(editions, cited, requirements))
    cases: list[Case] = []
    seen: dict[str, Case] = {}
    declared: list[InputClass] = []
    named: list[Named] = []
    listed_files = files if files is not None else yaml_files(root, root, problems, recursive=True)
    for path in listed_files:
        for case in _load_case_file(
            path, registry, requirements, problems, classes=declared, named=named
        ):
            first = seen.get(case.id)
            if first is not None:
                problems.append(
                    Problem(
                        path,
                        case.line,
                        f"duplicate case id {case.id!r} (first at {first.location})",
                    )
                )
                continue
            seen[case.id] = case
            if editions and case.edition is not None and case.edition not in names:
                problems.append(
                    Problem(
                        path,
                        case.line,
                        f"edition {case.edition!r} is not one of {', '.join(names)} "
                        f"({EDITIONS_FILE}); cases name an edition by its own name",
                    )
                )
                continue
            stale = [
                rid
                for rid in case.requirements
                if case.edition is not None
                and rid in requirements
                and not requirements[rid].applies_in(case.edition)
            ]
            if stale:
                problems.append(
                    Problem(
                        path,
                        case.line,
                        f"a case of edition {case.edition} cites {', '.join(stale)}, which "
                        "that edition's text does not make",
                    )
                )
                continue
            cases.append(case)
    classes = check_classes(declared, named, problems)
    if problems or editions is None:
        raise SuiteError(problems)
    return Suite(
        root=root,
        cases=tuple(cases),
        requirements=requirements,
        operations=registry,
        editions=editions,
        classes=classes,
    )
