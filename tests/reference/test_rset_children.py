"""Tests of what one execution target holds: bitset children and their text codec."""

from __future__ import annotations

import functools
import operator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flux_conformance.reference._rset_children import (
    SMALL_ID_LIMIT,
    Children,
    bits_text,
    small_bits,
)
from flux_conformance.reference.errors import FormatError
from flux_conformance.reference.idset import IdSet

# Ids on both sides of the limit, so that both forms (and mixed pairs) are met.
_ids = st.one_of(
    st.integers(0, 70), st.integers(SMALL_ID_LIMIT - 3, SMALL_ID_LIMIT + 3), st.integers(0, 5000)
)
_sets = st.frozensets(_ids, max_size=12).map(IdSet.from_ids)


@given(st.text(alphabet="0123456789,-[]", max_size=24))
def test_small_bits_decides_only_canonical_text_of_small_ids(text: str) -> None:
    bits = small_bits(text)
    if bits is None:
        return
    decoded = IdSet.decode(text)
    assert decoded.to_bits() == bits
    assert decoded.encode() == text
    last = decoded.last()
    assert last is not None
    assert last < SMALL_ID_LIMIT


@given(_sets)
def test_small_bits_reads_every_canonical_small_set(ids: IdSet) -> None:
    text = ids.encode()
    last = ids.last()
    small = last is not None and last < SMALL_ID_LIMIT
    assert small_bits(text) == (ids.to_bits() if small else None)


@pytest.mark.parametrize(
    "text",
    ["3,1", "1,1", "1-3,2", "0-1,2", "1,2", "5-3", "3-3", "01", "[1]", "", "1,", "4096", "0-4096"],
)
def test_small_bits_leaves_everything_else_to_the_parser(text: str) -> None:
    assert small_bits(text) is None


@given(
    st.one_of(
        st.integers(0, (1 << 200) - 1),
        # Either side of the widest bitset written through the byte tables (1,024 bits), with
        # runs that cross bytes, end on a byte's last bit or start on its first.
        st.integers(1000, 1100).flatmap(
            lambda top: st.lists(st.integers(0, top), max_size=40).map(
                lambda ids: sum({1 << i for i in ids} | {1 << top})
            )
        ),
        st.lists(st.tuples(st.integers(0, 130), st.integers(0, 20)), max_size=8).map(
            lambda runs: functools.reduce(
                operator.or_, [(2 << (lo + length)) - (1 << lo) for lo, length in runs], 0
            )
        ),
    )
)
def test_bits_text_is_the_canonical_encoding(bits: int) -> None:
    assert bits_text(bits) == IdSet.from_bits(bits).encode()


@pytest.mark.parametrize(
    ("bits", "text"),
    [
        (0, ""),
        (1, "0"),
        (0xFF, "0-7"),
        (0x180, "7-8"),
        (1 << 8, "8"),
        ((1 << 1024) - 1, "0-1023"),
        ((1 << 1025) - 2, "1-1024"),
        (1 << 1023 | 1 << 1024, "1023-1024"),
        (0b1011 << 1021, "1021-1022,1024"),
    ],
)
def test_bits_text_at_byte_and_table_edges(bits: int, text: str) -> None:
    assert bits_text(bits) == text


@given(_sets, _sets, _sets, _sets)
def test_children_algebra_matches_idset_algebra(a: IdSet, b: IdSet, c: IdSet, d: IdSet) -> None:
    x, y = Children(a, b), Children(c, d)
    assert (x.cores, x.gpus) == (a, b)
    for got, cores, gpus in (
        (x.union(y), a | c, b | d),
        (x.difference(y), a - c, b - d),
        (x.intersection(y), a & c, b & d),
    ):
        assert (got.cores, got.gpus) == (cores, gpus)
        # Equal content is one form: equal and hashed alike however it was built.
        assert got == Children(cores, gpus)
        assert hash(got) == hash(Children(cores, gpus))
        assert got.to_json() == Children(cores, gpus).to_json()
        assert got.empty == (not cores and not gpus)
    assert x.overlaps(y) == bool((a & c) or (b & d))


def test_children_text_comes_from_either_form() -> None:
    small = Children(IdSet.decode("0-3,7"), IdSet.decode(""))
    large = Children(IdSet.decode("0-3,5000"), IdSet.decode("1"))
    assert small.to_json() == {"core": "0-3,7"}
    assert large.to_json() == {"core": "0-3,5000", "gpu": "1"}
    assert isinstance(small.core_ids, int)
    assert isinstance(large.core_ids, IdSet)


def test_a_malformed_element_is_never_learnt() -> None:
    assert small_bits("1,02") is None
    with pytest.raises(FormatError):
        IdSet.decode("1,02")


def test_a_full_table_starts_again_without_losing_an_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from flux_conformance.reference import _rset_children

    monkeypatch.setattr(_rset_children, "_MAX_ELEMENTS", 3)
    monkeypatch.setattr(_rset_children, "_BITS", {})
    monkeypatch.setattr(_rset_children, "_LOWEST", {})
    for text in ["0-1,3,5-7,9", "2,4,6", "0-1,3,5-7,9", "10-11,20", "1,2,5"]:
        want = IdSet.decode(text)
        canonical = want.encode() == text
        assert small_bits(text) == (want.to_bits() if canonical else None)
        assert len(_rset_children._BITS) <= 3
