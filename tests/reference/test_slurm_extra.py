"""Tests of flux_conformance.reference.slurm_extra: Slurm's --extra node constraints."""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import math
import platform
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from flux_conformance.reference import (
    _slurm_extra_eval,
    _slurm_extra_parse,
    operations,
    slurm_extra,
)
from flux_conformance.reference._tokens import Tokenizer
from flux_conformance.reference.errors import FormatError, InvalidError, LimitError, ParseError
from flux_conformance.reference.slurm_extra import (
    EPSILON,
    MAX_LENGTH,
    Expression,
    ExtraError,
    Group,
    Leaf,
    LengthError,
    coerce_bool,
    load_extra,
    node_from_json,
    parse,
    read_number,
    select,
    to_text,
)

DOC_NODE = '{ "a": 1.23, "b": true, "c": 0, "foo": "bar", "zed": 23 }'


def category(func: Any, *args: Any) -> str:
    with pytest.raises(FormatError) as info:
        func(*args)
    return info.value.category


# --------------------------------------------------------------------------------------------
# Parsing


def test_documented_tree() -> None:
    tree = parse("((c<=0.0001&a=1.25)|zed=23.0)&(a<1|b=false|c>=0.00000001)")
    assert tree == Group(
        "and",
        (
            Group(
                "or",
                (
                    Group("and", (Leaf("c", "<=", "0.0001"), Leaf("a", "=", "1.25"))),
                    Leaf("zed", "=", "23.0"),
                ),
            ),
            Group(
                "or", (Leaf("a", "<", "1"), Leaf("b", "=", "false"), Leaf("c", ">=", "0.00000001"))
            ),
        ),
    )


def test_comma_is_and_and_mixes_with_ampersand() -> None:
    assert parse("a=1,b=2&c=3") == Group(
        "and", tuple(Leaf(k, "=", v) for k, v in ("a1", "b2", "c3"))
    )


def test_single_term_parentheses_add_no_level() -> None:
    assert parse("(((a=1)))") == Leaf("a", "=", "1")
    assert parse("(a=1&b=2)") == Group("and", (Leaf("a", "=", "1"), Leaf("b", "=", "2")))


def test_nothing_trimmed_or_unquoted() -> None:
    assert parse("( \"k\" = 'v' )") == Leaf(' "k" ', "=", " 'v' ")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "a",
        "=1",
        "a=",
        "a=b=c",
        "a!b=1",
        "a==1",
        "a=<1",
        "a<>1",
        "a,<=6",
        "a<=6<=",
        "a=5&&&b=5",
        "a=1&,b=2",
        "a=1||b=2",
        "a=5&()",
        "()",
        "(a=1",
        "a=1)",
        "a=1(b=2)",
        "(a=1)(b=2)",
        "(a=1)b=2",
        "(a=1) ",
        " (a=b)",
        "&a=1",
        "a=1|",
        "a=5&b=5|c=5",
        "(a=1)&(b=2)|(c=3)",
        "a=1\x00",
    ],
)
def test_syntax_errors(text: str) -> None:
    with pytest.raises(ParseError) as info:
        parse(text)
    assert info.value.category == "syntax"


def test_error_messages_and_spans() -> None:
    with pytest.raises(ParseError) as info:
        parse("a=5&b=5|c=5")
    assert info.value.reason == "AND and OR mixed at one level of parentheses"
    assert info.value.span == (7, 8)
    assert str(info.value).splitlines()[1:] == ["    a=5&b=5|c=5", "           ^"]
    with pytest.raises(ParseError) as info:
        parse("b<=<=5")
    assert info.value.reason == "'<=<=' is not a comparison operator"
    assert info.value.span == (1, 5)
    with pytest.raises(ParseError) as info:
        parse("x=1&(a=1")
    assert info.value.reason == "'(' is never closed"
    assert info.value.span == (4, 5)


