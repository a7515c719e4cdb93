"""The zoo's wrong schedulers: ``sched.allocate`` with one real mistake each.

Each member is the reference with one departure that a scheduler has made or could easily
make: flux-core's ``ResourcePool`` giving the minimum of a ranged count and leaving the times
to the job manager, Fluxion writing a 100-year expiration for an unset duration and rounding
fractional durations (flux-sched issue #1373 for several ranged slots), counts read as
minimums, a slot split over nodes, what is allocated or expired misread, never and not now
swapped, nslots counting the wrong thing.  tests/zoo/members.py explains the zoo.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from zoo._framework import Outcome, Ref, copy_json, err, map_output, member, ok, walk

__all__: list[str] = []

_POOL4 = {
    "version": 1,
    "execution": {
        "R_lite": [{"rank": "0-3", "children": {"core": "0-3", "gpu": "0"}}],
        "nodelist": ["n[0-3]"],
        "properties": {"ssd": "1,3", "+queue": "0-3"},
    },
}

_YEAR = 365 * 86400


def _request(resources: list[Any], **system: Any) -> dict[str, Any]:
    return {
        "version": 1,
        "resources": resources,
        "tasks": [{"command": ["app"], "slot": "task", "count": {"per_slot": 1}}],
        "attributes": {"system": {"duration": 0, **system}},
    }


def _slot(count: Any, *leaves: tuple[str, Any]) -> dict[str, Any]:
    return {
        "type": "slot",
        "count": count,
        "label": "task",
        "with": [{"type": kind, "count": n} for kind, n in leaves],
    }


def _one_core_nodes(count: Any, **extra: Any) -> list[Any]:
    return [{"type": "node", "count": count, "with": [_slot(1, ("core", 1))], **extra}]


def _held(ranks: str, cores: str, **execution: Any) -> dict[str, Any]:
    return {
        "version": 1,
        "execution": {
            "R_lite": [{"rank": ranks, "children": {"core": cores}}],
            "nodelist": [f"n[{ranks}]"],
            **execution,
        },
    }


def _is_input(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("jobspec"), dict)


def _with_input(value: Any, ref: Ref, change: Callable[[Any], Any]) -> Outcome | None:
    """The reference's answer for ``value`` changed by ``change`` (None: no change)."""
    if not _is_input(value):
        return None
    changed = copy_json(value)
    try:
        change(changed)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError):
        return None
    return None if changed == value else ref(changed)


def _with_jobspec(value: Any, ref: Ref, change: Callable[[Any], Any]) -> Outcome | None:
    return _with_input(value, ref, lambda v: change(v["jobspec"]))


def _system(value: Any) -> dict[str, Any]:
    return value["jobspec"].get("attributes", {}).get("system", {})


def _duration(value: Any) -> Any:
    return _system(value).get("duration", 0) if _is_input(value) else 0


def _execution(value: Any, ref: Ref, change: Callable[[Any, dict[str, Any]], Any]) -> Any:
    """The reference's output with ``change(value, execution)`` applied to its execution."""
    if not _is_input(value):
        return None

    def apply(r: Any) -> Any:
        change(value, r["execution"])
        return r

    return map_output(value, ref, apply)


def _counts(jobspec: Any) -> list[dict[str, Any]]:
    return [v for v in walk(jobspec.get("resources", [])) if isinstance(v, dict) and "count" in v]


def _clock(value: Any, execution: dict[str, Any]) -> float:
    return execution.get("starttime") or value.get("now") or time.time()


# -- what is free ----------------------------------------------------------------------------


@member(
    "sched.allocate",
    like="a scheduler that reads the pool and not what is already allocated",
    witness={
        "pool": _POOL4,
        "jobspec": _request(_one_core_nodes(4)),
        "allocated": [_held("0", "0-3")],
    },
)
def allocations_ignored(value: Any, ref: Ref) -> Outcome | None:
    """Schedules from the whole pool, as if nothing were allocated."""
    if not isinstance(value, dict) or not value.get("allocated"):
        return None
    return ref({k: v for k, v in value.items() if k != "allocated"})


