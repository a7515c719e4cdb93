"""Adapters for third-party implementations people already use (optional extras).

Each module wraps one library as an in-process :class:`~runner.adapters.base.Implementation`
and imports that library only when the adapter is instantiated, so the runner works without
them; a missing library is an :class:`~runner.adapters.base.AdapterError` naming the extra to
install.  ``expectations/<name>.yaml`` beside them records where each library departs from
the specs, one reason per case (see ``docs/adapters.md``).

* :mod:`.python_hostlist` -- ``python-hostlist`` (``--impl python-hostlist``);
* :mod:`.clustershell` -- ClusterShell's ``NodeSet``/``RangeSet`` (``--impl clustershell``);
* :mod:`.fluxcore` -- flux-core's Python bindings (``--impl flux-core``), with
  :mod:`.fluxcore_sched` for ``sched.allocate`` (a job through job-ingest and sched-fifo);
* :mod:`.fluxcore_librlist` -- flux-core's C library of R and constraints, librlist, linked
  from a flux-core build and called through ctypes in a worker process
  (``--impl flux-core-librlist``);
* :mod:`.fluxion` -- Fluxion (flux-sched): ``resource-query`` and ``flux-jobspec-validate`` of
  a build, run as subprocesses from a worker process (``--impl fluxion``);
* :mod:`.slurm_hostlist` -- Slurm's ``slurm_hostlist_*`` functions from Debian's libslurm38,
  through ctypes in a worker process (``--impl slurm-hostlist``);
* :mod:`.pdsh` -- Debian's ``pdsh`` and ``dshbak`` programs (``--impl pdsh``).

What they share is in :mod:`._base` (outcome builders, dispatch by operation) and
:mod:`._worker` (the one entry of the worker processes).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["expectations_file"]


def expectations_file(name: str) -> Path:
    """The expectations file shipped for the adapter registered as ``name``."""
    return Path(__file__).resolve().parent / "expectations" / f"{name}.yaml"
