"""The numeric options of every command: one parser type, each option with its range.

A number outside its range (``--timeout 0``, ``--timeout nan``, ``--jobs 1e9``) is a usage
error (exit 2) that names the range, decided before anything runs: never a traceback, and
never a run that starts and then fails as if the implementation were at fault.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

__all__ = ["COUNT_MAX", "SECONDS_MAX", "seconds", "whole"]

#: The longest time any option may give, in seconds (one day).
SECONDS_MAX = 86_400.0
#: The largest count an option takes (workers, examples, disagreements, timeouts).
COUNT_MAX = 1_000_000


def seconds(maximum: float = SECONDS_MAX) -> Callable[[str], float]:
    """A parser of a time in seconds: a finite number above 0 and at most ``maximum``."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (0 < value <= maximum):  # NaN fails every comparison: refused too
            raise argparse.ArgumentTypeError(
                f"expected seconds, a number above 0 and at most {maximum:g}: {text[:40]!r}"
            )
        return value

    parse.__name__ = "seconds"
    return parse


def whole(
    minimum: int, maximum: int = COUNT_MAX, *, what: str = "a whole number"
) -> Callable[[str], int]:
    """A parser of a whole number from ``minimum`` to ``maximum``."""

    def parse(text: str) -> int:
        value: int | None
        try:
            value = int(text) if len(text) <= 40 else None
        except ValueError:
            value = None
        if value is None or not minimum <= value <= maximum:
            raise argparse.ArgumentTypeError(
                f"expected {what} from {minimum} to {maximum}: {text[:40]!r}"
            )
        return value

    parse.__name__ = "whole"
    return parse
