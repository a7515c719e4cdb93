"""Where the oracle is wired in: the bundled reference, as comparators consult it.

Comparators judge semantically through an :class:`~runner.comparators.Oracle`, which reaches an
implementation through the adapter protocol.  This is the one place that decides which
implementation that is: the reference, in-process, in the edition of the case being judged.
Callers (the commands, the pytest plugin, the tools) hand :func:`reference_oracle` to
:func:`runner.engine.run_cases`; the engine itself never chooses.
"""

from __future__ import annotations

from functools import cache

from flux_conformance.runner.comparators import Oracle

__all__ = ["reference_oracle"]


@cache
def reference_oracle(edition: str | None = None) -> Oracle:
    """The reference, in-process, in ``edition`` (None: its default edition).

    A case that holds under one edition is judged with the reference in that edition, so that
    (for example) a jobspec an encoder produced is validated by the same rules.
    """
    from flux_conformance.runner.adapters.inprocess import InProcessAdapter, ReferenceImplementation

    return Oracle(InProcessAdapter(ReferenceImplementation()), edition)
