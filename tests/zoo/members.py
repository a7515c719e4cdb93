"""A zoo of wrong implementations: behaviour-level bugs that people write.

Each member is the reference with one departure, modelled on what real libraries do (see
docs/implementations.md): ids wrapping at 2**32, zero-padding taken per element, hosts sorted
and de-duplicated, ``^`` computed as ``*``, ``not`` read as NOT(OR), numbers compared as
strings, an off-by-one at the end of long ranges.  A member changes the reference's answer only
on the inputs its bug touches, and answers like the reference everywhere else, so the suite
catches it only if some case exercises that class of input.

A member is a function ``(value, ref) -> outcome | None``: ``ref`` runs the reference (the
member's own operation, or another with ``ref.op``); ``None`` means "answer as the reference".
``witness`` is one input on which the bug shows, checked by the tests, so that no member is a
no-op.  tests/zoo/test_zoo.py runs every member against its operation's cases.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from flux_conformance.reference.operations import DEFAULT_EDITION, EDITIONS
from zoo import (
    members_allocate,  # noqa: F401  (registers the sched.allocate members)
    members_documents,  # noqa: F401  (registers diff's findings in R, constraints, jobspecs)
)
from zoo._framework import (
    MEMBERS,
    Member,
    Outcome,
    Ref,
    WrongImplementation,
    member,
)
from zoo._framework import copy_json as _copy
from zoo._framework import err as _err
from zoo._framework import map_output as _map_output
from zoo._framework import ok as _ok
from zoo._framework import retry as _retry
from zoo._framework import walk as _walk

__all__ = ["MEMBERS", "Member", "Ref", "WrongImplementation"]

_NUMBER = re.compile(r"\d+")


def _idset(text: str, ref: Ref) -> list[int]:
    out = ref.op("idset.decode", text)
    return list(out["output"]) if "output" in out else []


def _encode(ids: list[int], ref: Ref) -> str:
    return str(ref.op("idset.encode", ids)["output"])


# -- idset.decode ----------------------------------------------------------------------------

_RANGE = re.compile(r"(\d+)-(\d+)")


@member("idset.decode", like="an off-by-one in a bitmap walk", witness="0-4")
def long_range_drops_last(value: Any, ref: Ref) -> Outcome | None:
    """Drops the last id of every range of five or more ids."""
    if not isinstance(value, str):
        return None
    ends = {int(b) for a, b in _RANGE.findall(value) if int(b) - int(a) >= 4}
    return _map_output(value, ref, lambda ids: [i for i in ids if i not in ends])


@member("idset.decode", like="Python's range(lo, hi)", witness="1-3")
def range_end_exclusive(value: Any, ref: Ref) -> Outcome | None:
    """Reads lo-hi as lo up to but not including hi."""
    if not isinstance(value, str):
        return None
    ends = {int(b) for _, b in _RANGE.findall(value)}
    starts = {int(i) for i in _NUMBER.findall(value) if int(i) not in ends}
    return _map_output(value, ref, lambda ids: [i for i in ids if i not in ends or i in starts])


@member("idset.decode", like="ids kept in 32-bit unsigned integers", witness="4294967296")
def wraps_at_2_32(value: Any, ref: Ref) -> Outcome | None:
    """Keeps ids modulo 2**32."""
    return _map_output(value, ref, lambda ids: sorted({i % 2**32 for i in ids}))


@member("idset.decode", like="ids kept in signed 32-bit integers", witness="2147483648")
def signed_32_bit(value: Any, ref: Ref) -> Outcome | None:
    """Refuses ids from 2**31 on as malformed (a signed 32-bit parse that overflows)."""
    first = ref(value)
    if "output" in first and any(i >= 2**31 for i in first["output"]):
        return _err("syntax")
    return None


@member("idset.decode", like="ids read through a C double", witness="9007199254740993")
def ids_through_double(value: Any, ref: Ref) -> Outcome | None:
    """Reads ids as floating-point numbers, so ids above 2**53 change."""
    return _map_output(value, ref, lambda ids: sorted({int(float(i)) for i in ids}))


@member("idset.decode", like="strtoull, which saturates", witness="18446744073709551616")
def saturates_at_2_64(value: Any, ref: Ref) -> Outcome | None:
    """Reads an id above 2**64-1 as 2**64-1 instead of refusing it."""
    if not isinstance(value, str):
        return None
    big = 2**64 - 1
    return _retry(value, ref, lambda v: _NUMBER.sub(lambda m: str(min(int(m.group()), big)), v))


@member("idset.decode", like="flux-core's libidset", witness="1,,2")
def empty_elements_accepted(value: Any, ref: Ref) -> Outcome | None:
    """Skips empty elements (1,,2 and trailing commas) instead of refusing them."""
    return _retry(value, ref, lambda v: re.sub(r",+", ",", v).replace("[,", "[").strip(","))


@member("idset.decode", like="strtoul, which takes leading zeroes", witness="01")
def leading_zeros_accepted(value: Any, ref: Ref) -> Outcome | None:
    """Accepts ids with leading zeroes."""
    return _retry(value, ref, lambda v: _NUMBER.sub(lambda m: str(int(m.group())), v))


@member("idset.decode", like="a set built by inserting each element", witness="3,1")
def unordered_accepted(value: Any, ref: Ref) -> Outcome | None:
    """Accepts elements in any order and repeated, returning the sorted union."""

    def union(v: str) -> list[int]:
        inner = v[1:-1] if v.startswith("[") and v.endswith("]") else v
        ids: set[int] = set()
        for part in inner.split(","):
            got = ref(part)
            if "output" not in got or not part:
                raise ValueError(part)
            ids.update(got["output"])
        return sorted(ids)

    first = ref(value)
    if "output" in first or not isinstance(value, str):
        return None
    try:
        return _ok(union(value))
    except ValueError:
        return None


@member("idset.decode", like="a tokenizer that skips blanks", witness="1, 2")
def whitespace_ignored(value: Any, ref: Ref) -> Outcome | None:
    """Ignores blanks around ids and commas."""
    return _retry(value, ref, lambda v: re.sub(r"\s", "", v))


@member("idset.decode", like="Python's int(), which takes +, _ and non-ASCII digits", witness="+1")
def python_int(value: Any, ref: Ref) -> Outcome | None:
    """Reads each id with Python's int(): +3, 1_0 and non-ASCII digits pass."""

    def fix(v: str) -> str:
        return re.sub(r"[^,\-\[\]]+", lambda m: str(int(m.group())), v)

    return _retry(value, ref, fix)


@member("idset.decode", like="a range that swaps its ends", witness="5-3")
def reversed_range_accepted(value: Any, ref: Ref) -> Outcome | None:
    """Accepts hi-lo as if it were lo-hi."""

    def fix(v: str) -> str:
        return _RANGE.sub(lambda m: f"{min(map(int, m.groups()))}-{max(map(int, m.groups()))}", v)

    return _retry(value, ref, fix)


@member("idset.decode", like="a parser without the bracket rule", witness="[1-3]")
def brackets_refused(value: Any, ref: Ref) -> Outcome | None:
    """Refuses the optional surrounding brackets."""
    if isinstance(value, str) and value.startswith("[") and "output" in ref(value):
        return _err("syntax")
    return None


# -- idset.encode ----------------------------------------------------------------------------


def _shorten_long_runs(text: str) -> str:
    return _RANGE.sub(
        lambda m: f"{m[1]}-{int(m[2]) - 1}" if int(m[2]) - int(m[1]) >= 4 else m[0], text
    )


@member("idset.encode", like="an off-by-one closing a run", witness=[0, 1, 2, 3, 4])
def long_run_drops_last(value: Any, ref: Ref) -> Outcome | None:
    """Writes a run of five or more ids one short at its end."""
    return _map_output(value, ref, _shorten_long_runs)


@member("idset.encode", like="a writer that never merges", witness=[1, 1])
def keeps_duplicates(value: Any, ref: Ref) -> Outcome | None:
    """Writes repeated ids as often as they are given."""
    if not isinstance(value, list) or len(set(map(str, value))) == len(value):
        return None
    return _map_output(value, ref, lambda _: ",".join(str(i) for i in sorted(value)))