@member(
    "sched.allocate",
    like="a scheduler that marks a node busy as soon as any job holds part of it",
    witness={
        "pool": _POOL4,
        "jobspec": _request(_one_core_nodes(4)),
        "allocated": [_held("0", "0")],
    },
)
def partly_allocated_nodes_skipped(value: Any, ref: Ref) -> Outcome | None:
    """Treats a node that any allocation touches as wholly busy."""

    def whole(v: Any) -> None:
        pool = {d["rank"]: d for d in ref.op("R.decode", v["pool"])["output"]}
        for index, doc in enumerate(v.get("allocated", [])):
            ranks = ref.op("R.decode", doc)["output"]
            v["allocated"][index] = ref.op("R.encode", [pool[d["rank"]] for d in ranks])["output"]

    return _with_input(value, ref, whole)


@member(
    "sched.allocate",
    like="a scheduler that keeps a job's resources after its expiration",
    witness={
        "pool": _POOL4,
        "jobspec": _request(_one_core_nodes(4)),
        "allocated": [_held("0-3", "0-3", expiration=10)],
        "now": 20,
    },
)
def expired_allocations_kept(value: Any, ref: Ref) -> Outcome | None:
    """Counts an allocated R as holding its resources after its expiration."""

    def forever(v: Any) -> None:
        for doc in v.get("allocated", []):
            doc.get("execution", {}).pop("expiration", None)

    return _with_input(value, ref, forever)


@member(
    "sched.allocate",
    like="a scheduler that skips the allocated Rs it cannot read",
    witness={"pool": _POOL4, "jobspec": _request(_one_core_nodes(1)), "allocated": [{"x": 1}]},
)
def invalid_allocated_skipped(value: Any, ref: Ref) -> Outcome | None:
    """Leaves out an allocated R that is not valid instead of refusing the input."""

    def readable(v: Any) -> None:
        v["allocated"] = [d for d in v["allocated"] if "output" in ref.op("R.validate", d)]

    if not isinstance(value, dict) or not isinstance(value.get("allocated"), list):
        return None
    return _with_input(value, ref, readable)


# -- counts ----------------------------------------------------------------------------------


def _at_least_as_exact(jobspec: Any) -> None:
    for vertex in _counts(jobspec):
        count = vertex["count"]
        if isinstance(count, dict) and "min" in count:
            vertex["count"] = count["min"]
        elif isinstance(count, str) and count.rstrip("+").isdigit() and count.endswith("+"):
            vertex["count"] = int(count.rstrip("+"))


@member(
    "sched.allocate",
    like="a scheduler that gives the minimum of a ranged count (flux-core's per-slot counts)",
    witness={"pool": _POOL4, "jobspec": _request(_one_core_nodes({"min": 1}))},
)
def ranged_counts_at_minimum(value: Any, ref: Ref) -> Outcome | None:
    """Allocates the minimum of every min-only or ranged count."""
    return _with_jobspec(value, ref, _at_least_as_exact)


def _drop_max(jobspec: Any) -> None:
    for vertex in _counts(jobspec):
        if isinstance(vertex["count"], dict):
            vertex["count"].pop("max", None)


@member(
    "sched.allocate",
    like="a scheduler that reads min and the step but not max",
    witness={"pool": _POOL4, "jobspec": _request(_one_core_nodes({"min": 1, "max": 2}))},
)
def max_ignored(value: Any, ref: Ref) -> Outcome | None:
    """Takes the largest count free, past the count's max."""
    return _with_jobspec(value, ref, _drop_max)


def _plus_one(jobspec: Any) -> None:
    for vertex in _counts(jobspec):
        count = vertex["count"]
        if isinstance(count, dict) and count.get("operator") in ("*", "^"):
            count["operator"], count["operand"] = "+", 1


@member(
    "sched.allocate",
    like="a scheduler that knows only the + operator",
    witness={
        "pool": _POOL4,
        "jobspec": _request(
            [
                {
                    "type": "node",
                    "count": 1,
                    "with": [
                        _slot(1, ("core", {"min": 1, "max": 4, "operator": "*", "operand": 2}))
                    ],
                }
            ]
        ),
        "allocated": [_held("0-3", "0")],
    },
)
def operators_read_as_plus(value: Any, ref: Ref) -> Outcome | None:
    """Reads * and ^ counts as + with operand 1 (every value from min to max)."""
    return _with_jobspec(value, ref, _plus_one)


