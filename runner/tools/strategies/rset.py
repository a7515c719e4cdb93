"""Strategies for RFC 20 resource sets (R): documents, their per-rank form, and pairs of them.

Most documents are built from a model that is valid by construction -- ranks ascending with
gaps, each rank's cores and GPUs, a host per rank, properties naming ranks that exist, times --
and written the ways production writers write them (ranks of identical children merged into one
``R_lite`` entry, the nodelist as one hostlist or several strings).  Then the edges come in:
ids at 2**31, 2**32, 2**53, 2**64 and beyond (an id, never a range, so nothing expands), host
names with every RFC 29 form and every character RFC 29 forbids, property names with legal and
illegal characters, times and ``nslots`` of every sign and type, and one structural mutation
(a key dropped or of the wrong type, a nodelist one host short, a property on a rank that does
not exist).  Hypothesis shrinks towards the valid model, so a disagreement comes back as the
valid document closest to it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from flux_conformance.runner.tools.strategies._common import (
    ID_EDGES,
    mostly,
    near_valid,
    sometimes,
    weighted,
)

__all__ = [
    "ILLEGAL_PROPERTIES",
    "hostname",
    "property_name",
    "r_decode",
    "r_document",
    "r_encode",
    "r_pair",
    "r_validate",
    "rank_model",
]

#: A rank or child id: small ones mostly, fragmented, and the edges of integer types.
_id = st.one_of(st.integers(0, 9), st.integers(0, 200), st.sampled_from(ID_EDGES))

#: Host names an RFC 29 hostlist can hold: prefixes, digits, padding, suffixes.
_good_host = st.builds(
    lambda prefix, digits, suffix: prefix + digits + suffix,
    st.sampled_from(("n", "node", "rack1-n", "a.b-", "x_y", "N")),
    st.one_of(st.integers(0, 20).map(str), st.integers(0, 20).map(lambda n: f"{n:03d}")),
    st.sampled_from(("", "", "", "-ib", "x", ".local")),
)
#: Characters RFC 29 keeps out of a prefix or suffix: whitespace, controls, non-ASCII, and its
#: own punctuation.
FORBIDDEN_HOST_CHARACTERS = (" ", "\t", "\n", "\x00", "\x7f", "é", "\u00a0", "ñ", ",", "[", "]")
_bad_host = st.builds(
    lambda prefix, bad, digits: prefix + bad + digits,
    st.sampled_from(("h", "n", "")),
    st.sampled_from(FORBIDDEN_HOST_CHARACTERS),
    st.sampled_from(("0", "1", "")),
)


def hostname() -> st.SearchStrategy[str]:
    """A host name: mostly what a hostlist can hold, now and then one RFC 29 forbids."""
    return weighted(_good_host, _bad_host, 8)


#: Property names: legal ones (``@``, ``+``, ``-``, ``.``, digits) and ones RFC 20 forbids.
_LEGAL_PROPERTIES = ("ssd", "gpu", "big", "amd-mi50@gpu", "+queue", "a.b", "x_1", "9")
ILLEGAL_PROPERTIES = ("", "^x", "a&b", "a|b", "a!b", "(a)", "a'b", 'a"b', "a\\b", "a b", "é")


_legal_property = st.sampled_from(_LEGAL_PROPERTIES)


def property_name() -> st.SearchStrategy[str]:
    """A property name: mostly legal, sometimes one with a character RFC 20 forbids."""
    return weighted(_legal_property, st.sampled_from(ILLEGAL_PROPERTIES), 8)


def _idset(ids: list[int]) -> str:
    """``ids`` (ascending) as idset text, runs of two or more written lo-hi."""
    parts: list[str] = []
    index = 0
    while index < len(ids):
        end = index
        while end + 1 < len(ids) and ids[end + 1] == ids[end] + 1:
            end += 1
        parts.append(str(ids[index]) if end == index else f"{ids[index]}-{ids[end]}")
        index = end + 1
    return ",".join(parts)


@st.composite
def _child_ids(draw: st.DrawFn, *, allow_empty: bool, edges: bool = True) -> list[int]:
    """Core or GPU ids of one rank: a run from 0 (most often), fragments, or an edge id."""
    kind = draw(
        st.sampled_from(("run", "run", "fragments", "edge") if edges else ("run", "fragments"))
    )
    if kind == "run":
        return list(range(draw(st.integers(0 if allow_empty else 1, 8))))
    if kind == "fragments":
        return sorted(draw(st.sets(st.integers(0, 40), min_size=0 if allow_empty else 1)))
    return sorted({draw(st.integers(0, 3)), draw(st.sampled_from(ID_EDGES))})


#: Which edges a rank model goes to: none, one kind only, or all of them at once.  One kind
#: alone is the common case: an implementation refusing one edge (an id past 2**53) would
#: otherwise hide what it does with another in the same document (a host name with a space).
#: Hypothesis draws the first most: ids come last of the single kinds, as the edges that cost
#: an implementation the most time (a bitmap up to 2**31 takes flux-core seconds).
_EDGE_KINDS = ("none", "hosts", "properties", "ids", "all")


#: The host names and property names of ranks, by the kind of edges the model goes to (a
#: model of host edges has one forbidden host name, :func:`rank_model`).  Where the kind is
#: the model's own, the odd values come first (hypothesis draws the first branch most), half
#: the time; in a model of all edges, one time in eight.
_HOSTS_AND_NAMES = {
    kind: (
        hostname() if kind == "all" else _good_host,
        {
            "properties": st.one_of(st.sampled_from(ILLEGAL_PROPERTIES), _legal_property),
            "all": property_name(),
        }.get(kind, _legal_property),
    )
    for kind in _EDGE_KINDS
}


@st.composite
def rank_model(draw: st.DrawFn, *, max_ranks: int = 4) -> list[dict[str, Any]]:
    """The per-rank form of a valid R: ascending ranks with gaps, their hosts and children."""
    kind = draw(st.sampled_from(_EDGE_KINDS))
    ids = kind in ("ids", "all")
    hosts, names = _HOSTS_AND_NAMES[kind]
    ranks: list[dict[str, Any]] = []
    rank = -1
    count = draw(st.integers(0, max_ranks))
    # A model of host edges has one host name RFC 29 forbids: one departure, as in the near-valid
    # text inputs, so that how an implementation reads it is not hidden behind another.
    odd_host = draw(st.integers(0, count - 1)) if kind == "hosts" and count else -1
    for index in range(count):
        # The next rank: just after, after a gap, or an edge id when that still ascends.
        after = rank + draw(st.one_of(st.just(1), st.integers(1, 5)))
        edge = draw(st.sampled_from(ID_EDGES)) if ids and sometimes(draw, 5) else after
        rank = edge if edge > rank else after
        gpus = draw(_child_ids(allow_empty=True, edges=ids)) if draw(st.booleans()) else []
        ranks.append(
            {
                "rank": rank,
                "hostname": draw(_bad_host if index == odd_host else hosts),
                "cores": _idset(draw(_child_ids(allow_empty=False, edges=ids))),
                "gpus": _idset(gpus),
                "properties": sorted(draw(st.sets(names, max_size=2))),
            }
        )
    return ranks


def _entries(ranks: list[dict[str, Any]], merge: bool) -> list[dict[str, Any]]:
    """``R_lite`` entries: consecutive ranks with identical children merged when ``merge``."""
    entries: list[dict[str, Any]] = []
    groups: list[tuple[list[int], tuple[str, str]]] = []
    for item in ranks:
        children = (item["cores"], item["gpus"])
        if merge and groups and groups[-1][1] == children:
            groups[-1][0].append(item["rank"])
        else:
            groups.append(([item["rank"]], children))
    for rank_ids, (cores, gpus) in groups:
        child = {"core": cores} if not gpus else {"core": cores, "gpu": gpus}
        entries.append({"rank": _idset(rank_ids), "children": child})
    return entries


def _nodelist(hosts: list[str], form: str) -> list[str]:
    """The hosts as a nodelist: one comma-joined string, one string a host, or bracketed."""
    if form == "each":
        return list(hosts)
    if form == "bracketed" and hosts and all(h == f"n{i}" for i, h in enumerate(hosts)):
        return [f"n[0-{len(hosts) - 1}]"] if len(hosts) > 1 else ["n0"]
    return [",".join(hosts)]


#: Values of the wrong type or sign for times and ``nslots``.
_ODD_NUMBERS: tuple[Any, ...] = (-1, 0, 0.5, 1e300, "10", None, True, 2**64, [])

#: Structural changes a near-valid R gets (one at most); each takes the document and a draw.
_Mutation = Callable[[dict[str, Any], st.DrawFn], None]


def _drop_key(doc: dict[str, Any], draw: st.DrawFn) -> None:
    where = draw(st.sampled_from(("nodelist", "R_lite", "execution", "version")))
    (doc if where in doc else doc["execution"]).pop(where, None)


def _wrong_version(doc: dict[str, Any], draw: st.DrawFn) -> None:
    doc["version"] = draw(st.sampled_from((2, 0, "1", 1.0, None)))


def _nodelist_short(doc: dict[str, Any], draw: st.DrawFn) -> None:
    nodelist = doc["execution"]["nodelist"]
    doc["execution"]["nodelist"] = nodelist[:-1] if len(nodelist) > 1 else ["x[0-9]"]
    del draw


def _property_on_missing_rank(doc: dict[str, Any], draw: st.DrawFn) -> None:
    properties = doc["execution"].setdefault("properties", {})
    properties[draw(property_name())] = str(draw(_id))


def _entry_text_edit(doc: dict[str, Any], draw: st.DrawFn) -> None:
    entries = doc["execution"]["R_lite"]
    if entries:
        entry = entries[draw(st.integers(0, len(entries) - 1))]
        key = draw(st.sampled_from(("rank", "core")))
        where = entry if key == "rank" else entry["children"]
        where[key] = draw(near_valid(st.just(where[key]), "0123456789,-[] "))


def _wrong_type(doc: dict[str, Any], draw: st.DrawFn) -> None:
    execution = doc["execution"]
    key = draw(st.sampled_from(("R_lite", "nodelist", "properties", "rank", "children")))
    odd: Any = draw(st.sampled_from(({}, "0", 0, None, [[]], [0])))
    if key in ("rank", "children") and execution["R_lite"]:
        execution["R_lite"][0][key] = odd
    else:
        execution[key] = odd


def _odd_times(doc: dict[str, Any], draw: st.DrawFn) -> None:
    execution = doc["execution"]
    for key in draw(st.sets(st.sampled_from(("starttime", "expiration", "nslots")), min_size=1)):
        execution[key] = draw(st.sampled_from(_ODD_NUMBERS))


def _overlapping_entry(doc: dict[str, Any], draw: st.DrawFn) -> None:
    entries = doc["execution"]["R_lite"]
    if entries:
        entries.append({"rank": entries[-1]["rank"], "children": {"core": draw(st.just("0"))}})


def _scheduling(doc: dict[str, Any], draw: st.DrawFn) -> None:
    doc["scheduling"] = draw(st.sampled_from(({"writer": "x"}, {"writer": 1}, "x", {}, None)))
    if draw(st.booleans()):
        doc["attributes"] = {}


#: Hypothesis draws the first of these most often (and shrinks towards it): the mildest first.
_MUTATIONS: tuple[_Mutation, ...] = (
    _entry_text_edit,
    _property_on_missing_rank,
    _nodelist_short,
    _overlapping_entry,
    _odd_times,
    _scheduling,
    _wrong_type,
    _wrong_version,
    _drop_key,
)


@st.composite
def _times(draw: st.DrawFn) -> dict[str, Any]:
    """starttime, expiration and nslots: absent, production values, 0 (unset), or reversed."""
    times: dict[str, Any] = {}
    kind = draw(mostly(("none", "both", "one"), ("zeros", "reversed")))
    start = draw(st.sampled_from((1676560542, 1676560542.25, 100, 2**31, 2**53)))
    if kind == "both":
        times = {"starttime": start, "expiration": start + draw(st.sampled_from((1, 3600, 0.5)))}
    elif kind == "zeros":
        times = {"starttime": draw(st.sampled_from((0, 0.0, 100))), "expiration": 0}
    elif kind == "reversed":
        times = {"starttime": start, "expiration": start - 1}
    elif kind == "one":
        times = {draw(st.sampled_from(("starttime", "expiration"))): start}
    if sometimes(draw, 3):
        times["nslots"] = draw(mostly((1, 4, 32, 2**32), (0, -1, 1.5, "4")))
    return times


def document(ranks: list[dict[str, Any]], *, merge: bool, form: str) -> dict[str, Any]:
    """The R document of a rank model, written as a production writer would."""
    owners: dict[str, list[int]] = {}
    for item in ranks:
        for name in item["properties"]:
            owners.setdefault(name, []).append(item["rank"])
    execution: dict[str, Any] = {
        "R_lite": _entries(ranks, merge),
        "nodelist": _nodelist([r["hostname"] for r in ranks], form),
    }
    if owners:
        execution["properties"] = {name: _idset(ids) for name, ids in sorted(owners.items())}
    return {"version": 1, "execution": execution}


@st.composite
def r_document(draw: st.DrawFn, *, mutate: bool = True, max_ranks: int = 4) -> dict[str, Any]:
    """An R document: valid by construction, with now and then one structural mutation."""
    ranks = draw(rank_model(max_ranks=max_ranks))
    form = draw(st.sampled_from(("joined", "each", "bracketed")))
    doc = document(ranks, merge=draw(st.booleans()), form=form)
    doc["execution"].update(draw(_times()))
    if mutate and sometimes(draw, 4):
        draw(st.sampled_from(_MUTATIONS))(doc, draw)
    return doc


def r_decode() -> st.SearchStrategy[Any]:
    """R documents for ``R.decode``."""
    return r_document()


def r_validate() -> st.SearchStrategy[Any]:
    """R documents for ``R.validate``, and a few values that are not documents at all."""
    return weighted(r_document(), st.sampled_from(([], "R", None, {"version": 1})), 10)


@st.composite
def _encode_input(draw: st.DrawFn) -> Any:
    ranks = draw(rank_model())
    if ranks and sometimes(draw, 4):
        # Near-valid per-rank forms: a rank repeated, out of order, or a field of a wrong type.
        change = draw(st.sampled_from(("repeat", "reverse", "cores", "rank", "missing")))
        if change == "repeat":
            ranks.append(dict(ranks[0]))
        elif change == "reverse":
            ranks.reverse()
        elif change == "cores":
            ranks[0]["cores"] = draw(st.sampled_from(("", "1-0", "a", 3, "0,0")))
        elif change == "rank":
            ranks[0]["rank"] = draw(st.sampled_from((-1, "0", 1.5, None)))
        else:
            ranks[0].pop(draw(st.sampled_from(("hostname", "cores", "gpus", "properties"))))
    if draw(st.booleans()):
        return ranks
    value: dict[str, Any] = {"ranks": ranks}
    times = draw(_times())
    times.pop("nslots", None)
    value.update(times)
    return value


def r_encode() -> st.SearchStrategy[Any]:
    """The per-rank form (a list, or ``{ranks, starttime, expiration}``) for ``R.encode``."""
    return _encode_input()


@st.composite
def _pair(draw: st.DrawFn) -> dict[str, Any]:
    """Two R over one set of nodes: each side a subset of the ranks and of their children."""
    universe = draw(rank_model(max_ranks=5))
    sides = []
    for _ in range(2):
        chosen = [dict(r) for r in universe if draw(st.booleans())]
        for item in chosen:
            if sometimes(draw, 3):
                # Another shard of the node: other cores (or other GPUs) of the same rank.
                item["cores"] = draw(st.sampled_from(("0", "1", "0-1", "2-3", item["cores"])))
                item["gpus"] = draw(st.sampled_from(("", "0", item["gpus"])))
        doc = document(chosen, merge=draw(st.booleans()), form="joined")
        if sometimes(draw, 6):
            draw(st.sampled_from(_MUTATIONS))(doc, draw)
        sides.append(doc)
    return {"a": sides[0], "b": sides[1]}


def r_pair() -> st.SearchStrategy[Any]:
    """``{a, b}``: two R sharing ranks, for ``R.union``, ``R.diff`` and ``R.intersect``."""
    return _pair()