def test_length_limit_counts_bytes() -> None:
    assert parse("k" * (MAX_LENGTH - 2) + "=1") == Leaf("k" * (MAX_LENGTH - 2), "=", "1")
    with pytest.raises(LengthError) as info:
        parse("k" * (MAX_LENGTH - 1) + "=1")
    assert info.value.category == "length"
    assert isinstance(info.value, LimitError)
    # 514 characters, 1026 bytes: Slurm's strlen counts bytes.
    assert category(parse, "k=" + "é" * 512) == "length"
    assert parse("k=" + "é" * 511) == Leaf("k", "=", "é" * 511)


def test_length_checked_before_syntax() -> None:
    assert category(parse, "(" * (MAX_LENGTH + 1)) == "length"


def test_hundred_thousand_levels_are_a_clean_error() -> None:
    deep = "(" * 100_000 + "a=1" + ")" * 100_000
    assert category(operations.run, "slurm.extra.parse", deep) == "length"
    assert (
        category(operations.run, "slurm.extra.match", {"expression": deep, "extra": "{}"})
        == "length"
    )


def _parse_any_length(text: str) -> Leaf | Group:
    """Parse without the length limit (which hides the parser's own depth handling)."""
    rules = _slurm_extra_parse._RULES
    return _slurm_extra_parse._parse_expression(Tokenizer(text, rules=rules))


def test_parser_itself_does_not_recurse() -> None:
    # The length limit hides it from callers, but the parser must cope with any depth.
    deep = "(" * 100_000 + "a=1" + ")" * 100_000
    assert _parse_any_length(deep) == Leaf("a", "=", "1")
    alternating = "a=1&(" * 50_000 + "b=2" + ")" * 50_000
    tree = _parse_any_length(alternating)
    # The innermost "(b=2)" holds one term, so it adds no level and is written bare.
    assert to_text(tree) == "a=1&(" * 49_999 + "a=1&b=2" + ")" * 49_999
    as_json = tree.to_json()
    levels = 0
    while "op" in as_json:
        as_json = as_json["children"][1]
        levels += 1
    assert levels == 50_000
    assert as_json == {"key": "b", "comparison": "=", "value": "2"}


def test_deep_trees_walk_without_recursion() -> None:
    node: Leaf | Group = Leaf("a", "=", "1")
    for _ in range(100_000):
        node = Group("and", (Leaf("b", "=", "2"), node))
    text = to_text(node)
    assert text.startswith("b=2&(b=2&(")
    assert text.count("(") == 99_999


def test_node_from_json_round_trip_and_depth_limit() -> None:
    tree = parse("(a=1|b!=x y)&c>=3")
    assert node_from_json(tree.to_json()) == tree
    deep: dict[str, Any] = {"key": "a", "comparison": "=", "value": "1"}
    for _ in range(5000):
        deep = {"op": "or", "children": [deep, {"key": "b", "comparison": "<", "value": "2"}]}
    assert category(node_from_json, deep) == "limit"


@pytest.mark.parametrize(
    "bad",
    [
        [],
        {"key": "a", "comparison": "==", "value": "1"},
        {"key": "", "comparison": "=", "value": "1"},
        {"key": "a", "comparison": "=", "value": "1|2"},
        {"op": "and", "children": [{"key": "a", "comparison": "=", "value": "1"}]},
        {"op": "xor", "children": []},
        {"key": "a", "comparison": "=", "value": "1", "extra": 1},
    ],
)
def test_node_from_json_refuses_what_parse_cannot_produce(bad: Any) -> None:
    with pytest.raises(InvalidError):
        node_from_json(bad)


