"""Hypothesis strategies for ``flux-conformance diff``: valid and near-valid inputs per operation.

Each strategy follows the grammar of its format (ids, ranges, padded idlists, operators, R
documents, constraint trees, jobspecs), so most inputs are valid and reach deep into an
implementation, and then applies a small change drawn from the format's own alphabet or
structure, so that many are *near*-valid (one stray bracket, a doubled comma, a missing key):
where implementations tend to disagree.  Numbers lean small but include the edges (``2**31``,
``2**32``, ``2**53``, ``2**64``) so that overflow shows.  Hypothesis shrinks towards no
changes, short lists and small numbers, which is what makes a disagreement it finds come back
minimal.

One module per family of operations: :mod:`.ids` (idsets, hostlists, ranges, counts),
:mod:`.rset` (R), :mod:`.constraint` (RFC 31), :mod:`.jobspec` (RFC 14 jobspecs),
:mod:`.shapes` (RFC 35 queries, RFC 46 shapes), :mod:`.slurm` and :mod:`.allocate`.

``STRATEGIES`` maps an operation name to a function returning its strategy; hypothesis is
imported with this package, so import it only when hypothesis is installed (the ``diff``
extra).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from flux_conformance.runner.tools.strategies._common import near_valid
from flux_conformance.runner.tools.strategies.allocate import sched_allocate
from flux_conformance.runner.tools.strategies.constraint import (
    constraint_match,
    constraint_validate,
)
from flux_conformance.runner.tools.strategies.ids import (
    count_values,
    hostlist_decode,
    hostlist_encode,
    idset_decode,
    idset_encode,
    range_decode,
)
from flux_conformance.runner.tools.strategies.jobspec import jobspec_from_shape, jobspec_validate
from flux_conformance.runner.tools.strategies.rset import r_decode, r_encode, r_pair, r_validate
from flux_conformance.runner.tools.strategies.shapes import parse_query, shape_parse
from flux_conformance.runner.tools.strategies.slurm import slurm_match, slurm_parse, slurm_select

__all__ = ["STRATEGIES", "near_valid"]

#: Operation name -> a function returning its strategy.
STRATEGIES: dict[str, Callable[[], st.SearchStrategy[Any]]] = {
    "idset.decode": idset_decode,
    "idset.encode": idset_encode,
    "hostlist.decode": hostlist_decode,
    "hostlist.encode": hostlist_encode,
    "range.decode": range_decode,
    "count.values": count_values,
    "slurm.extra.parse": slurm_parse,
    "slurm.extra.match": slurm_match,
    "slurm.extra.select": slurm_select,
    "constraint.parse_query": parse_query,
    "shape.parse": shape_parse,
    "sched.allocate": sched_allocate,
    "R.decode": r_decode,
    "R.validate": r_validate,
    "R.encode": r_encode,
    "R.union": r_pair,
    "R.diff": r_pair,
    "R.intersect": r_pair,
    "constraint.match": constraint_match,
    "constraint.validate": constraint_validate,
    "jobspec.validate": jobspec_validate,
    "jobspec.from_shape": jobspec_from_shape,
}