def _strings(jobspec: Any) -> bool:
    return any(isinstance(v["count"], str) for v in _counts(jobspec))


@member(
    "sched.allocate",
    like="a scheduler that takes counts as JSON integers or dicts only (RFC 25's jobspec V1)",
    witness={"pool": _POOL4, "jobspec": _request(_one_core_nodes("2"))},
)
def string_counts_refused(value: Any, ref: Ref) -> Outcome | None:
    """Refuses every count written as a string (an idset or a range) as invalid."""
    if _is_input(value) and _strings(value["jobspec"]):
        return err("invalid")
    return None


def _first_of_strings(jobspec: Any) -> None:
    for vertex in _counts(jobspec):
        count = vertex["count"]
        if isinstance(count, str) and ("," in count or "-" in count):
            vertex["count"] = int(count.replace("-", ",").split(",")[0])


@member(
    "sched.allocate",
    like="a scheduler that takes the first value of an idset or range string",
    witness={"pool": _POOL4, "jobspec": _request(_one_core_nodes("1-3"))},
)
def string_counts_first_value(value: Any, ref: Ref) -> Outcome | None:
    """Reads a count such as "2,4,6" or "1-7:3" as its first value."""
    return _with_jobspec(value, ref, _first_of_strings)


def _fixed_as_minimum(jobspec: Any) -> None:
    for vertex in _counts(jobspec):
        if vertex.get("type") == "node" and type(vertex["count"]) is int:
            vertex["count"] = {"min": vertex["count"]}


@member(
    "sched.allocate",
    like="a scheduler that reads a node count as 'at least'",
    witness={"pool": _POOL4, "jobspec": _request(_one_core_nodes(2))},
)
def fixed_node_count_as_minimum(value: Any, ref: Ref) -> Outcome | None:
    """Takes every node that fits when a fixed node count is asked for."""
    return _with_jobspec(value, ref, _fixed_as_minimum)


def _one_slot_a_node(jobspec: Any) -> None:
    for vertex in walk(jobspec.get("resources", [])):
        if isinstance(vertex, dict) and vertex.get("type") == "node":
            for child in vertex.get("with", []):
                if child.get("type") == "slot":
                    child["count"] = 1


@member(
    "sched.allocate",
    like="a scheduler that places one slot a node whatever the slot count",
    witness={
        "pool": _POOL4,
        "jobspec": _request([{"type": "node", "count": 1, "with": [_slot(2, ("core", 1))]}]),
    },
)
def one_slot_per_node(value: Any, ref: Ref) -> Outcome | None:
    """Ignores the count of a slot below a node (one slot on each node)."""
    return _with_jobspec(value, ref, _one_slot_a_node)


def _one_node_a_slot(jobspec: Any) -> None:
    for vertex in walk(jobspec.get("resources", [])):
        if isinstance(vertex, dict) and vertex.get("type") == "slot":
            for child in vertex.get("with", []):
                if child.get("type") == "node":
                    child["count"] = 1


@member(
    "sched.allocate",
    like="a scheduler that gives a slot of nodes one node",
    witness={
        "pool": _POOL4,
        "jobspec": _request(
            [{"type": "slot", "count": 1, "label": "task", "with": [{"type": "node", "count": 2}]}]
        ),
    },
)
def slot_of_nodes_one_node(value: Any, ref: Ref) -> Outcome | None:
    """Gives each slot of nodes a single node, whatever its node count."""
    return _with_jobspec(value, ref, _one_node_a_slot)


def _ranged_below_several_slots(jobspec: Any) -> bool:
    for vertex in walk(jobspec.get("resources", [])):
        if isinstance(vertex, dict) and vertex.get("type") == "slot":
            count = vertex.get("count")
            several = (type(count) is int and count > 1) or isinstance(count, dict | str)
            leaves = [c.get("count") for c in vertex.get("with", []) if isinstance(c, dict)]
            if several and any(isinstance(c, dict) and "max" not in c for c in leaves):
                return True
    return False


