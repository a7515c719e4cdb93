"""Tests of the RFC 29 hostlist reference (reference/hostlist.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flux_conformance.reference import hostlist
from flux_conformance.reference._limits import MAX_EXPANSION, MAX_OUTPUT_LENGTH, MAX_TEXT_LENGTH
from flux_conformance.reference.errors import InvalidError, LimitError, ParseError
from flux_conformance.reference.operations import run

# Hosts built from a few prefixes, optional zero-padded numbers and suffixes, so that runs,
# padding clashes and repeats are all common.
prefixes = st.sampled_from(["n", "node", "rack1n", "a.b-", "x", ""])
suffixes = st.sampled_from(["", "-ib", "b", ".local", "0x"])


@st.composite
def host_names(draw: st.DrawFn) -> str:
    prefix = draw(prefixes)
    suffix = draw(suffixes)
    number = draw(st.integers(min_value=0, max_value=120))
    width = draw(st.integers(min_value=0, max_value=4))
    if draw(st.booleans()) or not (prefix or suffix):
        text = f"{number:0{width}d}" if width else str(number)
    else:
        text = ""
    host = f"{prefix}{text}{suffix}"
    return host or "h"


any_host = st.text(
    alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters="[],"),
    min_size=1,
    max_size=8,
)


@given(st.lists(host_names(), max_size=40))
def test_encode_round_trip_structured(hosts: list[str]) -> None:
    assert hostlist.decode(hostlist.encode(hosts)) == hosts


@given(st.lists(any_host, max_size=20))
def test_encode_round_trip_arbitrary(hosts: list[str]) -> None:
    assert hostlist.decode(hostlist.encode(hosts)) == hosts


@given(st.lists(host_names(), max_size=40))
def test_decode_encode_decode_is_stable(hosts: list[str]) -> None:
    text = hostlist.encode(hosts)
    assert hostlist.encode(hostlist.decode(text)) == text


def test_encode_compresses_runs() -> None:
    assert hostlist.encode([f"node{i}" for i in range(100)]) == "node[0-99]"
    assert hostlist.encode(["n01", "n02", "n03", "n5"]) == "n[01-03],n5"
    assert hostlist.encode(["foo0-eth2", "foo1-eth2"]) == "foo[0-1]-eth2"
    assert hostlist.encode(["node01", "node1", "node2"]) == "node01,node[1-2]"


@pytest.mark.parametrize(
    ("text", "hosts"),
    [
        ("", []),
        ("foox,fooy,fooz", ["foox", "fooy", "fooz"]),
        ("[1-3,5-6]", ["1", "2", "3", "5", "6"]),
        ("foo[1-5]", ["foo1", "foo2", "foo3", "foo4", "foo5"]),
        ("foo[0-4]-eth2", [f"foo{i}-eth2" for i in range(5)]),
        ("foo1,foo1,foo1", ["foo1", "foo1", "foo1"]),
        ("[00-02]", ["00", "01", "02"]),
        ("[00-2]", ["00", "01", "02"]),
        ("foo[1,1,2,1]", ["foo1", "foo1", "foo2", "foo1"]),
    ],
)
def test_rfc_test_vectors(text: str, hosts: list[str]) -> None:
    assert hostlist.decode(text) == hosts
    assert hostlist.decode(hostlist.encode(hosts)) == hosts


def test_padding_rule() -> None:
    assert hostlist.decode("foo[005,4,11-13]") == [
        "foo005",
        "foo004",
        "foo011",
        "foo012",
        "foo013",
    ]
    assert hostlist.decode("[1-010]") == [str(i) for i in range(1, 11)]
    assert hostlist.decode("foo[1,02]") == ["foo1", "foo2"]


def test_padding_longer_than_int_digit_limit() -> None:
    # int() refuses strings over 4,300 digits, leading zeros included: only the significant
    # digits are converted, so any width of padding decodes and encodes.
    zeros = "0" * 5000
    hosts = [f"n{zeros}1", f"n{zeros}2"]
    assert hostlist.decode(f"n[{zeros}1-2]") == hosts
    assert hostlist.decode(f"n[1-{zeros}2]") == ["n1", "n2"]
    assert hostlist.decode(hostlist.encode(hosts)) == hosts
    with pytest.raises(LimitError):
        hostlist.decode(f"n[{zeros}{'9' * 21}]")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("rack[1-2]n[1-4]", "an expression may hold only one bracketed idlist"),
        ("foo bar", "character ' ' is not allowed in a hostlist"),
        ("foo[]", "empty idlist"),
        ("foo[", "'[' is never closed"),
        ("foo]", "']' without a matching '['"),
        ("foo[3-1]", "range ends below its start"),
        ("foo[1-]", "expected an id"),
        ("foo[x-y]", "unexpected 'x' in an idlist"),
        ("foo[[1]]", "brackets do not nest"),
        ("foo[1,,2]", "empty element in an idlist (expected an id)"),
    ],
)
def test_syntax_messages(text: str, message: str) -> None:
    with pytest.raises(ParseError) as info:
        hostlist.decode(text)
    assert info.value.reason == message
    assert info.value.category == "syntax"


def test_expressions_are_not_expanded() -> None:
    (expression,) = hostlist.expressions("h[0-999999999999]x")
    assert expression.size == 10**12
    assert (expression.prefix, expression.suffix, expression.width) == ("h", "x", 0)
    with pytest.raises(LimitError):
        hostlist.decode("h[0-999999999999]")
    with pytest.raises(LimitError):
        run("hostlist.decode", "h[0-999999999999]")


def _one_by_one(expression: hostlist.Expression) -> list[str]:
    """The expression's host names, every id formatted on its own."""
    assert expression.ranges is not None
    width = expression.width
    return [
        f"{expression.prefix}{i:0{width}d}{expression.suffix}"
        for lo, hi in expression.ranges
        for i in range(lo, hi + 1)
    ]


