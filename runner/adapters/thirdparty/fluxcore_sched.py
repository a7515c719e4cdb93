"""``sched.allocate`` for the flux-core adapter: what flux-core does with one submitted job.

Each step is flux-core's own, in the order a job meets them (flux-core 0.88:
``src/modules/job-ingest``, ``flux/job/validator/plugins/jobspec.py``, ``flux/scheduler.py``,
``src/modules/sched-fifo.py``, ``flux/resource/Rv1Pool.py``):

1. **job-ingest.**  Its default validator plugin, ``jobspec``, calls
   ``validate_jobspec(jobspec, require_version=1)`` (RFC 25, jobspec V1); the validator turns
   ``ValueError``, ``TypeError`` and ``OSError`` into a refusal of the submission.  Such a
   refusal is reported as flux-core's, category ``unknown`` (flux-core does not name its kind),
   and the scheduler never sees the job.  Any other exception escapes the validator: the case
   is errored.
2. **The scheduler's pool.**  ``ResourcePool(pool)``, and ``register_alloc`` of each R of
   ``allocated``, as the scheduler registers the running jobs at ``hello``.  A job whose
   expiration is above 0 and at or before the clock has ended (the job manager has freed its
   resources) and is not registered.  A pool or R they refuse -> ``unknown``.
3. **sched-fifo.**  ``parse_resource_request(jobspec)``: whatever it raises denies the job ->
   ``unknown``.  ``alloc(jobid, request)``: ``InfeasibleRequest`` denies the job ->
   ``unsatisfiable``; ``InsufficientResources`` keeps it queued -> ``busy`` (flux-core's own
   classes name these two kinds).  Anything else ``alloc`` raises would stop the scheduler
   module, and errors the case.
4. **sched-fifo's stamp**, before the R goes back to the job manager: ``starttime`` is the
   clock; ``expiration`` is the clock plus the duration when the duration is above 0, else
   the pool's expiration when that is above 0.  The clock is the input's ``now`` (the
   scheduler's clock) when it is given, else the real clock, which sched-fifo reads from its
   reactor.

The R is ``to_dict()`` of what ``alloc`` returned, stamped; nothing else is changed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import Any

from flux_conformance.runner.adapters.thirdparty._base import error, output, refused

__all__ = ["allocate"]

#: What a pool or an R that flux-core cannot read raises.
_REFUSED = (ValueError, TypeError, KeyError)
#: What job-ingest's validator turns into a refusal of the submission.
_INGEST_REFUSED = (ValueError, TypeError, OSError)


def allocate(
    value: Mapping[str, Any], validate_jobspec: Callable[..., Any], pool_class: Any
) -> Mapping[str, Any]:
    """One ``sched.allocate`` case through flux-core (``pool_class``: ``ResourcePool``)."""
    jobspec = value["jobspec"]
    try:
        validate_jobspec(json.dumps(jobspec), 1)
    except _INGEST_REFUSED as exc:
        return refused(f"job-ingest refused the jobspec: {type(exc).__name__}: {exc}")
    clock = value["now"] if "now" in value else time.time()
    try:
        pool = pool_class(json.dumps(value["pool"]))
        running = [pool_class(json.dumps(taken)) for taken in value.get("allocated", [])]
        for jobid, taken in enumerate(running, start=1):
            if not 0 < taken.expiration <= clock:
                pool.register_alloc(jobid, taken)
    except _REFUSED as exc:
        return refused(exc)
    try:
        request = pool.parse_resource_request(jobspec)
    except Exception as exc:  # sched-fifo's alloc callback denies the job on any of them
        return refused(f"cannot parse jobspec: {type(exc).__name__}: {exc}")
    try:
        allocation = pool.alloc(len(running) + 1, request)
    except pool_class.InsufficientResources as exc:
        return error("busy", exc)
    except pool_class.InfeasibleRequest as exc:
        return error("unsatisfiable", exc)
    allocation.set_starttime(clock)
    if request.duration > 0.0:
        allocation.set_expiration(clock + request.duration)
    elif pool.expiration > 0.0:
        allocation.set_expiration(pool.expiration)
    return output(allocation.to_dict())
