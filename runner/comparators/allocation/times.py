"""The time rules of an allocation: ``starttime`` and ``expiration`` (the ``times`` check).

``now`` is the scheduler's clock at the request, in seconds since the epoch; without it the
scheduler reads its own clock (readings).  The judge then knows the clock only within bounds:
not before :data:`CLOCK_FLOOR`, the time this process loaded the comparators (the engine loads
them before it asks any implementation anything, so every answer this process judges was made
after it), rounded down to the second so that a scheduler stamping whole seconds is not
refused; and not after the time of judgement, rounded up.

The rules (RFC 14, Attributes > duration; RFC 20, Execution > starttime and expiration):

* ``starttime`` is optional; when present and not 0 (RFC 14 and the 2026-08-13 RFC 20: 0
  means unset) it is the clock: equal to ``now``, or within the bounds.
* A ``duration`` above 0 gives ``expiration = clock + duration`` exactly: ``now + duration``;
  without ``now``, within the bounds plus the duration, and ``starttime + duration`` when a
  starttime is written.  A duration running past the pool's own expiration is an open point:
  the pool's expiration is accepted too.
* A ``duration`` of 0, or none, sets no end of its own: ``expiration`` is the pool's when the
  pool has one above 0, else absent or 0.
"""

from __future__ import annotations

import math
import time
from typing import Any

__all__ = ["CLOCK_FLOOR", "check_times"]

#: No answer judged in this process was made before this time (seconds since the epoch).
CLOCK_FLOOR = float(math.floor(time.time()))


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    return None


def check_times(times: dict[str, Any], execution: dict[str, Any]) -> str | None:
    """The first time rule ``execution`` breaks (None: it keeps them all)."""
    now, duration = times["now"], _number(times["duration"]) or 0
    low = now if now is not None else times["floor"]
    high = now if now is not None else math.ceil(times["ceiling"])
    start = execution.get("starttime")
    end = execution.get("expiration")
    if start not in (None, 0) and (_number(start) is None or not low <= start <= high):
        clock = f"now is {now!r}" if now is not None else f"the clock lay in [{low}, {high}]"
        return f"starttime is {start!r}; {clock}"
    bound = times["pool_expiration"]
    if duration > 0:
        if bound is not None and end == bound and bound < high + duration:
            return None  # the pool's end may cut the job short (an open point)
        if now is not None:
            if end != now + duration:
                return f"expiration is {end!r}; now + duration is {now + duration!r}"
        elif _number(end) is None or not low + duration <= end <= high + duration:
            return (
                f"expiration is {end!r}; the clock + duration lay in "
                f"[{low + duration}, {high + duration}]"
            )
        elif start not in (None, 0) and end != start + duration:
            return f"expiration is {end!r}; starttime + duration is {start + duration!r}"
        return None
    if bound is not None:
        if end != bound:
            return f"expiration is {end!r}; with no duration the pool's expiration {bound!r}"
    elif end not in (None, 0):
        return f"expiration is {end!r}; with no duration and a pool without one, none is set"
    return None
