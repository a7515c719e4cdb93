"""Hypothesis strategies for ``flux-conformance diff``: valid and near-valid inputs per operation.

Each strategy follows the grammar of its format (ids, ranges, padded idlists, operators),
so most inputs are valid and reach deep into an implementation, and then applies up to two
single-character edits drawn from the format's own alphabet, so that many are *near*-valid
(one stray bracket, a doubled comma, a missing operand): where implementations tend to
disagree.  Numbers lean small but include the edges (``2**32``, ``2**64``) so that
overflow shows.  Hypothesis shrinks towards no edits, short lists and small numbers, which
is what makes a disagreement it finds come back minimal.

``STRATEGIES`` maps an operation name to a function returning its strategy; hypothesis is
imported with this module, so import it only when hypothesis is installed (the ``diff``
extra).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

__all__ = ["STRATEGIES", "near_valid"]

#: Numbers at the edges of common integer types, and the one flux-core wraps.
_EDGES = (2**31, 2**32 - 1, 2**32, 2**63, 2**64 - 1, 2**64, 99999999999)

_small = st.integers(0, 12)
_number = st.one_of(_small, st.integers(0, 2000), st.sampled_from(_EDGES))

#: One edit: (kind, position, character); the position is taken modulo the length.
_Edit = tuple[str, int, str]


def _apply(text: str, edits: list[_Edit]) -> str:
    for kind, position, char in edits:
        at = position % (len(text) + 1)
        if kind == "insert":
            text = text[:at] + char + text[at:]
        elif not text:
            continue
        elif kind == "delete":
            at = min(at, len(text) - 1)
            text = text[:at] + text[at + 1 :]
        else:
            at = min(at, len(text) - 1)
            text = text[:at] + char + text[at + 1 :]
    return text


def near_valid(valid: st.SearchStrategy[str], alphabet: str) -> st.SearchStrategy[str]:
    """Strings from ``valid``, each with zero to two edits using characters of ``alphabet``."""
    edit = st.tuples(
        st.sampled_from(("insert", "delete", "replace")),
        st.integers(0, 40),
        st.sampled_from(alphabet),
    )
    return st.builds(_apply, valid, st.lists(edit, max_size=2))


# -- RFC 22 idsets ---------------------------------------------------------------------------


@st.composite
def _idset_text(draw: st.DrawFn) -> str:
    parts = []
    low = -1
    for _ in range(draw(st.integers(0, 4))):
        low = low + 1 + draw(_number)
        high = low + draw(st.one_of(st.just(0), _small, st.sampled_from((1000, 2**32))))
        parts.append(str(low) if high == low else f"{low}-{high}")
        low = high
    text = ",".join(parts)
    return f"[{text}]" if draw(st.booleans()) else text


def _idset_decode() -> st.SearchStrategy[Any]:
    return near_valid(_idset_text(), "0123456789,-[] ")


def _idset_encode() -> st.SearchStrategy[Any]:
    return st.lists(st.one_of(_number, st.integers(-3, -1)), max_size=8)


# -- RFC 29 hostlists ------------------------------------------------------------------------

_prefix = st.text(alphabet="abnode-.", max_size=4)
_suffix = st.text(alphabet="abx-.", max_size=2)


@st.composite
def _idlist(draw: st.DrawFn) -> str:
    width = draw(st.integers(1, 3))
    items = []
    for _ in range(draw(st.integers(1, 3))):
        low = draw(_number)
        text = str(low).zfill(width if draw(st.booleans()) else 1)
        if draw(st.booleans()):
            text += "-" + str(low + draw(_small)).zfill(width if draw(st.booleans()) else 1)
        items.append(text)
    return "[" + ",".join(items) + "]"


@st.composite
def _hostlist_text(draw: st.DrawFn) -> str:
    expressions = []
    for _ in range(draw(st.integers(0, 3))):
        idlist = draw(st.one_of(st.just(""), _idlist()))
        digits = draw(st.one_of(st.just(""), _small.map(str)))
        expressions.append(draw(_prefix) + (idlist or digits) + draw(_suffix))
    return ",".join(expressions)


def _hostlist_decode() -> st.SearchStrategy[Any]:
    return near_valid(_hostlist_text(), "[],-0123a. ")


_host = st.builds(
    lambda prefix, number, suffix: prefix + number + suffix,
    st.sampled_from(("node", "n", "a", "rack1-n", "")),
    st.one_of(_small.map(str), st.just(""), _small.map(lambda n: str(n).zfill(2))),
    st.sampled_from(("", "", "x", "-ib")),
).filter(bool)
_odd_host = st.sampled_from(("", " ", "a b", "n[1]", "a,b", "nöde", "\t", "n]"))


def _hostlist_encode() -> st.SearchStrategy[Any]:
    return st.lists(st.one_of(_host, _odd_host), max_size=6)


# -- RFC 45 ranges and RFC 14 counts -----------------------------------------------------------


@st.composite
def _range_text(draw: st.DrawFn) -> str:
    low = draw(_number)
    text = str(low)
    kind = draw(st.sampled_from(("bounded", "unbounded", "single")))
    if kind == "bounded":
        text += f"-{low + draw(_number)}"
    elif kind == "unbounded":
        text += "+"
    if kind != "single" and draw(st.booleans()):
        text += f":{draw(_small)}"
        if draw(st.booleans()):
            text += ":" + draw(st.sampled_from("+*^"))
    return f"[{text}]" if draw(st.booleans()) else text


def _range_decode() -> st.SearchStrategy[Any]:
    return near_valid(_range_text(), "0123456789-+:*^[] ")


_count_part = st.one_of(st.integers(-1, 20), st.sampled_from(("+", "*", "^", "2", True, None)))


def _count_values() -> st.SearchStrategy[Any]:
    range_dict = st.dictionaries(
        st.sampled_from(("min", "max", "operator", "operand")), _count_part, max_size=4
    )
    count = st.one_of(
        st.integers(-1, 40),
        near_valid(_idset_text(), "0123456789,-[]"),
        near_valid(_range_text(), "0123456789-+:*^"),
        range_dict,
        st.sampled_from((True, 4.0, None, "")),
    )
    return st.fixed_dictionaries({"count": count, "limit": st.integers(0, 64)})


# -- Slurm --extra -----------------------------------------------------------------------------

_slurm_key = st.sampled_from(("a", "b", "gpu", "A", " a", "x_y", "a\x00b", "é"))
_slurm_op = st.sampled_from(("=", "!=", "<", "<=", ">", ">=", "==", "=<", "!", "<>"))
#: Request values where number and boolean readers part ways: C's sscanf corners (dangling
#: exponents, hex floats, inf/nan spellings, space), 64-bit edges, and boolean words.
_slurm_number_text = st.sampled_from(
    (
        "1", "2", "10", "1.5", "1e3", "0x10", "-1", "inf", "nan", "+1", "-0", "5.", ".5",
        "1e", "1e+", "1E-", "1.5e", "0x1p", "0X1P", "0x.", "0x", "0x1p-3", "INFINITY", "-Inf",
        "NaN", "nan(1)", "infinit", " 1", "1 ", "1e400", "1e-400", "0.00001", "1.000001",
        "9223372036854775807", "9223372036854775808", "18446744073709551615",
        "-9223372036854775809", "1_0", "\u0661", "0e", "00", "1.", "\u0660",
    )
)  # fmt: skip
_slurm_word = st.sampled_from(
    ("yes", "off", "y", "T", "true", "TRUE", "No", "n", "on", "f", "null", "~", "~x", "nul", "0")
)
_slurm_value = st.one_of(
    _slurm_number_text,
    _slurm_word,
    st.text(alphabet="abz09. \x00\"'", min_size=1, max_size=3),
)
_slurm_leaf = st.builds(lambda k, o, v: k + o + v, _slurm_key, _slurm_op, _slurm_value)
_slurm_expression = st.recursive(
    _slurm_leaf,
    lambda inner: st.one_of(
        st.builds(lambda a, op, b: a + op + b, inner, st.sampled_from("&,|"), inner),
        inner.map(lambda e: f"({e})"),
    ),
    max_leaves=5,
)


def _slurm_parse() -> st.SearchStrategy[Any]:
    return near_valid(_slurm_expression, "()&|,=!<> a1")


#: Numbers an Extra may hold: small, 64-bit edges on both sides, and large or tiny floats.
_extra_number = st.one_of(
    st.integers(-5, 20),
    st.sampled_from((2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1, 10**30)),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.sampled_from((1e-5, 1.00001, 0.99999, 1e308, 5e-324, -0.0)),
)
_extra_value = st.one_of(
    _extra_number,
    st.sampled_from(("1", "10", "9", "abc", "", "a\x00b", "yes", "1e3")),
    st.booleans(),
    st.none(),
    st.just([1]),
    st.just({"a": 1}),
)
_extra_key = st.sampled_from(("a", "b", "gpu", "A", "a\x00b", "a\x00", "é"))


def _nested(depth: int, inner: str) -> str:
    return '{"a": ' + "[" * depth + inner + "]" * depth + "}"


#: Extra texts beyond a well-formed object: json-c's leniency (comments, quotes, trailing
#: commas, text after the document, spelling of literals and numbers), nesting around its
#: depth of 32, duplicate keys, and non-objects.
_extra_odd = st.one_of(
    st.sampled_from(
        (
            "", "[1]", "{", "'a'", "null", "{'a': 1}", '{"a": 1,}', '{"a": 1} x', '{"a": 1}{}',
            '{"a": 1 /* c */}', '{"a": 1} // c', '{"a": TRUE}', '{"a": True}', '{"a": NaN}',
            '{"a": Infinity}', '{"a": -Infinity}', '{"a": 01}', '{"a": 1.}', '{"a": 1e}',
            '{"a": .5}', '{"a": +1}', '{"a": 0x10}', '{"a": 1, "a": 2}', '{a: 1}', ' {"a": 1} ',
            '\ufeff{"a": 1}', '{"a": "x\ty"}', '{"a": "\\u0000"}', '{"a\\u0000b": 1}',
            '{"a": nul}', '{"a": tru}', '{"a": [1,]}', '{"a": 1e999}', '{"a": -1e999}', "{}",
            '{"a":1}\x00junk', '"a"', "23", "true",
        )
    ),
    st.builds(_nested, st.integers(29, 33), st.sampled_from(("", "1", "{}"))),
)  # fmt: skip


def _slurm_extra() -> st.SearchStrategy[str | None]:
    return st.one_of(
        st.none(),
        st.dictionaries(_extra_key, _extra_value, max_size=3).map(json.dumps),
        _extra_odd,
    )


def _slurm_match() -> st.SearchStrategy[Any]:
    return st.fixed_dictionaries({"expression": _slurm_parse(), "extra": _slurm_extra()})


def _slurm_select() -> st.SearchStrategy[Any]:
    names = st.sampled_from(("n1", "n2", "n10", "a", "B", "é", "n 1"))
    nodes = st.dictionaries(names, _slurm_extra(), max_size=4)
    return st.fixed_dictionaries({"expression": _slurm_parse(), "nodes": nodes})


# -- RFC 35 query strings ----------------------------------------------------------------------

_query_term = st.one_of(
    st.sampled_from(("a", "ssd", "gpu", "a,b", "^a", "'a b'", '"x"')),
    st.sampled_from(
        (
            "host:node[1-2]",
            "hosts:n1",
            "hostlist:a",
            "rank:0-3",
            "ranks:1",
            "properties:a,b",
            "foo:x",
        )
    ),
)
_query_expression = st.recursive(
    st.builds(lambda neg, term: neg + term, st.sampled_from(("", "", "-")), _query_term),
    lambda inner: st.one_of(
        st.builds(
            lambda a, op, b: a + op + b,
            inner,
            st.sampled_from((" ", "&", " && ", " and ", "|", " || ", " or ")),
            inner,
        ),
        inner.map(lambda e: f"({e})"),
        inner.map(lambda e: f"not {e}"),
    ),
    max_leaves=5,
)


def _parse_query() -> st.SearchStrategy[Any]:
    return near_valid(_query_expression, "()&|-'\" :,^")


# -- RFC 46 shapes -----------------------------------------------------------------------------


def _shape_vertex(child: st.SearchStrategy[str] | None) -> st.SearchStrategy[str]:
    count = st.one_of(st.just(""), _small.map(lambda n: f"={n}"), st.just("=2-4"), st.just("=1+"))
    items = st.one_of(
        st.just(""),
        st.sampled_from(("{x}", "{-x}", "{+x}", "{label}", "{unit:01}", "{a:1,b:true}", "{}")),
    )
    kind = st.sampled_from(("node", "socket", "core", "gpu", "slot", "SLOT"))
    tail = st.just("") if child is None else st.one_of(st.just(""), child.map(lambda c: "/" + c))
    return st.builds(lambda k, c, i, t: k + c + i + t, kind, count, items, tail)


def _shape_parse() -> st.SearchStrategy[Any]:
    text = st.recursive(
        _shape_vertex(None),
        lambda inner: st.one_of(
            _shape_vertex(inner),
            st.lists(inner, min_size=2, max_size=3).map(lambda vs: "[" + ";".join(vs) + "]"),
        ),
        max_leaves=4,
    )
    return st.fixed_dictionaries({"shape": near_valid(text, "[];/{}=,: x")})


# -- sched.allocate: small pools and the request shapes the suite's rules judge ----------------

_PROPERTY_NAMES = ("ssd", "gpu", "big", "+queue")


def _ids(values: Any) -> str:
    return ",".join(map(str, values))


def _entry(rank: int, cores: Any, gpus: Any) -> dict[str, Any]:
    children = {"core": _ids(cores)}
    if gpus:
        children["gpu"] = _ids(gpus)
    return {"rank": str(rank), "children": children}


@st.composite
def _pool_and_taken(draw: st.DrawFn) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A pool of 1-6 ranks (own core and GPU counts, a few properties) and what is taken."""
    size = draw(st.integers(1, 6))
    ranks = []
    taken = []
    for rank in range(size):
        cores, gpus = draw(st.integers(1, 8)), draw(st.integers(0, 2))
        ranks.append((rank, cores, gpus))
        held_cores = draw(st.sets(st.integers(0, cores - 1), max_size=cores))
        held_gpus = draw(st.sets(st.integers(0, gpus - 1), max_size=gpus)) if gpus else set()
        if held_cores or held_gpus:
            taken.append((rank, sorted(held_cores), sorted(held_gpus)))
    properties = {}
    for name in _PROPERTY_NAMES:
        holders = draw(st.sets(st.integers(0, size - 1)))
        if holders:
            properties[name] = _ids(sorted(holders))
    own: dict[str, Any] = {
        "R_lite": [_entry(r, range(c), range(g)) for r, c, g in ranks],
        "nodelist": [",".join(f"n{r}" for r, _, _ in ranks)],
        **({"properties": properties} if properties else {}),
    }
    if draw(st.integers(0, 3)) == 0:
        own["expiration"] = 5000  # the pool's own end
    pool = {"version": 1, "execution": own}
    allocated: list[dict[str, Any]] = []
    for r, c, g in taken:
        execution: dict[str, Any] = {"R_lite": [_entry(r, c, g)], "nodelist": [f"n{r}"]}
        # Sometimes an end: before, at or after the now drawn below (1000), so some have ended.
        end = draw(st.sampled_from((None, None, 500, 1000, 5000)))
        if end is not None:
            execution["expiration"] = end
        allocated.append({"version": 1, "execution": execution})
    if allocated and draw(st.integers(0, 7)) == 0:
        # Now and then an allocated R that is no R (its rank not an idset): the input is invalid.
        allocated[0] = {
            "version": 1,
            "execution": {"R_lite": [_entry(0, [0], [])], "nodelist": ["n0"]},
        }
        allocated[0]["execution"]["R_lite"][0]["rank"] = "one"
    return pool, draw(st.sampled_from((allocated, [], allocated[:1])))