@member("idset.encode", like="a writer that keeps the caller's order", witness=[3, 1])
def input_order(value: Any, ref: Ref) -> Outcome | None:
    """Writes the ids in the order given, without sorting."""
    if not isinstance(value, list) or value == sorted(value, key=lambda i: (str(type(i)), i)):
        return None
    return _map_output(value, ref, lambda _: ",".join(str(i) for i in value))


@member("idset.encode", like="no check of the sign", witness=[-1, 2])
def negative_accepted(value: Any, ref: Ref) -> Outcome | None:
    """Writes negative ids instead of refusing them."""
    if isinstance(value, list) and any(isinstance(i, int) and i < 0 for i in value):
        return _ok(",".join(str(i) for i in sorted(set(value))))
    return None


@member("idset.encode", like="ids kept in 32-bit unsigned integers", witness=[4294967296])
def encode_wraps_at_2_32(value: Any, ref: Ref) -> Outcome | None:
    """Keeps ids modulo 2**32."""
    if not isinstance(value, list) or not all(isinstance(i, int) and i >= 0 for i in value):
        return None
    return ref([i % 2**32 for i in value])


@member("idset.encode", like="ids passed through a double", witness=[9007199254740993])
def encode_through_double(value: Any, ref: Ref) -> Outcome | None:
    """Converts ids to floating point, so ids above 2**53 change."""
    if not isinstance(value, list) or not all(isinstance(i, int) and i >= 0 for i in value):
        return None
    return ref([int(float(i)) for i in value])


# -- hostlist.decode -------------------------------------------------------------------------


