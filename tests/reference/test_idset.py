"""Tests of the RFC 22 idset reference (reference/idset.py)."""

from __future__ import annotations

import functools
import operator
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flux_conformance.reference import _idset_codec as codec
from flux_conformance.reference import idset
from flux_conformance.reference._limits import MAX_EXPANSION, MAX_ID, MAX_TEXT_LENGTH
from flux_conformance.reference.errors import InvalidError, LimitError, ParseError
from flux_conformance.reference.idset import IdSet
from flux_conformance.reference.operations import run

ids = st.integers(min_value=0, max_value=MAX_ID)
small_ids = st.integers(min_value=0, max_value=300)
id_sets = st.sets(small_ids)


def _set(text: str) -> set[int]:
    return set(IdSet.decode(text))


@given(st.sets(ids, max_size=50))
def test_encode_decode_round_trip(values: set[int]) -> None:
    text = idset.encode(values)
    assert list(IdSet.decode(text)) == sorted(values)
    assert IdSet.decode(text).encode() == text


@given(st.lists(small_ids, max_size=60))
def test_encode_accepts_any_order_and_duplicates(values: list[int]) -> None:
    assert list(IdSet.decode(idset.encode(values))) == sorted(set(values))


@given(id_sets)
def test_brackets_round_trip(values: set[int]) -> None:
    ids_ = IdSet.from_ids(values)
    assert IdSet.decode(ids_.encode(brackets=True)) == ids_


@given(id_sets)
def test_canonical_form_compresses_every_run(values: set[int]) -> None:
    text = idset.encode(values)
    # In canonical form no two written elements are adjacent, and each element is a run.
    elements = [e for e in text.split(",") if e]
    assert len(elements) == len(IdSet.from_ids(values).intervals)
    for element in elements:
        if "-" in element:
            lo, hi = map(int, element.split("-"))
            assert lo < hi


@given(id_sets, id_sets)
def test_set_algebra_matches_python_sets(a: set[int], b: set[int]) -> None:
    x, y = IdSet.from_ids(a), IdSet.from_ids(b)
    assert set(x | y) == a | b
    assert set(x & y) == a & b
    assert set(x - y) == a - b
    assert x.isdisjoint(y) == a.isdisjoint(b)
    assert x.issubset(y) == (a <= b)
    assert len(x) == len(a)
    assert bool(x) == bool(a)
    for value in range(-1, 302):
        assert (value in x) == (value in a)


@given(st.lists(st.tuples(small_ids, small_ids), max_size=20))
def test_from_intervals_normalises(pairs: list[tuple[int, int]]) -> None:
    ordered = [(min(p), max(p)) for p in pairs]
    expected: set[int] = set()
    for lo, hi in ordered:
        expected.update(range(lo, hi + 1))
    assert set(IdSet.from_intervals(ordered)) == expected
    assert IdSet.from_intervals(ordered) == IdSet.from_ids(expected)


@given(st.lists(st.integers(min_value=0, max_value=400), min_size=64, max_size=120), st.data())
def test_long_plain_lists_follow_the_rules(values: list[int], data: st.DataObject) -> None:
    # Long lists of single ids take a bulk path; it must agree with the rules exactly.
    pieces = [str(v) for v in values]
    if data.draw(st.booleans()):
        index = data.draw(st.integers(0, len(pieces) - 1))
        pieces[index] = data.draw(st.sampled_from(["0" + pieces[index], "", "1-2"]))
    text = ",".join(pieces)
    plain = all(p.isdigit() and (p == "0" or not p.startswith("0")) for p in pieces)
    if plain and all(a < b for a, b in pairwise(values)):
        assert list(IdSet.decode(text)) == values
    elif not plain and "1-2" not in pieces:
        with pytest.raises(ParseError):
            IdSet.decode(text)
    else:
        try:
            decoded = IdSet.decode(text)
        except ParseError:
            return
        assert IdSet.decode(decoded.encode()) == decoded


def test_intervals_are_not_expanded() -> None:
    huge = IdSet.decode("0-18446744073709551615")
    assert huge.intervals == ((0, MAX_ID),)
    assert huge.size == MAX_ID + 1
    assert MAX_ID in huge
    assert (huge - IdSet.decode("1-18446744073709551614")).encode() == "0,18446744073709551615"


def test_first_last_and_empty() -> None:
    assert IdSet().first() is None
    assert IdSet().last() is None
    assert IdSet.decode("[3,7-9]").first() == 3
    assert IdSet.decode("[3,7-9]").last() == 9
    assert IdSet.decode("") == IdSet.decode("[]") == IdSet()
    assert IdSet().encode(brackets=True) == "[]"


def test_constructor_checks_canonical_form() -> None:
    assert IdSet(((1, 2), (4, 5))).encode() == "1-2,4-5"
    for bad in (((2, 1),), ((1, 2), (3, 4)), ((3, 4), (1, 2)), ((-1, 2),)):
        with pytest.raises(InvalidError):
            IdSet(bad)


