"""The oracle comparators consult, and the shape of a comparator.

A comparator judges semantically where a case allows more than one right answer: it may need
to decode an encoder's string, validate a document, or match a constraint.  It asks an *oracle*
for that: an implementation reached through the same :class:`~runner.adapters.base.Adapter`
protocol as every implementation under test (the bundled reference, wired in by
:mod:`runner.oracle`).  Comparators never import an implementation themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flux_conformance.runner.adapters.base import Adapter

__all__ = ["Comparator", "Oracle", "OracleFailure", "Refused"]


class Refused(Exception):
    """The oracle refused an input: ``category`` is its error category, ``reason`` its text."""

    def __init__(self, category: str, reason: str) -> None:
        super().__init__(f"{category}: {reason}")
        self.category = category
        self.reason = reason


class OracleFailure(Exception):
    """The oracle gave no answer at all (crashed, or lacks the operation): a suite defect."""


@dataclass(frozen=True)
class Oracle:
    """An implementation comparators consult, in one edition of the specs.

    ``oracle("idset.decode", "1-3")`` returns ``[1, 2, 3]``; an input the implementation refuses
    raises :class:`Refused`; an implementation that does not answer raises
    :class:`OracleFailure`.
    """

    adapter: Adapter
    edition: str | None = None

    def __call__(self, operation: str, value: Any) -> Any:
        """Run ``operation`` on ``value`` and return its output."""
        reply = self.adapter.run(operation, value, edition=self.edition)
        if reply.kind == "output":
            return reply.value
        if reply.kind == "error":
            raise Refused(str(reply.value), reply.message)
        raise OracleFailure(f"the oracle gave no answer to {operation}: {reply.message}")


#: ``comparator(expected, actual, oracle)`` -> ``None`` or the reason they differ.
Comparator = Callable[[Any, Any, Oracle], str | None]
