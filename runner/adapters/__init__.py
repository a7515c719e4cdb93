"""Adapters: how the runner reaches an implementation (in-process or subprocess).

``KNOWN`` maps short ``--impl`` names to the ``python:module:object`` of an adapter the
project ships for an implementation people already use; such an adapter is loaded only
when asked for, and reports ``unsupported`` for what its implementation lacks.
"""

from __future__ import annotations

__all__ = ["KNOWN"]

#: ``--impl NAME`` -> ``module:object`` of a shipped adapter.
KNOWN: dict[str, str] = {
    "python-hostlist": "flux_conformance.runner.adapters.thirdparty.python_hostlist:PythonHostlist",
    "clustershell": "flux_conformance.runner.adapters.thirdparty.clustershell:ClusterShell",
    "flux-core": "flux_conformance.runner.adapters.thirdparty.fluxcore:FluxCore",
    "flux-core-librlist": (
        "flux_conformance.runner.adapters.thirdparty.fluxcore_librlist:FluxCoreLibrlist"
    ),
    "fluxion": "flux_conformance.runner.adapters.thirdparty.fluxion:FluxionAdapter",
    "slurm-extra": "flux_conformance.runner.adapters.thirdparty.slurm_extra:SlurmExtra",
    "slurm-hostlist": "flux_conformance.runner.adapters.thirdparty.slurm_hostlist:SlurmHostlist",
    "pdsh": "flux_conformance.runner.adapters.thirdparty.pdsh:Pdsh",
}
