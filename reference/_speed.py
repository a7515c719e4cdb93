"""Speed helpers shared by the reference's modules (private: not part of any format's API)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["gc_paused"]


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while many small objects are built.

    Interval tuples, per-rank records and the like never form reference cycles, yet building
    a few hundred thousand of them triggers collections that find nothing, each of which walks
    every object the process holds (a large R already loaded, say).  Pausing them makes large
    inputs several times faster; the collector runs again as soon as the block ends.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
