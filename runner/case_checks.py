"""Checking case and requirements files: every problem, with its file and line, at once.

Loading (:mod:`runner.case_loading`) collects a :class:`Problem` for each thing wrong and
raises one :class:`SuiteError` with all of them, so an author fixes a file in one pass.  The
checks: the file schemas (:func:`schema_problems`), each case's input, expected outputs and
error categories against its operation, the requirement ids it cites (:func:`case_problems`),
the editions cases and requirements name (:func:`edition_problems`), and the input classes
(:func:`check_classes`).  Line numbers come from the strict YAML reader
(:func:`runner._yaml.load_document`, ``doc.line_of(path)``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flux_conformance.runner.bounds import cut
from flux_conformance.runner.case_model import Expected, InputClass, Requirement
from flux_conformance.runner.errors import ConformanceError

if TYPE_CHECKING:
    import jsonschema

    from flux_conformance.runner.editions import Editions
    from flux_conformance.runner.operations import OperationSpec

__all__ = [
    "Named",
    "Problem",
    "SuiteError",
    "case_problems",
    "check_classes",
    "edition_problems",
    "schema_problems",
]


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
        return [
            *map(str, self.problems),
            f"{len(self.problems)} problem(s): the suite cannot run",
        ]


def schema_problems(
    validator: jsonschema.protocols.Validator, data: Any
) -> Iterator[tuple[list[str | int], str]]:
    """(path of keys, message) of each way ``data`` breaks a file schema, in key order.

    The messages are cut short (jsonschema quotes the whole offending value) and put in
    words an author reads: "unknown field", "a case needs exactly one of ...".
    """
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


def case_problems(
    path: Path,
    raw: Mapping[str, Any],
    expected: Sequence[Expected],
    op: OperationSpec,
    requirements: Mapping[str, Requirement],
    *,
    here: Callable[..., int],
) -> list[Problem]:
    """What is wrong with one case (``raw``, as its file gives it) of the operation ``op``.

    Its input must be valid for the operation, every expected output valid and every
    expected error category registered for it, and every requirement it cites in the index.
    ``here(*keys)`` is the line of a key of the case.
    """
    problems = [
        Problem(path, here("input"), f"input is not valid for {op.name}: {message}")
        for message in op.input_problems(raw["input"])
    ]
    for n, outcome in enumerate(expected):
        sub: tuple[str | int, ...] = ("one_of", n) if "one_of" in raw else ()
        if outcome.kind == "error" and outcome.value not in op.errors:
            problems.append(
                Problem(
                    path,
                    here(*sub, "error"),
                    f"error category {outcome.value!r} is not registered for {op.name} "
                    f"(registered: {', '.join(op.errors)})",
                )
            )
        if outcome.kind == "output":
            problems.extend(
                Problem(
                    path,
                    here(*sub, "output"),
                    f"expected output is not valid for {op.name}: {message}",
                )
                for message in op.expected_problems(outcome.value)
            )
    problems.extend(
        Problem(path, here("requirements", n), f"unknown requirement id {req!r}")
        for n, req in enumerate(raw["requirements"])
        if req not in requirements
    )
    return problems


def edition_problems(
    editions: Editions,
    cited: Sequence[tuple[Path, int, str, Mapping[str, str]]],
    requirements: Mapping[str, Requirement],
) -> Iterator[Problem]:
    """Commits a requirements file cites that are not its editions', and unknown editions.

    ``cited`` holds, per requirements file, (file, line, spec, {edition: commit}): each commit
    must be the one the edition follows for that spec.  A requirement may name only editions
    the suite has.
    """
    names = editions.names
    for file, line, spec, commits in cited:
        for name, commit in commits.items():
            revision = editions.named(name).revisions.get(spec) if name in names else None
            if revision is None or revision.commit != commit:
                follows = f"follows {revision.commit}" if revision else "is no edition of it"
                yield Problem(
                    file,
                    line,
                    f"{spec} at {commit} for edition {name!r}, which {follows}",
                )
    for req in requirements.values():
        for name in req.editions:
            if name not in names:
                yield Problem(
                    req.file,
                    req.line,
                    f"{req.id}: edition {name!r} is not one of {', '.join(names)}",
                )


@dataclass(frozen=True)
class Named:
    """A class named by a case, where it is named."""

    operation: str
    name: str
    case: str
    file: Path
    line: int


def check_classes(
    declared: Sequence[InputClass], named: Sequence[Named], problems: list[Problem]
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
