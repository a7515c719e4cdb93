"""Comparators: how an implementation's output is judged against a case's expectation.

Each operation names one comparator in its registration (``runner/schemas/operations``).
A comparator takes the expected output, the actual output and an *oracle* (an implementation
it may consult, reached through the adapter protocol: see :mod:`runner.comparators._oracle`)
and returns ``None`` when the actual output conforms, or a one-line reason when it does not.
Every comparator is registered here, in :data:`COMPARATORS`, and nowhere else; each lives in
the module of its family (``text``, ``validation``, ``rset``, ``constraint``, ``shape``).

The comparators, documented where they are registered:

``exact``
    JSON equality: same types (``1`` is not ``1.0`` nor ``true``), same order in lists.
``idset_string``
    For ``idset.encode``: the output must be a string that strictly decodes (RFC 22) to
    the same set as the expected string.
``hostlist_string``
    For ``hostlist.encode``: the output must be a string that strictly decodes (RFC 29) to
    the same ordered list, duplicates included, as the expected string.
``slurm_tree``
    For ``slurm.extra.parse``: the same tree once every group with a single child has been
    replaced by that child, on both sides.  Slurm itself keeps a node per parenthesis level
    (``((a=1))`` is two groups around the leaf); the reference writes the leaf alone.  Both
    mean the same, so neither is penalised; groups with several children are never merged.
``validation``
    For validators (``R.validate``, ``constraint.validate``): the output must be
    ``{"warnings": [strings]}``.  Warnings are advice, not contract: their text and number
    are not compared (a case that expects rejection asserts an error category instead).
``rset_decoded``
    For ``R.union``, ``R.diff``, ``R.intersect``: the output must be an R the reference
    accepts, and its per-rank decoded form (``R.decode``) must equal the expected R's.
``rset_document``
    For ``R.encode``: as ``rset_decoded``, and ``execution.starttime`` / ``expiration`` must
    be present exactly when the expected R has them, with equal values.
``constraint_semantic``
    For ``constraint.parse_query``: the output must be a valid RFC 31 object that selects
    the same targets as the expected one on every R built from what the two mention: each
    property subset (all subsets up to 10 names, a fixed sample beyond), one host of each
    pattern of membership in the mentioned hostlists plus a host in none, and one rank of
    each pattern of membership in the mentioned idsets plus ranks in none.
``shape_counts``
    For ``shape.parse``: the output must be a resources list equal to the expected one,
    except that each vertex's ``count`` is compared by meaning: an integer, an idset
    string, a range string and a range dictionary that accept the same counts are the same
    (``"3-30"`` equals ``{min: 3, max: 30, operator: "+", operand: 1}``; ``{min: 2}`` equals
    ``"2+"``); a count RFC 14 does not allow (``*`` with operand 1, an unknown key) or with a
    number past the reference's limits equals only itself.  Everything else is compared exactly
    (``json_equal``).
``validation_warnings``
    For ``jobspec.validate``: the output must be ``{"warnings": [strings]}``, and the list
    must be empty exactly when the expected one is.  The text and number of warnings are
    never compared (unlike ``validation``, whose cases do not judge warnings at all).
``jobspec_from_shape``
    For ``jobspec.from_shape``: the output must be a jobspec the reference's
    ``jobspec.validate`` accepts, and match the expected one: same keys, ``version`` and
    ``attributes`` equal, ``resources`` alike as under ``shape_counts``, and the same tasks
    in the same order.  Labels are names only, so a consistent one-to-one renaming of the
    labels (carried into each task's ``slot``) is accepted: an implementation whose default
    slot label is ``task`` conforms.
``allocation_rules``
    For ``sched.allocate``: the answer is judged by the scheduling rules of RFC 14, 20 and 31
    (a valid R, inside the free part of the pool, the constraint on every rank, divisible
    into the requested slots with each slot on one node and exclusive nodes whole, no count
    that what is free would make larger, starttime and expiration from the clock and the
    duration, and from the 2026-08-13 texts nslots the slot total and ``+`` properties left
    out), then against the figures the case determines (``nodes``, ``cores``,
    ``ranks_within`` ...).  It is the one comparator that reads the case's input; each check
    and its source are listed in :mod:`runner.comparators.allocation`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from flux_conformance.runner.comparators._json import json_equal
from flux_conformance.runner.comparators._oracle import Comparator, Oracle, OracleFailure, Refused
from flux_conformance.runner.comparators.allocation import allocation_rules
from flux_conformance.runner.comparators.constraint import constraint_semantic
from flux_conformance.runner.comparators.rset import rset_alike
from flux_conformance.runner.comparators.shape import jobspec_from_shape, shape_counts
from flux_conformance.runner.comparators.text import decodes_alike, exact, slurm_tree
from flux_conformance.runner.comparators.validation import validation, validation_warnings

__all__ = [
    "COMPARATORS",
    "DESCRIPTIONS",
    "Comparator",
    "Oracle",
    "OracleFailure",
    "Refused",
    "json_equal",
]

#: Every comparator, by the name an operation's registration gives.
COMPARATORS: Mapping[str, Comparator] = {
    "exact": exact,
    "idset_string": decodes_alike("idset.decode", "idset"),
    "hostlist_string": decodes_alike("hostlist.decode", "hostlist"),
    "slurm_tree": slurm_tree,
    "validation": validation,
    "validation_warnings": validation_warnings,
    "rset_decoded": rset_alike(times=False),
    "rset_document": rset_alike(times=True),
    "constraint_semantic": constraint_semantic,
    "shape_counts": shape_counts,
    "jobspec_from_shape": jobspec_from_shape,
    # Reads the case's input too (see OperationSpec.compare): registered with four arguments.
    "allocation_rules": allocation_rules,  # type: ignore[dict-item]
}


def _descriptions(doc: str) -> dict[str, str]:
    """Each comparator's paragraph of this module's docstring, on one line."""
    found: dict[str, list[str]] = {}
    name = None
    for line in doc.splitlines():
        heading = re.fullmatch(r"``(\w+)``", line)
        if heading:
            name = heading.group(1)
            found[name] = []
        elif name is not None and line.startswith("    "):
            found[name].append(line.strip())
        elif line.strip():
            name = None
    return {key: " ".join(lines).replace("``", "`") for key, lines in found.items()}


#: Every comparator's rule in words, one per comparator (the module docstring's paragraphs).
DESCRIPTIONS: Mapping[str, str] = _descriptions(__doc__ or "")
