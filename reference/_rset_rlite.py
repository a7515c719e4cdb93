"""RFC 20 resource sets: reading R_lite, the execution targets and their cores and GPUs.

Part of :mod:`flux_conformance.reference.rset`.  R_lite is a list of entries, each an RFC 22
idset of ranks with the ``core`` (and optional ``gpu``) idsets every one of those ranks holds
(RFC 20, Execution > R_lite).  The same rank in several entries holds the union of their
children when their ids are disjoint (readings).  The result is the document's runs: sorted,
disjoint rank intervals with equal children, neighbours with equal children joined.

Fragmented allocations list every rank in an entry of its own; the short cut
:func:`_read_plain` reads that usual form in a few C-level passes, and anything else goes
through the entry-by-entry reader, which also explains any error.
"""

from __future__ import annotations

import itertools
import json
import operator
import re
from collections.abc import Iterable, Sequence
from typing import Any

from flux_conformance.reference._rset_children import small_bits
from flux_conformance.reference._rset_json import _array, _fail, _idset, _object, _unknown_keys
from flux_conformance.reference._rset_model import (
    _EMPTY,
    Children,
    Path,
    Run,
    _segments,
    _succ,
)
from flux_conformance.reference.idset import IdSet

__all__ = ["_cached_idset", "_join_runs", "_read_plain", "_read_r_lite"]


def _merge_children(parts: Sequence[Children], path: Path) -> Children:
    """Union of children listed for one rank by several R_lite entries; ids must be disjoint."""
    merged = parts[0]
    for extra in parts[1:]:
        if merged.overlaps(extra):
            raise _fail("a rank listed by several entries has overlapping core or GPU ids", path)
        merged = merged.union(extra)
    return merged


#: A rank written as one plain decimal id of at most 19 digits (so below MAX_ID): the form
#: flux-core gives every rank of a fragmented allocation, read without the idset parser.
_RANK = r"(?:0|[1-9][0-9]{0,18})"
_PLAIN_RANK = re.compile(_RANK).fullmatch
_LOWER = operator.itemgetter(0)
_UPPER = operator.itemgetter(1)


#: Stands for a ``gpu`` key that is not there (``null`` is there, and invalid).
_ABSENT = object()


class _Entries:
    """What the R_lite entries read so far hold: rank pieces and each entry's children.

    Children strings repeat across entries (every node of a partition holds "0-47"): each
    distinct string is decoded once per document, and entries with the same strings share
    one :class:`Children` object.
    """

    def __init__(self, warnings: list[str]) -> None:
        self.warnings = warnings
        self.pieces: list[tuple[int, int, int]] = []  # (lo, hi, index into children_of)
        self.children_of: list[Children] = []
        self.decoded: dict[str, IdSet] = {}
        self.shared: dict[tuple[Any, Any], Children] = {}

    def children(self, core: Any, gpu: Any, where: Path) -> Children:
        """The children of one entry's ``core`` and ``gpu`` values (``gpu`` _ABSENT if so)."""
        absent = gpu is _ABSENT
        core_bits = small_bits(core) if type(core) is str else None
        gpu_bits = 0 if absent else small_bits(gpu) if type(gpu) is str else None
        if core_bits is not None and gpu_bits is not None:
            # Canonical text of small ids: it is the children's text as it stands.
            children = Children._small(core_bits, gpu_bits, [core, "" if absent else gpu])
        else:
            cores = _cached_idset(self.decoded, core, (*where, "core"), "core")
            gpus = _EMPTY
            if not absent:
                gpus = _cached_idset(self.decoded, gpu, (*where, "gpu"), "gpu")
            children = Children(cores, gpus)
        # (Both are strings here: anything else failed above.)
        self.shared[core, None if absent else gpu] = children
        return children

    def add(self, raw: Any, where: Path) -> None:
        """Check one R_lite entry of any form in full and add it."""
        entry = _object(raw, where, "an R_lite entry")
        if len(entry) != 2 or "rank" not in entry or "children" not in entry:
            # The usual two keys need no look for reserved ones.
            _unknown_keys(entry, ("rank", "children"), where, self.warnings)
        if "rank" not in entry:
            raise _fail("an R_lite entry needs a rank idset", where)
        if "children" not in entry:
            raise _fail("an R_lite entry needs children", where)
        ranks = _idset(entry["rank"], (*where, "rank"), "rank")
        kids = _object(entry["children"], (*where, "children"), "children")
        _unknown_keys(kids, ("core", "gpu"), (*where, "children"), self.warnings)
        if "core" not in kids:
            raise _fail("children need a core idset", (*where, "children"))
        if not ranks.intervals:
            self.warnings.append(f"R_lite[{where[-1]}] names no ranks; it adds nothing")
        core, gpu = kids["core"], kids.get("gpu", _ABSENT)
        children = None
        if type(core) is str and (gpu is _ABSENT or type(gpu) is str):
            children = self.shared.get((core, None if gpu is _ABSENT else gpu))
        if children is None:
            children = self.children(core, gpu, (*where, "children"))
        k = len(self.children_of)
        self.children_of.append(children)
        self.pieces.extend((lo, hi, k) for lo, hi in ranks.intervals)


