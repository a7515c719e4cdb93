"""Strategies for Slurm's ``--extra`` expressions and the Extra documents they match."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from flux_conformance.runner.tools.strategies._common import near_valid

__all__ = ["slurm_match", "slurm_parse", "slurm_select"]

# -- Slurm --extra -----------------------------------------------------------------------------

_slurm_key = st.sampled_from(("a", "b", "gpu", "A", " a", "x_y", "a\x00b", "é"))
_slurm_op = st.sampled_from(("=", "!=", "<", "<=", ">", ">=", "==", "=<", "!", "<>"))
#: Request values where number and boolean readers part ways: C's sscanf corners (dangling
#: exponents, hex floats, inf/nan spellings, space), 64-bit edges, and boolean words.
_slurmnumber_text = st.sampled_from(
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
    _slurmnumber_text,
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


def slurm_parse() -> st.SearchStrategy[Any]:
    """Slurm ``--extra`` expressions, with up to two edits."""
    return near_valid(_slurm_expression, "()&|,=!<> a1")


#: Numbers an Extra may hold: small, 64-bit edges on both sides, and large or tiny floats.
_extranumber = st.one_of(
    st.integers(-5, 20),
    st.sampled_from((2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1, 10**30)),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.sampled_from((1e-5, 1.00001, 0.99999, 1e308, 5e-324, -0.0)),
)
_extra_value = st.one_of(
    _extranumber,
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


def slurm_match() -> st.SearchStrategy[Any]:
    """An ``--extra`` expression and one node's Extra document."""
    return st.fixed_dictionaries({"expression": slurm_parse(), "extra": _slurm_extra()})


def slurm_select() -> st.SearchStrategy[Any]:
    """An ``--extra`` expression and several nodes' Extra documents."""
    names = st.sampled_from(("n1", "n2", "n10", "a", "B", "é", "n 1"))
    nodes = st.dictionaries(names, _slurm_extra(), max_size=4)
    return st.fixed_dictionaries({"expression": slurm_parse(), "nodes": nodes})
