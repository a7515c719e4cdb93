"""Adapters: how the runner reaches an implementation (in-process or subprocess).

``KNOWN`` maps short ``--impl`` names to the ``python:module:object`` of an adapter the
project ships for an implementation people already use; such an adapter is loaded only
when asked for, and reports ``unsupported`` for what its implementation lacks.
"""

from __future__ import annotations

__all__ = ["KNOWN"]

#: ``--impl NAME`` -> ``module:object`` of a shipped adapter.
KNOWN: dict[str, str] = {
    "python-hostlist": "runner.adapters.thirdparty.python_hostlist:PythonHostlist",
    "clustershell": "runner.adapters.thirdparty.clustershell:ClusterShell",
    "flux-core": "runner.adapters.thirdparty.fluxcore:FluxCore",
    "slurm-extra": "runner.adapters.thirdparty.slurm_extra:SlurmExtra",
    "slurm-hostlist": "runner.adapters.thirdparty.slurm_hostlist:SlurmHostlist",
    "pdsh": "runner.adapters.thirdparty.pdsh:Pdsh",
}