@member(
    "sched.allocate",
    like="Fluxion's open bug flux-sched #1373: the first slot takes all, the next finds no room",
    witness={"pool": _POOL4, "jobspec": _request([_slot(2, ("core", {"min": 1}))])},
)
def greedy_ranged_slots(value: Any, ref: Ref) -> Outcome | None:
    """Answers unsatisfiable when several slots hold a count with no max."""
    if _is_input(value) and _ranged_below_several_slots(value["jobspec"]):
        first = ref(value)
        if "output" in first:
            return err("unsatisfiable")
    return None


# -- where the resources go ------------------------------------------------------------------


def _decoded(doc: Any, ref: Ref) -> dict[int, dict[str, Any]]:
    out = ref.op("R.decode", doc)
    return {d["rank"]: d for d in out.get("output", [])}


def _ids(text: str, ref: Ref) -> set[int]:
    return set(ref.op("idset.decode", text).get("output", []))


def _free(value: Any, ref: Ref) -> dict[int, tuple[set[int], set[int]]]:
    free = {
        r: (_ids(d["cores"], ref), _ids(d["gpus"], ref))
        for r, d in _decoded(value["pool"], ref).items()
    }
    for doc in value.get("allocated", []):
        for r, d in _decoded(doc, ref).items():
            if r in free:
                free[r][0].difference_update(_ids(d["cores"], ref))
                free[r][1].difference_update(_ids(d["gpus"], ref))
    return free


def _rebuild(r_doc: Any, ranks: dict[int, dict[str, Any]], ref: Ref) -> Any:
    """``r_doc`` with its ranks replaced by ``ranks`` (R.decode's form), times and keys kept."""
    built = ref.op("R.encode", [ranks[r] for r in sorted(ranks)])["output"]
    for key, item in r_doc["execution"].items():
        if key not in ("R_lite", "nodelist", "properties"):
            built["execution"][key] = item
    return built


def _encode(ids: set[int], ref: Ref) -> str:
    return str(ref.op("idset.encode", sorted(ids))["output"])


@member(
    "sched.allocate",
    like="a scheduler that fills each slot from whatever cores are free, node after node",
    witness={"pool": _POOL4, "jobspec": _request([_slot(1, ("core", 2))])},
)
def slot_split_over_nodes(value: Any, ref: Ref) -> Outcome | None:
    """Moves one core of the first rank's slot to another rank with a core free."""
    first = ref(value)
    if not _is_input(value) or "output" not in first:
        return None
    r_doc = first["output"]
    ranks = _decoded(r_doc, ref)
    free = _free(value, ref)
    if not ranks:
        return None
    low = min(ranks)
    cores = _ids(ranks[low]["cores"], ref)
    if len(cores) < 2:
        return None
    held = {r: _ids(d["cores"], ref) for r, d in ranks.items()}
    other = next((r for r in sorted(free) if r != low and free[r][0] - held.get(r, set())), None)
    if other is None:
        return None
    extra = min(free[other][0] - held.get(other, set()))
    ranks[low] = {**ranks[low], "cores": _encode(cores - {max(cores)}, ref)}
    pool = _decoded(value["pool"], ref)[other]
    base = ranks.get(other, {**pool, "cores": "", "gpus": "", "properties": []})
    ranks[other] = {**base, "cores": _encode(held.get(other, set()) | {extra}, ref)}
    return ok(_rebuild(r_doc, ranks, ref))


@member(
    "sched.allocate",
    like="Fluxion's node-exclusive match policy: every allocated node given whole",
    witness={"pool": _POOL4, "jobspec": _request(_one_core_nodes(1))},
)
def whole_nodes_always(value: Any, ref: Ref) -> Outcome | None:
    """Gives each allocated rank every core and GPU free on it."""
    first = ref(value)
    if not _is_input(value) or "output" not in first:
        return None
    ranks = _decoded(first["output"], ref)
    free = _free(value, ref)
    for r in ranks:
        ranks[r] = {
            **ranks[r],
            "cores": _encode(free[r][0], ref),
            "gpus": _encode(free[r][1], ref),
        }
    return ok(_rebuild(first["output"], ranks, ref))


def _not_exclusive(jobspec: Any) -> None:
    for vertex in walk(jobspec.get("resources", [])):
        if isinstance(vertex, dict) and vertex.get("exclusive") is True:
            del vertex["exclusive"]


