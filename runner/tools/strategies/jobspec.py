"""Strategies for RFC 14 jobspecs: canonical jobspecs to validate, and shapes to build them from.

A jobspec is built as production writes them (``node > slot > core/gpu``, ``slot > core``,
``node > socket > slot > core``, ``slot > node > core``) with every count form RFC 14 has --
integers (1, 0, negative, 2**31, 2**32, 2**53, 2**64), idset strings, range strings and range
dictionaries in the key sets of both editions -- slots at every level, ``exclusive``, a vertex
key RFC 14 does not define, tasks ``per_slot`` or ``total``, and system attributes (duration,
cwd, environment, constraints, dependencies, an unknown one) and user attributes.  One
structural change at most makes it near-valid: a top-level key dropped, ``with: []``, a task
naming no slot, a label used twice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from flux_conformance.runner.tools.strategies._common import ID_EDGES, mostly, sometimes, weighted
from flux_conformance.runner.tools.strategies.constraint import constraint_validate
from flux_conformance.runner.tools.strategies.shapes import shape_text

__all__ = ["jobspec_from_shape", "jobspec_validate"]

#: Counts RFC 14 accepts, in every form, the edges of integer types among them.
_GOOD_COUNTS: tuple[Any, ...] = (
    1, 2, 4, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**53, 2**63, 2**64 - 1,
    "1", "2-4", "1+", "1-8:2", "1-8:2:*", "2-16:2:^", "2,4", "[1-3]", "4294967296",
    {"min": 1}, {"min": 2, "max": 4}, {"min": 1, "max": 3, "operator": "+", "operand": 1},
    {"min": 1, "max": 8, "operator": "*", "operand": 2},
    {"min": 2, "max": 16, "operator": "^", "operand": 2}, {"min": 4294967296},
)  # fmt: skip
#: Counts it refuses, or that one edition accepts and the other refuses.
_ODD_COUNTS: tuple[Any, ...] = (
    0, -1, 2**64, 1.0, True, "0", "01", "", {"min": 0}, {"min": 3, "max": 1},
    {"min": 1, "operator": "+", "operand": 1}, {"min": 1, "max": 2, "operator": "+"},
    {"min": 1, "max": 4, "operand": 1}, {"min": 1, "extra": 2},
)  # fmt: skip


def _count() -> st.SearchStrategy[Any]:
    return st.one_of(st.integers(1, 4), mostly(_GOOD_COUNTS, _ODD_COUNTS))


def _vertex(kind: str, children: list[dict[str, Any]] | None, draw: st.DrawFn) -> dict[str, Any]:
    vertex: dict[str, Any] = {"type": kind, "count": draw(_count())}
    if children is not None:
        vertex["with"] = children
    if kind in ("node", "socket") and sometimes(draw, 4):
        vertex["exclusive"] = draw(mostly((True, False), ("yes", 1)))
    if sometimes(draw, 8):
        vertex[draw(st.sampled_from(("unit", "id", "foo")))] = draw(st.sampled_from(("GB", 1)))
    return vertex


def _leaves(draw: st.DrawFn) -> list[dict[str, Any]]:
    leaves = [_vertex("core", None, draw)]
    if draw(st.booleans()):
        leaves.append(_vertex("gpu", None, draw))
    return leaves


def _slot(label: str, children: list[dict[str, Any]], draw: st.DrawFn) -> dict[str, Any]:
    slot = _vertex("slot", children, draw)
    slot["label"] = label
    return slot


@st.composite
def _resources(draw: st.DrawFn, label: str) -> list[dict[str, Any]]:
    """One of the shapes production writes, the slot at one of its levels."""
    shape = draw(st.sampled_from(("node-slot", "slot", "node-socket-slot", "slot-node")))
    if shape == "node-slot":
        return [_vertex("node", [_slot(label, _leaves(draw), draw)], draw)]
    if shape == "slot":
        return [_slot(label, _leaves(draw), draw)]
    if shape == "node-socket-slot":
        socket = _vertex("socket", [_slot(label, _leaves(draw), draw)], draw)
        return [_vertex("node", [socket], draw)]
    return [_slot(label, [_vertex("node", _leaves(draw), draw)], draw)]


@st.composite
def _attributes(draw: st.DrawFn) -> dict[str, Any]:
    system: dict[str, Any] = {}
    if draw(st.booleans()):
        system["duration"] = draw(mostly((0, 3600, 0.5, 3600.0, 2**53), (-1, "1h", None, 2**64)))
    if sometimes(draw, 4):
        system["cwd"] = draw(mostly(("/srv/jobs/a",), (1,)))
    if sometimes(draw, 4):
        system["environment"] = draw(mostly(({"HOME": "/h"}, {"A": None}), ({"A": 1}, [])))
    if sometimes(draw, 3):
        system["constraints"] = draw(constraint_validate())
    if sometimes(draw, 5):
        system["dependencies"] = draw(
            st.sampled_from(
                (
                    [{"scheme": "afterok", "value": "1"}],
                    [{"scheme": "string", "value": "x", "type": "in", "scope": "user"}],
                    [{"scheme": "afterok"}],
                    {},
                )
            )
        )
    if sometimes(draw, 5):
        system[draw(st.sampled_from(("queue", "bank", "unknown_key")))] = "x"
    attributes: dict[str, Any] = {"system": system}
    if sometimes(draw, 5):
        attributes["user"] = {"note": "x"}
    return attributes


def _set_in_first_slot(resources: list[dict[str, Any]], key: str, value: Any) -> None:
    stack = list(resources)
    while stack:
        vertex = stack.pop()
        if vertex.get("type") == "slot":
            vertex[key] = value
            return
        stack.extend(vertex.get("with", []))


#: One structural change to a jobspec (at most one per input).
_Change = Callable[[dict[str, Any], st.DrawFn], None]


def _drop_top_key(doc: dict[str, Any], draw: st.DrawFn) -> None:
    doc.pop(draw(st.sampled_from(("version", "resources", "tasks", "attributes"))))


def _empty_with(doc: dict[str, Any], draw: st.DrawFn) -> None:
    _set_in_first_slot(doc["resources"], "with", draw(st.sampled_from(([], None, {}))))


def _task_slot(doc: dict[str, Any], draw: st.DrawFn) -> None:
    doc["tasks"][0]["slot"] = draw(st.sampled_from(("nosuch", "", 1)))


def _label(doc: dict[str, Any], draw: st.DrawFn) -> None:
    _set_in_first_slot(doc["resources"], "label", draw(st.sampled_from((1, "", None))))


def _second_resource(doc: dict[str, Any], draw: st.DrawFn) -> None:
    doc["resources"].append(draw(st.sampled_from(({"type": "slot", "count": 1, "label": "task",
                                                   "with": [{"type": "core", "count": 1}]},
                                                  {"type": "node", "count": 1}))))  # fmt: skip


def _odd_task(doc: dict[str, Any], draw: st.DrawFn) -> None:
    task = doc["tasks"][0]
    change = draw(st.sampled_from(("count", "command", "both", "none")))
    if change == "count":
        task["count"] = draw(st.sampled_from(({"per_slot": 0}, {"total": -1}, {"per_slot": "1"})))
    elif change == "command":
        task["command"] = draw(st.sampled_from(([], "app", [1])))
    elif change == "both":
        task["count"] = {"per_slot": 1, "total": 2}
    else:
        task["count"] = {}


def _version(doc: dict[str, Any], draw: st.DrawFn) -> None:
    doc["version"] = draw(st.sampled_from((2, 0, "1", 1.0, 999)))


_CHANGES: tuple[_Change, ...] = (
    _drop_top_key,
    _empty_with,
    _task_slot,
    _label,
    _second_resource,
    _odd_task,
    _version,
)


@st.composite
def _jobspec(draw: st.DrawFn) -> dict[str, Any]:
    label = draw(mostly(("task", "default"), ("a b", "é", "")))
    per = draw(st.sampled_from(("per_slot", "total")))
    doc: dict[str, Any] = {
        "version": 1,
        "resources": draw(_resources(label)),
        "tasks": [
            {
                "command": draw(st.sampled_from((["app"], ["hostname", "-s"]))),
                "slot": label,
                "count": {per: draw(st.sampled_from((1, 2, 4, 2**32)))},
            }
        ],
        "attributes": draw(_attributes()),
    }
    if sometimes(draw, 4):
        draw(st.sampled_from(_CHANGES))(doc, draw)
    return doc


def jobspec_validate() -> st.SearchStrategy[Any]:
    """Canonical jobspecs for ``jobspec.validate``, and a few values that are not jobspecs."""
    return weighted(_jobspec(), st.sampled_from(({}, [], "x", None)), 10)


@st.composite
def _production_shape(draw: st.DrawFn) -> str:
    """A shape as people write them: ``[node=N/][socket/]slot=N[{label}]/core=N[;gpu=N]``."""

    def count() -> str:
        value = draw(mostly(("", "=1", "=2", "=4", "=2-4", "=1+"), ("=0", "=4294967296", "=")))
        return str(value)

    leaves = f"core{count()}" + (f";gpu{count()}" if draw(st.booleans()) else "")
    if ";" in leaves:
        leaves = f"[{leaves}]"
    slot = "slot" + count() + draw(st.sampled_from(("", "{task}", "{x}", "{a b}"))) + "/" + leaves
    outer = draw(st.sampled_from(("", "node@/", "node@/socket/", "node@{x}/")))
    return outer.replace("@", count()) + slot


@st.composite
def _from_shape(draw: st.DrawFn) -> dict[str, Any]:
    value: dict[str, Any] = {
        "shape": draw(weighted(_production_shape(), shape_text(), 3)),
        "command": draw(st.sampled_from((["app"], ["a", "b"]))),
    }
    if draw(st.booleans()):
        key = draw(st.sampled_from(("per_slot", "total")))
        value["tasks"] = {key: draw(st.one_of(st.integers(-1, 4), st.sampled_from(ID_EDGES)))}
    if draw(st.booleans()):
        value["attributes"] = draw(_attributes())
    if sometimes(draw, 4):
        value["default_label"] = draw(st.sampled_from(("task", "x", "", "a b")))
    return value


def jobspec_from_shape() -> st.SearchStrategy[Any]:
    """``{shape, command, tasks?, attributes?, default_label?}`` for ``jobspec.from_shape``."""
    return _from_shape()
