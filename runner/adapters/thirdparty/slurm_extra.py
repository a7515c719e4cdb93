"""Adapter for Slurm's own ``--extra`` code, built from source: ``--impl slurm-extra``.

Slurm has no library API for its extra constraints: the parser and evaluator
(``src/common/extra_constraints.c``) and the JSON reader that turns a node's Extra into data
(the ``serializer/json`` plugin, json-c) live in libslurmfull and a plugin.
``implementations/slurm-extra/build.sh SLURM_SOURCE OUT`` builds them with Slurm's own
configure and links a small C program of ours against them; that program speaks the suite's
JSON Lines protocol (docs/protocol.md).  This adapter is the subprocess transport pointed at
that program: set ``SLURM_EXTRA_BUILD=OUT`` (the build script's output directory).

The program answers ``slurm.extra.parse`` (Slurm's tree, read from the public ``elem_t``),
``slurm.extra.match`` and ``slurm.extra.select``, calling what slurmctld calls: see
``implementations/slurm-extra/README.md`` and docs/adapters.md.  A crash, hang or protocol
break of the program makes the case errored, like any ``exec:`` implementation.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from flux_conformance.runner.adapters.base import AdapterError
from flux_conformance.runner.adapters.subprocess import SubprocessAdapter

__all__ = ["ENV", "PROGRAM", "SlurmExtra", "command"]

#: The environment variable naming the build script's output directory.
ENV = "SLURM_EXTRA_BUILD"
#: The program the build script links, inside that directory.
PROGRAM = "slurm_extra_conformance"

_HOW = (
    "build it from a Slurm source tree with: implementations/slurm-extra/build.sh "
    f"SLURM_SOURCE OUT, then set {ENV}=OUT (see implementations/slurm-extra/README.md)"
)


def command(build: str | None) -> str:
    """The command line that starts the program of the build in directory ``build``.

    Raises :class:`AdapterError`, saying how to build it, when ``build`` is unset or holds
    no build.
    """
    if not build:
        raise AdapterError(f"slurm-extra needs a build of Slurm's --extra code: {_HOW}")
    program = Path(build) / PROGRAM
    plugins = Path(build) / "plugins"
    if not os.access(program, os.X_OK) or not (plugins / "serializer_json.so").is_file():
        raise AdapterError(f"{build} holds no slurm-extra build ({program} is missing): {_HOW}")
    return shlex.join([str(program), str(plugins)])


class SlurmExtra(SubprocessAdapter):
    """Slurm's extra-constraint code, in the program built from a Slurm source tree."""

    def __init__(self, *, timeout: float = 10.0) -> None:
        super().__init__(command(os.environ.get(ENV)), timeout=timeout)