@member(
    "sched.allocate",
    like="a scheduler that ignores exclusive: true",
    witness={"pool": _POOL4, "jobspec": _request(_one_core_nodes(1, exclusive=True))},
)
def exclusive_ignored(value: Any, ref: Ref) -> Outcome | None:
    """Takes only the asked-for cores of a node marked exclusive."""
    return _with_jobspec(value, ref, _not_exclusive)


def _shared_nodes(jobspec: Any) -> None:
    for vertex in walk(jobspec.get("resources", [])):
        if isinstance(vertex, dict) and vertex.get("type") == "slot":
            for child in vertex.get("with", []):
                if isinstance(child, dict) and child.get("type") == "node":
                    child.setdefault("exclusive", False)


@member(
    "sched.allocate",
    like="nodes inside a slot shared by default (flux-core's Rv1Pool)",
    witness={
        "pool": _POOL4,
        "jobspec": _request(
            [
                {
                    "type": "slot",
                    "count": 1,
                    "label": "task",
                    "with": [{"type": "node", "count": 1, "with": [{"type": "core", "count": 1}]}],
                }
            ]
        ),
    },
)
def slot_nodes_shared(value: Any, ref: Ref) -> Outcome | None:
    """Takes only the asked-for cores of a node inside a slot, not the whole node."""
    return _with_jobspec(value, ref, _shared_nodes)


def _gpus_as_cores(jobspec: Any) -> None:
    for vertex in walk(jobspec.get("resources", [])):
        if isinstance(vertex, dict) and isinstance(vertex.get("with"), list):
            kids = vertex["with"]
            gpus = [c for c in kids if isinstance(c, dict) and c.get("type") == "gpu"]
            cores = [c for c in kids if isinstance(c, dict) and c.get("type") == "core"]
            for gpu in gpus:
                if cores:
                    kids.remove(gpu)
                else:
                    gpu["type"] = "core"


@member(
    "sched.allocate",
    like="a scheduler without GPU support that drops GPU vertices",
    witness={"pool": _POOL4, "jobspec": _request([_slot(1, ("core", 1), ("gpu", 1))])},
)
def gpu_vertices_dropped(value: Any, ref: Ref) -> Outcome | None:
    """Leaves GPUs out of the request (a GPU-only slot asks for cores instead)."""
    return _with_jobspec(value, ref, _gpus_as_cores)


def _first_vertex(jobspec: Any) -> None:
    del jobspec["resources"][1:]


@member(
    "sched.allocate",
    like="a scheduler that places the first top-level vertex only",
    witness={
        "pool": _POOL4,
        "jobspec": _request([_slot(1, ("core", 1)), _slot(1, ("core", 2))]),
    },
)
def first_vertex_only(value: Any, ref: Ref) -> Outcome | None:
    """Places the first of several top-level vertices and drops the rest."""
    return _with_jobspec(value, ref, _first_vertex)


def _most_free_first(value: Any) -> bool:
    """A request of one slot of a min-only core count, on its own (node choice free)."""
    resources = value["jobspec"].get("resources", [])
    if len(resources) != 1 or resources[0].get("type") != "slot" or resources[0]["count"] != 1:
        return False
    leaves = resources[0].get("with", [])
    count = leaves[0].get("count") if len(leaves) == 1 else None
    return leaves[0].get("type") == "core" and isinstance(count, dict) and "max" not in count


@member(
    "sched.allocate",
    like="first fit: the first rank that meets the minimum, not the one with the most free",
    witness={
        "pool": _POOL4,
        "jobspec": _request([_slot(1, ("core", {"min": 1}))]),
        "allocated": [_held("0", "0-1")],
    },
)
def first_fit_for_min_only(value: Any, ref: Ref) -> Outcome | None:
    """Places a min-only slot on the lowest rank with its minimum free, taking all there."""
    first = ref(value)
    if not _is_input(value) or "output" not in first or not _most_free_first(value):
        return None
    count = value["jobspec"]["resources"][0]["with"][0]["count"]
    if count.get("operator", "+") != "+" or count.get("operand", 1) != 1:
        return None
    eligible = _decoded(first["output"], ref)
    free = _free(value, ref)
    constraint = _system(value).get("constraints")
    if constraint is not None:
        allowed = set(
            ref.op("constraint.match", {"constraint": constraint, "R": value["pool"]})["output"]
        )
        free = {r: f for r, f in free.items() if r in allowed}
    rank = next((r for r in sorted(free) if len(free[r][0]) >= count["min"]), None)
    if rank is None or rank in eligible:
        return None
    pool = _decoded(value["pool"], ref)[rank]
    ranks = {rank: {**pool, "cores": _encode(free[rank][0], ref), "gpus": ""}}
    return ok(_rebuild(first["output"], ranks, ref))