# --------------------------------------------------------------------------------------------
# Reading values


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("23", 23.0),
        ("23.", 23.0),
        ("+23", 23.0),
        ("-23", -23.0),
        ("00023", 23.0),
        ("2.3e1", 23.0),
        ("2.3E+1", 23.0),
        ("0x17", 23.0),
        ("0X17", 23.0),
        ("-0x17", -23.0),
        ("0x1.7p4", 23.0),
        ("0x.8", 0.5),
        ("1e400", math.inf),
        ("0x1p99999", math.inf),
        ("-0x1p99999", -math.inf),
        ("inf", math.inf),
        ("-Infinity", -math.inf),
        ("INF", math.inf),
        # glibc's sscanf takes a dangling exponent marker (and its sign) and ignores it
        ("1e", 1.0),
        ("1e+", 1.0),
        ("1E-", 1.0),
        ("1.5e", 1.5),
        ("0x1p", 1.0),
        ("0X1P", 1.0),
        ("0x1p-", 1.0),
        ("0x.", 0.0),
        ("-0x.", -0.0),
        ("0x1.", 1.0),
    ],
)
def test_read_number(text: str, value: float) -> None:
    assert read_number(text) == value


@pytest.mark.parametrize("text", ["nan", "NaN", "-nan", "+NAN"])
def test_read_number_nan(text: str) -> None:
    number = read_number(text)
    assert number is not None
    assert math.isnan(number)


@pytest.mark.parametrize(
    "text",
    [
        ".5",
        " 1",
        "1 ",
        "0x",
        "0x.p1",
        "1ex",
        "1e+-1",
        "1e5.",
        "0xp1",
        "1_000",
        "٢٣",
        "1.2.3",
        "--1",
        "+-1",
        "infinit",
        "nan1",
        "inf ",
        "1kb",
        "",
        "+",
        "0x-1",
        "İnf",
    ],
)
def test_read_number_refuses(text: str) -> None:
    assert read_number(text) is None


@given(st.floats(allow_nan=False))
def test_read_number_reads_repr_and_hex(x: float) -> None:
    assert read_number(repr(x)) == x
    assert read_number(x.hex()) == x


def _glibc_sscanf() -> Any:
    """libc's sscanf when this is a glibc system (the readings follow glibc), else None."""
    if platform.libc_ver()[0] != "glibc":
        return None
    return ctypes.CDLL(ctypes.util.find_library("c")).sscanf


_SSCANF = _glibc_sscanf()


def _as_slurm_reads(text: str) -> float | None:
    """What Slurm's string-to-float conversion gives, with the real sscanf doing the work."""
    raw = text.encode()
    negative = raw[:1] == b"-"
    body = raw[1:] if raw[:1] in (b"+", b"-") else raw
    if body.lower() in (b"inf", b"infinity", b"nan"):
        value = math.nan if body.lower() == b"nan" else math.inf
        return -value if negative else value
    if not body[:1].isdigit():
        return None
    number, after = ctypes.c_double(), ctypes.c_char()
    if _SSCANF(body, b"%lf%c", ctypes.byref(number), ctypes.byref(after)) != 1:
        return None
    return -number.value if negative else number.value


@pytest.mark.skipif(_SSCANF is None, reason="needs glibc's sscanf to compare with")
@given(st.text(alphabet="0123456789.eEpPxXaAfF+- in", max_size=12))
def test_read_number_agrees_with_glibc_sscanf(text: str) -> None:
    ours, theirs = read_number(text), _as_slurm_reads(text)
    if ours is None or theirs is None:
        assert ours is theirs
    elif math.isnan(theirs):
        assert math.isnan(ours)
    else:
        assert ours == theirs
        assert math.copysign(1, ours) == math.copysign(1, theirs)


@given(st.integers(), st.sampled_from(["", " ", "\t"]))
def test_read_number_needs_the_whole_text(n: int, space: str) -> None:
    if abs(n) < 10**300:
        assert read_number(str(n)) == float(n)
    if space:
        assert read_number(space + str(n)) is None
        assert read_number(str(n) + space) is None


