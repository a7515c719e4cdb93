"""The suite's operations, by name, as implemented by the reference.

This is the only place where the reference meets the conformance protocol: each entry
takes the operation's JSON input and returns its JSON output, or raises a
:class:`~reference.errors.FormatError` whose ``category`` is the error the case expects.

Each format module contributes its own ``OPERATIONS`` mapping; this module merges them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from flux_conformance.reference import editions
from flux_conformance.reference.errors import FormatError, LimitError

__all__ = ["DEFAULT_EDITION", "EDITIONS", "OPERATIONS", "Operation", "run"]

#: An operation takes its JSON input and the edition of the specs to follow.
Operation = Callable[..., Any]

#: The editions of the specs the reference follows, by name (see :mod:`reference.editions`);
#: the latest is the default.
EDITIONS = tuple(editions.EDITIONS)
DEFAULT_EDITION = editions.DEFAULT_EDITION

# Modules that contribute operations, in the order the suite presents them.
_MODULES = (
    "flux_conformance.reference.idset",
    "flux_conformance.reference.hostlist",
    "flux_conformance.reference.ranges",
    "flux_conformance.reference.shape",
    "flux_conformance.reference.jobspec",
    "flux_conformance.reference.rset",
    "flux_conformance.reference.constraint",
    "flux_conformance.reference.query",
    "flux_conformance.reference.slurm_extra",
    "flux_conformance.reference.allocate",
)


def _collect() -> dict[str, Operation]:
    ops: dict[str, Operation] = {}
    for name in _MODULES:
        ops.update(importlib.import_module(name).OPERATIONS)
    return ops


OPERATIONS: Mapping[str, Operation] = _collect()


def run(operation: str, value: Any, *, edition: str | None = None) -> Any:
    """Run ``operation`` on ``value``; raise :class:`FormatError` on bad input.

    ``KeyError`` means the operation is not one the reference knows.  ``edition`` is a name or
    an alias of :data:`reference.editions.EDITIONS` (None: the latest).
    """
    func = OPERATIONS[operation]
    chosen = editions.resolve(edition)
    try:
        return func(value, edition=chosen)
    except FormatError:
        raise
    except RecursionError:
        # Parsers bound their depth; this is a last line of defence, never the plan.
        raise LimitError("input nested too deeply") from None
