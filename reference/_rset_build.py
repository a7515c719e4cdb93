"""RFC 20 resource sets: building an R from the per-rank form, and encoding it.

Part of :mod:`flux_conformance.reference.rset`.
"""

from __future__ import annotations

import itertools
from typing import Any

from flux_conformance.reference._limits import MAX_ID, MAX_RANKS
from flux_conformance.reference._rset_model import (
    _HOSTNAME_CHARACTERS,
    Children,
    Path,
    ResourceSet,
    Run,
    property_name_problem,
)
from flux_conformance.reference._rset_read import (
    _array,
    _cached_idset,
    _check_times,
    _fail,
    _object,
    _string,
    _time,
)
from flux_conformance.reference.editions import edition_named
from flux_conformance.reference.errors import LimitError
from flux_conformance.reference.idset import IdSet

__all__ = [
    "encode",
    "from_ranks",
]

# ---------------------------------------------------------------------------------------------
# Building an R from the per-rank form.


def from_ranks(
    items: Any,
    *,
    starttime: Any = None,
    expiration: Any = None,
    path: Path = (),
    zero_unset: bool = False,
) -> ResourceSet:
    """Build a :class:`ResourceSet` from the per-rank form :func:`decode` returns.

    ``zero_unset``: a time of 0 means "unset" (RFC 20 since ``e775b80``).
    """
    entries = _array(items, path, "the per-rank list")
    if len(entries) > MAX_RANKS:
        raise LimitError(f"{len(entries)} rank entries; the limit is {MAX_RANKS}", path=path)
    rows: list[tuple[int, str, Children, list[str]]] = []
    # Ranks mostly repeat a few idset strings ("0-3"): each is decoded once, and each pair of
    # core and GPU strings makes one Children.
    decoded: dict[str, IdSet] = {}
    kids: dict[tuple[Any, Any], Children] = {}
    for i, raw in enumerate(entries):
        where = (*path, i)
        item = _object(raw, where, "a rank entry")
        for key in ("rank", "hostname", "cores"):
            if key not in item:
                raise _fail(f"a rank entry needs {key}", where)
        for key in item:
            if key not in ("rank", "hostname", "cores", "gpus", "properties"):
                raise _fail(f"unknown key {key!r} in a rank entry", where)
        rank = item["rank"]
        if not isinstance(rank, int) or isinstance(rank, bool) or rank < 0:
            raise _fail("rank must be a non-negative integer", (*where, "rank"))
        if rank > MAX_ID:
            # As R.validate: an id above the limit is refused, never written into an R.
            raise LimitError(f"rank exceeds the limit {MAX_ID}", path=(*where, "rank"))
        host = _string(item["hostname"], (*where, "hostname"), "hostname")
        if not host or not _HOSTNAME_CHARACTERS.issuperset(host):
            # A name outside RFC 29's character set could not be written into a nodelist.
            raise _fail(f"{host!r} is not a valid host name", (*where, "hostname"))
        texts: tuple[Any, Any] = (item["cores"], item.get("gpus", ""))
        hashable = type(texts[0]) is str and type(texts[1]) is str
        children = kids.get(texts) if hashable else None
        if children is None:
            cores = _cached_idset(decoded, texts[0], (*where, "cores"), "cores")
            gpus = _cached_idset(decoded, texts[1], (*where, "gpus"), "gpus")
            children = kids[texts] = Children(cores, gpus)
        names = _array(item.get("properties", []), (*where, "properties"), "properties")
        for j, name in enumerate(names):
            text = _string(name, (*where, "properties", j), "a property name")
            problem = property_name_problem(text)
            if problem:
                raise _fail(problem, (*where, "properties", j))
        rows.append((rank, host, children, names))
    rows.sort(key=lambda row: row[0])
    for before, after in itertools.pairwise(rows):
        if before[0] == after[0]:
            raise _fail(f"rank {after[0]} is listed twice", path)
    runs: list[Run] = []
    props: dict[str, list[int]] = {}
    for rank, _host, children, names in rows:
        if runs and runs[-1][1] == rank - 1 and runs[-1][2] == children:
            runs[-1] = (runs[-1][0], rank, children)
        else:
            runs.append((rank, rank, children))
        for name in names:
            props.setdefault(name, []).append(rank)
    start = _time(starttime, ("starttime",), "starttime") if starttime is not None else None
    end = _time(expiration, ("expiration",), "expiration") if expiration is not None else None
    _check_times(start, end, ("expiration",), zero_unset=zero_unset)
    return ResourceSet(
        tuple(runs),
        tuple(row[1] for row in rows),
        {name: IdSet.from_ids(sorted(set(ids))) for name, ids in props.items()},
        start,
        end,
    )


def encode(value: Any, *, edition: str | None = None) -> dict[str, Any]:
    """Return an R document for the per-rank form: a list, or ``{ranks, starttime?, ...}``.

    ``edition`` names the edition of RFC 20 to follow (None: the latest).
    """
    zero_unset = edition_named(edition).r_zero_time_unset
    if isinstance(value, dict):
        for key in value:
            if key not in ("ranks", "starttime", "expiration"):
                raise _fail(f"unknown key {key!r}", ())
        if "ranks" not in value:
            raise _fail("the input needs ranks", ())
        for key in ("starttime", "expiration"):
            # A key that is present must hold a number: null is not "unset" (that is absence).
            if key in value:
                _time(value[key], (key,), key)
        rset = from_ranks(
            value["ranks"],
            starttime=value.get("starttime"),
            expiration=value.get("expiration"),
            path=("ranks",),
            zero_unset=zero_unset,
        )
    else:
        rset = from_ranks(value)
    return rset.to_json()
