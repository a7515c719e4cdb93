"""RFC 20 resource sets: reading and validating an R document.

Part of :mod:`flux_conformance.reference.rset`, which documents the readings taken here.
"""

from __future__ import annotations

import itertools
import json
import math
import operator
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from flux_conformance.reference import hostlist
from flux_conformance.reference._idset_codec import decode_bits
from flux_conformance.reference._limits import MAX_ID, MAX_RANKS, check_answer_size
from flux_conformance.reference._rset_children import small_bits
from flux_conformance.reference._rset_model import (
    _EMPTY,
    Children,
    Number,
    Path,
    PropertySets,
    ResourceSet,
    Run,
    _segments,
    _succ,
    bits_pay,
    property_name_problem,
    ranks_of,
)
from flux_conformance.reference._speed import gc_paused
from flux_conformance.reference.editions import Edition, edition_named
from flux_conformance.reference.errors import FormatError, InvalidError, LimitError, format_path
from flux_conformance.reference.idset import IdSet

__all__ = [
    "_array",
    "_check_times",
    "_fail",
    "_idset",
    "_object",
    "_string",
    "_time",
    "decode",
    "load",
    "validate",
]

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


def _check_times(
    start: Number | None, end: Number | None, path: Path, *, zero_unset: bool = False
) -> None:
    """Refuse an expiration that is not later than the starttime.

    Since RFC 20 ``e775b80`` (``zero_unset``) a time of 0 means "unset", so it bounds nothing.
    Before, the text gave 0 no meaning; the one exception the reference makes is flux-core's
    encoding of an R without times, both set to 0.
    """
    if zero_unset:
        start = None if start == 0 else start
        end = None if end == 0 else end
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


def _read_nodelist(value: Any, path: Path) -> list[str]:
    items = _array(value, path, "nodelist")
    hosts: list[str] = []
    for i, item in enumerate(items):
        text = _string(item, (*path, i), "a nodelist entry")
        try:
            # One budget for the whole nodelist, not one per entry.
            hosts.extend(hostlist.decode(text, limit=MAX_RANKS - len(hosts)))
        except LimitError as exc:
            raise exc.with_path((*path, i)) from None
        except FormatError as exc:
            raise _fail(f"not a valid RFC 29 hostlist: {exc.reason}", (*path, i)) from None
    return hosts


def _read_properties(
    value: Any, ranks: IdSet, path: Path
) -> tuple[Mapping[str, IdSet], dict[str | None, int]]:
    """Read the properties, which may name ranks of R_lite only.

    Also returns, when the ranks are small enough (:func:`bits_pay`), their int bitsets
    (under each property's name; the ranks' own under ``None``).
    """
    table = _object(value, path, "properties")
    last = ranks.last()
    # Small ranks: a long property list is read straight into a bitset (kept for set
    # operations and matching), and checked against the ranks' bitset in one C operation;
    # otherwise a bisection per interval, or just a look at the ends when the ranks are
    # one span.
    if last is None or not bits_pay(ranks):
        inside = ranks.subset_test()
        out: dict[str, IdSet] = {}
        for name, raw in table.items():
            ids = _property(name, raw, path)
            if not inside(ids):
                raise _missing_ranks(name, ids, ranks, path)
            if ids.intervals:
                out[name] = ids
        return out, {}
    held = ranks.to_bits()
    bits: dict[str | None, int] = {None: held}
    # Scattered ranks: every property's bitset is made here, for the subset check and for
    # later set operations and matching; on one span, only the long lists' (a short list
    # checks against the span's two ends, and its bitset is made when something asks).
    scattered = len(ranks.intervals) > 1
    # (On one span, a list of a few wide blocks merges and writes faster as intervals.)
    long_text = _LONG_LIST if scattered else (last - ranks.intervals[0][0] + 1) // _RANKS_PER_CHAR
    inside = ranks.subset_test()
    sets: dict[str, IdSet | None] = {}
    texts: dict[str, str] = {}
    for name, raw in table.items():
        # A long list is read straight into a bitset (the usual scattered property); any
        # other text is decoded in full, which also explains an error.
        found = decode_bits(raw, last + 1) if type(raw) is str and len(raw) >= long_text else None
        if found is None:
            ids = _property(name, raw, path)
            if not ids.intervals:
                continue
            if scattered:
                # (Ranks past the last are refused before a bitset of them is made.)
                if ids.intervals[-1][1] > last or (own := ids.to_bits()) & ~held:
                    raise _missing_ranks(name, ids, ranks, path)
                bits[name] = own
            elif not inside(ids):
                raise _missing_ranks(name, ids, ranks, path)
            sets[name] = ids
        elif found:
            problem = property_name_problem(name)
            if problem:
                raise _fail(problem, (*path, name))
            if found & ~held:
                raise _missing_ranks(name, _idset(raw, (*path, name), name), ranks, path)
            bits[name] = found
            sets[name] = None
            texts[name] = raw
    # Only the sets read from long lists are held as bits until asked for.
    long_lists = {name: bits[name] for name, ids in sets.items() if ids is None}
    return PropertySets(sets, long_lists, texts), bits


#: Property lists at least this long are read as bitsets on scattered ranks (decode_bits
#: itself declines shorter ones) ...
_LONG_LIST = 0
#: ... and on one span of ranks when they have a character for every this many ranks of
#: the span: then intervals are so many that operations on bitsets (whose cost follows the
#: span) are the cheaper ones.
_RANKS_PER_CHAR = 4


def _property(name: str, raw: Any, path: Path) -> IdSet:
    """One property's name checked and its idset decoded."""
    problem = property_name_problem(name)
    if problem:
        raise _fail(problem, (*path, name))
    return _idset(raw, (*path, name), f"property {name!r}")