# -- what the allocation carries -------------------------------------------------------------


@member(
    "sched.allocate",
    like="a scheduler that copies every pool property, instance-local ones too",
    witness={"pool": _POOL4, "jobspec": _request(_one_core_nodes(1))},
)
def instance_local_kept(value: Any, ref: Ref) -> Outcome | None:
    """Keeps the pool's + properties, for the ranks it holds, in the allocation."""
    first = ref(value)
    if not _is_input(value) or "output" not in first:
        return None
    ranks = _decoded(first["output"], ref)
    pool = _decoded(value["pool"], ref)
    local = {r: [p for p in pool[r]["properties"] if p.startswith("+")] for r in ranks}
    if not any(local.values()):
        return None
    for r in ranks:
        ranks[r] = {**ranks[r], "properties": sorted({*ranks[r]["properties"], *local[r]})}
    return ok(_rebuild(first["output"], ranks, ref))


@member(
    "sched.allocate",
    like="a scheduler that copies the pool's properties without cutting them to its ranks",
    witness={"pool": _POOL4, "jobspec": _request(_one_core_nodes(1))},
)
def properties_of_the_whole_pool(value: Any, ref: Ref) -> Outcome | None:
    """Copies the pool's properties, every rank of each, into the allocation."""

    def copy(value: Any, execution: dict[str, Any]) -> None:
        pool = value["pool"].get("execution", {}).get("properties")
        if pool:
            execution["properties"] = copy_json(pool)

    return _execution(value, ref, copy)


@member(
    "sched.allocate",
    like="a scheduler that copies the pool's nodelist",
    witness={"pool": _POOL4, "jobspec": _request(_one_core_nodes(1))},
)
def nodelist_of_the_pool(value: Any, ref: Ref) -> Outcome | None:
    """Writes the pool's nodelist into the allocation, whatever ranks it holds."""

    def copy(value: Any, execution: dict[str, Any]) -> None:
        execution["nodelist"] = copy_json(value["pool"]["execution"]["nodelist"])

    return _execution(value, ref, copy)


@member(
    "sched.allocate",
    like="a scheduler written against the 2025-07-31 RFC 20 (no nslots)",
    witness={"pool": _POOL4, "jobspec": _request(_one_core_nodes(1))},
)
def nslots_left_out(value: Any, ref: Ref) -> Outcome | None:
    """Writes no nslots."""
    return _execution(value, ref, lambda v, e: e.pop("nslots", None))


def _nslots_as(value: Any, ref: Ref, what: Callable[[dict[int, Any]], int]) -> Outcome | None:
    first = ref(value)
    if not _is_input(value) or "nslots" not in first.get("output", {}).get("execution", {}):
        return None
    out = copy_json(first["output"])
    out["execution"]["nslots"] = what(_decoded(out, ref))
    return ok(out)


@member(
    "sched.allocate",
    like="nslots counted as nodes",
    witness={"pool": _POOL4, "jobspec": _request([_slot(2, ("core", 1))])},
)
def nslots_counts_nodes(value: Any, ref: Ref) -> Outcome | None:
    """Writes the number of nodes as nslots."""
    return _nslots_as(value, ref, len)


@member(
    "sched.allocate",
    like="nslots counted as cores",
    witness={
        "pool": _POOL4,
        "jobspec": _request(
            _one_core_nodes(
                1,
            )
        ),
    },
)
def nslots_counts_cores(value: Any, ref: Ref) -> Outcome | None:
    """Writes the number of cores and GPUs as nslots."""
    return _nslots_as(
        value,
        ref,
        lambda ranks: (
            sum(len(_ids(d["cores"], ref)) + len(_ids(d["gpus"], ref)) for d in ranks.values()) + 1
        ),
    )


