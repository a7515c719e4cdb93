"""Loading the suite: case files and the requirements index, checked before anything runs.

Every problem found is collected with its file and line, and all of them are reported at
once (:class:`SuiteError`), so an author fixes a file in one pass.  Checks: strict YAML
(see :mod:`runner._yaml`), the case-file schema, registered operation, input and expected
output valid for the operation, expected error categories registered for it, case ids
unique across the suite, requirement ids present in the index, and input classes (the
``classes:`` an operation's case file declares) unique and named only where declared.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from flux_conformance.runner._cases_dir import default_cases_dir
from flux_conformance.runner._schemas import schema
from flux_conformance.runner._yaml import YamlError, load_document
from flux_conformance.runner.bounds import cut
from flux_conformance.runner.editions import FILE_NAME as EDITIONS_FILE
from flux_conformance.runner.editions import EditionError, Editions, load_editions
from flux_conformance.runner.errors import ConformanceError
from flux_conformance.runner.operations import OperationSpec, load_registry

if TYPE_CHECKING:
    import jsonschema

__all__ = [
    "LEVELS",
    "Case",
    "Expected",
    "InputClass",
    "Problem",
    "Requirement",
    "Suite",
    "SuiteError",
    "default_cases_dir",
    "load_suite",
]

LEVELS = ("must", "should", "may", "clarification")


@dataclass(frozen=True)
class Problem:
    """Something wrong in a case or requirements file."""

    file: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


class SuiteError(ConformanceError):
    """The suite cannot run: ``problems`` lists every reason, with file and line."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(map(str, self.problems)))

    def lines(self) -> list[str]:
        """Every problem on its own line, then the verdict."""
        return [*map(str, self.problems), f"{len(self.problems)} problem(s): the suite cannot run"]


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


def _yaml_files(
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
                if recursive and current == root and entry.name in _INDEXES:
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
                    Problem(path, 1, "is not a regular file (a FIFO, device or socket): not read")
                )
                continue
            found.append(path)
    return iter(sorted(found))


#: The entries of a case folder's top level read on their own, not as case files.
_INDEXES = ("requirements", EDITIONS_FILE)


def _own_index(path: Path, real_root: str, problems: list[Problem]) -> bool:
    """Whether ``requirements/`` or the editions file at ``path`` is the case folder's own.

    It is, when it exists and is no link or a link to somewhere inside the case folder (as a
    case file's link must be).  A link out of the folder, or a dangling one, is a problem
    and nothing is read through it: the bundled index is not used in its place either.
    """
    if not path.is_symlink():
        return path.exists()
    try:
        target = os.path.realpath(path, strict=True)
    except OSError:
        problems.append(Problem(path, 1, "is a dangling or looping symbolic link: not read"))
        return False
    if os.path.commonpath([real_root, target]) != real_root:
        problems.append(Problem(path, 1, "is a symbolic link to outside the case folder: not read"))
        return False
    return True


def _link_target(path: Path, real_root: str, problems: list[Problem]) -> str | None:
    """Where the link ``path`` leads, when that is a regular file inside the case folder."""
    try:
        target = os.path.realpath(path, strict=True)
    except OSError:
        problems.append(Problem(path, 1, "is a dangling or looping symbolic link: not read"))
        return None
    if os.path.commonpath([real_root, target]) != real_root:
        problems.append(Problem(path, 1, "is a symbolic link to outside the case folder: not read"))
        return None
    if os.path.isdir(target):
        problems.append(
            Problem(path, 1, "is a symbolic link to a directory: not followed (list it instead)")
        )
        return None
    return target


def _schema_problems(
    validator: jsonschema.protocols.Validator, data: Any
) -> Iterator[tuple[list[str | int], str]]:
    for error in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.path))):
        path = list(error.absolute_path)
        if error.validator == "oneOf" and path and path[-2:-1] == ["cases"]:
            message = "a case needs exactly one of output, error or one_of"
        elif error.validator == "additionalProperties":
            message = f"unknown field: {error.message}"
        else:
            message = error.message
        message = cut(message, 300)  # jsonschema quotes the whole offending value
        where = ".".join(map(str, path))
        yield path, f"{where}: {message}" if where else message