_alloc_count = st.one_of(
    st.integers(1, 4),
    st.sampled_from(("1+", "2+", "1-3", "2-4", "1-8:2", "1-8:2:*", "2-16:2:^", "2,4")),
    st.sampled_from(
        (
            {"min": 1},
            {"min": 2},
            {"min": 1, "max": 3, "operator": "+", "operand": 1},
            {"min": 1, "max": 6, "operator": "*", "operand": 2},
        )
    ),
)


def _leaf(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    counts = st.one_of(st.integers(1, 3), _alloc_count)
    return st.builds(lambda n: {"type": kind, "count": n}, counts)


@st.composite
def _allocation_request(draw: st.DrawFn) -> dict[str, Any]:
    """A pool, what is taken, and a jobspec of one of the shapes the comparator's rules judge.

    Shapes: node > slot > core/gpu (the node exclusive or not), slot > core/gpu, and
    slot > node > core/gpu, now and then followed by a second slot request; counts fixed,
    min-only, ranged (``+``, ``*``, ``^``) or an idset; a properties constraint (or its
    ``not``), a duration (fractional too) and ``now`` now and then; a pool that expires, and
    allocated Rs that end before, at or after ``now`` (or are no R).
    """
    pool, allocated = draw(_pool_and_taken())
    inner = [draw(_leaf("core"))]
    if draw(st.booleans()):
        inner.append(draw(_leaf("gpu")))
    shape = draw(st.sampled_from(("node-slot", "slot", "slot-node")))
    vertex: dict[str, Any]
    if shape == "node-slot":
        slot = {"type": "slot", "label": "task", "count": draw(_alloc_count), "with": inner}
        vertex = {"type": "node", "count": draw(_alloc_count), "with": [slot]}
        if draw(st.booleans()):
            vertex["exclusive"] = draw(st.booleans())
    elif shape == "slot":
        vertex = {"type": "slot", "label": "task", "count": draw(_alloc_count), "with": inner}
        if draw(st.integers(0, 3)) == 0:
            # One slot of a min-only count: which node it goes to is the point.
            vertex["count"], vertex["with"] = 1, [{"type": "core", "count": {"min": 1}}]
    else:
        node: dict[str, Any] = {"type": "node", "count": draw(st.integers(1, 2)), "with": inner}
        if draw(st.booleans()):
            node["exclusive"] = False
        vertex = {"type": "slot", "label": "task", "count": draw(_alloc_count), "with": [node]}
    resources = [vertex]
    tasks = [{"command": ["app"], "slot": "task", "count": {"per_slot": 1}}]
    if draw(st.integers(0, 3)) == 0:
        # A second request, placed after the first on what it left.
        aux = {
            "type": "slot",
            "label": "aux",
            "count": draw(st.integers(1, 2)),
            "with": [draw(_leaf("core"))],
        }
        resources.append(aux)
        tasks.append({"command": ["helper"], "slot": "aux", "count": {"per_slot": 1}})
    system: dict[str, Any] = {"duration": draw(st.sampled_from((0, 0, 60, 0.5, 60.25)))}
    if draw(st.booleans()):
        names = st.sampled_from(("ssd", "^ssd", "gpu", "^big", "+queue"))
        system["constraints"] = {"properties": draw(st.lists(names, max_size=2))}
        if draw(st.booleans()):
            system["constraints"] = {"not": [system["constraints"]]}
    value: dict[str, Any] = {
        "pool": pool,
        "jobspec": {
            "version": 1,
            "resources": resources,
            "tasks": tasks,
            "attributes": {"system": system},
        },
    }
    if allocated:
        value["allocated"] = allocated
    if draw(st.booleans()):
        value["now"] = draw(st.sampled_from((0, 1000, 1000.5)))
    return value


def _sched_allocate() -> st.SearchStrategy[Any]:
    return _allocation_request()


#: Operation name -> a function returning its strategy.
STRATEGIES: dict[str, Callable[[], st.SearchStrategy[Any]]] = {
    "idset.decode": _idset_decode,
    "idset.encode": _idset_encode,
    "hostlist.decode": _hostlist_decode,
    "hostlist.encode": _hostlist_encode,
    "range.decode": _range_decode,
    "count.values": _count_values,
    "slurm.extra.parse": _slurm_parse,
    "slurm.extra.match": _slurm_match,
    "slurm.extra.select": _slurm_select,
    "constraint.parse_query": _parse_query,
    "shape.parse": _shape_parse,
    "sched.allocate": _sched_allocate,
}
