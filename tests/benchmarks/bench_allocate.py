"""Benchmark: ``sched.allocate`` on the fragmented 16,384-node pool, half of it already taken.

The pool is :mod:`_fragmented`'s ``FULL`` (16,384 nodes of 48 cores, 64 scattered
properties), and what is already allocated is its two fragmented allocations (``ALLOC_A`` and
``ALLOC_B``, 9,830 scattered nodes each, every node with its own subset of cores), so the free
part of the pool is scattered core by core.  Three requests:

* 128 nodes of one 16-core slot each, under a properties constraint;
* 1,000 one-core slots below node level;
* a min-only node count (every node that can hold a one-core slot).

A scheduler keeps its pool between requests, so loading (reading the pool and marking what is
allocated) is timed apart from matching (one request).  Target: the reference matches each
request in under 100 ms.

flux-core's scheduler pool (``flux.resource.ResourcePool``, the pure-Python ``Rv1Pool`` of
``sched-simple`` and ``sched-fifo``) does the same work where a build is found
(``FLUX_CORE_PREFIX``): ``ResourcePool(R)`` and ``register_alloc`` to load, then
``parse_resource_request`` and ``alloc`` on a fresh copy of the loaded pool for each request
(``alloc`` marks what it takes; the copies are made before the clock starts).

Fluxion (``FLUXION_BUILD``, see :mod:`_fluxion`) does it too where a build is found: one
``resource-query`` kept running for the whole benchmark (:class:`_fluxion.Session`) loads the
pool and takes what is allocated, then matches each request, timed from the command written
to the answer read.  The two allocations overlap (they were drawn independently) and Fluxion
refuses to mark a resource twice, so it is given their union as one allocation: the same
resources are taken.  ``bench_fluxion.py`` has Fluxion's own timings of the same work.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _fluxion
from _fragmented import ALLOC_A_TEXT, ALLOC_B_TEXT, FULL_TEXT
from _harness import Bench, Elapsed, main

from flux_conformance.reference import operations
from flux_conformance.reference.allocate import Pool
from flux_conformance.reference.operations import DEFAULT_EDITION

#: How many allocations each figure times (the harness takes the median).
REPEAT = 5

#: The scheduler's clock for every request: inside the pool's and the allocations' time
#: (starttime 0, expiration 86400), so both allocations still hold their resources.
NOW = 3600


def _jobspec(resources: list[Any], **system: Any) -> dict[str, Any]:
    return {
        "version": 1,
        "resources": resources,
        "tasks": [{"command": ["app"], "slot": "task", "count": {"per_slot": 1}}],
        "attributes": {"system": {"duration": 0, **system}},
    }


def _slot(count: Any, cores: int) -> dict[str, Any]:
    return {
        "type": "slot",
        "label": "task",
        "count": count,
        "with": [{"type": "core", "count": cores}],
    }


REQUESTS: dict[str, dict[str, Any]] = {
    "128 nodes x 16 cores, properties constraint": _jobspec(
        [{"type": "node", "count": 128, "with": [_slot(1, 16)]}],
        constraints={"properties": ["prop1", "^prop2"]},
    ),
    "1,000 one-core slots": _jobspec([_slot(1000, 1)]),
    "min-only node count": _jobspec([{"type": "node", "count": {"min": 1}, "with": [_slot(1, 1)]}]),
}


def reference_load() -> Pool:
    """The reference's pool: the full R with both allocations taken."""
    taken = [json.loads(ALLOC_A_TEXT), json.loads(ALLOC_B_TEXT)]
    return Pool.load(json.loads(FULL_TEXT), taken)


_POOL = reference_load()


def reference_match(jobspec: dict[str, Any]) -> Callable[[], object]:
    """One allocation of ``jobspec`` from the loaded pool (``allocate`` leaves it unchanged)."""
    return lambda: _POOL.allocate(jobspec, now=NOW, edition=DEFAULT_EDITION)