def _read_r_lite(value: Any, path: Path, warnings: list[str]) -> tuple[Run, ...]:
    entries = _array(value, path, "R_lite")
    plain = _read_plain(entries)
    if plain is not None:
        return plain
    read = _Entries(warnings)
    shared, pieces, children_of = read.shared, read.pieces, read.children_of
    for i, raw in enumerate(entries):
        # The usual entry, {"rank": "17", "children": {"core": "..."}}, takes a short cut
        # (inline: it runs once per rank of a fragmented R);
        # anything else goes through the full checks, which also explain any error.
        if type(raw) is dict and len(raw) == 2:
            rank = raw.get("rank")
            kids = raw.get("children")
            if (
                type(rank) is str
                and type(kids) is dict
                and len(kids) == 1
                and type(core := kids.get("core")) is str
                and _PLAIN_RANK(rank)
            ):
                children = shared.get((core, None))
                if children is None:
                    children = read.children(core, _ABSENT, (*path, i, "children"))
                value = int(rank)
                pieces.append((value, value, len(children_of)))
                children_of.append(children)
                continue
        read.add(raw, (*path, i))

    # Entries almost always name disjoint ranks: then the runs are their intervals, sorted.
    pieces, children_of = read.pieces, read.children_of
    pieces.sort()
    if all(map(operator.lt, map(_UPPER, pieces), map(_LOWER, itertools.islice(pieces, 1, None)))):
        return _join_runs((lo, hi, children_of[k]) for lo, hi, k in pieces)
    merged: dict[tuple[int, ...], Children] = {}
    runs: list[Run] = []
    for lo, hi, keys in _segments(_layers(pieces)):
        children = merged.get(keys)
        if children is None:
            parts = [children_of[k] for k in keys]
            children = parts[0] if len(parts) == 1 else _merge_children(parts, (*path, keys[1]))
            merged[keys] = children
        runs.append((lo, hi, children))
    return _join_runs(runs)


_RANK_AND_CHILDREN = operator.itemgetter("rank", "children")
_CORE = operator.itemgetter("core")
#: Plain ranks (see _PLAIN_RANK) joined by commas.
_PLAIN_RANKS = re.compile(rf"{_RANK}(?:,{_RANK})*").fullmatch


def _read_plain(entries: list[Any]) -> tuple[Run, ...] | None:
    """The runs of an R_lite of plain entries, one rank each, or None for any other R_lite.

    Plain: every entry is ``{"rank": "<rank>", "children": {"core": "<small ids>"}}`` and
    the ranks ascend (a fragmented allocation, as flux-core writes it).  Anything else is
    left to the entry-by-entry reader, which also explains any error.

    Each step is one C-level pass over all the entries; only the distinct core lists are
    looked at one by one.
    """
    try:
        if set(map(len, entries)) != {2}:
            return None
        ranks, kids = zip(*map(_RANK_AND_CHILDREN, entries), strict=True)
        if set(map(type, kids)) != {dict} or set(map(len, kids)) != {1}:
            return None
        cores = list(map(_CORE, kids))
    except (KeyError, TypeError):
        return None  # an entry that is not an object, or with other keys
    if set(map(type, ranks)) != {str} or set(map(type, cores)) != {str}:
        return None
    joined = ",".join(ranks)
    if _PLAIN_RANKS(joined) is None or joined.count(",") != len(ranks) - 1:
        return None  # (a rank string holding a comma names several ranks)
    ids: list[int] = json.loads(f"[{joined}]")
    if not all(map(operator.lt, ids, itertools.islice(ids, 1, None))):
        return None  # out of order or repeated: the general reader sorts and merges
    table: dict[str, Children] = {}
    for core in dict.fromkeys(cores):
        bits = small_bits(core)
        if bits is None:
            return None
        table[core] = Children._small(bits, 0, [core, ""])
    held = list(map(table.__getitem__, cores))
    # Canonical texts of different sets differ, so equal children are the same object here;
    # when no two consecutive ranks share one, no runs join (every rank holding its own cores).
    shared = map(operator.is_, held, itertools.islice(held, 1, None))
    consecutive = map(operator.eq, map(_succ, ids), itertools.islice(ids, 1, None))
    if any(map(operator.and_, shared, consecutive)):
        return _join_runs(zip(ids, ids, held, strict=True))
    return tuple(zip(ids, ids, held, strict=True))


def _layers(pieces: Sequence[tuple[int, int, int]]) -> list[tuple[int, IdSet]]:
    """Each entry's ranks, from the sorted pieces, for the segment sweep of overlapping entries."""
    spans: dict[int, list[tuple[int, int]]] = {}
    for lo, hi, k in pieces:
        spans.setdefault(k, []).append((lo, hi))
    return [(k, IdSet(tuple(spans[k]))) for k in sorted(spans)]


def _join_runs(runs: Iterable[Run]) -> tuple[Run, ...]:
    """Join neighbouring runs with equal children (sorted, disjoint runs in)."""
    # Ranks that hold nothing (``core: ""`` and no GPUs) are still targets of this R.
    out: list[Run] = []
    for lo, hi, children in runs:
        if out and out[-1][1] == lo - 1 and out[-1][2] == children:
            out[-1] = (out[-1][0], hi, children)
        else:
            out.append((lo, hi, children))
    return tuple(out)


def _cached_idset(decoded: dict[str, IdSet], value: Any, path: Path, what: str) -> IdSet:
    """:func:`_idset`, remembering each string's set in ``decoded``."""
    ids = decoded.get(value) if isinstance(value, str) else None
    if ids is None:
        ids = _idset(value, path, what)
        decoded[value] = ids
    return ids
