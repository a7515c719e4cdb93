"""RFC 31 job constraints: validation, and matching against the execution targets of an R.

A constraint is a JSON object with one operator key whose value is an array (RFC 31,
"Representation").  The reference first *compiles* the whole object, checking every node, and
only then evaluates it, so whether a constraint is accepted never depends on the R it is
matched against (a wrong hostlist deep inside an ``or`` branch is an error even when an
earlier branch already matches everything).

Readings taken where RFC 31 leaves room (see ``notes/readings.md``):

* ``{}`` matches every target; any other object has exactly one key, a known operator.
* ``properties``: an array of property names, all required; ``^name`` means the target must
  not have ``name``.  A name (after one ``^``) must be a valid RFC 20 property name, so
  ``^``, ``^^x``, ``a&b`` and ``""`` are invalid.  A host name is not a property.
* ``hostlist``: an array of RFC 29 hostlists, ``ranks``: an array of RFC 22 idsets; a target
  matches if any of them names it.
* ``and`` / ``or``: arrays of constraint objects; ``not``: the negation of the AND of its
  values (RFC 31 describes a single value; several draw a warning).
* Empty arrays: ``and``, ``or`` and ``properties`` match everything; ``not``, ``hostlist`` and
  ``ranks`` match nothing.

Evaluation is over sets of ranks (interval lists), never over targets one by one: a
``properties`` term is an intersection of per-property rank sets, ``or`` a union, and so on.

Limits (``limit``): nesting deeper than :data:`MAX_DEPTH` operators; hostlists that together
expand to more than 4,000,000 hosts; ids above 2**64-1.  Neither the compiler nor the evaluator
recurses in Python, so depth costs no stack.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from flux_conformance.reference import hostlist
from flux_conformance.reference._limits import MAX_EXPANSION
from flux_conformance.reference.errors import FormatError, InvalidError, LimitError, format_path
from flux_conformance.reference.idset import IdSet
from flux_conformance.reference.rset import ResourceSet, load, property_name_problem

__all__ = [
    "MAX_DEPTH",
    "OPERATIONS",
    "OPERATORS",
    "Constraint",
    "compile_constraint",
    "evaluate",
    "match",
    "validate_constraint",
]

#: The operators RFC 31 ("Representation") requires every implementation to support.
OPERATORS = ("properties", "hostlist", "ranks", "and", "or", "not")

#: Deepest nesting of operators accepted (the reference's own limit; RFC 31 sets none).
MAX_DEPTH = 1000

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Everything:
    """``{}``: every target."""


@dataclass(frozen=True)
class Properties:
    """``properties``: targets with every ``required`` name and none of ``forbidden``."""

    required: tuple[str, ...]
    forbidden: tuple[str, ...]


@dataclass(frozen=True)
class Hosts:
    """``hostlist``: targets whose host name is one the hostlists denote.

    The hostlists are kept parsed, not expanded: ``node[0-3999999]`` is tested against the
    host names of an R, not turned into four million names.
    """

    expressions: tuple[hostlist.Expression, ...]

    def ranks(self, targets: ResourceSet) -> IdSet:
        """The ranks of ``targets`` whose host name the hostlists denote."""
        # An expression of no more hosts than the R has is expanded and looked up; a larger
        # one is tested against each host name of the R: the work follows the smaller.
        # (Names kept in the order written, so that the look-ups do not follow string hashing.)
        names: dict[str, None] = {}
        tested: list[tuple[hostlist.Expression, IdSet]] = []
        for expression in self.expressions:
            if expression.ranges is None or expression.size <= len(targets):
                names.update(dict.fromkeys(expression.hosts()))
            else:
                tested.append((expression, IdSet.from_intervals(expression.ranges)))
        found = targets.ranks_of_hosts(names)
        if not tested:
            return found
        named = [
            rank
            for rank, host in zip(targets.iter_rank_ids(), targets.hostnames, strict=True)
            if any(expression.id_of(host) in ids for expression, ids in tested)
        ]
        return found | IdSet.from_ids(named)


@dataclass(frozen=True)
class Ranks:
    """``ranks``: targets whose rank is in ``ids``."""

    ids: IdSet


@dataclass(frozen=True)
class Logical:
    """``and`` / ``or`` / ``not`` over ``children`` (``not`` negates their AND)."""

    operator: str
    children: tuple[Constraint, ...]


Constraint = Everything | Properties | Hosts | Ranks | Logical


def _fail(reason: str, path: Path) -> InvalidError:
    return InvalidError(reason, path=path)


def _values(obj: dict[str, Any], op: str, path: Path) -> list[Any]:
    values = obj[op]
    if not isinstance(values, list):
        raise _fail(f"the value of {op!r} must be an array", (*path, op))
    return values


def _strings(values: list[Any], op: str, path: Path) -> list[str]:
    for i, value in enumerate(values):
        if not isinstance(value, str):
            raise _fail(f"{op} values must be strings", (*path, op, i))
    return values


def _leaf(
    obj: dict[str, Any], op: str, path: Path, warnings: list[str], budget: list[int]
) -> Constraint:
    values = _strings(_values(obj, op, path), op, path)
    where = format_path((*path, op))
    if op == "properties":
        required: list[str] = []
        forbidden: list[str] = []
        for i, value in enumerate(values):
            negated = value.startswith("^")
            name = value[1:] if negated else value
            problem = property_name_problem(name)
            if problem:
                raise _fail(problem, (*path, op, i))
            (forbidden if negated else required).append(name)
        if not values:
            warnings.append(f"{where}: an empty properties list matches every target")
        return Properties(tuple(required), tuple(forbidden))
    if not values:
        warnings.append(f"{where}: an empty {op} list matches no target")
    if op == "hostlist":
        parsed: list[hostlist.Expression] = []
        for i, value in enumerate(values):
            try:
                found = hostlist.parse(value, limit=budget[0])
            except LimitError as exc:
                raise exc.with_path((*path, op, i)) from None
            except FormatError as exc:
                raise _fail(f"not a valid RFC 29 hostlist: {exc.reason}", (*path, op, i)) from None
            # One budget of hosts for every hostlist of the constraint together, as if expanded.
            budget[0] -= sum(expression.size for expression in found)
            parsed.extend(found)
        return Hosts(tuple(parsed))
    ids = IdSet()
    for i, value in enumerate(values):
        try:
            ids = ids | IdSet.decode(value)
        except LimitError as exc:
            raise exc.with_path((*path, op, i)) from None
        except FormatError as exc:
            raise _fail(f"not a valid RFC 22 idset: {exc.reason}", (*path, op, i)) from None
    return Ranks(ids)


def compile_constraint(obj: Any) -> tuple[Constraint, list[str]]:
    """Check an RFC 31 object in full; return its compiled form and any warnings.

    Raises :class:`InvalidError` for an object RFC 31 does not allow and
    :class:`LimitError` for nesting deeper than :data:`MAX_DEPTH`.
    """
    warnings: list[str] = []
    budget = [MAX_EXPANSION]
    done: list[Constraint] = []
    # Post-order walk with an explicit stack: ("visit", obj, path, depth) checks one object
    # and schedules its children; ("build", op, count) gathers the children's results.
    work: list[tuple[Any, ...]] = [("visit", obj, (), 0)]
    while work:
        task = work.pop()
        if task[0] == "build":
            _, op, count = task
            children = tuple(done[len(done) - count :]) if count else ()
            del done[len(done) - count :]
            done.append(Logical(op, children))
            continue
        _, node, path, depth = task
        if depth > MAX_DEPTH:
            raise LimitError(f"constraint nested deeper than {MAX_DEPTH} levels", path=path)
        if not isinstance(node, dict):
            raise _fail("a constraint must be a JSON object", path)
        if not node:
            done.append(Everything())
            continue
        if len(node) != 1:
            raise _fail(f"a constraint has exactly one operator, not {len(node)}", path)
        (op,) = node
        if op not in OPERATORS:
            raise _fail(f"unknown constraint operator {op!r}", path)
        if op in ("and", "or", "not"):
            values = _values(node, op, path)
            if op == "not" and len(values) > 1:
                warnings.append(f"{format_path((*path, op))}: several values; negating their AND")
            work.append(("build", op, len(values)))
            work.extend(
                ("visit", values[i], (*path, op, i), depth + 1)
                for i in range(len(values) - 1, -1, -1)
            )
            continue
        done.append(_leaf(node, op, path, warnings, budget))
    return done[0], warnings


def validate_constraint(obj: Any) -> list[str]:
    """Validate an RFC 31 constraint object; return warnings (raise a FormatError if invalid).

    This is the check jobspec validation applies to ``attributes.system.constraints``.
    """
    return compile_constraint(obj)[1]


def evaluate(constraint: Constraint, targets: ResourceSet) -> IdSet:
    """Return the ranks of ``targets`` that satisfy a compiled ``constraint``.

    This is the library entry point for a caller that holds an R already decoded (a
    scheduler matching many jobs against its resources); :func:`match` takes documents.
    """
    if not targets.small:
        return _evaluate(constraint, targets, _IntervalAlgebra(targets.ranks))
    # Ranks of one cluster: every term as an int bitset, so and/or/not are single C ops
    # however scattered the properties are.  Each property is converted once.
    return IdSet.from_bits(_evaluate(constraint, targets, _BitAlgebra(targets.rank_bits())))


T = TypeVar("T")


class _IntervalAlgebra:
    """Sets of ranks as :class:`IdSet` interval lists (any ids); all are subsets of the R's."""

    def __init__(self, everything: IdSet) -> None:
        self.everything = everything

    def ids(self, ids: IdSet) -> IdSet:
        return ids

    def property(self, targets: ResourceSet, name: str) -> IdSet:
        return targets.property(name)

    def union(self, a: IdSet, b: IdSet) -> IdSet:
        return a | b

    def intersection(self, a: IdSet, b: IdSet) -> IdSet:
        return a & b

    def difference(self, a: IdSet, b: IdSet) -> IdSet:
        return a - b

    def all(self) -> IdSet:
        return self.everything