def _flux_pool_class() -> Any:
    """flux-core's ``ResourcePool`` from the build at ``FLUX_CORE_PREFIX``, or None."""
    prefix = os.environ.get("FLUX_CORE_PREFIX")
    if not prefix:
        return None
    from flux_conformance.runner.adapters.base import AdapterError
    from flux_conformance.runner.adapters.thirdparty.fluxcore import _import_build

    try:
        _import_build(prefix)
        from flux.resource import ResourcePool  # type: ignore[import-not-found]
    except (AdapterError, ImportError):
        return None
    return ResourcePool


_FLUX = _flux_pool_class()


def _flux_load() -> Any:
    pool = _FLUX(FULL_TEXT)
    for jobid, text in enumerate((ALLOC_A_TEXT, ALLOC_B_TEXT), start=1):
        pool.register_alloc(jobid, _FLUX(text))
    return pool


def _flux_match(jobspec: dict[str, Any]) -> Callable[[], object]:
    loaded: list[Any] = []
    copies: list[Any] = []

    def run() -> object:
        if not loaded:
            # The harness's first call is its untimed warm-up: load once and make a fresh
            # copy for each timed call then (alloc marks what it takes).
            loaded.append(_flux_load())
            copies.extend(loaded[0].copy() for _ in range(REPEAT))
            pool = loaded[0]
        else:
            # Past REPEAT timed calls (--repeat), the copy is made on the clock.
            pool = copies.pop() if copies else loaded[0].copy()
        return pool.alloc(100, pool.parse_resource_request(jobspec))

    return run


#: The running Fluxion session, once the loading figure (or a first match) has started it.
_SESSION: list[_fluxion.Session] = []


def taken_union() -> dict[str, Any]:
    """Both allocations as one R, for Fluxion (which refuses to mark a resource twice)."""
    union: dict[str, Any] = operations.run(
        "R.union", {"a": json.loads(ALLOC_A_TEXT), "b": json.loads(ALLOC_B_TEXT)}
    )
    return union


def _fluxion_load() -> object:
    for running in _SESSION:
        running.close()
    _SESSION[:] = [_fluxion.Session(FULL_TEXT, [json.dumps(taken_union())], REQUESTS)]
    return Elapsed(_SESSION[0].loaded)


def _fluxion_match(name: str) -> Callable[[], object]:
    def run() -> object:
        if not _SESSION:
            _fluxion_load()
        return Elapsed(_SESSION[0].match(name))

    return run


@atexit.register
def _close_fluxion() -> None:
    for running in _SESSION:
        running.close()


def _others(
    flux: Callable[[], Callable[[], object]], fluxion: Callable[[], Callable[[], object]]
) -> dict[str, Callable[[], object]]:
    found = {"flux-core Rv1Pool": flux()} if _FLUX is not None else {}
    if _fluxion.resource_query() is not None:
        found["Fluxion"] = fluxion()
    return found


def benches() -> list[Bench]:
    """The loading figure and one matching figure per request."""
    out = [
        Bench(
            "sched.allocate: load the pool and mark 2 allocations",
            reference_load,
            None,
            _others(lambda: _flux_load, lambda: _fluxion_load),
            repeat=3,
            others_repeat=1,
        )
    ]
    for name, jobspec in REQUESTS.items():
        answer = _POOL.allocate(jobspec, now=NOW, edition=DEFAULT_EDITION)["execution"]
        out.append(
            Bench(
                f"sched.allocate: {name}",
                reference_match(jobspec),
                0.100,
                _others(
                    lambda jobspec=jobspec: _flux_match(jobspec),
                    lambda name=name: _fluxion_match(name),
                ),
                repeat=REPEAT,
                stats=f"{len(answer['R_lite'])} R_lite entries, nslots {answer.get('nslots')}",
            )
        )
    return out


if __name__ == "__main__":
    sys.exit(main(benches(), sys.argv[1:]))
