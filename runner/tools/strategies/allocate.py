"""The strategy for ``sched.allocate``: small pools and the request shapes the rules judge."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

__all__ = ["sched_allocate"]


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
        exclusive = draw(st.sampled_from((None, True, False)))
        if exclusive is not None:
            vertex["exclusive"] = exclusive
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


def sched_allocate() -> st.SearchStrategy[Any]:
    """A pool, what is taken from it, and a jobspec the allocation rules judge."""
    return _allocation_request()
