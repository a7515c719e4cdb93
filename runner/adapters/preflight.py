"""Checking that an implementation can be run at all, before any case is judged.

A broken set-up (a command that does not exist, a program that exits at once, a library that
is not installed, a process that greets and then dies on every request) is not a finding about
conformance: it must not produce a report of a thousand errored cases.  :func:`preflight`
starts the adapter and sends a few trivial requests; when the implementation cannot be started
or answers none of them, it raises :class:`~runner.adapters.base.AdapterError`, which every
command turns into one message and exit status 3.

A *trivial request* is the shortest input among the cases of an operation the implementation
announces (preferring cases that expect an output), one per operation, for the
:data:`PROBES` operations with the shortest such inputs.  Any answer counts, right or wrong,
even ``unsupported``: only an implementation that answers none of them (each reply *errored*)
is unrunnable, so one input that crashes a working implementation is left to the run to report.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flux_conformance.runner.adapters.base import Adapter, AdapterError, Reply

if TYPE_CHECKING:
    from flux_conformance.runner.cases import Case

__all__ = ["PROBES", "Probe", "preflight", "start", "trivial_cases"]

#: How many trivial requests (each of a different operation) are tried at most.
PROBES = 3


@dataclass(frozen=True)
class Probe:
    """One trivial request and what the implementation answered."""

    case: Case
    reply: Reply

    @property
    def answered(self) -> bool:
        """Whether the implementation answered at all (right or wrong)."""
        return self.reply.kind != "errored"


def _size(case: Case) -> tuple[int, int, str]:
    try:
        text = json.dumps(case.input, sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        text = repr(case.input)
    expects_output = any(e.kind == "output" for e in case.expected)
    return (0 if expects_output else 1, len(text), case.id)


def trivial_cases(
    cases: Iterable[Case],
    supports: Callable[[str], bool],
    *,
    skip: Callable[[Case], str | None] | None = None,
    limit: int = PROBES,
) -> list[Case]:
    """Per supported operation, its most trivial case; the ``limit`` most trivial of those."""
    best: dict[str, tuple[tuple[int, int, str], Case]] = {}
    for case in cases:
        if not supports(case.operation) or (skip is not None and skip(case)):
            continue
        key = _size(case)
        if case.operation not in best or key < best[case.operation][0]:
            best[case.operation] = (key, case)
    return [case for _, case in sorted(best.values(), key=lambda kept: kept[0])][:limit]


def start(adapter: Adapter) -> None:
    """Start ``adapter``; a failure is an :class:`AdapterError` saying it could not be run."""
    try:
        adapter.start()
    except AdapterError as exc:
        raise AdapterError(f"the implementation could not be run: {exc}") from None


def preflight(
    adapter: Adapter,
    cases: Iterable[Case],
    *,
    skip: Callable[[Case], str | None] | None = None,
    edition: str | None = None,
) -> list[Probe]:
    """Start ``adapter`` and send it the trivial requests of ``cases``; return the exchanges.

    ``edition`` is the edition the run follows: each request is sent in it, as the run would
    send the case (a case of one edition, in its own).

    Raises :class:`AdapterError` when the implementation does not start (or greet) or
    answers none of the requests.  When it announces none of the operations of ``cases``,
    nothing is sent and the list is empty: that is a question of scope, not a broken set-up.
    """
    start(adapter)
    probes = []
    for case in trivial_cases(cases, adapter.supports, skip=skip):
        reply = adapter.run(case.operation, case.input, edition=case.edition or edition)
        probes.append(Probe(case, reply))
        if reply.kind != "errored":
            return probes
    if probes:
        tried = "; ".join(
            f"{p.case.operation} {_shown(p.case.input)}: {p.reply.message}" for p in probes
        )
        tail = probes[-1].reply.stderr.strip()
        raise AdapterError(
            f"the implementation could not be run: it started, but answered none of "
            f"{len(probes)} trivial request{'s' * (len(probes) != 1)} ({tried})"
            + (f"\nits stderr ends with:\n{tail}" if tail else "")
        )
    return probes


def _shown(value: Any) -> str:
    try:
        text = json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= 60 else text[:60] + "..."