class _BitAlgebra:
    """Sets of ranks as int bitsets (for an R whose ranks are :attr:`ResourceSet.small`)."""

    def __init__(self, bits: int) -> None:
        self.bits = bits
        self.converted: dict[int, tuple[IdSet, int]] = {}

    def ids(self, ids: IdSet) -> int:
        # Property sets repeat across terms: convert each one once.  The entry keeps the set
        # alive, so its id() cannot be reused by another set during the evaluation.
        key = id(ids)
        if key not in self.converted:
            self.converted[key] = (ids, ids.to_bits())
        return self.converted[key][1]

    def property(self, targets: ResourceSet, name: str) -> int:
        # The R keeps each property's bitset: a scheduler matching job after job against
        # the R it holds converts each property once, not once per match.
        return targets.property_bits(name)

    def union(self, a: int, b: int) -> int:
        return a | b

    def intersection(self, a: int, b: int) -> int:
        return a & b

    def difference(self, a: int, b: int) -> int:
        return a & ~b

    def all(self) -> int:
        return self.bits


class _Algebra(Protocol[T]):
    """What evaluation needs of a representation of sets of ranks."""

    def ids(self, ids: IdSet) -> T: ...
    def property(self, targets: ResourceSet, name: str) -> T: ...
    def union(self, a: T, b: T) -> T: ...
    def intersection(self, a: T, b: T) -> T: ...
    def difference(self, a: T, b: T) -> T: ...
    def all(self) -> T: ...