def test_hashable_and_equal() -> None:
    assert hash(IdSet.decode("1-3")) == hash(IdSet.from_ids([3, 2, 1]))
    assert {IdSet.decode("1,2"), IdSet.decode("1-2")} == {IdSet.decode("1-2")}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("3,1", "ids must be strictly ascending and unique"),
        ("01", "ids are written without leading zeros"),
        ("3-3", "degenerate range (write the id alone)"),
        ("1,,2", "empty element (expected an id)"),
        ("1 ", "character ' ' is not allowed in an idset"),
        ("[1", "'[' is not closed by a final ']'"),
        ("1,[2]", "brackets may only surround the whole idset, once"),
        ("3-1", "range ends below its start"),
    ],
)
def test_syntax_messages(text: str, message: str) -> None:
    with pytest.raises(ParseError) as info:
        IdSet.decode(text)
    assert info.value.reason == message
    assert info.value.category == "syntax"


def test_error_span_points_at_the_element() -> None:
    with pytest.raises(ParseError) as info:
        IdSet.decode("1,2,5,4")
    assert info.value.span == (6, 7)
    assert str(info.value).endswith("1,2,5,4\n          ^")


def test_long_list_of_ranges_reports_the_exact_span() -> None:
    # Element positions are carried along, not recounted per element (which was quadratic):
    # a long list of ranges decodes, and an error at its end still points at the element.
    text = ",".join(f"{i}-{i + 1}" for i in range(0, 150_000, 3))
    assert IdSet.decode(text).size == 100_000
    bad = text + ",3-2"
    with pytest.raises(ParseError) as info:
        IdSet.decode(bad)
    assert info.value.span == (len(text) + 1, len(bad))
    with pytest.raises(ParseError) as info:
        IdSet.decode(text + ",7")
    assert info.value.span == (len(text) + 1, len(text) + 2)


def test_large_ids_are_exact_or_refused() -> None:
    assert list(IdSet.decode("99999999999")) == [99999999999]
    assert list(IdSet.decode(str(MAX_ID))) == [MAX_ID]
    with pytest.raises(LimitError):
        IdSet.decode(str(MAX_ID + 1))
    with pytest.raises(LimitError):
        IdSet.decode("1" * 5000)  # beyond int()'s own digit limit: still a clean error
    with pytest.raises(LimitError):
        IdSet.from_ids([MAX_ID + 1])


def test_from_ids_refuses_non_ids() -> None:
    for bad in ([-1], [True], [1.0], ["1"], [None]):
        with pytest.raises(InvalidError):
            IdSet.from_ids(bad)  # type: ignore[arg-type]


