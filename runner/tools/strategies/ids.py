"""Strategies for the id formats: RFC 22 idsets, RFC 29 hostlists, RFC 45 ranges, RFC 14 counts."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from flux_conformance.runner.tools.strategies._common import near_valid, number, small

__all__ = [
    "count_values",
    "hostlist_decode",
    "hostlist_encode",
    "idset_decode",
    "idset_encode",
    "range_decode",
]

# -- RFC 22 idsets ---------------------------------------------------------------------------


@st.composite
def _idset_text(draw: st.DrawFn) -> str:
    parts = []
    low = -1
    for _ in range(draw(st.integers(0, 4))):
        low = low + 1 + draw(number)
        high = low + draw(st.one_of(st.just(0), small, st.sampled_from((1000, 2**32))))
        parts.append(str(low) if high == low else f"{low}-{high}")
        low = high
    text = ",".join(parts)
    return f"[{text}]" if draw(st.booleans()) else text


def idset_decode() -> st.SearchStrategy[Any]:
    """Idset text: ascending ids and ranges, bracketed or not, with up to two edits."""
    return near_valid(_idset_text(), "0123456789,-[] ")


def idset_encode() -> st.SearchStrategy[Any]:
    """Lists of ids, edges and negatives among them."""
    return st.lists(st.one_of(number, st.integers(-3, -1)), max_size=8)


# -- RFC 29 hostlists ------------------------------------------------------------------------

_prefix = st.text(alphabet="abnode-.", max_size=4)
_suffix = st.text(alphabet="abx-.", max_size=2)


@st.composite
def _idlist(draw: st.DrawFn) -> str:
    width = draw(st.integers(1, 3))
    items = []
    for _ in range(draw(st.integers(1, 3))):
        low = draw(number)
        text = str(low).zfill(width if draw(st.booleans()) else 1)
        if draw(st.booleans()):
            text += "-" + str(low + draw(small)).zfill(width if draw(st.booleans()) else 1)
        items.append(text)
    return "[" + ",".join(items) + "]"


@st.composite
def _hostlist_text(draw: st.DrawFn) -> str:
    expressions = []
    for _ in range(draw(st.integers(0, 3))):
        idlist = draw(st.one_of(st.just(""), _idlist()))
        digits = draw(st.one_of(st.just(""), small.map(str)))
        expressions.append(draw(_prefix) + (idlist or digits) + draw(_suffix))
    return ",".join(expressions)


def hostlist_decode() -> st.SearchStrategy[Any]:
    """Hostlist text: prefixes, padded idlists and suffixes, with up to two edits."""
    return near_valid(_hostlist_text(), "[],-0123a. ")


_host = st.builds(
    lambda prefix, number, suffix: prefix + number + suffix,
    st.sampled_from(("node", "n", "a", "rack1-n", "")),
    st.one_of(small.map(str), st.just(""), small.map(lambda n: str(n).zfill(2))),
    st.sampled_from(("", "", "x", "-ib")),
).filter(bool)
_odd_host = st.sampled_from(("", " ", "a b", "n[1]", "a,b", "nöde", "\t", "n]"))


def hostlist_encode() -> st.SearchStrategy[Any]:
    """Lists of host names, a few of which no hostlist can write."""
    return st.lists(st.one_of(_host, _odd_host), max_size=6)


# -- RFC 45 ranges and RFC 14 counts -----------------------------------------------------------


@st.composite
def _range_text(draw: st.DrawFn) -> str:
    low = draw(number)
    text = str(low)
    kind = draw(st.sampled_from(("bounded", "unbounded", "single")))
    if kind == "bounded":
        text += f"-{low + draw(number)}"
    elif kind == "unbounded":
        text += "+"
    if kind != "single" and draw(st.booleans()):
        text += f":{draw(small)}"
        if draw(st.booleans()):
            text += ":" + draw(st.sampled_from("+*^"))
    return f"[{text}]" if draw(st.booleans()) else text


def range_decode() -> st.SearchStrategy[Any]:
    """RFC 45 range text in every form, with up to two edits."""
    return near_valid(_range_text(), "0123456789-+:*^[] ")


_count_part = st.one_of(st.integers(-1, 20), st.sampled_from(("+", "*", "^", "2", True, None)))


def count_values() -> st.SearchStrategy[Any]:
    """RFC 14 counts in every form (integer, idset, range, dictionary) and a limit."""
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
