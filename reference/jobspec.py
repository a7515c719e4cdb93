"""RFC 14 canonical jobspec: validation, and building a jobspec from an RFC 46 shape.

:func:`validate_jobspec` checks a jobspec (already decoded from JSON or YAML) against the text
of RFC 14, not against the upstream ``schema.json``, which disagrees with the text in places
(see ``shared/notes/readings.md``, "RFC 14 jobspec validation"):

* the text lists what a resource vertex, a task and the ``attributes`` dictionary may hold but
  forbids nothing else, so a key it does not define is a *warning*, not an error (the schema
  refuses it); an unknown ``attributes.system`` key is a warning as RFC 14 itself requires;
* rules the schema cannot express are enforced: ``with`` and ``tasks`` are non-empty, a slot
  has ``with``, labels are unique, a task's ``slot`` names a slot's label, a
  ``per_resource.type`` is declared inside that slot, and counts follow every rule of RFC 14
  and RFC 45 (through :mod:`reference.ranges`, which also implements both editions of the
  range-dictionary rule);
* a count string that is both an idset and a range (``5``, ``3-30``) is accepted;
* ``attributes.system.dependencies`` follows the RFC 26 text and
  ``attributes.system.constraints`` must be a valid RFC 31 object (checked by
  :mod:`reference.constraint`).

Validation stops at the first error: an :class:`~reference.errors.InvalidError` (category
``invalid``) whose message starts with the JSON path of the offending value
(``resources[0].with[1].count: ...``), or a :class:`~reference.errors.LimitError` (``limit``)
for a resource graph nested deeper than :data:`MAX_DEPTH`.  A valid jobspec gives the list of
warnings, each also prefixed with its path.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from flux_conformance.reference._limits import MAX_ID
from flux_conformance.reference.editions import DEFAULT_EDITION
from flux_conformance.reference.errors import FormatError, InvalidError, LimitError, format_path

__all__ = [
    "MAX_DEPTH",
    "OPERATIONS",
    "jobspec_from_shape",
    "validate_jobspec",
]

#: Deepest resource graph (levels of ``with``) the validator follows before refusing.
MAX_DEPTH = 128

Path = tuple[str | int, ...]


@dataclass
class _Context:
    """What validation has learned so far, and the warnings it has collected."""

    edition: str
    warnings: list[str] = field(default_factory=list)
    # label -> path of the vertex that declared it
    labels: dict[str, Path] = field(default_factory=dict)
    # slot label -> resource types declared below that slot
    slot_types: dict[str, set[str]] = field(default_factory=dict)

    def warn(self, path: Path, message: str) -> None:
        self.warnings.append(f"{format_path(path)}: {message}")


def _fail(path: Path, reason: str) -> InvalidError:
    return InvalidError(reason, path=path)


def _type_name(value: Any) -> str:
    """The JSON name of a value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


# -- value checks ----------------------------------------------------------------------------


def _object(value: Any, path: Path, what: str = "an object") -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(path, f"must be {what}, not {_type_name(value)}")
    return value


def _string(value: Any, path: Path) -> str:
    if not isinstance(value, str):
        raise _fail(path, f"must be a string, not {_type_name(value)}")
    return value


def _positive_int(value: Any, path: Path) -> int:
    # bool is an int subclass in Python, and 4.0 is a float: neither is a JSON integer.
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(path, f"must be a positive integer, not {_type_name(value)}")
    if value < 1:
        raise _fail(path, f"must be a positive integer, not {value}")
    if value > MAX_ID:
        # The bound every count of the reference has (a resource count of 2**64 is limit too).
        raise LimitError(f"{value} exceeds the limit {MAX_ID}", path=path)
    return value