@pytest.mark.parametrize(
    ("text", "flag"),
    [
        *[(w, True) for w in ["y", "Y", "yes", "YeS", "t", "true", "TRUE", "on", "On"]],
        *[(w, False) for w in ["n", "N", "no", "NO", "f", "false", "False", "off", "OFF"]],
        *[
            (w, False)
            for w in ["0", "00", "-0", "+0", "0.0", "-0.0", "0e9", "0x0", "0X000", "0x0p3"]
        ],
        *[(w, True) for w in ["1", "-1", "200", "0.5", "1e-300", "0x10", "nan", "inf", "-inf"]],
        ("null", False),
        ("NuLL", False),
        ("~", False),
        ("~anything", False),  # Slurm's null detection looks only at the first character
        (" 0", False),  # Slurm's integer fallback skips leading white space
        ("\t-00", False),
        ("0 ", True),
        (" yes", True),
        ("nope", True),
        ("fals", True),
        ("yess", True),
        ("nul", True),
        ("ＹＥＳ", True),  # noqa: RUF001 - full-width letters are not ASCII, so not the word
        ("0x", True),
        ("+", True),
    ],
)
def test_coerce_bool(text: str, flag: bool) -> None:
    assert coerce_bool(text) is flag


@given(st.integers())
def test_coerce_bool_of_integers(n: int) -> None:
    assert coerce_bool(str(n)) is (n != 0)
    assert coerce_bool(hex(n).replace("-", "")) is (n != 0)


# --------------------------------------------------------------------------------------------
# Evaluation


def matches(expression: str, extra: str | None) -> bool:
    result = operations.run("slurm.extra.match", {"expression": expression, "extra": extra})
    assert isinstance(result, bool)
    return result


@pytest.mark.parametrize(
    ("expression", "fulfilled"),
    [
        ("a=1.23", True),
        ("a!=1.24", True),
        ("a!=1.23|foo!=blah", True),
        ("b=200", True),
        ("b=true", True),
        ("foo<baz", True),
        ("(c<=0.0001&a=1.25)|zed=23.0", True),
        ("((c<=0.0001&a=1.25)|zed=23.0)&(a<1|b=false|c>=0.00000001)", True),
        ("((c<=0.0001&a=1.25)|zed=23.0)&(a<1|b=true|c>=0.1)", True),
        ("a!=1.23", False),
        ("b=0", False),
        ("b=false", False),
        ("foo>baz", False),
        ("((c<=0.0001&a=1.25)|zed=23.0)&(a<1|b=false|c>=0.00001)", False),
    ],
)
def test_documented_examples(expression: str, fulfilled: bool) -> None:
    assert matches(expression, DOC_NODE) is fulfilled


def test_band_is_strict_and_symmetric() -> None:
    assert EPSILON == 0.00001
    extra = load_extra('{"c": 0}')
    for value, order in [
        ("0.00001", "<"),
        ("-0.00001", ">"),
        ("0.0000099", "="),
        ("-0.0000099", "="),
    ]:
        for op in ("=", "!=", "<", "<=", ">", ">="):
            expected = {
                "=": order == "=",
                "!=": order != "=",
                "<": order == "<",
                "<=": order in "<=",
                ">": order == ">",
                ">=": order in ">=",
            }[op]
            assert Expression.compile(f"c{op}{value}").matches(extra) is expected, (op, value)


def test_nan_compares_greater_on_either_side() -> None:
    assert matches("x>nan", '{"x": 1}')
    assert not matches("x<nan", '{"x": 1}')
    assert not matches("x=nan", '{"x": 1}')
    # A NaN on the node's side (not JSON, but a library caller may pass one) is greater too.
    assert Expression.compile("x>1").matches({"x": math.nan})
    assert not Expression.compile("x<=1").matches({"x": math.nan})


def test_node_integers_saturate_to_64_bits() -> None:
    huge = "9" * 400
    assert matches("x=9223372036854775807", f'{{"x": {huge}}}')
    assert not matches("x>1e19", f'{{"x": {huge}}}')
    assert Expression.compile("x=-9223372036854775808").matches({"x": -(10**400)})
    # beyond int()'s digit limit, still a number, saturated by its sign alone
    assert matches("x=9223372036854775807", '{"x": ' + "1" * 5000 + "}")
    assert matches("x=-9223372036854775808", '{"x": -' + "1" * 5000 + "}")
    # only the long integer saturates; its neighbours keep their values
    assert matches("y=5", '{"x": ' + "1" * 5000 + ', "y": 5}')


