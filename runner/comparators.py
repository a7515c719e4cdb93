"""Comparators: how an implementation's output is judged against a case's expectation.

Each operation names one comparator in its registration (``runner/schemas/operations``).
A comparator takes the expected output, the actual output and an *oracle* (the reference
implementation, used only to decode strings an encoder produced) and returns ``None`` when
the actual output conforms, or a one-line reason when it does not.

The comparators, documented where they are registered:

``exact``
    JSON equality: same types (``1`` is not ``1.0`` nor ``true``), same order in lists.
``idset_string``
    For ``idset.encode``: the output must be a string that strictly decodes (RFC 22) to
    the same set as the expected string.
``hostlist_string``
    For ``hostlist.encode``: the output must be a string that strictly decodes (RFC 29) to
    the same ordered list, duplicates included, as the expected string.
``slurm_tree``
    For ``slurm.extra.parse``: the same tree once every group with a single child has been
    replaced by that child, on both sides.  Slurm itself keeps a node per parenthesis level
    (``((a=1))`` is two groups around the leaf); the reference writes the leaf alone.  Both
    mean the same, so neither is penalised; groups with several children are never merged.
``validation``
    For validators (``R.validate``, ``constraint.validate``): the output must be
    ``{"warnings": [strings]}``.  Warnings are advice, not contract: their text and number
    are not compared (a case that expects rejection asserts an error category instead).
``rset_decoded``
    For ``R.union``, ``R.diff``, ``R.intersect``: the output must be an R the reference
    accepts, and its per-rank decoded form (``R.decode``) must equal the expected R's.
``rset_document``
    For ``R.encode``: as ``rset_decoded``, and ``execution.starttime`` / ``expiration`` must
    be present exactly when the expected R has them, with equal values.
``constraint_semantic``
    For ``constraint.parse_query``: the output must be a valid RFC 31 object that selects
    the same targets as the expected one on every R built from what the two mention: each
    property subset (all subsets up to 10 names, a fixed sample beyond), one host of each
    pattern of membership in the mentioned hostlists plus a host in none, and one rank of
    each pattern of membership in the mentioned idsets plus ranks in none.
``shape_counts``
    For ``shape.parse``: the output must be a resources list equal to the expected one,
    except that each vertex's ``count`` is compared by meaning: an integer, an idset
    string, a range string and a range dictionary that accept the same counts are the same
    (``"3-30"`` equals ``{min: 3, max: 30, operator: "+", operand: 1}``; ``{min: 2}`` equals
    ``"2+"``).  Everything else is compared exactly (``json_equal``).
``validation_warnings``
    For ``jobspec.validate``: the output must be ``{"warnings": [strings]}``, and the list
    must be empty exactly when the expected one is.  The text and number of warnings are
    never compared (unlike ``validation``, whose cases do not judge warnings at all).
``jobspec_from_shape``
    For ``jobspec.from_shape``: the output must be a jobspec the reference's
    ``jobspec.validate`` accepts, and match the expected one: same keys, ``version`` and
    ``attributes`` equal, ``resources`` alike as under ``shape_counts``, and the same tasks
    in the same order.  Labels are names only, so a consistent one-to-one renaming of the
    labels (carried into each task's ``slot``) is accepted: an implementation whose default
    slot label is ``task`` conforms.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["COMPARATORS", "Comparator", "Oracle", "json_equal"]

#: Runs a reference operation: ``oracle("idset.decode", "1-3")`` -> ``[1, 2, 3]``.
#: Raises the reference's ``FormatError`` when the input is not acceptable.
Oracle = Callable[[str, Any], Any]

#: ``comparator(expected, actual, oracle)`` -> ``None`` or the reason they differ.
Comparator = Callable[[Any, Any, Oracle], str | None]


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality that, unlike ``==``, tells ``1``, ``1.0`` and ``true`` apart."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if isinstance(a, float) or isinstance(b, float):
        return type(a) is type(b) and a == b
    if isinstance(a, str) or isinstance(b, str):
        return type(a) is type(b) and a == b
    if a is None or b is None:
        return a is b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return False


def _exact(expected: Any, actual: Any, oracle: Oracle) -> str | None:
    del oracle
    return None if json_equal(expected, actual) else "output differs from the expected value"


def _decodes_alike(decoder: str, what: str) -> Comparator:
    def compare(expected: Any, actual: Any, oracle: Oracle) -> str | None:
        from reference.errors import FormatError

        if not isinstance(actual, str):
            return f"output is not a string but {type(actual).__name__}"
        try:
            got = oracle(decoder, actual)
        except FormatError as exc:
            return f"output {actual!r} is not a valid {what}: {exc.reason}"
        want = oracle(decoder, expected)
        if got != want:
            return f"output {actual!r} decodes to a different {what} than {expected!r}"
        return None

    compare.__name__ = f"_{decoder.replace('.', '_')}_alike"
    return compare


def _is_group(node: Any) -> bool:
    return isinstance(node, dict) and isinstance(node.get("children"), list)


def _unwrap(node: Any) -> Any:
    while _is_group(node) and len(node["children"]) == 1:
        node = node["children"][0]
    return node


def _collapse_groups(tree: Any) -> Any:
    """``tree`` with every single-child ``{op, children}`` group replaced by its child."""
    # Iterative, so a tree 100,000 levels deep cannot exhaust the stack.
    tree = _unwrap(tree)
    if not _is_group(tree):
        return tree
    root = {**tree, "children": []}
    stack = [(root, list(tree["children"]))]
    while stack:
        parent, children = stack.pop()
        for child in map(_unwrap, children):
            if _is_group(child):
                copy = {**child, "children": []}
                parent["children"].append(copy)
                stack.append((copy, list(child["children"])))
            else:
                parent["children"].append(child)
    return root


def _slurm_tree(expected: Any, actual: Any, oracle: Oracle) -> str | None:
    del oracle
    if json_equal(_collapse_groups(expected), _collapse_groups(actual)):
        return None
    return "a different tree (single-child groups aside)"


COMPARATORS: dict[str, Comparator] = {
    "exact": _exact,
    "slurm_tree": _slurm_tree,
    "idset_string": _decodes_alike("idset.decode", "idset"),
    "hostlist_string": _decodes_alike("hostlist.decode", "hostlist"),
}


# -- RFC 20 / RFC 31 / RFC 35 comparators (validation, rset_decoded, rset_document,
# -- constraint_semantic); documented in the module docstring.


def _validation(expected: Any, actual: Any, oracle: Oracle) -> str | None:
    del expected, oracle
    if not isinstance(actual, dict) or set(actual) != {"warnings"}:
        return "output is not an object with exactly the key 'warnings'"
    warnings = actual["warnings"]
    if not isinstance(warnings, list) or not all(isinstance(w, str) for w in warnings):
        return "'warnings' is not a list of strings"
    return None


def _first_difference(want: list[Any], got: list[Any]) -> str:
    for w, g in zip(want, got, strict=False):
        if not json_equal(w, g):
            return f"expected {w!r}, got {g!r}"
    if len(want) != len(got):
        return f"expected {len(want)} ranks, got {len(got)}"
    return "they differ"  # pragma: no cover - only reached when the lists are equal


def _rset_alike(*, times: bool) -> Comparator:
    def compare(expected: Any, actual: Any, oracle: Oracle) -> str | None:
        from reference.errors import FormatError

        try:
            got = oracle("R.decode", actual)
        except FormatError as exc:
            return f"output is not a valid R: {exc}"
        want = oracle("R.decode", expected)
        if not json_equal(want, got):
            return f"output decodes to a different resource set: {_first_difference(want, got)}"
        if times:
            for key in ("starttime", "expiration"):
                w = expected.get("execution", {}).get(key)
                g = actual.get("execution", {}).get(key)
                if (w is None) != (g is None) or (w is not None and w != g):
                    return f"execution.{key} is {g!r}, expected {w!r}"
        return None

    compare.__name__ = "_rset_document" if times else "_rset_decoded"
    return compare


#: Above this many mentioned properties, the semantic comparator samples property subsets.
_MAX_EXHAUSTIVE_PROPERTIES = 10


def _mentions(constraint: Any) -> tuple[set[str], list[str], list[str]]:
    """Property names (without ``^``), hostlist strings and idset strings a constraint uses."""
    props: set[str] = set()
    hosts: list[str] = []
    ranks: list[str] = []
    stack = [constraint]
    while stack:
        node = stack.pop()
        for op, values in node.items():
            if op == "properties":
                props.update(v[1:] if v.startswith("^") else v for v in values)
            elif op == "hostlist":
                hosts.extend(values)
            elif op == "ranks":
                ranks.extend(values)
            else:
                stack.extend(values)
    return props, hosts, ranks


def _representatives(groups: list[list[Any]]) -> list[Any]:
    """One member per distinct pattern of membership in ``groups`` (first seen wins)."""
    seen: dict[frozenset[int], Any] = {}
    membership: dict[Any, set[int]] = {}
    for index, group in enumerate(groups):
        for item in group:
            membership.setdefault(item, set()).add(index)
    for item, where in membership.items():
        seen.setdefault(frozenset(where), item)
    return list(seen.values())


def _property_subsets(names: list[str]) -> list[tuple[str, ...]]:
    import itertools
    import random

    if len(names) <= _MAX_EXHAUSTIVE_PROPERTIES:
        return [
            tuple(n for bit, n in enumerate(names) if mask >> bit & 1)
            for mask in range(1 << len(names))
        ]
    # Too many for every subset: every subset of size <= 2, their complements, and a fixed
    # pseudo-random sample (the seed keeps verdicts reproducible).
    out: set[tuple[str, ...]] = {(), tuple(names)}
    for size in (1, 2):
        for combo in itertools.combinations(names, size):
            out.add(combo)
            out.add(tuple(n for n in names if n not in combo))
    rng = random.Random(31)
    for _ in range(1024):
        out.add(tuple(n for n in names if rng.random() < 0.5))
    return sorted(out)


def _constraint_semantic(expected: Any, actual: Any, oracle: Oracle) -> str | None:
    """Check that ``actual`` selects what ``expected`` does on every R built from their terms."""
    from reference.errors import FormatError

    if json_equal(expected, actual):
        return None
    try:
        oracle("constraint.validate", actual)
    except FormatError as exc:
        return f"output is not a valid RFC 31 constraint: {exc}"
    props_a, hosts_a, ranks_a = _mentions(expected)
    props_b, hosts_b, ranks_b = _mentions(actual)
    names = sorted(props_a | props_b)
    try:
        host_groups = [oracle("hostlist.decode", text) for text in (*hosts_a, *hosts_b)]
        rank_groups = [oracle("idset.decode", text) for text in (*ranks_a, *ranks_b)]
    except FormatError as exc:
        # Valid but too large to enumerate (e.g. ranks 0-18446744073709551615).
        return f"cannot compare: a hostlist or idset is too large to enumerate: {exc.reason}"
    all_hosts = {h for group in host_groups for h in group}
    none_host = "none"
    while none_host in all_hosts:
        none_host += "x"
    host_reps = [*_representatives(host_groups), none_host]
    rank_reps = _representatives(rank_groups)
    fresh = max((r for group in rank_groups for r in group), default=-1) + 1
    combos = [(h, p) for h in host_reps for p in _property_subsets(names)]
    # Every (host, properties) combination goes with one rank outside every mentioned idset
    # (there are as many such ranks as needed) and with each representative of a mentioned
    # rank pattern; a rank may appear once per R, so the latter are spread over several Rs.
    layouts: list[list[tuple[int, str, tuple[str, ...]]]] = [
        [(fresh + i, h, p) for i, (h, p) in enumerate(combos)]
    ]
    if rank_reps:
        for h, p in combos:
            layouts.append([(rank, h, p) for rank in sorted(rank_reps)])
    for targets in layouts:
        targets.sort()
        by_prop: dict[str, list[int]] = {}
        for rank, _host, chosen in targets:
            for name in chosen:
                by_prop.setdefault(name, []).append(rank)
        r_doc = {
            "version": 1,
            "execution": {
                "R_lite": [
                    {
                        "rank": oracle("idset.encode", [t[0] for t in targets]),
                        "children": {"core": "0"},
                    }
                ],
                "nodelist": [",".join(t[1] for t in targets)],
                "properties": {n: oracle("idset.encode", ids) for n, ids in by_prop.items()},
            },
        }
        want = oracle("constraint.match", {"constraint": expected, "R": r_doc})
        got = oracle("constraint.match", {"constraint": actual, "R": r_doc})
        if want != got:
            odd = sorted(set(want) ^ set(got))[0]
            rank, host, chosen = next(t for t in targets if t[0] == odd)
            verdict = "selects" if odd in got else "does not select"
            return (
                f"output {verdict} a target that the expected constraint "
                f"{'does not' if odd in got else 'does'}: rank {rank}, host {host!r}, "
                f"properties {list(chosen)}"
            )
    return None


COMPARATORS["validation"] = _validation
COMPARATORS["rset_decoded"] = _rset_alike(times=False)
COMPARATORS["rset_document"] = _rset_alike(times=True)
COMPARATORS["constraint_semantic"] = _constraint_semantic


# -- RFC 46 / RFC 14 comparators (shape_counts, validation_warnings, jobspec_from_shape);
# -- documented in the module docstring.

#: A finite count with at most this many values is compared as its set of values.
_COUNT_EXPANSION = 100_000


def _range_key(low: int, high: int | None, operator: str, operand: int) -> tuple[Any, ...]:
    if high is None:
        return ("unbounded", low, operator, operand)
    if operator == "+":
        if (high - low) // operand + 1 <= _COUNT_EXPANSION:
            return ("values", tuple(range(low, high + 1, operand)))
        return ("bounded", low, low + (high - low) // operand * operand, "+", operand)
    values: list[int] = []
    value = low
    # operand >= 2 (and min >= 2 for "^") in any valid count, so this stops quickly.
    while value <= high and len(values) <= _COUNT_EXPANSION:
        values.append(value)
        next_value = value * operand if operator == "*" else value**operand
        if next_value <= value:
            break
        value = next_value
    return ("values", tuple(values))


def _count_key(count: Any, oracle: Oracle) -> tuple[Any, ...] | None:
    """Return what a count means as a comparable key (None when it cannot be read)."""
    from reference.errors import FormatError

    if isinstance(count, bool):
        return None
    if isinstance(count, int):
        return ("values", (count,))
    if isinstance(count, str):
        try:
            count = oracle("range.decode", count)
        except FormatError:
            try:
                ids = oracle("idset.decode", count)
            except FormatError:
                return None
            if len(ids) > _COUNT_EXPANSION:
                return None
            return ("values", tuple(ids))
    if not isinstance(count, dict) or not isinstance(count.get("min"), int):
        return None
    high = count.get("max")
    operator = count.get("operator", "+")
    operand = count.get("operand", 1)
    if not isinstance(operator, str) or type(operand) is not int or operand < 1:
        return None
    if high is not None and type(high) is not int:
        return None
    return _range_key(count["min"], high, operator, operand)


def _counts_alike(want: Any, got: Any, oracle: Oracle) -> bool:
    if json_equal(want, got):
        return True
    want_key = _count_key(want, oracle)
    return want_key is not None and want_key == _count_key(got, oracle)


def _vertices_alike(
    want: Any, got: Any, oracle: Oracle, where: str, labels: dict[str, str] | None
) -> str | None:
    """Compare two resources lists; with ``labels``, record a label renaming instead."""
    if not isinstance(got, list) or not isinstance(want, list):
        return f"{where}: expected a list of vertices, got {type(got).__name__}"
    if len(got) != len(want):
        return f"{where}: expected {len(want)} vertices, got {len(got)}"
    for index, (w, g) in enumerate(zip(want, got, strict=True)):
        here = f"{where}[{index}]"
        if not isinstance(g, dict) or not isinstance(w, dict):
            return f"{here}: expected a vertex object, got {type(g).__name__}"
        if set(g) != set(w):
            missing, extra = sorted(set(w) - set(g)), sorted(set(g) - set(w))
            return f"{here}: keys differ (missing {missing}, unexpected {extra})"
        for key, value in w.items():
            if key == "count":
                if not _counts_alike(value, g[key], oracle):
                    return f"{here}.count: expected {value!r} or an equivalent, got {g[key]!r}"
            elif key == "with":
                reason = _vertices_alike(value, g[key], oracle, f"{here}.with", labels)
                if reason:
                    return reason
            elif key == "label" and labels is not None and isinstance(g[key], str):
                if labels.setdefault(value, g[key]) != g[key]:
                    return f"{here}.label: label {value!r} renamed inconsistently"
            elif not json_equal(value, g[key]):
                return f"{here}.{key}: expected {value!r}, got {g[key]!r}"
    return None


def _shape_counts(expected: Any, actual: Any, oracle: Oracle) -> str | None:
    return _vertices_alike(expected, actual, oracle, "resources", None)


def _validation_warnings(expected: Any, actual: Any, oracle: Oracle) -> str | None:
    reason = _validation(expected, actual, oracle)
    if reason is not None:
        return reason
    want = bool(expected.get("warnings")) if isinstance(expected, dict) else False
    got = bool(actual["warnings"])
    if want and not got:
        return "expected at least one warning, got none"
    if got and not want:
        return f"expected no warnings, got {actual['warnings']!r}"
    return None


def _jobspec_from_shape(expected: Any, actual: Any, oracle: Oracle) -> str | None:
    from reference.errors import FormatError

    if not isinstance(actual, dict) or not isinstance(expected, dict):
        return f"output is not a jobspec object but {type(actual).__name__}"
    try:
        oracle("jobspec.validate", actual)
    except FormatError as exc:
        return f"output is not a valid jobspec: {exc.reason}"
    if set(actual) != set(expected):
        return f"top-level keys differ: expected {sorted(expected)}, got {sorted(actual)}"
    labels: dict[str, str] = {}
    reason = _vertices_alike(
        expected["resources"], actual["resources"], oracle, "resources", labels
    )
    if reason:
        return reason
    if len(set(labels.values())) != len(labels):
        return "two different labels were renamed to the same label"
    want_tasks, got_tasks = expected["tasks"], actual["tasks"]
    if len(got_tasks) != len(want_tasks):
        return f"expected {len(want_tasks)} tasks, got {len(got_tasks)}"
    for index, (w, g) in enumerate(zip(want_tasks, got_tasks, strict=True)):
        if set(g) != set(w):
            return f"tasks[{index}]: keys differ: expected {sorted(w)}, got {sorted(g)}"
        for key, value in w.items():
            if key == "slot":
                if labels.get(value, value) != g[key]:
                    return f"tasks[{index}].slot: expected the slot labelled {value!r}"
            elif not json_equal(value, g[key]):
                return f"tasks[{index}].{key}: expected {value!r}, got {g[key]!r}"
    for key in expected:
        if key not in ("resources", "tasks") and not json_equal(expected[key], actual[key]):
            return f"{key}: expected {expected[key]!r}, got {actual[key]!r}"
    return None


COMPARATORS["shape_counts"] = _shape_counts
COMPARATORS["validation_warnings"] = _validation_warnings
COMPARATORS["jobspec_from_shape"] = _jobspec_from_shape
