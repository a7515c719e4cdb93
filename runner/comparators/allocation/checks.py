"""The checks an allocation must pass, registered by name, and :func:`judge` running them.

Each check is a plain function of the input's facts (:func:`inputs.facts`), the decoded answer
and its ``execution``; it returns why the answer breaks its rule, or None.  The module
docstring of :mod:`runner.comparators.allocation` names the text behind each.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from flux_conformance.runner.comparators.allocation.division import Division, divide
from flux_conformance.runner.comparators.allocation.inputs import Rank
from flux_conformance.runner.comparators.allocation.times import check_times

__all__ = ["CHECKS", "Answer", "judge"]

Ranks = dict[int, Rank]


@dataclass
class Answer:
    """An answer to judge: its decoded ranks, its execution, and its division once searched."""

    got: Ranks
    execution: dict[str, Any]
    scheduling: Any = None  # the answer's own scheduling key
    _division: Division | None = None

    def division(self, known: dict[str, Any]) -> Division:
        """The search of :mod:`division`, run once."""
        if self._division is None:
            self._division = divide(known, self.got)
        return self._division


def _subset(known: dict[str, Any], answer: Answer) -> str | None:
    for rank, item in sorted(answer.got.items()):
        have = known["ranks"].get(str(rank))
        if have is None:
            return f"rank {rank} is not in the pool"
        if item.host != have["host"]:
            return f"rank {rank} is host {item.host!r}; the pool says {have['host']!r}"
        if not item.cores <= set(have["cores"]) or not item.gpus <= set(have["gpus"]):
            return f"rank {rank} holds cores or GPUs that are not free in the pool"
        if not item.properties <= set(have["properties"]):
            extra = sorted(item.properties - set(have["properties"]))
            return f"rank {rank} has properties the pool does not give it: {extra}"
    return None


def _constraint(known: dict[str, Any], answer: Answer) -> str | None:
    ranks = known["ranks"]
    outside = [r for r in sorted(answer.got) if not ranks.get(str(r), {}).get("eligible", True)]
    if outside:
        return f"rank {outside[0]} does not satisfy the constraint"
    return None


def _division(known: dict[str, Any], answer: Answer) -> str | None:
    found = answer.division(known)
    return found.reason if found.decided and not found.found else None


def _largest(known: dict[str, Any], answer: Answer) -> str | None:
    found = answer.division(known)
    return found.reason if found.decided and found.found and not found.largest else None


def _times(known: dict[str, Any], answer: Answer) -> str | None:
    return check_times(known["times"], answer.execution)


def _nslots(known: dict[str, Any], answer: Answer) -> str | None:
    if not known["newer"]:
        return None
    nslots = answer.execution.get("nslots")
    if not isinstance(nslots, int) or isinstance(nslots, bool) or nslots <= 0:
        return f"nslots is {nslots!r}; an allocation carries the slot total, above zero"
    found = answer.division(known)
    if found.decided and found.found and nslots not in found.slots:
        totals = sorted(found.slots)
        return f"nslots is {nslots}; the allocation holds {' or '.join(map(str, totals))} slot(s)"
    return None


def _instance_local(known: dict[str, Any], answer: Answer) -> str | None:
    if not known["newer"]:
        return None
    local = sorted(k for k in answer.execution.get("properties", {}) if k.startswith("+"))
    return f"keeps the instance-local property {local[0]!r}" if local else None


def _scheduling(known: dict[str, Any], answer: Answer) -> str | None:
    pool = known["pool_scheduling"]
    whole_pool = len(answer.got) == len(known["ranks"]) and all(
        len(item.cores) == len(known["ranks"][str(r)]["all_cores"])
        and len(item.gpus) == len(known["ranks"][str(r)]["all_gpus"])
        for r, item in answer.got.items()
    )
    if known["newer"] or pool is None or answer.scheduling != pool or whole_pool:
        return None
    return "carries the pool's scheduling key, which describes resources it does not hold"


Check = Callable[[dict[str, Any], Answer], "str | None"]

#: Every check by name, in the order they run.  ``subset`` and ``constraint`` come first: the
#: others assume ranks of the pool.
CHECKS: Mapping[str, Check] = {
    "subset": _subset,
    "constraint": _constraint,
    "division": _division,
    "largest": _largest,
    "times": _times,
    "nslots": _nslots,
    "instance-local": _instance_local,
    "scheduling": _scheduling,
}


def judge(
    known: dict[str, Any], got: Ranks, execution: dict[str, Any], scheduling: Any = None
) -> list[tuple[str, str]]:
    """Every rule an allocation (decoded ``got``, its ``execution``) breaks, given ``facts``."""
    answer = Answer(got, execution, scheduling)
    out: list[tuple[str, str]] = []
    for name in ("subset", "constraint"):
        reason = CHECKS[name](known, answer)
        if reason:
            out.append((name, reason))
    if out:
        return out
    for name, check in CHECKS.items():
        if name not in ("subset", "constraint"):
            reason = check(known, answer)
            if reason:
                out.append((name, reason))
    return out
