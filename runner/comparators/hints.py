"""What a consumer of the exported suite needs to judge a semantic comparator without Python.

For each comparator that accepts more than one right answer, :data:`HINTS` gives a function of
the expected output (and the oracle that computes it) returning a JSON object: the expected
value in the normalised form the comparator compares.  ``flux-conformance export`` writes it
beside each expected output; ``docs/export.md`` says how a consumer uses each one.  Comparators
that compare exactly need none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from flux_conformance.runner.comparators._oracle import Oracle, Refused
from flux_conformance.runner.comparators.allocation import facts
from flux_conformance.runner.comparators.constraint import probes
from flux_conformance.runner.comparators.shape import count_key
from flux_conformance.runner.comparators.text import (
    collapse_groups,
    idset_runs_past_limits,
    runs_of,
)

__all__ = ["HINTS", "Hint", "normalise_resources"]

#: ``hint(expected_output, oracle)`` -> the normalised form, as JSON.
Hint = Callable[[Any, Oracle], dict[str, Any]]


def _idset(expected: Any, oracle: Oracle) -> dict[str, Any]:
    try:
        return {"intervals": runs_of(oracle("idset.decode", expected))}
    except Refused as exc:
        runs = idset_runs_past_limits(expected) if exc.category == "limit" else None
        if runs is None:
            raise
        return {"intervals": runs}


def _hostlist(expected: Any, oracle: Oracle) -> dict[str, Any]:
    return {"hosts": oracle("hostlist.decode", expected)}


def _slurm_tree(expected: Any, oracle: Oracle) -> dict[str, Any]:
    del oracle
    return {"tree": collapse_groups(expected)}


def _warnings(expected: Any, oracle: Oracle) -> dict[str, Any]:
    del oracle
    return {"warnings": bool(expected.get("warnings"))}


def _rset(expected: Any, oracle: Oracle) -> dict[str, Any]:
    return {"ranks": oracle("R.decode", expected)}


def _rset_document(expected: Any, oracle: Oracle) -> dict[str, Any]:
    execution = expected.get("execution", {})
    return {
        **_rset(expected, oracle),
        "starttime": execution.get("starttime"),
        "expiration": execution.get("expiration"),
    }


def _constraint(expected: Any, oracle: Oracle) -> dict[str, Any]:
    return {
        "probes": [
            {
                "R": r_doc,
                "selects": oracle("constraint.match", {"constraint": expected, "R": r_doc}),
            }
            for r_doc, _ in probes([expected], oracle)
        ]
    }


def _count_json(count: Any, oracle: Oracle) -> Any:
    key = count_key(count, oracle)
    if key is None:
        return {"unreadable": count}
    kind, *rest = key
    if kind == "values":
        return {"values": list(rest[0])}
    if kind == "unbounded":
        low, operator, operand = rest
        return {"min": low, "operator": operator, "operand": operand}
    low, high, operator, operand = rest
    return {"min": low, "max": high, "operator": operator, "operand": operand}


def normalise_resources(resources: Any, oracle: Oracle) -> Any:
    """``resources`` with every vertex's ``count`` replaced by what it means (see export docs)."""
    if not isinstance(resources, list):
        return resources
    out = []
    for vertex in resources:
        if not isinstance(vertex, dict):
            out.append(vertex)
            continue
        copy = dict(vertex)
        if "count" in copy:
            copy["count"] = _count_json(copy["count"], oracle)
        if "with" in copy:
            copy["with"] = normalise_resources(copy["with"], oracle)
        out.append(copy)
    return out


def _shape(expected: Any, oracle: Oracle) -> dict[str, Any]:
    return {"resources": normalise_resources(expected, oracle)}


def _jobspec(expected: Any, oracle: Oracle) -> dict[str, Any]:
    return {"resources": normalise_resources(expected.get("resources"), oracle)}


def _allocation(expected: Any, oracle: Oracle, value: Any) -> dict[str, Any]:
    del expected  # the determined figures are the output itself
    return {"facts": facts(value, oracle)}


_allocation.needs_input = True  # type: ignore[attr-defined]


#: Hints by comparator name; a comparator absent here compares exactly.  A hint marked
#: ``needs_input`` (``allocation_rules``) is also given the case's input.
HINTS: Mapping[str, Hint] = {
    "idset_string": _idset,
    "hostlist_string": _hostlist,
    "slurm_tree": _slurm_tree,
    "validation_warnings": _warnings,
    "rset_decoded": _rset,
    "rset_document": _rset_document,
    "constraint_semantic": _constraint,
    "shape_counts": _shape,
    "jobspec_from_shape": _jobspec,
    "allocation_rules": _allocation,  # type: ignore[dict-item]
}