def _non_negative_number(value: Any, path: Path) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _fail(path, f"must be a number, not {_type_name(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise _fail(path, "must be a finite number")
    if value < 0:
        raise _fail(path, "must be greater than or equal to zero")


def _string_list(value: Any, path: Path, *, non_empty: bool) -> None:
    if not isinstance(value, list):
        raise _fail(path, f"must be an array of strings, not {_type_name(value)}")
    if non_empty and not value:
        raise _fail(path, "must not be empty")
    for index, item in enumerate(value):
        _string(item, (*path, index))


def _environment(value: Any, path: Path) -> None:
    """RFC 14 ``environment``: variable name -> string value, or null to unset it."""
    for name, setting in _object(value, path).items():
        if setting is not None and not isinstance(setting, str):
            raise _fail((*path, name), f"must be a string or null, not {_type_name(setting)}")


def _count(value: Any, path: Path, ctx: _Context) -> None:
    """A resource count in any of RFC 14's forms (integer, idset or range string, dict)."""
    from flux_conformance.reference.ranges import parse_count

    try:
        parse_count(value, edition=ctx.edition)
    except LimitError as exc:
        raise exc.with_path(path) from None
    except FormatError as exc:
        # Inside a document every bad count is an invalid document, whatever the count
        # code calls a malformed string on its own.
        raise InvalidError(exc.reason, path=(*path, *exc.path)) from None


# -- resources -------------------------------------------------------------------------------


def _vertex_type(value: Any, path: Path, ctx: _Context) -> None:
    _string(value, path)


def _vertex_count(value: Any, path: Path, ctx: _Context) -> None:
    _count(value, path, ctx)


def _vertex_boolean(value: Any, path: Path, ctx: _Context) -> None:
    if not isinstance(value, bool):
        raise _fail(path, f"must be a boolean, not {_type_name(value)}")


def _vertex_string(value: Any, path: Path, ctx: _Context) -> None:
    _string(value, path)


def _vertex_with(value: Any, path: Path, ctx: _Context) -> None:
    # The vertices themselves are walked by _resources, which tracks depth and slots.
    if not isinstance(value, list):
        raise _fail(path, f"must be an array of resource vertices, not {_type_name(value)}")
    if not value:
        raise _fail(path, "must hold at least one resource vertex")


#: The keys RFC 14 defines for a resource vertex, each with its check.
_VERTEX_KEYS: Mapping[str, Callable[[Any, Path, _Context], None]] = {
    "type": _vertex_type,
    "count": _vertex_count,
    "unit": _vertex_string,
    "exclusive": _vertex_boolean,
    "with": _vertex_with,
    "label": _vertex_string,
    "id": _vertex_string,
}


def _resources(value: Any, ctx: _Context) -> None:
    path: Path = ("resources",)
    if not isinstance(value, list):
        raise _fail(path, f"must be an array of resource vertices, not {_type_name(value)}")
    if not value:
        raise _fail(path, "must define at least one resource")
    # Explicit stack: (vertex, path, depth, labels of the slots above it).
    stack: list[tuple[Any, Path, int, tuple[str, ...]]] = [
        (vertex, (*path, index), 1, ()) for index, vertex in reversed(list(enumerate(value)))
    ]
    while stack:
        vertex, where, depth, slots_above = stack.pop()
        if depth > MAX_DEPTH:
            raise LimitError(f"resource graph nested more than {MAX_DEPTH} levels", path=where)
        _vertex(vertex, where, ctx)
        for label in slots_above:
            ctx.slot_types[label].add(vertex["type"])
        if vertex["type"] == "slot":
            slots_above = (*slots_above, vertex["label"])
            ctx.slot_types.setdefault(vertex["label"], set())
        children = vertex.get("with", [])
        stack.extend(
            (children[index], (*where, "with", index), depth + 1, slots_above)
            for index in reversed(range(len(children)))
        )


def _vertex(value: Any, path: Path, ctx: _Context) -> None:
    vertex = _object(value, path, "a resource vertex (an object)")
    for key in ("type", "count"):
        if key not in vertex:
            raise _fail(path, f"a resource vertex must have {key!r}")
    for key, item in vertex.items():
        check = _VERTEX_KEYS.get(key)
        if check is None:
            ctx.warn((*path, key), "key not defined by RFC 14 for a resource vertex")
        else:
            check(item, (*path, key), ctx)
    if vertex["type"] == "slot":
        if "label" not in vertex:
            raise _fail(path, "a slot must have a 'label'")
        if "with" not in vertex:
            raise _fail(path, "a slot must have at least one edge in 'with'")
    label = vertex.get("label")
    if label is not None:
        if label in ctx.labels:
            first = format_path(ctx.labels[label])
            raise _fail((*path, "label"), f"label {label!r} is already used at {first}")
        ctx.labels[label] = path


# -- tasks -----------------------------------------------------------------------------------


def _per_slot(value: Any, path: Path, slot: str, ctx: _Context) -> None:
    _positive_int(value, path)


def _total(value: Any, path: Path, slot: str, ctx: _Context) -> None:
    _positive_int(value, path)


def _per_resource(value: Any, path: Path, slot: str, ctx: _Context) -> None:
    spec = _object(value, path)
    for key in ("type", "count"):
        if key not in spec:
            raise _fail(path, f"per_resource must have {key!r}")
    rtype = _string(spec["type"], (*path, "type"))
    _positive_int(spec["count"], (*path, "count"))
    for key in spec:
        if key not in ("type", "count"):
            ctx.warn((*path, key), "key not defined by RFC 14 for per_resource")
    declared = ctx.slot_types.get(slot)
    if declared is not None and rtype not in declared:
        raise _fail(
            (*path, "type"), f"resource type {rtype!r} is not declared inside slot {slot!r}"
        )


#: The task count keys RFC 14 supports, each with its check.
_TASK_COUNTS: Mapping[str, Callable[[Any, Path, str, _Context], None]] = {
    "per_slot": _per_slot,
    "per_resource": _per_resource,
    "total": _total,
}

_TASK_KEYS = frozenset({"command", "slot", "count", "attributes", "distribution"})


def _tasks(value: Any, ctx: _Context) -> None:
    path: Path = ("tasks",)
    if not isinstance(value, list):
        raise _fail(path, f"must be an array of tasks, not {_type_name(value)}")
    if not value:
        raise _fail(path, "must define at least one task")
    for index, item in enumerate(value):
        _task(item, (*path, index), ctx)


def _task(value: Any, path: Path, ctx: _Context) -> None:
    task = _object(value, path, "a task (an object)")
    for key in ("command", "slot", "count"):
        if key not in task:
            raise _fail(path, f"a task must have {key!r}")
    _string_list(task["command"], (*path, "command"), non_empty=True)
    slot = _string(task["slot"], (*path, "slot"))
    if slot not in ctx.slot_types:
        raise _fail((*path, "slot"), f"no resource vertex of type slot has label {slot!r}")
    count = _object(task["count"], (*path, "count"))
    if len(count) != 1:
        raise _fail((*path, "count"), f"must hold exactly one key, not {len(count)}")
    ((key, item),) = count.items()
    check = _TASK_COUNTS.get(key)
    if check is None:
        raise _fail((*path, "count", key), "not a task count RFC 14 supports")
    check(item, (*path, "count", key), slot, ctx)
    if "distribution" in task:
        _string(task["distribution"], (*path, "distribution"))
    if "attributes" in task:
        attributes = _object(task["attributes"], (*path, "attributes"))
        if "environment" in attributes:
            _environment(attributes["environment"], (*path, "attributes", "environment"))
    for key in task:
        if key not in _TASK_KEYS:
            ctx.warn((*path, key), "key not defined by RFC 14 for a task")


# -- attributes ------------------------------------------------------------------------------


def _sys_number(value: Any, path: Path, ctx: _Context) -> None:
    _non_negative_number(value, path)


def _sys_string(value: Any, path: Path, ctx: _Context) -> None:
    _string(value, path)


def _sys_environment(value: Any, path: Path, ctx: _Context) -> None:
    _environment(value, path)


def _sys_job(value: Any, path: Path, ctx: _Context) -> None:
    for key, item in _object(value, path).items():
        _string(item, (*path, key))


def _sys_shell(value: Any, path: Path, ctx: _Context) -> None:
    shell = _object(value, path)
    if "options" in shell:
        _object(shell["options"], (*path, "options"))


def _sys_files(value: Any, path: Path, ctx: _Context) -> None:
    _object(value, path)


def _sys_constraints(value: Any, path: Path, ctx: _Context) -> None:
    from flux_conformance.reference.constraint import validate_constraint

    _object(value, path)
    try:
        warnings = validate_constraint(value)
    except LimitError as exc:
        raise exc.with_path(path) from None
    except FormatError as exc:
        raise InvalidError(exc.reason, path=(*path, *exc.path)) from None
    for warning in warnings:
        ctx.warnings.append(f"{format_path(path)}: {warning}")


_DEPENDENCY_TYPES = frozenset({"in", "out", "inout"})
_DEPENDENCY_SCOPES = frozenset({"user", "global"})
# RFC 26: the OpenMP-style schemes need type and scope as well.
_SCOPED_SCHEMES = frozenset({"string", "fluid"})
_TIMESTAMP = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")


def _sys_dependencies(value: Any, path: Path, ctx: _Context) -> None:
    """RFC 26: a non-empty list of ``{scheme, value, ...}`` objects."""
    if not isinstance(value, list):
        raise _fail(path, f"must be an array of dependency objects, not {_type_name(value)}")
    if not value:
        # RFC 26: with no dependencies the key is left out altogether.
        raise _fail(path, "must not be empty (leave the key out when there are none)")
    for index, item in enumerate(value):
        where = (*path, index)
        dep = _object(item, where, "a dependency object")
        for key in ("scheme", "value"):
            if key not in dep:
                raise _fail(where, f"a dependency must have {key!r}")
        scheme = _string(dep["scheme"], (*where, "scheme"))
        text = _string(dep["value"], (*where, "value"))
        if scheme in _SCOPED_SCHEMES:
            for key, allowed in (("type", _DEPENDENCY_TYPES), ("scope", _DEPENDENCY_SCOPES)):
                if key not in dep:
                    raise _fail(where, f"a {scheme!r} dependency must have {key!r}")
                if _string(dep[key], (*where, key)) not in allowed:
                    choices = ", ".join(sorted(allowed))
                    raise _fail((*where, key), f"must be one of {choices}")
        elif scheme == "begin-time" and not _TIMESTAMP.match(text):
            raise _fail((*where, "value"), "begin-time needs a timestamp in seconds")


#: The system attributes RFC 14 describes, each with its check; others only warn.
_SYSTEM_ATTRIBUTES: Mapping[str, Callable[[Any, Path, _Context], None]] = {
    "duration": _sys_number,
    "preemptible-after": _sys_number,
    "environment": _sys_environment,
    "cwd": _sys_string,
    "queue": _sys_string,
    "bank": _sys_string,
    "project": _sys_string,
    "dependencies": _sys_dependencies,
    "constraints": _sys_constraints,
    "job": _sys_job,
    "shell": _sys_shell,
    "files": _sys_files,
}


def _attributes(value: Any, ctx: _Context) -> None:
    path: Path = ("attributes",)
    attributes = _object(value, path, "an object of objects")
    for key, section in attributes.items():
        # RFC 14: a dictionary of dictionaries, and a key that is present has a value.
        _object(section, (*path, key))
        if key not in ("user", "system"):
            ctx.warn((*path, key), "attribute section not defined by RFC 14")
    system = attributes.get("system", {})
    for key, item in system.items():
        check = _SYSTEM_ATTRIBUTES.get(key)
        if check is None:
            ctx.warn((*path, "system", key), "system attribute not recognised")
        else:
            check(item, (*path, "system", key), ctx)


# -- the jobspec -----------------------------------------------------------------------------

_TOP_KEYS = ("resources", "tasks", "attributes", "version")


def validate_jobspec(value: Any, *, edition: str = DEFAULT_EDITION) -> list[str]:
    """Check ``value`` as an RFC 14 canonical jobspec and return its warnings.

    Raises :class:`~reference.errors.InvalidError` (with the JSON path of the problem) when
    it is not one, or :class:`~reference.errors.LimitError` when its resource graph is too
    deep.  ``edition`` (see :mod:`reference.editions`) selects the range-dictionary rule.
    """
    ctx = _Context(edition=edition)
    document = _object(value, (), "an object")
    for key in _TOP_KEYS:
        if key not in document:
            raise _fail((), f"a jobspec must have {key!r}")
    version = document["version"]
    if isinstance(version, bool) or not isinstance(version, int):
        raise _fail(("version",), f"must be an integer, not {_type_name(version)}")
    _resources(document["resources"], ctx)
    _tasks(document["tasks"], ctx)
    _attributes(document["attributes"], ctx)
    for key in document:
        if key not in _TOP_KEYS:
            ctx.warn((key,), "key not defined by RFC 14 for a jobspec")
    return ctx.warnings


def _slots(resources: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The slot vertices of a resources list, in document order."""
    stack = list(reversed(resources))
    while stack:
        vertex = stack.pop()
        if vertex.get("type") == "slot":
            yield vertex
        stack.extend(reversed(vertex.get("with", [])))


def _depth_within(value: Any, limit: int) -> bool:
    """Whether ``value`` nests no deeper than ``limit`` (checked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return False
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)
    return True


def jobspec_from_shape(
    shape: str,
    command: list[str],
    *,
    tasks: dict[str, Any] | None = None,
    attributes: dict[str, Any] | None = None,
    default_label: str | None = None,
    edition: str = DEFAULT_EDITION,
) -> dict[str, Any]:
    """Build a canonical jobspec (version 1) running ``command`` on the slots of ``shape``.

    Each slot of the shape gets one task with the count ``tasks`` (default one per slot);
    a ``total`` cannot be shared among several slots, and a shape without a slot has nowhere
    to run a task: both are :class:`~reference.errors.InvalidError`.  The result is checked
    with :func:`validate_jobspec` before it is returned.
    """
    from flux_conformance.reference.shape import DEFAULT_LABEL, parse_shape

    resources = parse_shape(
        shape,
        default_label=DEFAULT_LABEL if default_label is None else default_label,
        edition=edition,
    )
    count = {"per_slot": 1} if tasks is None else tasks
    labels = [slot["label"] for slot in _slots(resources)]
    if not labels:
        raise _fail(("shape",), "the shape declares no slot for the tasks to run in")
    if len(labels) > 1 and "total" in count:
        raise _fail(("tasks", "total"), "a total cannot be shared among several slots")
    jobspec: dict[str, Any] = {
        "version": 1,
        "resources": resources,
        "tasks": [
            {"command": list(command), "slot": label, "count": dict(count)} for label in labels
        ],
        "attributes": {"system": {}} if attributes is None else attributes,
    }
    validate_jobspec(jobspec, edition=edition)
    return jobspec


# -- operations ------------------------------------------------------------------------------


def _jobspec_validate(value: Any, *, edition: str) -> dict[str, Any]:
    """Operation ``jobspec.validate``: a jobspec -> ``{warnings: [...]}``."""
    return {"warnings": validate_jobspec(value, edition=edition)}


#: How deeply the free-form ``attributes`` of ``jobspec.from_shape`` may nest: they are copied
#: into the output, which must stay serialisable by any JSON library.
_MAX_ATTRIBUTE_DEPTH = 256

_FROM_SHAPE_KEYS = frozenset({"shape", "command", "tasks", "attributes", "default_label"})


def _jobspec_from_shape(value: Any, *, edition: str) -> dict[str, Any]:
    """Operation ``jobspec.from_shape``: ``{shape, command, tasks?, attributes?}`` -> jobspec."""
    spec = _object(value, (), "an object")
    for key in spec:
        if key not in _FROM_SHAPE_KEYS:
            raise _fail((key,), "unknown input key")
    for key in ("shape", "command"):
        if key not in spec:
            raise _fail((), f"input must have {key!r}")
    shape = _string(spec["shape"], ("shape",))
    _string_list(spec["command"], ("command",), non_empty=True)
    # An optional key is either absent or of its schema's type: null is not "not given".
    tasks = None
    if "tasks" in spec:
        tasks = _object(spec["tasks"], ("tasks",))
        if len(tasks) != 1 or next(iter(tasks)) not in ("per_slot", "total"):
            raise _fail(("tasks",), "must hold exactly one of 'per_slot' or 'total'")
        _positive_int(next(iter(tasks.values())), ("tasks", next(iter(tasks))))
    attributes = None
    if "attributes" in spec:
        attributes = _object(spec["attributes"], ("attributes",))
        if not _depth_within(attributes, _MAX_ATTRIBUTE_DEPTH):
            raise LimitError(
                f"attributes nested more than {_MAX_ATTRIBUTE_DEPTH} levels",
                path=("attributes",),
            )
    label = None
    if "default_label" in spec:
        label = _string(spec["default_label"], ("default_label",))
    return jobspec_from_shape(
        shape,
        spec["command"],
        tasks=tasks,
        attributes=attributes,
        default_label=label,
        edition=edition,
    )


OPERATIONS: dict[str, Callable[..., Any]] = {
    "jobspec.validate": _jobspec_validate,
    "jobspec.from_shape": _jobspec_from_shape,
}