def _top_level(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += {"[": 1, "]": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


@member("hostlist.decode", like="python-hostlist and pdsh", witness="n[01-02,3]")
def padding_per_element(value: Any, ref: Ref) -> Outcome | None:
    """Takes each element's own zero-padding instead of the idlist's first id's."""
    if not isinstance(value, str) or "output" not in ref(value):
        return None
    hosts: list[str] = []
    for expr in _top_level(value):
        match = re.fullmatch(r"([^\[\]]*)\[([^\[\]]*)\]([^\[\]]*)", expr)
        if not match:
            hosts.extend(ref(expr).get("output", []))
            continue
        for element in match[2].split(","):
            got = ref(f"{match[1]}[{element}]{match[3]}")
            if "output" not in got:
                return None
            hosts.extend(got["output"])
    return _ok(hosts)


@member("hostlist.decode", like="ClusterShell's NodeSet", witness="b,a,a")
def sorted_deduplicated(value: Any, ref: Ref) -> Outcome | None:
    """Returns the hosts sorted and without repeats."""

    def key(host: str) -> tuple[Any, ...]:
        return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", host))

    return _map_output(value, ref, lambda hosts: sorted(set(hosts), key=key))


@member("hostlist.decode", like="a grammar without suffixes", witness="n[1-2]-ib")
def suffix_dropped(value: Any, ref: Ref) -> Outcome | None:
    """Drops the text after an idlist's closing bracket."""
    if not isinstance(value, str) or "output" not in ref(value):
        return None
    stripped = re.sub(r"\]([^,\[\]]*)", "]", value)
    if stripped == value:
        return None
    got = ref(stripped)
    return got if "output" in got else None


@member("hostlist.decode", like="ids kept in 32-bit unsigned integers", witness="n4294967296")
def hosts_wrap_at_2_32(value: Any, ref: Ref) -> Outcome | None:
    """Keeps the numbers in host names modulo 2**32."""
    return _map_output(
        value,
        ref,
        lambda hosts: [
            _NUMBER.sub(lambda m: str(int(m[0]) % 2**32) if int(m[0]) >= 2**32 else m[0], h)
            for h in hosts
        ],
    )


@member("hostlist.decode", like="an off-by-one at the end of a long range", witness="n[1-5]")
def host_range_drops_last(value: Any, ref: Ref) -> Outcome | None:
    """Drops the last host of every range of five or more ids."""
    if not isinstance(value, str) or "output" not in ref(value):
        return None

    def fix(m: re.Match[str]) -> str:
        lo, hi = m[1], m[2]
        if int(hi) - int(lo) < 4:
            return m[0]
        return f"{lo}-{int(hi) - 1}"

    def inside(m: re.Match[str]) -> str:
        return "[" + _RANGE.sub(fix, m[1]) + "]"

    got = ref(re.sub(r"\[([^\[\]]*)\]", inside, value))
    return got if "output" in got else None


@member("hostlist.decode", like="a splitter that drops nothing", witness="a,,b")
def empty_expressions_refused(value: Any, ref: Ref) -> Outcome | None:
    """Refuses empty expressions (a,,b, a trailing comma) although they add nothing."""
    if isinstance(value, str) and "output" in ref(value) and "" in _top_level(value):
        return None if value == "" else _err("syntax")
    return None


@member("hostlist.decode", like="a shell-style splitter", witness="a b")
def whitespace_separates(value: Any, ref: Ref) -> Outcome | None:
    """Treats blanks as separators between hosts."""
    return _retry(value, ref, lambda v: re.sub(r"\s+", ",", v.strip()))


@member("hostlist.decode", like="ClusterShell's several bracket groups", witness="n[1-2]x[3-4]")
def several_brackets_product(value: Any, ref: Ref) -> Outcome | None:
    """Accepts several bracketed idlists in one name, expanding their product."""
    if not isinstance(value, str) or "output" in ref(value):
        return None
    hosts: list[str] = []
    for expr in _top_level(value):
        cut = expr.find("]")
        if cut < 0 or "[" not in expr[cut:]:
            got = ref(expr)
            if "output" not in got:
                return None
            hosts.extend(got["output"])
            continue
        heads, tails = ref(expr[: cut + 1]), ref(expr[cut + 1 :])
        if "output" not in heads or "output" not in tails:
            return None
        hosts.extend(h + t for h in heads["output"] for t in tails["output"])
    return _ok(hosts)


@member("hostlist.decode", like="padding taken from the widest id", witness="n[8-10]")
def padding_from_widest(value: Any, ref: Ref) -> Outcome | None:
    """Pads every id to the width of the range's widest end."""
    if not isinstance(value, str) or "output" not in ref(value):
        return None

    def fix(m: re.Match[str]) -> str:
        lo, hi = m[1], m[2]
        return f"{lo.zfill(len(hi))}-{hi}" if len(hi) > len(lo) and lo[0] != "0" else m[0]

    got = ref(re.sub(r"\[(\d+)-(\d+)", lambda m: "[" + fix(m), value))
    return got if "output" in got else None


@member("hostlist.decode", like="a range that swaps its ends", witness="n[3-1]")
def host_reversed_range(value: Any, ref: Ref) -> Outcome | None:
    """Accepts hi-lo ranges, expanding them upwards."""
    return _retry(
        value,
        ref,
        lambda v: _RANGE.sub(lambda m: f"{m[2]}-{m[1]}" if int(m[1]) > int(m[2]) else m[0], v),
    )


# -- hostlist.encode -------------------------------------------------------------------------


@member("hostlist.encode", like="python-hostlist's collect_hostlist", witness=["b", "a", "a"])
def encode_sorted_deduplicated(value: Any, ref: Ref) -> Outcome | None:
    """Encodes the hosts sorted and without repeats."""
    if not isinstance(value, list) or not all(isinstance(h, str) for h in value):
        return None
    return ref(sorted(set(value)))


@member("hostlist.encode", like="numbers re-printed without padding", witness=["n01", "n02"])
def padding_dropped(value: Any, ref: Ref) -> Outcome | None:
    """Loses the zero-padding of the numbers in host names."""
    if not isinstance(value, list) or not all(isinstance(h, str) for h in value):
        return None
    return ref([re.sub(r"0+(\d)$", r"\1", h) for h in value])


@member("hostlist.encode", like="a writer that checks nothing", witness=["a,b"])
def encode_checks_nothing(value: Any, ref: Ref) -> Outcome | None:
    """Joins host names it should refuse (with commas, brackets, blanks) as they are."""
    if isinstance(value, list) and all(isinstance(h, str) for h in value) and "error" in ref(value):
        return _ok(",".join(value))
    return None


@member(
    "hostlist.encode", like="an off-by-one closing a run", witness=["n1", "n2", "n3", "n4", "n5"]
)
def encode_long_run_drops_last(value: Any, ref: Ref) -> Outcome | None:
    """Writes a run of five or more hosts one short at its end."""

    def fix(text: str) -> str:
        def run_fix(m: re.Match[str]) -> str:
            lo, hi = m[1], m[2]
            if int(hi) - int(lo) < 4:
                return m[0]
            return f"{lo}-{str(int(hi) - 1).zfill(len(hi))}"

        return re.sub(r"\[([^\[\]]*)\]", lambda m: "[" + _RANGE.sub(run_fix, m[1]) + "]", text)

    return _map_output(value, ref, fix)


@member("hostlist.encode", like="a writer that forgets suffixes", witness=["n1-ib", "n2-ib"])
def encode_suffix_dropped(value: Any, ref: Ref) -> Outcome | None:
    """Loses what follows the number in names with a suffix."""
    if not isinstance(value, list) or not all(isinstance(h, str) for h in value):
        return None
    fixed = [re.sub(r"^(\D*\d+)\D.*$", r"\1", h) for h in value]
    return None if fixed == value else ref(fixed)


# -- range.decode ----------------------------------------------------------------------------


@member("range.decode", like="a default operator of *", witness="1-5")
def default_operator_star(value: Any, ref: Ref) -> Outcome | None:
    """Takes * as the operator when the string gives none."""
    if not isinstance(value, str) or value.count(":") >= 2:
        return None
    return _map_output(value, ref, lambda out: {**out, "operator": "*"})


@member("range.decode", like="min+ read as the single value min", witness="2+")
def unbounded_as_single(value: Any, ref: Ref) -> Outcome | None:
    """Reads min+ as the range min-min."""
    return _map_output(value, ref, lambda out: {**out, "max": out.get("max", out["min"])})


@member("range.decode", like="no check of the order of the ends", witness="5-3")
def max_below_min_accepted(value: Any, ref: Ref) -> Outcome | None:
    """Accepts a range whose max is below its min."""
    if not isinstance(value, str):
        return None
    match = re.match(r"^(\[?)(\d+)-(\d+)(.*)$", value)
    if not match or int(match[2]) <= int(match[3]):
        return None
    got = ref(f"{match[1]}{match[3]}-{match[2]}{match[4]}")
    if "output" not in got:
        return None
    return _ok({**got["output"], "min": int(match[2]), "max": int(match[3])})


@member("range.decode", like="a parser without the bracket rule", witness="[1-5]")
def range_brackets_refused(value: Any, ref: Ref) -> Outcome | None:
    """Refuses the optional brackets."""
    if isinstance(value, str) and value.startswith("[") and "output" in ref(value):
        return _err("syntax")
    return None


@member("range.decode", like="a default operand of 2", witness="1-5")
def default_operand_two(value: Any, ref: Ref) -> Outcome | None:
    """Takes 2 as the operand when the string gives none."""
    if not isinstance(value, str) or ":" in value:
        return None
    return _map_output(value, ref, lambda out: {**out, "operand": 2})


# -- count.values ----------------------------------------------------------------------------


def _operator(count: Any) -> str | None:
    if isinstance(count, dict):
        return count.get("operator")
    if isinstance(count, str) and count.count(":") == 2:
        return count.rsplit(":", 1)[1].rstrip("]")
    return None


def _with_operator(count: Any, new: str) -> Any:
    if isinstance(count, dict):
        return {**count, "operator": new}
    head, _, tail = count.rpartition(":")
    return f"{head}:{new}{']' if tail.endswith(']') else ''}"


@member("count.values", like="^ computed as *", witness={"count": "2-16:2:^", "limit": 100})
def caret_as_star(value: Any, ref: Ref) -> Outcome | None:
    """Computes the ^ (power) operator as * (multiplication)."""
    if not isinstance(value, dict) or _operator(value.get("count")) != "^":
        return None
    if "output" not in ref(value):
        return None
    got = ref({**value, "count": _with_operator(value["count"], "*")})
    return got if "output" in got else None


@member("count.values", like="* computed as +", witness={"count": "2-16:2:*", "limit": 100})
def star_as_plus(value: Any, ref: Ref) -> Outcome | None:
    """Computes the * (multiplication) operator as + (addition)."""
    if not isinstance(value, dict) or _operator(value.get("count")) != "*":
        return None
    if "output" not in ref(value):
        return None
    got = ref({**value, "count": _with_operator(value["count"], "+")})
    return got if "output" in got else None


@member("count.values", like="an exclusive upper bound", witness={"count": "1-5", "limit": 100})
def max_exclusive(value: Any, ref: Ref) -> Outcome | None:
    """Leaves out a range's max itself."""
    if not isinstance(value, dict):
        return None
    got = ref.op("range.decode", value.get("count")) if isinstance(value.get("count"), str) else {}
    top = value["count"].get("max") if isinstance(value.get("count"), dict) else None
    if "output" in got:
        top = got["output"].get("max")
    if top is None:
        return None
    return _map_output(value, ref, lambda vals: [v for v in vals if v != top])


@member("count.values", like="an exclusive limit", witness={"count": "1+", "limit": 5})
def limit_exclusive(value: Any, ref: Ref) -> Outcome | None:
    """Lists values below the limit only, not the limit itself."""
    if not isinstance(value, dict):
        return None
    limit = value.get("limit")
    return _map_output(value, ref, lambda vals: [v for v in vals if v != limit])


@member("count.values", like="no check that * grows", witness={"count": "2-8:1:*", "limit": 9})
def star_operand_one_accepted(value: Any, ref: Ref) -> Outcome | None:
    """Accepts * with operand 1 (which never grows), listing min alone."""
    if not isinstance(value, dict) or _operator(value.get("count")) != "*":
        return None
    if "output" in ref(value):
        return None
    got = ref({**value, "count": _with_operator(value["count"], "+")})
    if "output" not in got or not got["output"]:
        return None
    return _ok(got["output"][:1])


@member(
    "count.values", like="min and max compared as strings", witness={"count": "9-10", "limit": 20}
)
def bounds_compared_as_strings(value: Any, ref: Ref) -> Outcome | None:
    """Compares max with min as text, so 9-10 looks reversed and is refused."""
    if not isinstance(value, dict) or "output" not in ref(value):
        return None
    count = value.get("count")
    parts = ref.op("range.decode", count)["output"] if isinstance(count, str) else count
    if "output" in ref.op("range.decode", count) if isinstance(count, str) else True:
        pass
    if not isinstance(parts, dict) or "min" not in parts or parts.get("max") is None:
        return None
    if str(parts["max"]) < str(parts["min"]):
        return _err("invalid")
    return None


@member("count.values", like="min 0 not refused", witness={"count": 0, "limit": 3})
def zero_accepted(value: Any, ref: Ref) -> Outcome | None:
    """Accepts a count of 0 (or a min of 0) instead of refusing it."""
    if not isinstance(value, dict) or "output" in ref(value):
        return None
    count = value.get("count")
    if count == 0:
        return _ok([0])
    if isinstance(count, dict) and count.get("min") == 0:
        got = ref({**value, "count": {**count, "min": 1}})
        return _ok([0, *got["output"]]) if "output" in got else None
    return None


@member(
    "count.values",
    like="one edition's key rule for all",
    witness={"count": {"min": 2, "max": 4}, "limit": 4},
)
def one_edition_only(value: Any, ref: Ref) -> Outcome | None:
    """Applies the default edition's range-dict rule whatever edition is asked for."""
    if ref.edition in (None, DEFAULT_EDITION):
        other = next(e for e in EDITIONS if e != DEFAULT_EDITION)
        ours, theirs = ref(value), ref.op("count.values", value, other)
        return theirs if ours != theirs else None
    return ref.op("count.values", value, DEFAULT_EDITION)


# -- shape.parse -----------------------------------------------------------------------------


@member("shape.parse", like="a default label of task", witness={"shape": "slot/core"})
def default_label_task(value: Any, ref: Ref) -> Outcome | None:
    """Labels an unlabelled slot task instead of default when default_label is absent."""
    if not isinstance(value, dict) or "default_label" in value:
        return None
    return ref({**value, "default_label": "task"})


@member("shape.parse", like="x kept as a key of its own", witness={"shape": "node{x}"})
def x_not_exclusive(value: Any, ref: Ref) -> Outcome | None:
    """Keeps x as a key instead of reading it as exclusive."""
    shape = value.get("shape") if isinstance(value, dict) else None
    if not isinstance(shape, str) or not re.search(r"[{,;]\s*[-+]?x\s*[},;:]", shape):
        return None

    def rename(out: Any) -> Any:
        for node in _walk(out):
            if isinstance(node, dict) and "exclusive" in node:
                node["x"] = node.pop("exclusive")
        return out

    return _map_output(value, ref, rename)


@member("shape.parse", like="-key read as a flag that is set", witness={"shape": "node{-x}"})
def minus_key_true(value: Any, ref: Ref) -> Outcome | None:
    """Reads -key as true."""

    def flip(out: Any) -> Any:
        for node in _walk(out):
            if isinstance(node, dict):
                for key, item in list(node.items()):
                    if item is False:
                        node[key] = True
        return out

    return _map_output(value, ref, flip)


@member("shape.parse", like="a range count that loses its max", witness={"shape": "node=2-4"})
def range_count_unbounded(value: Any, ref: Ref) -> Outcome | None:
    """Drops max from range counts, making them unbounded."""

    def drop(out: Any) -> Any:
        for node in _walk(out):
            if isinstance(node, dict) and isinstance(node.get("count"), dict):
                node["count"].pop("max", None)
        return out

    return _map_output(value, ref, drop)


@member("shape.parse", like="values never read as JSON", witness={"shape": "memory=4{size:8}"})
def numbers_as_strings(value: Any, ref: Ref) -> Outcome | None:
    """Keeps number values of keys as strings."""

    def stringify(out: Any) -> Any:
        for node in _walk(out):
            if isinstance(node, dict):
                for key, item in list(node.items()):
                    if (
                        key != "count"
                        and isinstance(item, int | float)
                        and not isinstance(item, bool)
                    ):
                        node[key] = str(item)
        return out

    return _map_output(value, ref, stringify)


@member("shape.parse", like="counts of 1 left out", witness={"shape": "node/core"})
def count_one_omitted(value: Any, ref: Ref) -> Outcome | None:
    """Leaves out a count of 1 (RFC 14 needs the key)."""

    def drop(out: Any) -> Any:
        for node in _walk(out):
            if isinstance(node, dict) and node.get("count") == 1:
                del node["count"]
        return out

    return _map_output(value, ref, drop)


# -- jobspec.validate ------------------------------------------------------------------------


def _vertices(doc: Any) -> Iterator[dict[str, Any]]:
    stack = list(doc.get("resources", [])) if isinstance(doc, dict) else []
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield item
            if isinstance(item.get("with"), list):
                stack.extend(item["with"])


@member("jobspec.validate", like="a slot label taken as optional", witness=None)
def slot_label_optional(value: Any, ref: Ref) -> Outcome | None:
    """Accepts a slot without a label."""

    def fix(doc: Any) -> Any:
        changed = False
        for vertex in _vertices(doc):
            if vertex.get("type") == "slot" and "label" not in vertex:
                vertex["label"] = "default"
                changed = True
        if not changed:
            return None
        for task in doc.get("tasks", []):
            if isinstance(task, dict) and "slot" not in task:
                task["slot"] = "default"
        return doc

    return _retry(value, ref, fix)


_KNOWN_VERTEX_KEYS = {"type", "count", "unit", "exclusive", "with", "label", "id"}


@member("jobspec.validate", like="a closed schema for vertices", witness=None)
def unknown_vertex_key_refused(value: Any, ref: Ref) -> Outcome | None:
    """Refuses a vertex key RFC 14 does not define (the text makes it a warning)."""
    if "output" not in ref(value):
        return None
    if any(set(v) - _KNOWN_VERTEX_KEYS for v in _vertices(value)):
        return _err("invalid")
    return None


@member("jobspec.validate", like="labels kept in a list, not a set", witness=None)
def duplicate_labels_accepted(value: Any, ref: Ref) -> Outcome | None:
    """Accepts two vertices with the same label."""

    def fix(doc: Any) -> Any:
        seen: set[str] = set()
        changed = False
        for vertex in _vertices(doc):
            label = vertex.get("label")
            if isinstance(label, str) and label in seen:
                vertex["label"] = f"{label}-zoo{len(seen)}"
                changed = True
            if isinstance(label, str):
                seen.add(label)
        return doc if changed else None

    return _retry(value, ref, fix)


@member("jobspec.validate", like="a count taken as a non-negative integer", witness=None)
def count_zero_accepted(value: Any, ref: Ref) -> Outcome | None:
    """Accepts a vertex count of 0."""

    def fix(doc: Any) -> Any:
        changed = False
        for vertex in _vertices(doc):
            if vertex.get("count") == 0:
                vertex["count"] = 1
                changed = True
        return doc if changed else None

    return _retry(value, ref, fix)


@member("jobspec.validate", like="task slots never looked up", witness=None)
def task_slot_unchecked(value: Any, ref: Ref) -> Outcome | None:
    """Accepts a task whose slot names no slot label."""

    def fix(doc: Any) -> Any:
        labels = [v.get("label") for v in _vertices(doc) if v.get("type") == "slot"]
        if not labels or not isinstance(labels[0], str):
            return None
        changed = False
        for task in doc.get("tasks", []):
            slot = task.get("slot") if isinstance(task, dict) else None
            if isinstance(slot, str) and slot not in labels:
                task["slot"] = labels[0]
                changed = True
        return doc if changed else None

    return _retry(value, ref, fix)


@member("jobspec.validate", like="no check of version", witness=None)
def version_unchecked(value: Any, ref: Ref) -> Outcome | None:
    """Accepts any version number."""
    return _retry(
        value, ref, lambda d: {**d, "version": 1} if d.get("version") not in (1, None) else None
    )


@member("jobspec.validate", like="duration read as any number", witness=None)
def negative_duration_accepted(value: Any, ref: Ref) -> Outcome | None:
    """Accepts a negative duration."""

    def fix(doc: Any) -> Any:
        system = doc["attributes"]["system"]
        if isinstance(system.get("duration"), int | float) and system["duration"] < 0:
            system["duration"] = 0
            return doc
        return None

    return _retry(value, ref, fix)


@member("jobspec.validate", like="one edition's key rule for all", witness=None)
def jobspec_one_edition(value: Any, ref: Ref) -> Outcome | None:
    """Applies the default edition's range-dict rule whatever edition is asked for."""
    if ref.edition in (None, DEFAULT_EDITION):
        return None
    return ref.op("jobspec.validate", value, DEFAULT_EDITION)


# -- jobspec.from_shape ----------------------------------------------------------------------


@member(
    "jobspec.from_shape",
    like="the task count's kind lost",
    witness={"shape": "slot=4{s}/node", "command": ["a"], "tasks": {"total": 5}},
)
def tasks_total_as_per_slot(value: Any, ref: Ref) -> Outcome | None:
    """Writes a given {total: N} task count as {per_slot: N}."""
    if not isinstance(value, dict) or not isinstance(value.get("tasks"), dict):
        return None
    if "total" not in value["tasks"]:
        return None
    got = ref({**value, "tasks": {"per_slot": value["tasks"]["total"]}})
    return got if "output" in got else None


@member(
    "jobspec.from_shape",
    like="a default task count of total 1",
    witness={"shape": "slot/core", "command": ["a"]},
)
def default_tasks_total(value: Any, ref: Ref) -> Outcome | None:
    """Writes one task in all ({total: 1}) when tasks is not given, not one per slot."""
    if not isinstance(value, dict) or "tasks" in value:
        return None

    def change(doc: Any) -> Any:
        for task in doc["tasks"]:
            task["count"] = {"total": 1}
        return doc

    return _map_output(value, ref, change)


@member(
    "jobspec.from_shape",
    like="attributes never copied",
    witness={"shape": "slot/core", "command": ["a"], "attributes": {"system": {"duration": 60}}},
)
def attributes_dropped(value: Any, ref: Ref) -> Outcome | None:
    """Writes attributes {system: {}} whatever attributes are given."""
    if not isinstance(value, dict) or "attributes" not in value:
        return None
    return _map_output(value, ref, lambda doc: {**doc, "attributes": {"system": {}}})


# -- R (shared helpers) ----------------------------------------------------------------------


def _decode(doc: Any, ref: Ref) -> list[dict[str, Any]] | None:
    return ref.op("R.decode", doc).get("output")


def _encode_r(ranks: list[dict[str, Any]], ref: Ref) -> Any:
    return ref.op("R.encode", ranks).get("output")


def _strip(doc: Any, key: str) -> Any:
    doc = _copy(doc)
    if isinstance(doc, dict) and isinstance(doc.get("execution"), dict):
        if key == "properties":
            doc["execution"].pop("properties", None)
        for entry in doc["execution"].get("R_lite", []):
            if isinstance(entry, dict) and isinstance(entry.get("children"), dict):
                entry["children"].pop(key, None)
    return doc


# -- R.validate ------------------------------------------------------------------------------


def _validate_fix(value: Any, ref: Ref, fix: Callable[[Any], Any]) -> Outcome | None:
    got = _retry(value, ref, fix)
    return got if got is not None else None


@member("R.validate", like="properties never checked against the ranks", witness=None)
def property_ranks_unchecked(value: Any, ref: Ref) -> Outcome | None:
    """Accepts properties naming ranks that R does not have."""

    def fix(doc: Any) -> Any:
        props = doc["execution"]["properties"]
        ranks = set()
        for entry in doc["execution"]["R_lite"]:
            ranks.update(_idset(entry["rank"], ref))
        for name, text in list(props.items()):
            kept = [i for i in _idset(text, ref) if i in ranks]
            props[name] = _encode(kept, ref) if kept else text
        return doc

    return _validate_fix(value, ref, fix)


@member("R.validate", like="a nodelist never counted", witness=None)
def nodelist_count_unchecked(value: Any, ref: Ref) -> Outcome | None:
    """Accepts a nodelist naming more or fewer hosts than there are ranks."""

    def fix(doc: Any) -> Any:
        ranks: set[int] = set()
        for entry in doc["execution"]["R_lite"]:
            ranks.update(_idset(entry["rank"], ref))
        doc["execution"]["nodelist"] = [f"zoo[0-{len(ranks) - 1}]"] if ranks else []
        return doc

    return _validate_fix(value, ref, fix)


@member("R.validate", like="times never compared", witness=None)
def expiration_unchecked(value: Any, ref: Ref) -> Outcome | None:
    """Accepts an expiration at or before the start time."""

    def fix(doc: Any) -> Any:
        execution = doc["execution"]
        start, end = execution.get("starttime"), execution.get("expiration")
        if start is not None and end is not None and end <= start:
            execution["expiration"] = start + 1
            return doc
        return None

    return _validate_fix(value, ref, fix)


@member("R.validate", like="no check of version", witness=None)
def r_version_unchecked(value: Any, ref: Ref) -> Outcome | None:
    """Accepts any version number."""
    return _retry(
        value, ref, lambda d: {**d, "version": 1} if d.get("version") not in (1, None) else None
    )


@member("R.validate", like="children not required to be idsets", witness=None)
def children_unchecked(value: Any, ref: Ref) -> Outcome | None:
    """Accepts core and gpu values that are not valid idsets."""

    def fix(doc: Any) -> Any:
        changed = False
        for entry in doc["execution"]["R_lite"]:
            for key in ("core", "gpu"):
                text = entry["children"].get(key)
                if text is not None and "output" not in ref.op("idset.decode", text):
                    entry["children"][key] = "0"
                    changed = True
        return doc if changed else None

    return _validate_fix(value, ref, fix)


# -- R.decode --------------------------------------------------------------------------------


@member("R.decode", like="properties in document order", witness=None)
def properties_unsorted(value: Any, ref: Ref) -> Outcome | None:
    """Lists a rank's properties in the order the document gives them, not sorted."""
    try:
        order = list(value["execution"]["properties"])
    except (KeyError, TypeError):
        return None

    def change(ranks: Any) -> Any:
        for item in ranks:
            item["properties"] = [p for p in order if p in item["properties"]]
        return ranks

    return _map_output(value, ref, change)


@member("R.decode", like="a later R_lite entry overwriting an earlier one", witness=None)
def repeated_rank_last_wins(value: Any, ref: Ref) -> Outcome | None:
    """Gives a rank named by several R_lite entries only the last entry's children."""
    first = ref(value)
    if "output" not in first:
        return None
    last: dict[int, dict[str, Any]] = {}
    counts: dict[int, int] = {}
    for entry in value["execution"]["R_lite"]:
        for rank in _idset(entry["rank"], ref):
            last[rank] = entry["children"]
            counts[rank] = counts.get(rank, 0) + 1
    out = _copy(first["output"])
    for item in out:
        if counts.get(item["rank"], 0) > 1:
            children = last[item["rank"]]
            item["cores"] = _encode(_idset(children.get("core", ""), ref), ref)
            item["gpus"] = _encode(_idset(children.get("gpu", ""), ref), ref)
    return _ok(out)


@member("R.decode", like="host names matched to ranks after sorting", witness=None)
def hostnames_sorted(value: Any, ref: Ref) -> Outcome | None:
    """Hands out the host names in sorted order instead of nodelist order."""

    def change(ranks: Any) -> Any:
        names = sorted(item["hostname"] for item in ranks)
        for item, name in zip(ranks, names, strict=True):
            item["hostname"] = name
        return ranks

    return _map_output(value, ref, change)


@member("R.decode", like="gpus never read", witness=None)
def decode_gpus_dropped(value: Any, ref: Ref) -> Outcome | None:
    """Reports no GPUs on any rank."""

    def change(ranks: Any) -> Any:
        for item in ranks:
            item["gpus"] = ""
        return ranks

    return _map_output(value, ref, change)


# -- R.union / R.intersect / R.diff ----------------------------------------------------------


def _pair(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("a"), dict)
        and isinstance(value.get("b"), dict)
    )


@member("R.union", like="the first document's properties only", witness=None)
def union_properties_of_a(value: Any, ref: Ref) -> Outcome | None:
    """Keeps only the first document's properties."""
    if not _pair(value) or "output" not in ref(value):
        return None
    return ref({"a": value["a"], "b": _strip(value["b"], "properties")})


@member("R.union", like="a rank in both taken from the second", witness=None)
def union_shared_rank_second_wins(value: Any, ref: Ref) -> Outcome | None:
    """Gives a rank held by both documents the second document's cores and GPUs only."""
    if not _pair(value):
        return None
    got = ref(value)
    if "output" not in got:
        return None
    out, b = _decode(got["output"], ref), _decode(value["b"], ref)
    if out is None or b is None:
        return None
    second = {r["rank"]: r for r in b}
    changed = [
        {**r, "cores": second[r["rank"]]["cores"], "gpus": second[r["rank"]]["gpus"]}
        if r["rank"] in second
        else r
        for r in out
    ]
    if changed == out:
        return None
    doc = _encode_r(changed, ref)
    return None if doc is None else _ok(doc)


@member("R.union", like="gpus never merged", witness=None)
def union_gpus_of_a(value: Any, ref: Ref) -> Outcome | None:
    """Takes the GPUs of the first document only."""
    if not _pair(value) or "output" not in ref(value):
        return None
    return ref({"a": value["a"], "b": _strip(value["b"], "gpu")})


@member("R.intersect", like="gpus never read", witness=None)
def intersect_gpus_dropped(value: Any, ref: Ref) -> Outcome | None:
    """Intersects the cores only; no GPU survives."""
    if not _pair(value) or "output" not in ref(value):
        return None
    return ref({"a": _strip(value["a"], "gpu"), "b": _strip(value["b"], "gpu")})


@member("R.intersect", like="properties dropped by set operations", witness=None)
def intersect_properties_dropped(value: Any, ref: Ref) -> Outcome | None:
    """Loses every property."""
    if not _pair(value) or "output" not in ref(value):
        return None
    return ref({"a": _strip(value["a"], "properties"), "b": _strip(value["b"], "properties")})


@member("R.intersect", like="a rank kept when only its gpus meet", witness=None)
def intersect_cores_required(value: Any, ref: Ref) -> Outcome | None:
    """Keeps only ranks whose cores meet, dropping ranks left with GPUs alone."""
    if not _pair(value):
        return None
    got = ref(value)
    if "output" not in got:
        return None
    ranks = _decode(got["output"], ref)
    if ranks is None:
        return None
    kept = [r for r in ranks if r["cores"]]
    if len(kept) == len(ranks):
        return None
    doc = _encode_r(kept, ref)
    return None if doc is None else _ok(doc)


@member("R.diff", like="ranks left with nothing kept", witness=None)
def diff_keeps_empty_ranks(value: Any, ref: Ref) -> Outcome | None:
    """Keeps a rank that the second document leaves without cores or GPUs."""
    if not _pair(value):
        return None
    got = ref(value)
    if "output" not in got:
        return None
    a, out = _decode(value["a"], ref), _decode(got["output"], ref)
    if a is None or out is None:
        return None
    present = {r["rank"] for r in out}
    extra = [{**r, "cores": "", "gpus": ""} for r in a if r["rank"] not in present]
    if not extra:
        return None
    doc = _encode_r(sorted(out + extra, key=lambda r: r["rank"]), ref)
    return None if doc is None else _ok(doc)


@member("R.diff", like="gpus never subtracted", witness=None)
def diff_gpus_ignored(value: Any, ref: Ref) -> Outcome | None:
    """Subtracts cores only; the first document's GPUs stay."""
    if not _pair(value) or "output" not in ref(value):
        return None
    return ref({"a": value["a"], "b": _strip(value["b"], "gpu")})


@member("R.diff", like="the operands swapped", witness=None)
def diff_reversed(value: Any, ref: Ref) -> Outcome | None:
    """Computes b - a instead of a - b."""
    if not _pair(value) or "output" not in ref(value):
        return None
    got = ref({"a": value["b"], "b": value["a"]})
    return got if "output" in got else None


# -- R.encode --------------------------------------------------------------------------------


def _ranks_of(value: Any) -> Any:
    return value.get("ranks") if isinstance(value, dict) else value


@member("R.encode", like="repeated ranks merged silently", witness=None)
def encode_duplicate_ranks(value: Any, ref: Ref) -> Outcome | None:
    """Keeps the first item of a repeated rank instead of refusing the list."""

    def fix(v: Any) -> Any:
        ranks, seen, kept = _ranks_of(v), set(), []
        for item in ranks:
            if item["rank"] not in seen:
                seen.add(item["rank"])
                kept.append(item)
        if len(kept) == len(ranks):
            return None
        return {**v, "ranks": kept} if isinstance(v, dict) else kept

    return _retry(value, ref, fix)


@member("R.encode", like="property names never checked", witness=None)
def encode_properties_unchecked(value: Any, ref: Ref) -> Outcome | None:
    """Drops properties it cannot write instead of refusing them."""

    def fix(v: Any) -> Any:
        ranks = _ranks_of(v)
        for item in ranks:
            item.pop("properties", None)
        return v

    return _retry(value, ref, fix)


@member("R.encode", like="gpus never written", witness=None)
def encode_gpus_dropped(value: Any, ref: Ref) -> Outcome | None:
    """Writes no GPUs."""
    if "output" not in ref(value):
        return None
    v = _copy(value)
    ranks = _ranks_of(v)
    if not isinstance(ranks, list) or not any(isinstance(r, dict) and r.get("gpus") for r in ranks):
        return None
    for item in ranks:
        item.pop("gpus", None)
    return ref(v)


# -- constraint.validate ---------------------------------------------------------------------


@member("constraint.validate", like="not taken as a unary operator", witness={"not": [{}, {}]})
def not_several_refused(value: Any, ref: Ref) -> Outcome | None:
    """Refuses not with several values (RFC 31 allows them)."""
    if "output" not in ref(value):
        return None
    for node in _walk(value):
        if isinstance(node, dict) and isinstance(node.get("not"), list) and len(node["not"]) > 1:
            return _err("invalid")
    return None


_OPERATORS = {"properties", "hostlist", "ranks", "and", "or", "not"}


@member("constraint.validate", like="unknown operators skipped", witness={"color": ["red"]})
def unknown_operator_accepted(value: Any, ref: Ref) -> Outcome | None:
    """Accepts an object whose operator RFC 31 does not define, as if it were {}."""

    def fix(v: Any) -> Any:
        changed = False
        for node in _walk(v):
            if isinstance(node, dict) and len(node) == 1 and not set(node) & _OPERATORS:
                node.clear()
                changed = True
        return v if changed else None

    return _retry(value, ref, fix)


@member("constraint.validate", like="a loose ^ prefix", witness={"properties": ["^^a"]})
def double_caret_accepted(value: Any, ref: Ref) -> Outcome | None:
    """Accepts several ^ before a property name."""

    def fix(v: Any) -> Any:
        text = json.dumps(v)
        fixed = re.sub(r'"\^{2,}', '"^', text)
        return None if fixed == text else json.loads(fixed)

    return _retry(value, ref, fix)


@member(
    "constraint.validate", like="hostlist and ranks operands never parsed", witness={"ranks": ["x"]}
)
def operands_unchecked(value: Any, ref: Ref) -> Outcome | None:
    """Accepts any string as a hostlist or an idset."""

    def fix(v: Any) -> Any:
        changed = False
        for node in _walk(v):
            if isinstance(node, dict):
                for key, replacement in (("hostlist", "h"), ("ranks", "0")):
                    items = node.get(key)
                    if isinstance(items, list) and all(isinstance(i, str) for i in items):
                        node[key] = [replacement] * len(items)
                        changed = True
        return v if changed else None

    return _retry(value, ref, fix)


# -- constraint.match ------------------------------------------------------------------------


def _rewrite(node: Any, change: Callable[[dict[str, Any]], Any]) -> Any:
    if isinstance(node, dict):
        node = {k: _rewrite(v, change) for k, v in node.items()}
        return change(node)
    if isinstance(node, list):
        return [_rewrite(v, change) for v in node]
    return node


def _match_with(value: Any, ref: Ref, change: Callable[[dict[str, Any]], Any]) -> Outcome | None:
    if not isinstance(value, dict) or "output" not in ref(value):
        return None
    got = ref({**value, "constraint": _rewrite(value.get("constraint"), change)})
    return got if "output" in got else None


@member("constraint.match", like="not read as NOT(OR)", witness=None)
def not_as_nor(value: Any, ref: Ref) -> Outcome | None:
    """Negates the OR of not's values instead of their AND."""

    def change(node: dict[str, Any]) -> Any:
        if isinstance(node.get("not"), list) and len(node["not"]) > 1:
            return {"not": [{"or": node["not"]}]}
        return node

    return _match_with(value, ref, change)


@member("constraint.match", like="the ^ prefix ignored", witness=None)
def caret_ignored(value: Any, ref: Ref) -> Outcome | None:
    """Reads ^name as name."""

    def change(node: dict[str, Any]) -> Any:
        if isinstance(node.get("properties"), list):
            return {"properties": [p.lstrip("^") for p in node["properties"]]}
        return node

    return _match_with(value, ref, change)


@member("constraint.match", like="host names taken for properties", witness=None)
def hostname_is_property(value: Any, ref: Ref) -> Outcome | None:
    """Lets a property name match a host of that name."""

    def leaf(name: str) -> Any:
        return {"or": [{"properties": [name]}, {"hostlist": [name]}]}

    def change(node: dict[str, Any]) -> Any:
        props = node.get("properties")
        if isinstance(props, list) and props and all(isinstance(p, str) for p in props):
            terms = [
                {"not": [leaf(p[1:])]} if p.startswith("^") else leaf(p)
                for p in props
                if re.fullmatch(r"\^?[A-Za-z0-9_.-]+", p)
            ]
            if len(terms) == len(props):
                return {"and": terms}
        return node

    return _match_with(value, ref, change)


@member("constraint.match", like="an empty list read as no restriction", witness=None)
def empty_lists_match_all(value: Any, ref: Ref) -> Outcome | None:
    """Matches every target with {"hostlist": []}, {"ranks": []} or {"not": []}."""

    def change(node: dict[str, Any]) -> Any:
        for key in ("hostlist", "ranks", "not"):
            if node.get(key) == [] and len(node) == 1:
                return {}
        return node

    return _match_with(value, ref, change)


@member("constraint.match", like="an empty OR read as false", witness=None)
def empty_or_matches_none(value: Any, ref: Ref) -> Outcome | None:
    """Matches no target with {"or": []} (RFC 31 makes it match every one)."""

    def change(node: dict[str, Any]) -> Any:
        return {"ranks": []} if node == {"or": []} else node

    return _match_with(value, ref, change)


@member("constraint.match", like="properties matched as prefixes", witness=None)
def properties_as_prefix(value: Any, ref: Ref) -> Outcome | None:
    """Lets a property name match every property that starts with it."""
    if not isinstance(value, dict) or "output" not in ref(value):
        return None
    try:
        names = list(value["R"]["execution"]["properties"])
    except (KeyError, TypeError):
        return None

    def change(node: dict[str, Any]) -> Any:
        props = node.get("properties")
        if not isinstance(props, list) or not all(isinstance(p, str) for p in props):
            return node
        terms = []
        for p in props:
            neg, bare = p.startswith("^"), p.lstrip("^")
            alts = [{"properties": [n]} for n in names if n.startswith(bare)] or [
                {"properties": [bare]}
            ]
            term = {"or": alts}
            terms.append({"not": [term]} if neg else term)
        return {"and": terms}

    got = ref({**value, "constraint": _rewrite(value.get("constraint"), change)})
    return got if "output" in got else None


# -- constraint.parse_query ------------------------------------------------------------------


@member("constraint.parse_query", like="keywords matched without case", witness="a AND b")
def keywords_any_case(value: Any, ref: Ref) -> Outcome | None:
    """Takes AND, Or and NOT as the keywords and, or, not."""
    if not isinstance(value, str):
        return None
    fixed = re.sub(r"(?i)\b(and|or|not)\b", lambda m: m[0].lower(), value)
    if fixed == value:
        return None
    got = ref(fixed)
    return got if got != ref(value) else None


@member("constraint.parse_query", like="-term read as a name with a dash", witness="-a")
def negation_dropped(value: Any, ref: Ref) -> Outcome | None:
    """Ignores the - that negates a term."""
    if not isinstance(value, str) or "output" not in ref(value):
        return None
    fixed = re.sub(r"(^|[\s(])-(?=[A-Za-z0-9])", r"\1", value)
    if fixed == value:
        return None
    got = ref(fixed)
    return got if "output" in got else None


@member("constraint.parse_query", like="operands never split on commas", witness="a,b")
def comma_not_split(value: Any, ref: Ref) -> Outcome | None:
    """Keeps a comma-separated operand as one property name."""

    def change(out: Any) -> Any:
        for node in _walk(out):
            props = node.get("properties") if isinstance(node, dict) else None
            if isinstance(props, list) and len(props) > 1:
                node["properties"] = [",".join(props)]
        return out

    return _map_output(value, ref, change)


@member("constraint.parse_query", like="aliases not known", witness="host:n1")
def aliases_refused(value: Any, ref: Ref) -> Outcome | None:
    """Refuses the aliases host:, hosts: and rank:."""
    aliased = isinstance(value, str) and re.search(r"\b(host|hosts|rank):", value)
    return _err("invalid") if aliased and "output" in ref(value) else None


_WORD_OPERATORS = {"&": "and", "&&": "and", "and": "and", "|": "or", "||": "or", "or": "or"}


@member("constraint.parse_query", like="or binding tighter than and", witness="a|b c")
def or_binds_tighter(value: Any, ref: Ref) -> Outcome | None:
    """Groups OR before AND, so a|b c reads as (a|b) c instead of a|(b c)."""
    if not isinstance(value, str) or re.search(r"[()'\"]", value):
        return None
    first = ref(value)
    if "output" not in first:
        return None
    tokens = re.sub(r"(\|\||&&|\||&)", r" \1 ", value).split()
    groups: list[list[str]] = [[]]  # AND of ORs: each group is OR-ed terms
    term: list[str] = []
    pending = "and"
    for tok in tokens:
        op = _WORD_OPERATORS.get(tok)
        if op:
            pending = op
            continue
        term.append(tok)
        if tok == "not":
            continue
        if pending == "and" and groups[-1]:
            groups.append([])
        groups[-1].append(" ".join(term))
        term, pending = [], "and"
    if term or not any(len(g) > 1 for g in groups) or len(groups) < 2:
        return None
    text = " and ".join("(" + " or ".join(g) + ")" for g in groups)
    got = ref(text)
    return got if "output" in got and got != first else None


# -- slurm.extra ------------------------------------------------------------------------------


def _leaves(tree: Any) -> Iterator[dict[str, Any]]:
    for node in _walk(tree):
        if isinstance(node, dict) and "key" in node:
            yield node


def _evaluate(tree: Any, leaf: Callable[[dict[str, Any]], bool]) -> bool:
    if "key" in tree:
        return leaf(tree)
    results = (_evaluate(child, leaf) for child in tree["children"])
    return all(results) if tree["op"] == "and" else any(results)


def _match_by_leaf(
    value: Any, ref: Ref, leaf: Callable[[dict[str, Any], Any, Callable[[], bool]], bool | None]
) -> Outcome | None:
    """Evaluate the expression with ``leaf`` deciding each leaf (None: the reference's answer)."""
    if not isinstance(value, dict):
        return None
    first = ref.op("slurm.extra.match", value)
    if "output" not in first:
        return None
    tree = ref.op("slurm.extra.parse", value["expression"])["output"]
    extra = json.loads(value["extra"]) if isinstance(value.get("extra"), str) else None
    if not isinstance(extra, dict):
        return None

    def decide(node: dict[str, Any]) -> bool:
        text = f"{node['key']}{node['comparison']}{node['value']}"

        def reference() -> bool:
            return bool(ref.op("slurm.extra.match", {**value, "expression": text})["output"])

        mine = leaf(node, extra, reference)
        return reference() if mine is None else mine

    return _ok(_evaluate(tree, decide))


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


@member(
    "slurm.extra.match",
    like="numbers compared as strings",
    witness={"expression": "n<10", "extra": '{"n": 9}'},
)
def numbers_as_strings_slurm(value: Any, ref: Ref) -> Outcome | None:
    """Compares numbers as text, so 9 is above 10."""

    def leaf(node: dict[str, Any], extra: Any, reference: Callable[[], bool]) -> bool | None:
        have = extra.get(node["key"])
        if not isinstance(have, int | float) or isinstance(have, bool):
            return None
        a, b = json.dumps(have), node["value"]
        return {"=": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}.get(
            node["comparison"]
        )

    return _match_by_leaf(value, ref, leaf)


@member(
    "slurm.extra.match",
    like="keys matched without case",
    witness={"expression": "A=1", "extra": '{"a": 1}'},
)
def keys_any_case(value: Any, ref: Ref) -> Outcome | None:
    """Looks keys up without regard to case."""

    def leaf(node: dict[str, Any], extra: Any, reference: Callable[[], bool]) -> bool | None:
        if node["key"] in extra:
            return None
        for key in extra:
            if key.lower() == node["key"].lower():
                text = f"{key}{node['comparison']}{node['value']}"
                return bool(ref.op("slurm.extra.match", {**value, "expression": text})["output"])
        return None

    return _match_by_leaf(value, ref, leaf)


@member(
    "slurm.extra.match",
    like="a missing key passing !=",
    witness={"expression": "a!=1", "extra": '{"b": 1}'},
)
def missing_key_not_equal(value: Any, ref: Ref) -> Outcome | None:
    """Counts a != leaf as true when the node has no such key."""

    def leaf(node: dict[str, Any], extra: Any, reference: Callable[[], bool]) -> bool | None:
        return True if node["comparison"] == "!=" and node["key"] not in extra else None

    return _match_by_leaf(value, ref, leaf)


@member(
    "slurm.extra.match",
    like="exact float equality",
    witness={"expression": "a=1.000001", "extra": '{"a": 1}'},
)
def exact_float_equality(value: Any, ref: Ref) -> Outcome | None:
    """Compares numbers for equality exactly, without Slurm's tolerance."""

    def leaf(node: dict[str, Any], extra: Any, reference: Callable[[], bool]) -> bool | None:
        have, want = extra.get(node["key"]), _number(node["value"])
        if not isinstance(have, int | float) or isinstance(have, bool) or want is None:
            return None
        if node["comparison"] == "=":
            return float(have) == want
        if node["comparison"] == "!=":
            return float(have) != want
        return None

    return _match_by_leaf(value, ref, leaf)


@member(
    "slurm.extra.match",
    like="booleans compared as the text true/false",
    witness={"expression": "b=1", "extra": '{"b": true}'},
)
def booleans_as_text(value: Any, ref: Ref) -> Outcome | None:
    """Compares a boolean with the request value as the text true or false."""

    def leaf(node: dict[str, Any], extra: Any, reference: Callable[[], bool]) -> bool | None:
        have = extra.get(node["key"])
        if not isinstance(have, bool):
            return None
        a, b = json.dumps(have), node["value"]
        return {"=": a == b, "!=": a != b}.get(node["comparison"])

    return _match_by_leaf(value, ref, leaf)


@member(
    "slurm.extra.match",
    like="atof, which reads a number's prefix",
    witness={"expression": "a=1x", "extra": '{"a": 1}'},
)
def lenient_number(value: Any, ref: Ref) -> Outcome | None:
    """Reads 1x as the number 1 instead of not a number."""

    def leaf(node: dict[str, Any], extra: Any, reference: Callable[[], bool]) -> bool | None:
        have = extra.get(node["key"])
        prefix = re.match(r"[-+]?\d+(\.\d*)?", node["value"])
        if not isinstance(have, int | float) or isinstance(have, bool) or not prefix:
            return None
        if prefix[0] == node["value"]:
            return None
        text = f"{node['key']}{node['comparison']}{prefix[0]}"
        return bool(ref.op("slurm.extra.match", {**value, "expression": text})["output"])

    return _match_by_leaf(value, ref, leaf)


@member(
    "slurm.extra.match",
    like="a node without Extra matching everything",
    witness={"expression": "a=1", "extra": None},
)
def no_extra_matches(value: Any, ref: Ref) -> Outcome | None:
    """Lets a node without Extra satisfy every expression."""
    if isinstance(value, dict) and value.get("extra") is None:
        got = ref(value)
        return _ok(True) if "output" in got else None
    return None


@member(
    "slurm.extra.match",
    like="comma read as OR",
    witness={"expression": "a=1,b=2", "extra": '{"a": 1}'},
)
def comma_as_or(value: Any, ref: Ref) -> Outcome | None:
    """Reads , as OR instead of AND."""
    if not isinstance(value, dict) or not isinstance(value.get("expression"), str):
        return None
    if "," not in value["expression"] or "output" not in ref(value):
        return None
    got = ref({**value, "expression": value["expression"].replace(",", "|")})
    return got if "output" in got else None


@member("slurm.extra.parse", like="keys and values trimmed", witness="a= b")
def parse_trims(value: Any, ref: Ref) -> Outcome | None:
    """Trims blanks around keys and values."""

    def change(tree: Any) -> Any:
        for leaf in _leaves(tree):
            leaf["key"], leaf["value"] = leaf["key"].strip(), leaf["value"].strip()
        return tree

    return _map_output(value, ref, change)


@member("slurm.extra.parse", like="operators mixed at one level", witness="a=1&b=2|c=3")
def mixed_operators_accepted(value: Any, ref: Ref) -> Outcome | None:
    """Accepts & and | at the same level, reading them left to right."""
    if not isinstance(value, str) or "output" in ref(value) or "(" in value:
        return None
    if "&" not in value or "|" not in value:
        return None
    pieces = re.split(r"([&,|])", value)
    tree: Any = None
    op = None
    for piece in pieces:
        if piece in "&,|" and piece:
            op = "or" if piece == "|" else "and"
            continue
        got = ref(piece)
        if "output" not in got:
            return None
        tree = got["output"] if tree is None else {"op": op, "children": [tree, got["output"]]}
    return _ok(tree)


@member("slurm.extra.parse", like="comma not an operator", witness="a=1,b=2")
def comma_refused(value: Any, ref: Ref) -> Outcome | None:
    """Refuses , as a boolean operator."""
    if isinstance(value, str) and "," in value and "output" in ref(value):
        return _err("syntax")
    return None


@member("slurm.extra.parse", like="== taken as =", witness="a==1")
def double_equals(value: Any, ref: Ref) -> Outcome | None:
    """Reads == as =."""
    if not isinstance(value, str) or "==" not in value:
        return None
    return _retry(value, ref, lambda v: v.replace("==", "="))


@member(
    "slurm.extra.select",
    like="names in input order",
    witness={"expression": "a=1", "nodes": {"b": '{"a": 1}', "a": '{"a": 1}'}},
)
def select_unsorted(value: Any, ref: Ref) -> Outcome | None:
    """Lists the names in the order the nodes are given, not sorted."""
    if not isinstance(value, dict) or not isinstance(value.get("nodes"), dict):
        return None
    order = list(value["nodes"])
    return _map_output(value, ref, lambda names: [n for n in order if n in names])


@member(
    "slurm.extra.select",
    like="natural sort",
    witness={"expression": "a=1", "nodes": {"n10": '{"a": 1}', "n9": '{"a": 1}'}},
)
def select_natural_sort(value: Any, ref: Ref) -> Outcome | None:
    """Sorts names with their numbers compared as numbers."""

    def key(name: str) -> tuple[Any, ...]:
        return tuple((0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"(\d+)", name))

    return _map_output(value, ref, lambda names: sorted(names, key=key))


@member(
    "slurm.extra.select",
    like="numbers compared as strings",
    witness={"expression": "n<10", "nodes": {"a": '{"n": 9}'}},
)
def select_numbers_as_strings(value: Any, ref: Ref) -> Outcome | None:
    """Compares numbers as text, node by node."""
    if not isinstance(value, dict) or not isinstance(value.get("nodes"), dict):
        return None
    if "output" not in ref(value):
        return None
    names = []
    for name, extra in value["nodes"].items():
        got = numbers_as_strings_slurm(
            {"expression": value["expression"], "extra": extra},
            Ref("slurm.extra.match", ref.edition),
        )
        if got is None:
            got = ref.op("slurm.extra.match", {"expression": value["expression"], "extra": extra})
        if got.get("output"):
            names.append(name)
    return _ok(sorted(names))


# Each member as a module attribute, so that any command can load it by name, e.g.
# ``flux-conformance diff --impl python:zoo.members:idset_decode__long_range_drops_last``.
for _item in MEMBERS:
    globals()[re.sub(r"\W", "_", _item.name.replace("/", "__"))] = WrongImplementation(_item)