# -- times -----------------------------------------------------------------------------------


@member(
    "sched.allocate",
    like="a pool that leaves the times to the job manager (flux-core's Rv1Pool)",
    witness={"pool": _POOL4, "jobspec": _request(_one_core_nodes(1), duration=60), "now": 10},
)
def no_expiration(value: Any, ref: Ref) -> Outcome | None:
    """Writes no expiration, whatever the duration."""
    return _execution(value, ref, lambda v, e: e.pop("expiration", None))


@member(
    "sched.allocate",
    like="Fluxion: an unset duration becomes the planner's whole horizon (100 years)",
    witness={"pool": _POOL4, "jobspec": _request(_one_core_nodes(1)), "now": 10},
)
def unset_duration_hundred_years(value: Any, ref: Ref) -> Outcome | None:
    """With duration 0 or none, writes expiration = clock + 100 years."""
    if not _is_input(value) or _duration(value):
        return None

    def far(value: Any, execution: dict[str, Any]) -> None:
        execution["expiration"] = _clock(value, execution) + 100 * _YEAR

    return _execution(value, ref, far)


@member(
    "sched.allocate",
    like="a scheduler with a default time limit of one hour",
    witness={"pool": _POOL4, "jobspec": _request(_one_core_nodes(1)), "now": 10},
)
def unset_duration_one_hour(value: Any, ref: Ref) -> Outcome | None:
    """With duration 0 or none, writes expiration = clock + 3600 (a default limit)."""
    if not _is_input(value) or _duration(value):
        return None

    def hour(value: Any, execution: dict[str, Any]) -> None:
        execution["expiration"] = _clock(value, execution) + 3600

    return _execution(value, ref, hour)


@member(
    "sched.allocate",
    like="Fluxion: durations kept in whole seconds",
    witness={"pool": _POOL4, "jobspec": _request(_one_core_nodes(1), duration=1.5), "now": 10},
)
def fractional_duration_rounded(value: Any, ref: Ref) -> Outcome | None:
    """Rounds a fractional duration up to whole seconds."""
    duration = _duration(value)
    if not isinstance(duration, float) or duration.is_integer() or duration <= 0:
        return None

    def whole(value: Any, execution: dict[str, Any]) -> None:
        execution["expiration"] += math.ceil(duration) - duration

    return _execution(value, ref, whole)


@member(
    "sched.allocate",
    like="a scheduler that reads duration in minutes, as Slurm's time limits are",
    witness={"pool": _POOL4, "jobspec": _request(_one_core_nodes(1), duration=60), "now": 10},
)
def duration_in_minutes(value: Any, ref: Ref) -> Outcome | None:
    """Writes expiration = clock + 60 * duration."""
    duration = _duration(value)
    if not isinstance(duration, int | float) or duration <= 0:
        return None

    def minutes(value: Any, execution: dict[str, Any]) -> None:
        if "expiration" in execution:
            execution["expiration"] += 59 * duration

    return _execution(value, ref, minutes)


@member(
    "sched.allocate",
    like="a scheduler that writes the duration as the expiration (relative, not absolute)",
    witness={"pool": _POOL4, "jobspec": _request(_one_core_nodes(1), duration=60), "now": 10},
)
def expiration_is_the_duration(value: Any, ref: Ref) -> Outcome | None:
    """Writes expiration = duration."""
    duration = _duration(value)
    if not isinstance(duration, int | float) or duration <= 0:
        return None

    def relative(value: Any, execution: dict[str, Any]) -> None:
        execution["expiration"] = duration

    return _execution(value, ref, relative)


@member(
    "sched.allocate",
    like="a scheduler that takes a missing now as 0 (an R that ended in 1970)",
    witness={"pool": _POOL4, "jobspec": _request(_one_core_nodes(1), duration=60)},
)
def missing_now_as_zero(value: Any, ref: Ref) -> Outcome | None:
    """Without now, writes no starttime and expiration = duration."""
    if not _is_input(value) or "now" in value:
        return None
    return _with_input(value, ref, lambda v: v.update(now=0)) if _duration(value) else None


