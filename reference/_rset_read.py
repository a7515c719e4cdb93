"""RFC 20 resource sets: reading and validating an R document.

Part of :mod:`flux_conformance.reference.rset`, which documents the readings taken here.  The
typed values every part uses are in :mod:`._rset_json`, and R_lite's entries are read by
:mod:`._rset_rlite`; this module reads the rest (nodelist, properties, times, nslots, the
scheduling and attributes sections) and puts the document together.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flux_conformance.reference import hostlist
from flux_conformance.reference._idset_codec import decode_bits
from flux_conformance.reference._limits import MAX_ID, MAX_RANKS, check_answer_size
from flux_conformance.reference._rset_json import (
    _array,
    _check_times,
    _fail,
    _idset,
    _json_type,
    _object,
    _string,
    _time,
    _unknown_keys,
)
from flux_conformance.reference._rset_model import (
    Path,
    PropertySets,
    ResourceSet,
    bits_pay,
    property_name_problem,
    ranks_of,
)
from flux_conformance.reference._rset_rlite import _cached_idset, _join_runs, _read_r_lite
from flux_conformance.reference._speed import gc_paused
from flux_conformance.reference.editions import Edition, edition_named
from flux_conformance.reference.errors import FormatError, InvalidError, LimitError
from flux_conformance.reference.idset import IdSet

__all__ = [
    "_array",
    "_cached_idset",
    "_check_times",
    "_fail",
    "_idset",
    "_join_runs",
    "_object",
    "_string",
    "_time",
    "decode",
    "load",
    "validate",
]

# ---------------------------------------------------------------------------------------------
# Reading an R document.


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
