"""RFC 20 resource sets (R): validation, the per-rank decoded form, encoding, set operations.

This module is the public API and the operations; the code lives in four private modules along
its seams: the model (:mod:`._rset_model`), reading and validation (:mod:`._rset_read`),
building and encoding (:mod:`._rset_build`) and the set algebra (:mod:`._rset_algebra`).

An R document names execution targets (broker ranks), the cores and GPUs each one holds, the
host each one runs on, and the properties attached to them (RFC 20, "Execution"); it may also
carry a JGF resource graph (RFC 20, "Scheduling") and free-form attributes.

The reference keeps an R as a :class:`ResourceSet`: rank *runs* (maximal intervals of ranks
that hold the same :class:`Children`), the host names in ascending rank order, and one idset of
ranks per property.  Nothing is ever held per core, and set operations and decoding work on
intervals: a run of 16,384 identical nodes is one run, not 16,384 records.

Readings taken where RFC 20 leaves room (see ``notes/readings.md``):

* ``version`` is the integer 1; ``execution`` and/or ``scheduling`` must be present, and
  ``execution`` needs ``R_lite`` and ``nodelist``.
* The hostlists of ``nodelist``, expanded and concatenated, name the ranks in ascending order;
  their count must equal the number of distinct ranks.  Repeated host names are allowed.
* A rank listed by several ``R_lite`` entries gets the union of their children, provided the
  core ids and GPU ids of those entries are disjoint; overlapping ids make the R invalid.
* Property names are non-empty, valid UTF-8 and free of ``! & ' " ^ ` | ( )``; a name with an
  ``@suffix`` is an ordinary valid name.  Each property's idset may only name ranks of R_lite.
* ``starttime`` and ``expiration`` are finite numbers >= 0; with both, expiration > starttime.
  RFC 20 gives 0 no special meaning, so ``starttime: 100, expiration: 0`` is invalid.  The one
  exception is the pair ``starttime: 0, expiration: 0``, which flux-core writes into every R it
  encodes without times: the reference reads that exact pair as "no times" (an open point).
* Union, difference and intersection work on (rank, core ids, GPU ids); a rank left with
  neither cores nor GPUs disappears, and properties follow the ranks that remain.

Keys the RFC reserves for future extensions (``nslots`` in the RFC's own example, say) are
accepted with a warning.

Limits (``limit``): ids above 2**64-1, a nodelist that expands to more than 1,000,000 hosts in
all (which also bounds the ranks, since there is one host per rank), as many rank entries given
to ``R.encode``, and a decoded form whose JSON text would pass 64 MiB (see ``_limits``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flux_conformance.reference._rset_algebra import difference, intersection, union
from flux_conformance.reference._rset_build import encode, from_ranks
from flux_conformance.reference._rset_model import (
    ILLEGAL_PROPERTY_CHARACTERS,
    Children,
    ResourceSet,
    property_name_problem,
)
from flux_conformance.reference._rset_read import _fail, _object, decode, load, validate
from flux_conformance.reference._speed import gc_paused
from flux_conformance.reference.errors import FormatError

__all__ = [
    "ILLEGAL_PROPERTY_CHARACTERS",
    "OPERATIONS",
    "Children",
    "ResourceSet",
    "decode",
    "difference",
    "encode",
    "from_ranks",
    "intersection",
    "load",
    "property_name_problem",
    "union",
    "validate",
]


# ---------------------------------------------------------------------------------------------
# Operations.


def _pair(value: Any, edition: str) -> tuple[ResourceSet, ResourceSet]:
    top = _object(value, (), "the input")
    for key in ("a", "b"):
        if key not in top:
            raise _fail(f"the input needs {key}", ())
    for key in top:
        if key not in ("a", "b"):
            raise _fail(f"unknown key {key!r}", ())
    try:
        a = load(top["a"], edition=edition)[0]
    except FormatError as exc:
        raise exc.with_path(("a",)) from None
    try:
        b = load(top["b"], edition=edition)[0]
    except FormatError as exc:
        raise exc.with_path(("b",)) from None
    return a, b


def _op_validate(value: Any, *, edition: str) -> dict[str, Any]:
    return {"warnings": validate(value, edition=edition)}


def _op_decode(value: Any, *, edition: str) -> list[dict[str, Any]]:
    return decode(value, edition=edition)


def _op_encode(value: Any, *, edition: str) -> dict[str, Any]:
    return encode(value, edition=edition)


def _set_op(func: Callable[[ResourceSet, ResourceSet], ResourceSet]) -> Callable[..., Any]:
    def op(value: Any, *, edition: str) -> dict[str, Any]:
        with gc_paused():
            return func(*_pair(value, edition)).to_json()

    op.__name__ = f"_op_{func.__name__}"
    return op


OPERATIONS: dict[str, Callable[..., Any]] = {
    "R.validate": _op_validate,
    "R.decode": _op_decode,
    "R.encode": _op_encode,
    "R.union": _set_op(union),
    "R.diff": _set_op(difference),
    "R.intersect": _set_op(intersection),
}