@member(
    "sched.allocate",
    like="a scheduler that starts jobs at its next scheduling tick",
    witness={"pool": _POOL4, "jobspec": _request(_one_core_nodes(1)), "now": 10},
)
def starttime_in_the_future(value: Any, ref: Ref) -> Outcome | None:
    """Writes starttime (and expiration) one minute after the clock."""

    def later(value: Any, execution: dict[str, Any]) -> None:
        execution["starttime"] = _clock(value, execution) + 60
        if execution.get("expiration") and _duration(value):
            execution["expiration"] += 60

    return _execution(value, ref, later)


@member(
    "sched.allocate",
    like="a clock kept in whole seconds",
    witness={"pool": _POOL4, "jobspec": _request(_one_core_nodes(1), duration=60), "now": 10.5},
)
def clock_truncated(value: Any, ref: Ref) -> Outcome | None:
    """Truncates a fractional now to whole seconds for starttime and expiration."""
    now = value.get("now") if _is_input(value) else None
    if not isinstance(now, float) or now.is_integer():
        return None
    return _with_input(value, ref, lambda v: v.update(now=math.floor(now)))


@member(
    "sched.allocate",
    like="a scheduler that ignores the pool's own expiration",
    witness={
        "pool": {**_POOL4, "execution": {**_POOL4["execution"], "expiration": 5000}},
        "jobspec": _request(_one_core_nodes(1)),
        "now": 10,
    },
)
def pool_expiration_ignored(value: Any, ref: Ref) -> Outcome | None:
    """Writes no expiration for duration 0 when the pool has one."""
    if not _is_input(value) or _duration(value):
        return None
    return _execution(value, ref, lambda v, e: e.pop("expiration", None))


# -- answers and refusals --------------------------------------------------------------------


@member(
    "sched.allocate",
    like="no difference made between never and not now",
    witness={
        "pool": _POOL4,
        "jobspec": _request(_one_core_nodes(1)),
        "allocated": [_held("0-3", "0-3")],
    },
)
def busy_as_never(value: Any, ref: Ref) -> Outcome | None:
    """Reports a request that only waits for resources as one that can never run."""
    if ref(value).get("error", {}).get("category") == "busy":
        return err("unsatisfiable")
    return None


@member(
    "sched.allocate",
    like="a scheduler that tries again later whatever the reason (never read as not now)",
    witness={"pool": _POOL4, "jobspec": _request(_one_core_nodes(5))},
)
def never_as_busy(value: Any, ref: Ref) -> Outcome | None:
    """Reports a request the pool can never meet as one that waits."""
    if ref(value).get("error", {}).get("category") == "unsatisfiable":
        return err("busy")
    return None


@member(
    "sched.allocate",
    like="a scheduler that reports a malformed request as infeasible",
    witness={"pool": _POOL4, "jobspec": {"version": 1, "resources": []}},
)
def invalid_as_unsatisfiable(value: Any, ref: Ref) -> Outcome | None:
    """Answers unsatisfiable where the input is invalid."""
    if ref(value).get("error", {}).get("category") == "invalid":
        return err("unsatisfiable")
    return None


@member(
    "sched.allocate",
    like="constraints not applied",
    witness={
        "pool": _POOL4,
        "jobspec": _request(_one_core_nodes(1), constraints={"properties": ["ssd"]}),
    },
)
def constraint_ignored(value: Any, ref: Ref) -> Outcome | None:
    """Ignores attributes.system.constraints."""
    return _with_jobspec(
        value, ref, lambda js: js.get("attributes", {}).get("system", {}).pop("constraints", None)
    )


def _not_dropped(jobspec: Any) -> None:
    system = jobspec.get("attributes", {}).get("system", {})
    for node in walk(system.get("constraints", {})):
        if isinstance(node, dict) and isinstance(node.get("not"), list):
            inner = node.pop("not")
            node["and"] = inner


@member(
    "sched.allocate",
    like="a constraint evaluator that drops not",
    witness={
        "pool": _POOL4,
        "jobspec": _request(_one_core_nodes(1), constraints={"not": [{"properties": ["ssd"]}]}),
    },
)
def constraint_not_dropped(value: Any, ref: Ref) -> Outcome | None:
    """Reads {"not": [c]} as c."""
    return _with_jobspec(value, ref, _not_dropped)