def test_keys_stop_at_nul() -> None:
    assert load_extra('{"a\\u0000b": 1, "c": 2}') == {"a": 1, "c": 2}
    assert load_extra('{"a": 1, "a\\u0000b": 2}') == {"a": 2}
    assert load_extra('{"a\\u0000b": 1, "a": 2}') == {"a": 2}
    # an escaped backslash before u0000 is no NUL
    assert load_extra('{"a\\\\u0000b": 1}') == {"a\\u0000b": 1}


def test_extra_depth_bound() -> None:
    def nested(arrays: int, inner: str) -> str:
        return '{"a": ' + "[" * arrays + inner + "]" * arrays + ', "b": 1}'

    assert category(load_extra, nested(31, "1")) == "extra"
    assert load_extra(nested(31, "")) is not None
    assert load_extra(nested(30, "1")) is not None
    assert category(load_extra, nested(30, '{"x": 1}')) == "extra"
    assert load_extra(nested(30, "{}")) is not None


def test_strings_compare_as_strcmp() -> None:
    assert matches("s>10", '{"s": "9"}')
    assert matches("s>z", '{"s": "é"}')
    assert matches("s<\U00010000", '{"s": "\\uffff"}')
    # strcmp stops at a NUL byte
    assert matches("s=ab", '{"s": "ab\\u0000cd"}')


def test_missing_null_object_array_false_for_every_operator() -> None:
    extra = '{"n": null, "o": {"x": 1}, "l": [1], "k": 1}'
    for key in ("missing", "n", "o", "l"):
        for op in ("=", "!=", "<", "<=", ">", ">="):
            assert not matches(f"{key}{op}1", extra), (key, op)


def test_no_extra_and_bad_extra() -> None:
    assert not matches("a!=1", None)
    assert not matches("a!=1", "")
    for bad in (
        "[1]",
        "5",
        "null",
        '"x"',
        "{a: 1}",
        "{'a': 1}",
        '{"a": NaN}',
        '{"a": Infinity}',
        " ",
    ):
        assert category(matches, "a!=1", bad) == "extra", bad
    assert category(load_extra, "[1]") == "extra"
    with pytest.raises(ExtraError) as info:
        load_extra("{")
    assert isinstance(info.value, InvalidError)


def test_deeply_nested_extra_is_a_clean_error() -> None:
    deep = '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"
    assert category(matches, "a=1", deep) == "extra"
    assert select("b=1", {"deep": deep, "ok": '{"b": 1}'}) == ["ok"]


def test_expression_errors_come_before_extra_errors() -> None:
    assert category(matches, "a=1&", "[1]") == "syntax"


def test_select_parses_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = _slurm_extra_eval.parse

    def counting(text: str) -> Any:
        calls.append(text)
        return real(text)

    # Expression.compile, which select calls, parses through the name its own module imported.
    monkeypatch.setattr(_slurm_extra_eval, "parse", counting)
    nodes = {f"n{i}": json.dumps({"x": i % 3}) for i in range(100)}
    chosen = select("x=1|x=2", nodes)
    assert calls == ["x=1|x=2"]
    assert chosen == sorted(name for name, text in nodes.items() if json.loads(text)["x"] != 0)


def test_select_accepts_a_compiled_expression_and_sorts_by_code_point() -> None:
    compiled = Expression.compile("x=1")
    nodes: dict[str, str | None] = dict.fromkeys(["n2", "é", "n10", "A", "b"], '{"x": 1}')
    nodes["none"] = None
    nodes["junk"] = "not json"
    assert select(compiled, nodes) == ["A", "b", "n10", "n2", "é"]


@pytest.mark.parametrize(
    ("operation", "value"),
    [
        ("slurm.extra.parse", 5),
        ("slurm.extra.parse", None),
        ("slurm.extra.match", "a=1"),
        ("slurm.extra.match", {"expression": "a=1"}),
        ("slurm.extra.match", {"expression": "a=1", "extra": 5}),
        ("slurm.extra.match", {"expression": 1, "extra": None}),
        ("slurm.extra.match", {"expression": "a=1", "extra": None, "more": 1}),
        ("slurm.extra.select", {"expression": "a=1", "nodes": []}),
        ("slurm.extra.select", {"expression": "a=1", "nodes": {"n": 1}}),
        ("slurm.extra.select", {"expression": "a=1"}),
    ],
)
def test_wrongly_typed_input_is_invalid(operation: str, value: Any) -> None:
    assert category(operations.run, operation, value) == "invalid"


