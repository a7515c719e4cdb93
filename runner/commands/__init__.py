"""The subcommands of ``flux-conformance``, one module each.

Each module has ``add_parser(subparsers)``, which registers the command and sets its handler,
and the handler itself, ``main(args, out, err) -> exit status``.  Handlers raise a
:class:`~runner.errors.ConformanceError` for anything that stops them; :mod:`runner.cli`
catches it in one place.  What several commands share (loading the suite, the case selection
options, reporters) is in :mod:`runner.commands._common`.
"""

from __future__ import annotations

__all__ = ["COMMANDS"]

#: The command modules, in the order ``--help`` lists them.
COMMANDS = (
    "run",
    "compare",
    "smoke",
    "clarify",
    "check",
    "list",
    "coverage",
    "export",
    "serve",
    "diff",
)
