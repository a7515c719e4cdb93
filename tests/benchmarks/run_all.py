"""Run every benchmark of the project and print them as one table.

Each ``bench_*.py`` module provides its figures as ``BENCHES`` (a list of
:class:`_harness.Bench`) or a ``benches()`` function; this script gathers them all, times
them with :func:`_harness.main`, and exits 1 if any figure missed its target.  ``tox -e
bench`` runs it; third-party figures appear where python-hostlist and ClusterShell are
installed, and flux-core's C libraries (libflux-idset, libflux-hostlist, librlist through
``build_rlist_probe.sh``) where a build is found (see ``_fluxcore.py``).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _harness import Bench, main  # noqa: E402


def gather() -> list[Bench]:
    """Every benchmark of every ``bench_*.py`` module, in file order."""
    benches: list[Bench] = []
    for script in sorted(HERE.glob("bench_*.py")):
        module = importlib.import_module(script.stem)
        found = getattr(module, "BENCHES", None)
        benches.extend(found if found is not None else module.benches())
    return benches


if __name__ == "__main__":
    import _fluxcore

    # Say whether flux-core's C libraries were found, and why not, before the table.
    print(_fluxcore.available())
    sys.exit(main(gather(), sys.argv[1:]))