def _missing_ranks(name: str, ids: IdSet, ranks: IdSet, path: Path) -> InvalidError:
    return _fail(
        f"property {name!r} names ranks {(ids - ranks).encode()} that R_lite lacks", (*path, name)
    )


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


def _check_scheduling(value: Any, path: Path) -> None:
    """RFC 20 since ``8dfe0be``: scheduler-specific data; only ``writer``, if given, is defined.

    ``writer`` is a string (a URI whose scheme names the scheduler that wrote the key); the
    other keys belong to that scheduler, and the rest of Flux ignores them, so they are not
    checked (a JGF graph included) and draw no warning.
    """
    sched = _object(value, path, "scheduling")
    if "writer" in sched:
        _string(sched["writer"], (*path, "writer"), "scheduling.writer")


def _nslots(value: Any, path: Path) -> None:
    """RFC 20 since ``8da980e``: the number of slots of an allocation, an integer above 0."""
    if type(value) is not int:
        raise _fail(f"nslots must be an integer, not {_json_type(value)}", path)
    if value <= 0:
        raise _fail("nslots must be greater than 0", path)
    if value > MAX_ID:
        raise LimitError(f"nslots is above {MAX_ID}", path=path)


def _check_attributes(value: Any, path: Path, warnings: list[str]) -> None:
    attrs = _object(value, path, "attributes")
    _unknown_keys(attrs, ("system",), path, warnings)
    if "system" in attrs:
        system = _object(attrs["system"], (*path, "system"), "attributes.system")
        if "scheduler" in system:
            _object(system["scheduler"], (*path, "system", "scheduler"), "scheduler")


def _read(doc: Any, warnings: list[str], edition: Edition) -> ResourceSet:
    """Validate an R document in full, as ``edition`` of RFC 20 reads it; return its form."""
    top = _object(doc, (), "an R document")
    if edition.r_execution_required:
        # RFC 20 since e775b80: version and execution, scheduling optional, no attributes.
        _unknown_keys(top, ("version", "execution", "scheduling"), (), warnings)
    else:
        _unknown_keys(top, ("version", "execution", "scheduling", "attributes"), (), warnings)
    if "version" not in top:
        raise _fail("an R document needs a version", ())
    version = top["version"]
    if not isinstance(version, int) or isinstance(version, bool) or version != 1:
        raise _fail("version must be the integer 1", ("version",))
    if edition.r_execution_required:
        if "execution" not in top:
            raise _fail("an R document needs execution", ())
        if "scheduling" in top:
            _check_scheduling(top["scheduling"], ("scheduling",))
    else:
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
    known: tuple[str, ...] = ("R_lite", "nodelist", "properties", "starttime", "expiration")
    if edition.r_nslots:
        known = (*known, "nslots")
        if "nslots" in ex:
            _nslots(ex["nslots"], (*path, "nslots"))
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
    _check_times(starttime, expiration, (*path, "expiration"), zero_unset=edition.r_zero_time_unset)
    runs = _read_r_lite(ex["R_lite"], (*path, "R_lite"), warnings)
    hosts = _read_nodelist(ex["nodelist"], (*path, "nodelist"))
    count = sum(hi - lo + 1 for lo, hi, _ in runs)
    if len(hosts) != count:
        raise _fail(
            f"nodelist names {len(hosts)} hosts but R_lite has {count} distinct ranks",
            (*path, "nodelist"),
        )
    ranks = ranks_of(runs)
    props, bits = _read_properties(ex.get("properties", {}), ranks, (*path, "properties"))
    result = ResourceSet(tuple(runs), tuple(hosts), props, starttime, expiration)
    return result._keep_ranks(ranks)._keep_bits(bits)


def load(doc: Any, *, edition: str | None = None) -> tuple[ResourceSet, list[str]]:
    """Validate an R document; return its decoded form and the warnings it drew.

    ``edition`` names the edition of RFC 20 to follow (:mod:`reference.editions`; None: the
    latest).
    """
    warnings: list[str] = []
    with gc_paused():
        return _read(doc, warnings, edition_named(edition)), warnings


def validate(doc: Any, *, edition: str | None = None) -> list[str]:
    """Validate an R document in full; return warnings, raise :class:`InvalidError`."""
    return load(doc, edition=edition)[1]


def decode(doc: Any, *, edition: str | None = None) -> list[dict[str, Any]]:
    """Return the per-rank form of an R document, ascending by rank.

    Each item is ``{rank, hostname, cores, gpus, properties}`` where cores and gpus are
    canonical RFC 22 strings (``""`` when there are none) and properties a sorted list.
    """
    rset = load(doc, edition=edition)[0]
    check_answer_size(_decoded_size(rset), "the decoded form")
    return rset.to_ranks()


#: The JSON text of one decoded rank without its values, as ``json.dumps`` writes it.
_RANK_FRAME = len('{"rank": , "hostname": "", "cores": "", "gpus": "", "properties": []}, ')


def _decoded_size(rset: ResourceSet) -> int:
    """A lower bound of the bytes of ``rset``'s decoded form, found without building it."""
    size = sum(map(len, rset.hostnames))
    for lo, hi, children in rset.runs:
        count = hi - lo + 1
        size += count * (_RANK_FRAME + len(children.core_text()) + len(children.gpu_text()))
        size += _digits(lo, hi)
    for name, ids in rset.properties.items():
        size += len(ids) * (len(name) + 2)
    return size


def _digits(lo: int, hi: int) -> int:
    """The decimal digits of every integer from ``lo`` to ``hi``, counted by powers of ten."""
    total, width, start = 0, 1, 0
    while start <= hi:
        end = 10**width - 1
        if end >= lo:
            total += (min(hi, end) - max(lo, start) + 1) * width
        start, width = end + 1, width + 1
    return total