def test_text_length_limit() -> None:
    with pytest.raises(LimitError):
        IdSet.decode("1" + ",1" * (MAX_TEXT_LENGTH // 2))


def test_operation_expansion_limit_is_decided_without_expanding() -> None:
    with pytest.raises(LimitError):
        run("idset.decode", "0-99999999999999")
    with pytest.raises(LimitError):
        run("idset.decode", f"0-{MAX_EXPANSION}")
    assert len(run("idset.decode", f"1-{MAX_EXPANSION}")) == MAX_EXPANSION


def test_operations_refuse_wrong_json_types() -> None:
    with pytest.raises(InvalidError):
        run("idset.decode", 5)
    with pytest.raises(InvalidError):
        run("idset.encode", "1-3")
    with pytest.raises(InvalidError):
        run("idset.encode", [1, "2"])
    assert run("idset.encode", [3, 1, 2, 2]) == "1-3"
    assert run("idset.decode", "[0,5-6]") == [0, 5, 6]


@given(st.text(alphabet="0123456789,-[] ", max_size=20))
def test_decode_never_crashes(text: str) -> None:
    try:
        result = IdSet.decode(text)
    except (ParseError, LimitError):
        return
    # Whatever decodes is canonical-equivalent: re-encoding and decoding gives the same set.
    assert IdSet.decode(result.encode()) == result


# -- fast paths: the bulk decoders and bitsets must agree with the rules and with Python sets ---


def _by_the_rules(text: str) -> IdSet | type[Exception]:
    """Decode ``text`` element by element (the rules alone, no bulk path)."""
    try:
        return IdSet(codec._parse_list(text, 0, len(text))) if text else IdSet()
    except (ParseError, LimitError) as exc:
        return type(exc)


def _decoded(text: str) -> IdSet | type[Exception]:
    try:
        return IdSet.decode(text)
    except (ParseError, LimitError) as exc:
        return type(exc)


elements = st.one_of(
    st.integers(0, 400).map(str),
    st.tuples(st.integers(0, 400), st.integers(0, 400)).map(lambda p: f"{p[0]}-{p[1]}"),
    st.sampled_from(["", "0", "00", "07", "1-2-3", "-", "5-", "-5", "3-3", "0-0", "1-0"]),
    st.sampled_from(["18446744073709551615", "18446744073709551616", "9" * 25]),
)


@given(st.lists(elements, min_size=1, max_size=200))
def test_bulk_and_short_paths_agree_with_the_rules(pieces: list[str]) -> None:
    # Short texts take _scan_short, long ones _scan_bulk; both must decode exactly what the
    # element-by-element rules decode, and refuse (with the same category) what they refuse.
    text = ",".join(pieces)
    assert _decoded(text) == _by_the_rules(text)


@given(st.lists(st.tuples(st.integers(0, 5000), st.integers(0, 3)), min_size=1, max_size=400))
def test_long_canonical_lists_of_ranges_decode_in_bulk(spans: list[tuple[int, int]]) -> None:
    ids = IdSet.from_intervals([(lo, lo + width) for lo, width in spans])
    text = ids.encode()
    assert IdSet.decode(text) == ids
    assert codec._scan_bulk(text) in (None, ids.intervals)
    if len(text) >= 2 and "," in text:
        assert codec._scan_bulk(text) == ids.intervals


def test_bulk_path_refuses_what_the_rules_refuse() -> None:
    body = ",".join(f"{i}-{i + 1}" for i in range(0, 3000, 3))
    for bad, category in (
        (body + ",5", ParseError),  # out of order
        (body + ",9000-9000", ParseError),  # degenerate range
        (body + ",9000-8999", ParseError),  # descending range
        (body + ",9000-9001-9002", ParseError),
        (body + ",09001", ParseError),
        (body + ",,9001", ParseError),
        (body + ",18446744073709551616", LimitError),
    ):
        assert codec._scan_bulk(bad) is None
        with pytest.raises(category):
            IdSet.decode(bad)
    # Neighbouring elements merge, as the rules merge them.
    assert IdSet.decode(body + ",2999,3000-3005").intervals[-1] == (2997, 3005)


#: Ways to bend a canonical list (``p``, split at its commas) at element ``i``.
_BENDS = [
    lambda p, i: p,
    lambda p, i: [*p[:i], p[i], p[i], *p[i + 1 :]],  # an element twice
    lambda p, i: [*p[:i], p[i + 1], p[i], *p[i + 2 :]],  # two elements swapped
    lambda p, i: [*p[:i], f"{p[i]}-{p[i + 1]}", *p[i + 2 :]],  # a hyphen for a comma: 1-2-3
    lambda p, i: [*p[:i], p[i], p[i].split("-")[-1], *p[i + 1 :]],  # 1-3,3
    lambda p, i: [*p[:i], p[i].split("-")[0], p[i], *p[i + 1 :]],  # 1,1-3
    lambda p, i: [*p[:i], f"{p[i].split('-')[0]}-{p[i].split('-')[0]}", *p[i + 1 :]],  # 3-3
]


@given(
    st.lists(st.tuples(st.integers(2, 4), st.integers(0, 3)), min_size=150, max_size=300),
    st.integers(0, len(_BENDS) - 1),
    st.integers(0, 10**6),
    st.integers(-2, 2),
)
def test_bit_reader_decides_only_what_the_rules_decide(
    steps: list[tuple[int, int]], bend: int, at: int, margin: int
) -> None:
    # decode_bits (long property lists of an R) answers None, leaving the text to the parser,
    # or exactly the bits of the set the rules decode, below the width it was given.
    pieces, lo = [], 0
    for gap, width in steps:  # canonical elements: each starts at least 2 above the last
        pieces.append(str(lo) if not width else f"{lo}-{lo + width}")
        lo += width + gap
    text = ",".join(_BENDS[bend](pieces, at % (len(pieces) - 1)))
    ids = _by_the_rules(text)
    last = max(int(x) for x in text.replace("-", ",").split(","))
    found = codec.decode_bits(text, last + 1 + margin)
    if found is not None:
        assert isinstance(ids, IdSet)
        assert found == ids.to_bits()
        assert margin >= 0
    elif bend == 0 and margin >= 0 and len(text) >= 512:
        raise AssertionError("a long canonical list below the width must be decided here")


@given(id_sets, id_sets)
def test_bitsets_round_trip_and_agree_with_python_sets(a: set[int], b: set[int]) -> None:
    x, y = IdSet.from_ids(a), IdSet.from_ids(b)
    assert x.to_bits() == sum(1 << i for i in a)
    assert IdSet.from_bits(x.to_bits()) == x
    assert IdSet.from_bits(x.to_bits() & ~y.to_bits()) == IdSet.from_ids(a - b)
    assert x.subset_test()(y) == (b <= a) == y.issubset(x)


@given(
    st.one_of(
        id_sets.map(lambda ids: sum(1 << i for i in ids)),
        # Runs of every length near the widest set written through the table of pieces
        # (2**16 ids), and past it.
        st.lists(
            st.tuples(st.integers(0, (1 << 16) + 40), st.integers(0, 3)), min_size=1, max_size=12
        ).map(
            lambda runs: functools.reduce(operator.or_, [((2 << n) - 1) << lo for lo, n in runs])
        ),
    )
)
def test_encode_bits_writes_the_canonical_text(bits: int) -> None:
    assert codec.encode_bits(bits) == IdSet.from_bits(bits).encode()


def test_encode_bits_at_the_edges() -> None:
    assert codec.encode_bits(0) == ""
    assert codec.encode_bits(1) == "0"
    assert codec.encode_bits(0b110) == "1-2"
    assert codec.encode_bits(0b1011) == "0-1,3"
    assert codec.encode_bits((1 << 65536) - 1) == "0-65535"
    assert codec.encode_bits(1 << 65536 | 1 << 65535) == "65535-65536"
    # A wider set first, then narrower ones: the table only grows, and serves both.
    assert codec.encode_bits(5 << 40000) == "40000,40002"
    assert codec.encode_bits(5 << 10) == "10,12"


def test_from_bits_refuses_what_is_not_a_bitset() -> None:
    with pytest.raises(InvalidError):
        IdSet.from_bits(-1)
    with pytest.raises(InvalidError):
        IdSet.from_bits(True)
    assert IdSet.from_bits(0) == IdSet()


@given(st.lists(st.integers(0, 3000), min_size=40, max_size=400), st.data())
def test_dense_set_algebra_matches_python_sets(values: list[int], data: st.DataObject) -> None:
    # Long interval lists: the merges, _clip and the C-level subset test on many intervals.
    other = data.draw(st.lists(st.integers(0, 3000), min_size=40, max_size=400))
    a, b = set(values), set(other)
    x, y = IdSet.from_ids(a), IdSet.from_ids(b)
    assert set(x | y) == a | b
    assert set(x & y) == a & b
    assert set(x - y) == a - b
    assert x.issubset(x | y)


def test_to_list_expands_ranges_and_single_ids() -> None:
    assert IdSet.decode("1,3-5,9").to_list() == [1, 3, 4, 5, 9]
    assert IdSet.decode("2,4,6").to_list() == [2, 4, 6]
    assert IdSet().to_list() == []


# -- fast paths: idset.decode reads a long list of single ids straight to a list -----------------


@given(
    st.lists(st.integers(0, 10**6), min_size=1, max_size=300),
    st.sampled_from(["", " ", "-", "[", ",", "0", "01", "1-2"]),
    st.integers(0, 300),
)
def test_list_path_agrees_with_the_set_path(values: list[int], edit: str, at: int) -> None:
    # decode_ids answers only for long lists of single ids; whatever it returns must be what
    # the full decoder gives, and whatever it refuses must still decode (or fail) the same.
    pieces = [str(v) for v in values]
    if edit:
        pieces.insert(at % (len(pieces) + 1), edit)
    text = ",".join(pieces)
    listed = codec.decode_ids(text)
    try:
        expected: list[int] | type[Exception] = IdSet.decode(text).to_list()
    except (ParseError, LimitError) as exc:
        expected = type(exc)
    if listed is not None:
        assert listed == expected
    try:
        actual: list[int] | type[Exception] = run("idset.decode", text)
    except (ParseError, LimitError) as exc:
        actual = type(exc)
    assert actual == expected


def test_list_path_takes_only_long_lists_of_single_ids() -> None:
    long_text = ",".join(map(str, range(0, 400, 2)))
    assert codec.decode_ids(long_text) == list(range(0, 400, 2))
    assert codec.decode_ids("1,2,3") is None  # short: the set path is as fast
    assert codec.decode_ids(f"[{long_text}]") is None  # brackets: the full path
    assert codec.decode_ids(long_text + ",500-501") is None  # a range
    assert codec.decode_ids(long_text + ", 500") is None  # whitespace, which json would skip
    assert codec.decode_ids(long_text + ",398") is None  # not ascending
    assert codec.decode_ids(long_text + ",0500") is None  # a leading zero
    assert codec.decode_ids(long_text + f",{MAX_ID + 1}") is None  # over the limit
    assert codec.decode_ids(long_text + ",1" + "0" * 5000) is None  # past int()'s digits
    with pytest.raises(LimitError):
        codec.decode_ids("1" + ",1" * (MAX_TEXT_LENGTH // 2))


def test_size_counts_every_interval() -> None:
    assert IdSet.decode("0-9,20,30-31").size == 13
    assert IdSet.decode(",".join(map(str, range(0, 2000, 2)))).size == 1000
    assert IdSet().size == 0