# --------------------------------------------------------------------------------------------
# Properties

_TEXT = st.text(
    alphabet=st.characters(exclude_characters=",&|<>=!()\x00", exclude_categories=("Cs",)),
    min_size=1,
    max_size=6,
)
_LEAVES = st.builds(Leaf, _TEXT, st.sampled_from(slurm_extra.COMPARISONS), _TEXT)


def _groups(children: st.SearchStrategy[Leaf | Group]) -> st.SearchStrategy[Group]:
    return st.builds(
        Group,
        st.sampled_from(["and", "or"]),
        st.lists(children, min_size=2, max_size=4).map(tuple),
    )


_TREES = st.recursive(_LEAVES, _groups, max_leaves=12)


@given(_TREES)
def test_parse_inverts_to_text(tree: Leaf | Group) -> None:
    text = to_text(tree)
    assume(len(text.encode()) <= MAX_LENGTH)
    assert parse(text) == tree
    assert node_from_json(json.loads(json.dumps(tree.to_json()))) == tree


@given(_TREES, st.sampled_from([",", "&"]))
def test_comma_and_ampersand_parse_alike(tree: Leaf | Group, joiner: str) -> None:
    text = to_text(tree)
    assume(len(text.encode()) <= MAX_LENGTH)
    assert parse(text.replace("&", joiner)) == tree


# A small world of keys and values so that random leaves meet random node values.
_KEYS = ["a", "b", "c"]
_VALUES = ["0", "1", "1.000001", "-2", "0x1", "true", "no", "x", "abc", "nan", "inf", " 1", "~"]
_SMALL_LEAVES = st.builds(
    Leaf, st.sampled_from(_KEYS), st.sampled_from(slurm_extra.COMPARISONS), st.sampled_from(_VALUES)
)
_SMALL_TREES = st.recursive(_SMALL_LEAVES, _groups, max_leaves=8)
_NODE_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.0, 1.0, 1.000001, -2.0, 0.5]),
    st.sampled_from(["0", "1", "x", "abc", "true", ""]),
    st.just([1]),
    st.just({"a": 1}),
)
_EXTRAS = st.dictionaries(st.sampled_from(_KEYS), _NODE_VALUES)


def _oracle(node: Leaf | Group, extra: dict[str, Any]) -> bool:
    """A direct, recursive restatement of the evaluation rules, to check the compiled form."""
    if isinstance(node, Group):
        results = [_oracle(child, extra) for child in node.children]
        return all(results) if node.op == "and" else any(results)
    if node.key not in extra:
        return False
    found = extra[node.key]
    if isinstance(found, bool):
        wanted = coerce_bool(node.value)
        order = (found > wanted) - (found < wanted)
    elif isinstance(found, int | float):
        number = read_number(node.value)
        if number is None:
            return False
        order = 0 if abs(found - number) < EPSILON else -1 if found < number else 1
    elif isinstance(found, str):
        order = (found.encode() > node.value.encode()) - (found.encode() < node.value.encode())
    else:
        return False
    return {
        "=": order == 0,
        "!=": order != 0,
        "<": order < 0,
        "<=": order <= 0,
        ">": order > 0,
        ">=": order >= 0,
    }[node.comparison]


@given(_SMALL_TREES, _EXTRAS)
def test_compiled_evaluation_agrees_with_the_rules(
    tree: Leaf | Group, extra: dict[str, Any]
) -> None:
    compiled = Expression.compile(to_text(tree))
    assert compiled.matches(extra) is _oracle(tree, extra)
    assert compiled.matches_text(json.dumps(extra)) is _oracle(tree, extra)