def _load_requirements(
    root: Path, problems: list[Problem], commits: list[tuple[Path, int, str, dict[str, str]]]
) -> dict[str, Requirement]:
    """Every requirement under ``root/requirements``.

    Each file's cited commits (per edition) are appended to ``commits`` as (file, line, spec,
    commits), to be checked against the editions.
    """
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema("requirements.json"))
    found: dict[str, Requirement] = {}
    folder = root / "requirements"
    paths = _yaml_files(folder, root, problems, recursive=False) if folder.is_dir() else []
    for path in paths:
        try:
            doc = load_document(path, required=("spec", "requirements"), what="requirements file")
        except YamlError as exc:
            problems.extend(Problem(path, p.line, p.message) for p in exc.problems)
            continue
        bad = list(_schema_problems(validator, doc.data))
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
    named: list[_Named],
) -> list[Case]:
    try:
        doc = load_document(path, required=("operation", "cases"))
    except YamlError as exc:
        problems.extend(Problem(path, p.line, p.message) for p in exc.problems)
        return []
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema("case-file.json"))
    bad = list(_schema_problems(validator, doc.data))
    if bad:
        problems.extend(Problem(path, doc.line_of(where), msg) for where, msg in bad)
        return []
    op_name = doc.data["operation"]
    op = registry.get(op_name)
    if op is None:
        known = ", ".join(registry) or "none"
        problems.append(
            Problem(
                path, doc.line_of(["operation"]), f"unknown operation {op_name!r} (known: {known})"
            )
        )
        return []
    classes.extend(_input_classes(path, doc, op_name))
    cases = []
    for index, raw in enumerate(doc.data["cases"]):

        def here(*sub: str | int, index: int = index) -> int:
            return doc.line_of(["cases", index, *sub])

        before = len(problems)
        problems.extend(
            Problem(path, here("input"), f"input is not valid for {op_name}: {message}")
            for message in op.input_problems(raw["input"])
        )
        expected = _expected(raw)
        for n, outcome in enumerate(expected):
            sub: tuple[str | int, ...] = ("one_of", n) if "one_of" in raw else ()
            if outcome.kind == "error" and outcome.value not in op.errors:
                problems.append(
                    Problem(
                        path,
                        here(*sub, "error"),
                        f"error category {outcome.value!r} is not registered for {op_name} "
                        f"(registered: {', '.join(op.errors)})",
                    )
                )
            if outcome.kind == "output":
                problems.extend(
                    Problem(
                        path,
                        here(*sub, "output"),
                        f"expected output is not valid for {op_name}: {message}",
                    )
                    for message in op.expected_problems(outcome.value)
                )
        problems.extend(
            Problem(path, here("requirements", n), f"unknown requirement id {req!r}")
            for n, req in enumerate(raw["requirements"])
            if req not in requirements
        )
        if len(problems) > before:
            continue
        named.extend(
            _Named(op_name, name, raw["id"], path, here("classes", n))
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
    own_index = _own_index(root / "requirements", real_root, problems)
    cited: list[tuple[Path, int, str, dict[str, str]]] = []
    requirements: dict[str, Requirement] = {}
    if own_index or not (root / "requirements").is_symlink():
        index = root if own_index and (root / "requirements").is_dir() else bundled_dir
        requirements = _load_requirements(index, problems, cited)
    editions: Editions | None = None
    own_editions = _own_index(root / EDITIONS_FILE, real_root, problems)
    if own_editions or not (root / EDITIONS_FILE).is_symlink():
        listed = root if own_editions else bundled_dir
        try:
            editions = load_editions(listed / EDITIONS_FILE)
        except EditionError as exc:
            problems.append(Problem(listed / EDITIONS_FILE, exc.line, str(exc)))
    names = editions.names if editions else ()
    for file, line, spec, commits in cited if editions else ():
        for name, commit in commits.items():
            revision = (
                editions.named(name).revisions.get(spec)
                if editions is not None and name in names
                else None
            )
            if revision is None or revision.commit != commit:
                follows = f"follows {revision.commit}" if revision else "is no edition of it"
                problems.append(
                    Problem(file, line, f"{spec} at {commit} for edition {name!r}, which {follows}")
                )
    problems.extend(
        Problem(req.file, req.line, f"{req.id}: edition {name!r} is not one of {', '.join(names)}")
        for req in requirements.values()
        for name in req.editions
        if editions and name not in names
    )
    cases: list[Case] = []
    seen: dict[str, Case] = {}
    declared: list[InputClass] = []
    named: list[_Named] = []
    listed_files = files if files is not None else _yaml_files(root, root, problems, recursive=True)
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
    classes = _check_classes(declared, named, problems)
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


@dataclass(frozen=True)
class _Named:
    """A class named by a case, where it is named."""

    operation: str
    name: str
    case: str
    file: Path
    line: int


def _check_classes(
    declared: Sequence[InputClass], named: Sequence[_Named], problems: list[Problem]
) -> dict[str, tuple[InputClass, ...]]:
    """Classes per operation; a duplicate class, or a case naming an undeclared one, is a problem.

    Checked once every file is read, since a class may be declared in another file of the
    same operation.
    """
    by_op: dict[str, dict[str, InputClass]] = {}
    for item in declared:
        known = by_op.setdefault(item.operation, {})
        first = known.get(item.id)
        if first is not None:
            problems.append(
                Problem(
                    item.file,
                    item.line,
                    f"duplicate input class {item.id!r} for {item.operation} "
                    f"(first at {first.file}:{first.line})",
                )
            )
            continue
        known[item.id] = item
    for use in named:
        known = by_op.get(use.operation, {})
        if use.name not in known:
            hint = ", ".join(sorted(known)) or "none declared"
            problems.append(
                Problem(
                    use.file,
                    use.line,
                    f"case {use.case!r} names unknown input class {use.name!r} of "
                    f"{use.operation} (declared: {hint})",
                )
            )
    return {op: tuple(items.values()) for op, items in by_op.items()}
