"""The ``constraint_semantic`` comparator (documented in :mod:`runner.comparators`).

Two RFC 31 constraints conform when they select the same targets on every R built from what
they mention.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flux_conformance.runner.comparators._json import json_equal
from flux_conformance.runner.comparators._oracle import Oracle, Refused

__all__ = ["constraint_semantic", "probes"]

#: Above this many mentioned properties, the semantic comparator samples property subsets.
_MAX_EXHAUSTIVE_PROPERTIES = 10
#: Pairs of properties are probed (with their complements) up to this many names.
_MAX_PAIRED_PROPERTIES = 32
#: The work of one comparison is bounded: at most this many distinct property names, hosts and
#: ranks enumerated from the mentioned hostlists and idsets, and targets over all the Rs
#: built.  A constraint beyond the first two cannot be compared (the answer fails, saying
#: so); beyond the last, the (host, properties) combinations are sampled with a fixed seed.
MAX_PROPERTY_NAMES = 256
MAX_ENUMERATED = 1_000_000
MAX_TARGETS = 50_000


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
    # Too many for every subset: every subset of size <= 2 (of size 1 only, beyond
    # _MAX_PAIRED_PROPERTIES names), their complements, and a fixed pseudo-random sample (the
    # seed keeps verdicts reproducible).
    out: set[tuple[str, ...]] = {(), tuple(names)}
    for size in (1, 2) if len(names) <= _MAX_PAIRED_PROPERTIES else (1,):
        for combo in itertools.combinations(names, size):
            out.add(combo)
            out.add(tuple(n for n in names if n not in combo))
    rng = random.Random(31)
    for _ in range(1024):
        out.add(tuple(n for n in names if rng.random() < 0.5))
    return sorted(out)


Target = tuple[int, str, tuple[str, ...]]


def _sample(items: Sequence[Any], most: int) -> list[Any]:
    """``items`` itself when it holds at most ``most``, else a fixed sample of that many.

    The first and last items are kept (the empty and the full property subset, the host in no
    hostlist), the first alone when ``most`` is 1; the seed keeps verdicts reproducible.
    """
    import random

    if len(items) <= most:
        return list(items)
    if most < 2:
        return list(items[:most])
    middle = random.Random(31).sample(range(1, len(items) - 1), max(0, most - 2))
    return [items[0], *(items[i] for i in sorted(middle)), items[-1]]


def probes(constraints: list[Any], oracle: Oracle) -> list[tuple[dict[str, Any], list[Target]]]:
    """The Rs on which two constraints must select the same targets, built from their terms.

    Each property subset of the names the ``constraints`` mention (all subsets up to
    :data:`_MAX_EXHAUSTIVE_PROPERTIES` names, a fixed sample beyond), one host of each pattern
    of membership in the mentioned hostlists plus a host in none, and one rank of each
    pattern of membership in the mentioned idsets plus ranks in none.  Returns each R with its
    targets (rank, host, properties).  Raises :class:`Refused` when a mentioned hostlist or
    idset is too large to enumerate.
    """
    names: set[str] = set()
    hosts: list[str] = []
    ranks: list[str] = []
    for constraint in constraints:
        more_names, more_hosts, more_ranks = _mentions(constraint)
        names |= more_names
        hosts += more_hosts
        ranks += more_ranks
    if len(names) > MAX_PROPERTY_NAMES:
        raise Refused(
            "limit", f"{len(names)} property names (the comparator enumerates {MAX_PROPERTY_NAMES})"
        )
    enumerated = 0

    def expand(operation: str, text: str) -> list[Any]:
        nonlocal enumerated
        found: list[Any] = oracle(operation, text)
        enumerated += len(found)
        if enumerated > MAX_ENUMERATED:
            raise Refused("limit", f"more than {MAX_ENUMERATED} hosts and ranks in all")
        return found

    host_groups = [expand("hostlist.decode", text) for text in hosts]
    rank_groups = [expand("idset.decode", text) for text in ranks]
    all_hosts = {h for group in host_groups for h in group}
    none_host = "none"
    while none_host in all_hosts:
        none_host += "x"
    host_reps = [*_representatives(host_groups), none_host]
    rank_reps = _representatives(rank_groups)
    fresh = max((r for group in rank_groups for r in group), default=-1) + 1
    subsets = _property_subsets(sorted(names))
    # The (host, properties) combinations, sampled by index so that the product is never
    # built when it is large.
    picked = _sample(range(len(host_reps) * len(subsets)), MAX_TARGETS // 2)
    combos = [(host_reps[i // len(subsets)], subsets[i % len(subsets)]) for i in picked]
    # Every (host, properties) combination goes with one rank outside every mentioned idset
    # (there are as many such ranks as needed) and with each representative of a mentioned
    # rank pattern; a rank may appear once per R, so the latter are spread over several Rs.
    layouts: list[list[Target]] = [[(fresh + i, h, p) for i, (h, p) in enumerate(combos)]]
    if rank_reps:
        rank_reps = _sample(rank_reps, MAX_TARGETS // 2)
        for h, p in _sample(combos, max(1, MAX_TARGETS // 2 // len(rank_reps))):
            layouts.append([(rank, h, p) for rank in sorted(rank_reps)])
    out = []
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
        out.append((r_doc, targets))
    return out


def constraint_semantic(expected: Any, actual: Any, oracle: Oracle) -> str | None:
    """Check that ``actual`` selects what ``expected`` does on every R built from their terms."""
    if json_equal(expected, actual):
        return None
    try:
        oracle("constraint.validate", actual)
    except Refused as exc:
        return f"output is not a valid RFC 31 constraint: {exc}"
    try:
        built = probes([expected, actual], oracle)
    except Refused as exc:
        # Valid but too large to enumerate (e.g. ranks 0-18446744073709551615, or a
        # thousand property names).
        return f"cannot compare: the constraints mention too much to enumerate: {exc.reason}"
    for r_doc, targets in built:
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
