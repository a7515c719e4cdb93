"""The operation's input and answer (part of :mod:`.allocate`).

The input is ``{pool, jobspec, allocated?, now?}`` (the operation's schema).  The answer, an
RFC 20 R, names the ranks taken with their cores and GPUs, and, from the pool, their host names and
their properties (RFC 20, Execution).  From the 2026-08-13 texts it carries ``nslots`` and
leaves the instance-local (``+``) properties out (RFC 20, Execution > nslots and > properties).
"""

from __future__ import annotations

from typing import Any

from flux_conformance.reference import editions
from flux_conformance.reference._rset_rlite import _join_runs
from flux_conformance.reference.errors import InvalidError
from flux_conformance.reference.idset import IdSet
from flux_conformance.reference.rset import Children, ResourceSet

__all__ = ["read_input", "write_answer"]

_INPUT_KEYS = ("pool", "jobspec", "allocated", "now")


def read_input(value: Any) -> tuple[Any, Any, list[Any], float | None]:
    """The pool, jobspec, allocated Rs and ``now`` (None: not given) of the input."""
    if not isinstance(value, dict):
        raise InvalidError("the input must be an object with pool and jobspec")
    for key in ("pool", "jobspec"):
        if key not in value:
            raise InvalidError(f"the input needs {key}")
    for key in value:
        if key not in _INPUT_KEYS:
            raise InvalidError(f"unknown key {key!r}")
    allocated = value.get("allocated", [])
    if not isinstance(allocated, list):
        raise InvalidError("allocated must be an array of R", path=("allocated",))
    now = value.get("now")
    # An optional key is absent or of its schema's type: null is not "not given".
    if "now" in value and (
        isinstance(now, bool)
        or not isinstance(now, int | float)
        or not now >= 0
        or now == float("inf")
    ):
        raise InvalidError("now must be a finite number >= 0", path=("now",))
    return value["pool"], value["jobspec"], allocated, now


def write_answer(
    pool: ResourceSet,
    taken: dict[int, Children],
    slots: int,
    times: tuple[float | None, float | None],
    edition: str,
) -> dict[str, Any]:
    """The R of ``taken`` (rank -> what it holds), ``slots`` in all, ``times`` (start, end)."""
    runs = _join_runs((rank, rank, taken[rank]) for rank in sorted(taken))
    ranks = IdSet.from_ids(sorted(taken))
    # Host names and properties come from the pool, for the ranks taken.
    hosts = tuple(map(pool.hostnames.__getitem__, pool.positions(ranks)))
    rules = editions.edition_named(edition)
    properties = {}
    for name, where in pool.properties.items():
        # RFC 20, Execution > properties (2026-08-13 on): a scheduler leaves instance-local
        # (+) properties out of the R it allocates.
        if rules.r_instance_local_properties and name.startswith("+"):
            continue
        held = where.intersection(ranks)
        if held:
            properties[name] = held
    result = ResourceSet(tuple(runs), hosts, properties).to_json()
    execution = result["execution"]
    if rules.r_nslots:
        # RFC 20, Execution > nslots (2026-08-13 on): a conforming scheduler writes the total.
        execution["nslots"] = slots
    start, end = times
    if start is not None:
        execution["starttime"] = start
    if end is not None:
        execution["expiration"] = end
    return result