def _evaluate(constraint: Constraint, targets: ResourceSet, algebra: _Algebra[T]) -> T:
    """Return the ranks of ``targets`` that satisfy ``constraint`` (iteratively)."""
    results: list[T] = []
    work: list[tuple[bool, Constraint]] = [(False, constraint)]
    while work:
        built, node = work.pop()
        if isinstance(node, Logical):
            if not built:
                work.append((True, node))
                work.extend((False, child) for child in reversed(node.children))
                continue
            count = len(node.children)
            parts = results[len(results) - count :] if count else []
            del results[len(results) - count :]
            results.append(_logical(node.operator, parts, algebra))
        elif isinstance(node, Everything):
            results.append(algebra.all())
        elif isinstance(node, Properties):
            found = algebra.all()
            for name in node.required:
                found = algebra.intersection(found, algebra.property(targets, name))
            for name in node.forbidden:
                found = algebra.difference(found, algebra.property(targets, name))
            results.append(found)
        elif isinstance(node, Hosts):
            results.append(algebra.ids(node.ranks(targets)))
        else:
            # The one term that may name ranks the R lacks (up to 2**64 - 1).
            results.append(algebra.ids(node.ids & targets.ranks))
    return results[0]


def _logical(op: str, parts: Iterable[T], algebra: _Algebra[T]) -> T:
    if op == "or":
        found: T | None = None
        for part in parts:
            found = part if found is None else algebra.union(found, part)
        # An empty ``or`` matches everything (RFC 31).
        return algebra.all() if found is None else found
    every = algebra.all()
    for part in parts:
        every = algebra.intersection(every, part)
    return every if op == "and" else algebra.difference(algebra.all(), every)


def match(constraint: Any, r_document: Any, *, edition: str | None = None) -> list[int]:
    """Return the ranks of ``r_document`` that satisfy ``constraint``, ascending.

    Both are validated in full before anything is evaluated; ``edition`` is the edition of
    RFC 20 the R is read by (None: the latest).
    """
    compiled, _warnings = compile_constraint(constraint)
    targets, _ = load(r_document, edition=edition)
    return evaluate(compiled, targets).to_list()


def _op_validate(value: Any, *, edition: str) -> dict[str, Any]:
    del edition
    return {"warnings": validate_constraint(value)}


def _op_match(value: Any, *, edition: str) -> list[int]:
    if not isinstance(value, dict):
        raise InvalidError("the input must be an object with constraint and R")
    for key in ("constraint", "R"):
        if key not in value:
            raise InvalidError(f"the input needs {key}")
    for key in value:
        if key not in ("constraint", "R"):
            raise InvalidError(f"unknown key {key!r}")
    try:
        compiled, _ = compile_constraint(value["constraint"])
    except FormatError as exc:
        raise exc.with_path(("constraint",)) from None
    try:
        targets, _ = load(value["R"], edition=edition)
    except FormatError as exc:
        raise exc.with_path(("R",)) from None
    return evaluate(compiled, targets).to_list()


OPERATIONS: dict[str, Callable[..., Any]] = {
    "constraint.validate": _op_validate,
    "constraint.match": _op_match,
}