_NEAR_BLOCKS = st.sampled_from([0, 1, 998, 999, 1000, 1001, 1999, 2000, 99_999, 10**19 - 1500])


@given(
    st.lists(
        st.tuples(
            _NEAR_BLOCKS,
            st.integers(0, 3),
            st.sampled_from([0, 1, 998, 999, 1000, 1001, 1998, 1999, 2000, 3001]),
        ),
        min_size=1,
        max_size=4,
    ),
    st.sampled_from([0, 1, 3, 4, 6, 25]),
    st.sampled_from(["", "-ib", "7"]),
)
def test_long_ranges_expand_as_ids_formatted_one_by_one(
    ranges: list[tuple[int, int, int]], width: int, suffix: str
) -> None:
    # Long ranges are written a block of a thousand ids at a time: the heads, the partial
    # blocks at either end, the ids below 1000 and the padding must come out as if each id
    # were formatted on its own, in order, short ranges before and after included.
    pairs = tuple((lo + shift, lo + shift + length) for lo, shift, length in ranges)
    expression = hostlist.Expression("n", pairs, width, suffix)
    assert expression.hosts() == _one_by_one(expression)


def test_limits() -> None:
    with pytest.raises(LimitError):
        hostlist.decode("n[99999999999999999999999]")
    with pytest.raises(LimitError):
        hostlist.decode(f"n[1-{MAX_EXPANSION}],m")
    with pytest.raises(LimitError):
        hostlist.decode("a" * (MAX_TEXT_LENGTH + 1))
    assert hostlist.decode("n[1-3]", limit=3) == ["n1", "n2", "n3"]
    with pytest.raises(LimitError):
        hostlist.decode("n[1-3]", limit=2)


@pytest.mark.parametrize(
    "text", ["foo", "", "a,,b", "[0]", "x[0-9,10-11,5]y", "n[007-1200]", "p[9-101,0099-100000]s"]
)
def test_expression_length_matches_the_expansion(text: str) -> None:
    expected = sum(map(len, hostlist.decode(text)))
    assert sum(expression.length for expression in hostlist.expressions(text)) == expected


def test_output_length_limit_is_decided_without_expanding() -> None:
    # Few enough hosts, far too many characters: refused before a single name is built.
    for text in ("a" * 1000 + "[0-3999999]", "a[" + "0" * 1000 + "0-3999999]"):
        (expression,) = hostlist.expressions(text)
        assert expression.length > MAX_OUTPUT_LENGTH
        with pytest.raises(LimitError):
            hostlist.decode(text)
        with pytest.raises(LimitError):
            run("hostlist.decode", text)


@pytest.mark.parametrize("host", ["", "foo bar", "a,b", "foo[1]", "x]", "n\u00f6de", "tab\t"])
def test_encode_refuses_unwritable_hosts(host: str) -> None:
    with pytest.raises(InvalidError) as info:
        hostlist.encode(["ok", host])
    assert info.value.path == (1,)


def test_operations() -> None:
    assert run("hostlist.decode", "n[1-2],m") == ["n1", "n2", "m"]
    assert run("hostlist.encode", ["n1", "n2", "m"]) == "n[1-2],m"
    with pytest.raises(InvalidError):
        run("hostlist.decode", ["n1"])
    with pytest.raises(InvalidError):
        run("hostlist.encode", "n1")
    with pytest.raises(InvalidError):
        run("hostlist.encode", ["n1", 2])


@given(st.text(alphabet="ab01-[], ", max_size=16))
def test_decode_never_crashes(text: str) -> None:
    try:
        hosts = hostlist.decode(text)
    except (ParseError, LimitError):
        return
    assert hostlist.decode(hostlist.encode(hosts)) == hosts


@st.composite
def numbered_lists(draw: st.DrawFn) -> list[str]:
    """Hosts of one prefix and plain numbers, mostly ascending: the nodelist of an R."""
    prefix = draw(st.sampled_from(["node", "n", "", "a.b-", "x0y", "n-"]))
    numbers = draw(st.lists(st.integers(0, 3000), min_size=2, max_size=40))
    if draw(st.booleans()):
        numbers = sorted(set(numbers))
    hosts = [f"{prefix}{n}" for n in numbers]
    if draw(st.booleans()):
        index = draw(st.integers(0, len(hosts) - 1))
        hosts[index] = draw(host_names())
    return hosts


@given(numbered_lists())
def test_the_numbered_short_cut_answers_as_the_run_encoder(hosts: list[str]) -> None:
    quick = hostlist._encode_numbered(hosts)
    if quick is not None:
        # What the general encoder gives for the same list, with the short cut switched off.
        saved = hostlist._encode_numbered
        try:
            hostlist._encode_numbered = lambda _hosts: None  # type: ignore[assignment]
            assert quick == hostlist.encode(hosts)
        finally:
            hostlist._encode_numbered = saved  # type: ignore[assignment]
        assert hostlist.decode(quick) == hosts


def test_the_numbered_short_cut_covers_nodelists() -> None:
    assert hostlist._encode_numbered([f"node{i}" for i in (1, 3, 4, 5, 9)]) == "node[1,3-5,9]"
    for hosts in (["n1", "n1"], ["n2", "n1"], ["n01", "n2"], ["n1", "m2"], ["n1"], ["n1x", "n2x"]):
        assert hostlist._encode_numbered(hosts) is None
