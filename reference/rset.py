"""RFC 20 resource sets (R): validation, the per-rank decoded form, encoding, set operations.

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

Limits (``limit``): ids above 2**64-1, and a nodelist that expands to more than 4,000,000 hosts
in all (which also bounds the ranks, since there is one host per rank).
"""

from __future__ import annotations

import bisect
import collections
import functools
import itertools
import math
import operator
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from flux_conformance.reference import hostlist
from flux_conformance.reference._limits import MAX_EXPANSION
from flux_conformance.reference._speed import gc_paused
from flux_conformance.reference.errors import FormatError, InvalidError, LimitError, format_path
from flux_conformance.reference.idset import IdSet

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
    "property_name_problem",
    "union",
    "validate",
]

#: Characters RFC 20 ("Execution", properties) forbids in a property name.
ILLEGAL_PROPERTY_CHARACTERS = frozenset("!&'\"^`|()")

_EMPTY = IdSet.from_intervals(())

#: What RFC 29 allows in a host name: printable ASCII except space, brackets and comma.
_HOSTNAME_CHARACTERS = frozenset(chr(c) for c in range(0x21, 0x7F)) - frozenset("[],")

Path = tuple[str | int, ...]
Number = int | float
K = TypeVar("K")


def property_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be an RFC 20 property name, or ``None`` when it can."""
    if not name:
        return "a property name may not be empty"
    bad = sorted({ch for ch in name if ch in ILLEGAL_PROPERTY_CHARACTERS})
    if bad:
        return f"property name {name!r} contains {' '.join(bad)}, which RFC 20 forbids"
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        # Lone surrogates survive JSON decoding but are not UTF-8.
        return f"property name {name!r} is not valid UTF-8"
    return None


@dataclass(frozen=True)
class Children:
    """The compute resources one execution target holds: logical core and GPU ids."""

    cores: IdSet
    gpus: IdSet

    @property
    def empty(self) -> bool:
        """Whether the target holds neither cores nor GPUs."""
        return not self.cores.intervals and not self.gpus.intervals

    def to_json(self) -> dict[str, str]:
        """Return the ``children`` object of an R_lite entry (``gpu`` only when there are GPUs)."""
        out = {"core": self.cores.encode()}
        if self.gpus.intervals:
            out["gpu"] = self.gpus.encode()
        return out


#: One run: the inclusive rank interval ``lo..hi`` whose ranks all hold ``children``.
Run = tuple[int, int, Children]


@dataclass(frozen=True)
class ResourceSet:
    """A decoded R: rank runs, host names in rank order, properties, validity window.

    ``runs`` are sorted, disjoint and maximal (adjacent runs differ in children).
    ``hostnames[i]`` is the host of the i-th smallest rank.  ``properties`` maps each name to
    the non-empty set of ranks it applies to (always a subset of :attr:`ranks`).
    """

    runs: tuple[Run, ...]
    hostnames: tuple[str, ...]
    properties: Mapping[str, IdSet]
    starttime: Number | None = None
    expiration: Number | None = None
    _host_index: dict[str, int | list[int]] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )
    _ranks: list[IdSet] = field(default_factory=list, init=False, compare=False, repr=False)

    @property
    def ranks(self) -> IdSet:
        """Every rank of the set (computed once)."""
        if not self._ranks:
            spans: list[tuple[int, int]] = []
            for lo, hi, _ in self.runs:
                if spans and spans[-1][1] == lo - 1:
                    spans[-1] = (spans[-1][0], hi)
                else:
                    spans.append((lo, hi))
            self._ranks.append(IdSet(tuple(spans)))
        return self._ranks[0]

    def __len__(self) -> int:
        return len(self.hostnames)

    def iter_ranks(self) -> Iterator[tuple[int, str, Children]]:
        """Each rank in ascending order with its host name and children."""
        index = 0
        for lo, hi, children in self.runs:
            for rank in range(lo, hi + 1):
                yield rank, self.hostnames[index], children
                index += 1

    def ranks_of_hosts(self, names: Iterable[str]) -> IdSet:
        """Return the ranks whose host name is one of ``names`` (index built on first use)."""
        index = self._host_index
        if not index and self.hostnames:
            ranks = itertools.chain.from_iterable(range(lo, hi + 1) for lo, hi, _ in self.runs)
            index.update(zip(self.hostnames, ranks, strict=True))
            if len(index) != len(self.hostnames):
                # Some host runs several ranks: map those hosts to every rank they run.
                repeated: dict[str, list[int]] = {}
                for host, rank in zip(self.hostnames, self.iter_rank_ids(), strict=True):
                    repeated.setdefault(host, []).append(rank)
                index.update({h: r for h, r in repeated.items() if len(r) > 1})
        found: list[int] = []
        for name in names:
            hit = index.get(name)
            if hit is None:
                continue
            if isinstance(hit, int):
                found.append(hit)
            else:
                found.extend(hit)
        return IdSet.from_ids(found)

    def iter_rank_ids(self) -> Iterator[int]:
        """Each rank in ascending order."""
        for lo, hi, _ in self.runs:
            yield from range(lo, hi + 1)

    def property(self, name: str) -> IdSet:
        """Return the ranks that have property ``name`` (empty when none has it)."""
        return self.properties.get(name, _EMPTY)

    def positions(self, ids: IdSet) -> Iterator[int]:
        """The indexes (0 = the smallest rank) of ``ids``, which must all be ranks of the set."""
        # A run of ranks lo..hi sits at indexes start..start + hi - lo, and ids inside the set
        # are never split by a missing rank: each interval of ``ids`` maps to one index range.
        # Every step is a map() over C callables: properties hold thousands of intervals.
        intervals = ids.intervals
        los = list(map(_LOWER, intervals))
        spans = map(operator.sub, map(_succ, map(_UPPER, intervals)), los)
        spans_list = list(spans)
        ranks = self.ranks.intervals
        if len(ranks) == 1:
            firsts = list(map((-ranks[0][0]).__add__, los))
        else:
            run_los = [lo for lo, _, _ in self.runs]
            shift = [start - lo for start, lo in zip(_run_starts(self.runs), run_los, strict=True)]
            firsts = list(map(operator.add, los, map(shift.__getitem__, _run_of(run_los, los))))
        stops = map(operator.add, firsts, spans_list)
        return itertools.chain.from_iterable(map(range, firsts, stops))

    def to_ranks(self) -> list[dict[str, Any]]:
        """Return the decoded, per-rank form (see :func:`decode`)."""
        with gc_paused():
            return self._to_ranks()

    def _to_ranks(self) -> list[dict[str, Any]]:
        names = self._property_names()
        out: list[dict[str, Any]] = []
        index = 0
        hostnames = self.hostnames
        for lo, hi, children in self.runs:
            cores = children.cores.encode()
            gpus = children.gpus.encode()
            for rank in range(lo, hi + 1):
                out.append(
                    {
                        "rank": rank,
                        "hostname": hostnames[index],
                        "cores": cores,
                        "gpus": gpus,
                        "properties": list(names[index]),
                    }
                )
                index += 1
        return out

    def _property_names(self) -> list[list[str]] | list[tuple[str, ...]]:
        """The sorted property names of each rank, in rank order (copied by the caller)."""
        intervals = sum(len(ids.intervals) for ids in self.properties.values())
        if intervals * 2 < len(self.hostnames):
            # Properties in wide blocks: sweep their segments, sharing one tuple per segment.
            out: list[tuple[str, ...]] = [()] * len(self.hostnames)
            layers = sorted(self.properties.items())
            for lo, hi, keys in _segments(layers):
                first = next(self.positions(IdSet(((lo, lo),))))
                out[first : first + hi - lo + 1] = [keys] * (hi - lo + 1)
            return out
        # Scattered properties: append each name to the list of every rank that has it,
        # looping in C.
        names: list[list[str]] = [[] for _ in self.hostnames]
        for name, ids in sorted(self.properties.items()):
            lists = map(names.__getitem__, self.positions(ids))
            collections.deque(map(list.append, lists, itertools.repeat(name)), maxlen=0)
        return names

    def to_json(self) -> dict[str, Any]:
        """Return an R document (version 1, execution only) describing this set."""
        with gc_paused():
            return self._to_json()

    def _to_json(self) -> dict[str, Any]:
        groups: dict[Children, list[tuple[int, int]]] = {}
        for lo, hi, children in self.runs:
            groups.setdefault(children, []).append((lo, hi))
        # Runs are maximal, so each group's spans are already canonical (ascending, apart).
        r_lite = [
            {"rank": IdSet(tuple(spans)).encode(), "children": children.to_json()}
            for children, spans in groups.items()
        ]
        execution: dict[str, Any] = {
            "R_lite": r_lite,
            "nodelist": [hostlist.encode(list(self.hostnames))] if self.hostnames else [],
        }
        if self.properties:
            execution["properties"] = {
                name: ids.encode() for name, ids in sorted(self.properties.items())
            }
        if self.starttime is not None:
            execution["starttime"] = self.starttime
        if self.expiration is not None:
            execution["expiration"] = self.expiration
        return {"version": 1, "execution": execution}


# ---------------------------------------------------------------------------------------------
# Interval sweeps: the one algorithm behind R_lite merging, properties and set operations.


def _segments(layers: Sequence[tuple[K, IdSet]]) -> list[tuple[int, int, tuple[K, ...]]]:
    """Split the union of the layers' sets into maximal segments of constant membership.

    Returns ``(lo, hi, keys)`` for each segment, ascending, where ``keys`` are the layers (in
    the order given) whose set holds every id of ``lo..hi``.  Work is proportional to the
    number of intervals, never to the number of ids.
    """
    events: list[tuple[int, int, int]] = []  # (position, +1 start / -1 stop, layer index)
    for index, (_key, ids) in enumerate(layers):
        for lo, hi in ids.intervals:
            events.append((lo, 1, index))
            events.append((hi + 1, -1, index))
    if not events:
        return []
    events.sort()
    active: set[int] = set()
    out: list[tuple[int, int, tuple[K, ...]]] = []
    position = events[0][0]
    i = 0
    while i < len(events):
        here = events[i][0]
        if active and here > position:
            keys = tuple(layers[k][0] for k in sorted(active))
            if out and out[-1][1] == position - 1 and out[-1][2] == keys:
                out[-1] = (out[-1][0], here - 1, keys)
            else:
                out.append((position, here - 1, keys))
        while i < len(events) and events[i][0] == here:
            _, delta, layer = events[i]
            if delta > 0:
                active.add(layer)
            else:
                active.discard(layer)
            i += 1
        position = here
    return out


_succ = (1).__add__
_LOWER: Callable[[tuple[int, int]], int] = operator.itemgetter(0)
_UPPER: Callable[[tuple[int, int]], int] = operator.itemgetter(1)


def _run_of(run_los: list[int], ranks: list[int]) -> Iterator[int]:
    """For each rank (each inside some run), the index of its run among ``run_los``."""
    return map((-1).__add__, map(functools.partial(bisect.bisect_right, run_los), ranks))


def _run_starts(runs: Sequence[Run]) -> list[int]:
    starts: list[int] = []
    total = 0
    for lo, hi, _ in runs:
        starts.append(total)
        total += hi - lo + 1
    return starts


# ---------------------------------------------------------------------------------------------
# Reading an R document.


def _fail(reason: str, path: Path) -> InvalidError:
    return InvalidError(reason, path=path)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _idset(value: Any, path: Path, what: str) -> IdSet:
    """Decode an RFC 22 string inside a document: bad text makes the document invalid."""
    if not isinstance(value, str):
        raise _fail(f"{what} must be an RFC 22 idset string, not {_json_type(value)}", path)
    try:
        return IdSet.decode(value)
    except LimitError as exc:
        raise exc.with_path(path) from None
    except FormatError as exc:
        raise _fail(f"{what} is not a valid RFC 22 idset: {exc.reason}", path) from None


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _object(value: Any, path: Path, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(f"{what} must be an object, not {_json_type(value)}", path)
    return value


def _array(value: Any, path: Path, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise _fail(f"{what} must be an array, not {_json_type(value)}", path)
    return value


def _string(value: Any, path: Path, what: str) -> str:
    if not isinstance(value, str):
        raise _fail(f"{what} must be a string, not {_json_type(value)}", path)
    return value


def _unknown_keys(
    obj: Mapping[str, Any], known: Iterable[str], path: Path, warnings: list[str]
) -> None:
    allowed = set(known)
    for key in obj:
        if key not in allowed:
            where = format_path((*path, key))
            warnings.append(f"{where}: key reserved for future extensions; ignored")


def _check_times(start: Number | None, end: Number | None, path: Path) -> None:
    """Refuse an expiration that is not later than the starttime.

    The one exception is flux-core's encoding of an R without times, both set to 0.
    """
    if start is not None and end is not None and not end > start and (start, end) != (0, 0):
        raise _fail("expiration must be later than starttime", path)


def _time(value: Any, path: Path, what: str) -> Number:
    if not _is_number(value) or not math.isfinite(value):
        raise _fail(f"{what} must be a number of seconds since the epoch", path)
    if value < 0:
        raise _fail(f"{what} may not be negative", path)
    number: Number = value
    return number


def _merge_children(parts: Sequence[Children], path: Path) -> Children:
    """Union of children listed for one rank by several R_lite entries; ids must be disjoint."""
    cores = parts[0].cores
    gpus = parts[0].gpus
    for extra in parts[1:]:
        if (cores & extra.cores).intervals or (gpus & extra.gpus).intervals:
            raise _fail("a rank listed by several entries has overlapping core or GPU ids", path)
        cores = cores | extra.cores
        gpus = gpus | extra.gpus
    return Children(cores, gpus)


def _read_r_lite(value: Any, path: Path, warnings: list[str]) -> tuple[Run, ...]:
    entries = _array(value, path, "R_lite")
    layers: list[tuple[int, IdSet]] = []
    children_of: list[Children] = []
    # Children strings repeat across entries (every node of a partition holds "0-47"): each
    # distinct string is decoded once per document.
    decoded: dict[str, IdSet] = {}
    for i, raw in enumerate(entries):
        where = (*path, i)
        entry = _object(raw, where, "an R_lite entry")
        if len(entry) != 2 or "rank" not in entry or "children" not in entry:
            # The usual two keys need no look for reserved ones.
            _unknown_keys(entry, ("rank", "children"), where, warnings)
        if "rank" not in entry:
            raise _fail("an R_lite entry needs a rank idset", where)
        if "children" not in entry:
            raise _fail("an R_lite entry needs children", where)
        ranks = _idset(entry["rank"], (*where, "rank"), "rank")
        kids = _object(entry["children"], (*where, "children"), "children")
        _unknown_keys(kids, ("core", "gpu"), (*where, "children"), warnings)
        if "core" not in kids:
            raise _fail("children need a core idset", (*where, "children"))
        cores = _cached_idset(decoded, kids["core"], (*where, "children", "core"), "core")
        gpus = _EMPTY
        if "gpu" in kids:
            gpus = _cached_idset(decoded, kids["gpu"], (*where, "children", "gpu"), "gpu")
        if not ranks.intervals:
            warnings.append(f"R_lite[{i}] names no ranks; it adds nothing")
        layers.append((i, ranks))
        children_of.append(Children(cores, gpus))

    # Entries almost always name disjoint ranks: then the runs are their intervals, sorted.
    pieces = sorted(
        (lo, hi, k) for k, (_, ranks) in enumerate(layers) for lo, hi in ranks.intervals
    )
    if all(before[1] < after[0] for before, after in itertools.pairwise(pieces)):
        return _join_runs((lo, hi, children_of[k]) for lo, hi, k in pieces)
    merged: dict[tuple[int, ...], Children] = {}
    runs: list[Run] = []
    for lo, hi, keys in _segments(layers):
        children = merged.get(keys)
        if children is None:
            parts = [children_of[k] for k in keys]
            children = parts[0] if len(parts) == 1 else _merge_children(parts, (*path, keys[1]))
            merged[keys] = children
        runs.append((lo, hi, children))
    return _join_runs(runs)


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


def _read_nodelist(value: Any, path: Path) -> list[str]:
    items = _array(value, path, "nodelist")
    hosts: list[str] = []
    for i, item in enumerate(items):
        text = _string(item, (*path, i), "a nodelist entry")
        try:
            # One budget for the whole nodelist, not one per entry.
            hosts.extend(hostlist.decode(text, limit=MAX_EXPANSION - len(hosts)))
        except LimitError as exc:
            raise exc.with_path((*path, i)) from None
        except FormatError as exc:
            raise _fail(f"not a valid RFC 29 hostlist: {exc.reason}", (*path, i)) from None
    return hosts


def _read_properties(value: Any, ranks: IdSet, path: Path) -> dict[str, IdSet]:
    table = _object(value, path, "properties")
    out: dict[str, IdSet] = {}
    inside = ranks.subset_test()
    for name, raw in table.items():
        problem = property_name_problem(name)
        if problem:
            raise _fail(problem, (*path, name))
        ids = _idset(raw, (*path, name), f"property {name!r}")
        if not inside(ids):
            raise _fail(
                f"property {name!r} names ranks {(ids - ranks).encode()} that R_lite lacks",
                (*path, name),
            )
        if ids.intervals:
            out[name] = ids
    return out


def _check_graph(value: Any, path: Path, warnings: list[str]) -> None:
    """RFC 20 "Scheduling": a JGF graph; checked structurally (keys and value types)."""
    sched = _object(value, path, "scheduling")
    _unknown_keys(sched, ("graph",), path, warnings)
    if "graph" not in sched:
        raise _fail("scheduling needs a graph", path)
    gpath = (*path, "graph")
    graph = _object(sched["graph"], gpath, "graph")
    for key in ("nodes", "edges"):
        if key not in graph:
            raise _fail(f"the graph needs {key}", gpath)
    nodes = _array(graph["nodes"], (*gpath, "nodes"), "nodes")
    ids: set[str] = set()
    for i, raw in enumerate(nodes):
        where = (*gpath, "nodes", i)
        node = _object(raw, where, "a graph vertex")
        for key in ("id", "metadata"):
            if key not in node:
                raise _fail(f"a graph vertex needs {key}", where)
        vid = _string(node["id"], (*where, "id"), "a vertex id")
        if vid in ids:
            raise _fail(f"vertex id {vid!r} is not unique", (*where, "id"))
        ids.add(vid)
        _check_vertex_metadata(node["metadata"], (*where, "metadata"))
    edges = _array(graph["edges"], (*gpath, "edges"), "edges")
    for i, raw in enumerate(edges):
        where = (*gpath, "edges", i)
        edge = _object(raw, where, "a graph edge")
        for key in ("source", "target", "metadata"):
            if key not in edge:
                raise _fail(f"a graph edge needs {key}", where)
        for key in ("source", "target"):
            end = _string(edge[key], (*where, key), f"an edge {key}")
            if end not in ids:
                raise _fail(f"edge {key} {end!r} names no vertex", (*where, key))
        meta = _object(edge["metadata"], (*where, "metadata"), "edge metadata")
        for key in ("subsystem", "relationship"):
            if key not in meta:
                raise _fail(f"edge metadata needs {key}", (*where, "metadata"))
            _string(meta[key], (*where, "metadata", key), key)


_VERTEX_STRINGS = ("type", "uuid", "basename", "name", "unit")


def _check_vertex_metadata(value: Any, path: Path) -> None:
    meta = _object(value, path, "vertex metadata")
    for key in (*_VERTEX_STRINGS, "id", "properties", "size"):
        if key not in meta:
            raise _fail(f"vertex metadata needs {key} (RFC 20, Graph Vertices)", path)
    for key in _VERTEX_STRINGS:
        _string(meta[key], (*path, key), key)
    if not isinstance(meta["id"], int) or isinstance(meta["id"], bool):
        raise _fail("vertex metadata id must be an integer", (*path, "id"))
    size = meta["size"]
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise _fail("vertex metadata size must be a non-negative integer", (*path, "size"))
    if not isinstance(meta["properties"], dict | list):
        raise _fail("vertex metadata properties must be an object or array", (*path, "properties"))


def _check_attributes(value: Any, path: Path, warnings: list[str]) -> None:
    attrs = _object(value, path, "attributes")
    _unknown_keys(attrs, ("system",), path, warnings)
    if "system" in attrs:
        system = _object(attrs["system"], (*path, "system"), "attributes.system")
        if "scheduler" in system:
            _object(system["scheduler"], (*path, "system", "scheduler"), "scheduler")


def _read(doc: Any, warnings: list[str]) -> ResourceSet:
    """Validate an R document in full and return its decoded form."""
    top = _object(doc, (), "an R document")
    _unknown_keys(top, ("version", "execution", "scheduling", "attributes"), (), warnings)
    if "version" not in top:
        raise _fail("an R document needs a version", ())
    version = top["version"]
    if not isinstance(version, int) or isinstance(version, bool) or version != 1:
        raise _fail("version must be the integer 1", ("version",))
    if "execution" not in top and "scheduling" not in top:
        raise _fail("an R document needs execution or scheduling (or both)", ())
    if "scheduling" in top:
        _check_graph(top["scheduling"], ("scheduling",), warnings)
    if "attributes" in top:
        _check_attributes(top["attributes"], ("attributes",), warnings)
    if "execution" not in top:
        # Only the graph describes resources; the execution view is empty.
        return ResourceSet((), (), {})

    path: Path = ("execution",)
    ex = _object(top["execution"], path, "execution")
    known = ("R_lite", "nodelist", "properties", "starttime", "expiration")
    _unknown_keys(ex, known, path, warnings)
    for key in ("R_lite", "nodelist"):
        if key not in ex:
            raise _fail(f"execution needs {key}", path)
    starttime = (
        _time(ex["starttime"], (*path, "starttime"), "starttime") if ("starttime" in ex) else None
    )
    expiration = (
        _time(ex["expiration"], (*path, "expiration"), "expiration")
        if ("expiration" in ex)
        else None
    )
    _check_times(starttime, expiration, (*path, "expiration"))
    runs = _read_r_lite(ex["R_lite"], (*path, "R_lite"), warnings)
    hosts = _read_nodelist(ex["nodelist"], (*path, "nodelist"))
    count = sum(hi - lo + 1 for lo, hi, _ in runs)
    if len(hosts) != count:
        raise _fail(
            f"nodelist names {len(hosts)} hosts but R_lite has {count} distinct ranks",
            (*path, "nodelist"),
        )
    ranks = IdSet.from_intervals((lo, hi) for lo, hi, _ in runs)
    props = _read_properties(ex.get("properties", {}), ranks, (*path, "properties"))
    return ResourceSet(tuple(runs), tuple(hosts), props, starttime, expiration)


def load(doc: Any) -> tuple[ResourceSet, list[str]]:
    """Validate an R document; return its decoded form and the warnings it drew."""
    warnings: list[str] = []
    with gc_paused():
        return _read(doc, warnings), warnings


def validate(doc: Any) -> list[str]:
    """Validate an R document in full; return warnings, raise :class:`InvalidError`."""
    return load(doc)[1]


def decode(doc: Any) -> list[dict[str, Any]]:
    """Return the per-rank form of an R document, ascending by rank.

    Each item is ``{rank, hostname, cores, gpus, properties}`` where cores and gpus are
    canonical RFC 22 strings (``""`` when there are none) and properties a sorted list.
    """
    return load(doc)[0].to_ranks()


# ---------------------------------------------------------------------------------------------
# Building an R from the per-rank form.


def from_ranks(
    items: Any, *, starttime: Any = None, expiration: Any = None, path: Path = ()
) -> ResourceSet:
    """Build a :class:`ResourceSet` from the per-rank form :func:`decode` returns."""
    entries = _array(items, path, "the per-rank list")
    rows: list[tuple[int, str, Children, list[str]]] = []
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
        host = _string(item["hostname"], (*where, "hostname"), "hostname")
        if not host or not all(ch in _HOSTNAME_CHARACTERS for ch in host):
            # A name outside RFC 29's character set could not be written into a nodelist.
            raise _fail(f"{host!r} is not a valid host name", (*where, "hostname"))
        cores = _idset(item["cores"], (*where, "cores"), "cores")
        gpus = _idset(item.get("gpus", ""), (*where, "gpus"), "gpus")
        names = _array(item.get("properties", []), (*where, "properties"), "properties")
        for j, name in enumerate(names):
            text = _string(name, (*where, "properties", j), "a property name")
            problem = property_name_problem(text)
            if problem:
                raise _fail(problem, (*where, "properties", j))
        rows.append((rank, host, Children(cores, gpus), names))
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
    _check_times(start, end, ("expiration",))
    return ResourceSet(
        tuple(runs),
        tuple(row[1] for row in rows),
        {name: IdSet.from_ids(sorted(set(ids))) for name, ids in props.items()},
        start,
        end,
    )


def encode(value: Any) -> dict[str, Any]:
    """Return an R document for the per-rank form: a list, or ``{ranks, starttime?, ...}``."""
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
        )
    else:
        rset = from_ranks(value)
    return rset.to_json()


# ---------------------------------------------------------------------------------------------
# Set operations.

_Combine = Callable[[Children | None, Children | None], Children | None]


def _combine(a: ResourceSet, b: ResourceSet, how: _Combine, *, check_hosts: bool) -> ResourceSet:
    """Sweep the runs of ``a`` and ``b`` together and combine children segment by segment.

    ``how(x, y)`` gets the children of a segment in ``a`` and in ``b`` (``None`` where the
    segment is absent from that side) and returns the result's, or ``None`` to drop the ranks.
    Host names come from ``a`` where it has the rank, otherwise from ``b``.
    """
    # Segments lie between consecutive run boundaries of either side; no run starts or ends
    # inside one, so each side holds a segment whole or not at all.
    bounds = sorted(
        {lo for lo, _, _ in a.runs}
        | {hi + 1 for _, hi, _ in a.runs}
        | {lo for lo, _, _ in b.runs}
        | {hi + 1 for _, hi, _ in b.runs}
    )
    sides = (a, b)
    starts = (_run_starts(a.runs), _run_starts(b.runs))
    index = [0, 0]
    # Keyed by identity: runs share their Children objects, which stay alive meanwhile, and
    # hashing two id() values is far cheaper than hashing two pairs of interval tuples.
    memo: dict[tuple[int, int], Children | None] = {}
    runs: list[Run] = []
    hosts: list[str] = []
    for lo, end in itertools.pairwise(bounds):
        held: list[Children | None] = [None, None]
        where = [0, 0]
        for side in (0, 1):
            side_runs = sides[side].runs
            k = index[side]
            while k < len(side_runs) and side_runs[k][1] < lo:
                k += 1
            index[side] = k
            if k < len(side_runs) and side_runs[k][0] <= lo:
                held[side] = side_runs[k][2]
                where[side] = starts[side][k] + lo - side_runs[k][0]
        x, y = held
        if x is None and y is None:
            continue
        pair = (id(x), id(y))
        if pair not in memo:
            memo[pair] = how(x, y)
        result = memo[pair]
        if result is None:
            continue
        n = end - lo
        if x is not None:
            names = a.hostnames[where[0] : where[0] + n]
            if check_hosts and y is not None and b.hostnames[where[1] : where[1] + n] != names:
                raise _fail("the two sets give a rank different host names", ())
        else:
            names = b.hostnames[where[1] : where[1] + n]
        if runs and runs[-1][1] == lo - 1 and runs[-1][2] == result:
            runs[-1] = (runs[-1][0], end - 1, result)
        else:
            runs.append((lo, end - 1, result))
        hosts.extend(names)
    return ResourceSet(tuple(runs), tuple(hosts), {}, a.starttime, a.expiration)


def _with_properties(
    rs: ResourceSet, sources: Sequence[ResourceSet], *, trim: bool = True
) -> ResourceSet:
    """``rs`` with the properties of ``sources`` merged, restricted to its ranks if ``trim``."""
    ranks = rs.ranks
    merged: dict[str, list[IdSet]] = {}
    for src in sources:
        for name, ids in src.properties.items():
            merged.setdefault(name, []).append(ids)
    props: dict[str, IdSet] = {}
    for name, parts in merged.items():
        found = functools.reduce(IdSet.union, parts)
        if trim:
            found = found & ranks
        if found.intervals:
            props[name] = found
    return ResourceSet(rs.runs, rs.hostnames, props, rs.starttime, rs.expiration)


def _union_children(x: Children | None, y: Children | None) -> Children | None:
    if x is None or y is None:
        return x or y
    return Children(x.cores | y.cores, x.gpus | y.gpus)


def _diff_children(x: Children | None, y: Children | None) -> Children | None:
    if x is None or y is None:
        return x
    left = Children(x.cores - y.cores, x.gpus - y.gpus)
    # A rank that the subtraction left with nothing is gone.
    return None if left.empty else left


def _intersect_children(x: Children | None, y: Children | None) -> Children | None:
    if x is None or y is None:
        return None
    both = Children(x.cores & y.cores, x.gpus & y.gpus)
    return None if both.empty else both


def union(a: ResourceSet, b: ResourceSet) -> ResourceSet:
    """Every (rank, core, GPU) of either set; a rank's properties come from both."""
    # Every rank of either side stays, so the properties need no trimming to the result.
    return _with_properties(_combine(a, b, _union_children, check_hosts=True), (a, b), trim=False)


def difference(a: ResourceSet, b: ResourceSet) -> ResourceSet:
    """Return what ``a`` holds and ``b`` does not; ranks left with nothing are dropped."""
    return _with_properties(_combine(a, b, _diff_children, check_hosts=False), (a,))


def intersection(a: ResourceSet, b: ResourceSet) -> ResourceSet:
    """Return what both sets hold; a remaining rank's properties come from both."""
    return _with_properties(_combine(a, b, _intersect_children, check_hosts=False), (a, b))


# ---------------------------------------------------------------------------------------------
# Operations.


def _pair(value: Any) -> tuple[ResourceSet, ResourceSet]:
    top = _object(value, (), "the input")
    for key in ("a", "b"):
        if key not in top:
            raise _fail(f"the input needs {key}", ())
    for key in top:
        if key not in ("a", "b"):
            raise _fail(f"unknown key {key!r}", ())
    try:
        a = load(top["a"])[0]
    except FormatError as exc:
        raise exc.with_path(("a",)) from None
    try:
        b = load(top["b"])[0]
    except FormatError as exc:
        raise exc.with_path(("b",)) from None
    return a, b


def _op_validate(value: Any, *, edition: str) -> dict[str, Any]:
    del edition
    return {"warnings": validate(value)}


def _op_decode(value: Any, *, edition: str) -> list[dict[str, Any]]:
    del edition
    return decode(value)


def _op_encode(value: Any, *, edition: str) -> dict[str, Any]:
    del edition
    return encode(value)


def _set_op(func: Callable[[ResourceSet, ResourceSet], ResourceSet]) -> Callable[..., Any]:
    def op(value: Any, *, edition: str) -> dict[str, Any]:
        del edition
        with gc_paused():
            return func(*_pair(value)).to_json()

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
