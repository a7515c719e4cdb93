"""Benchmark: RFC 22 idsets and RFC 29 hostlists in the reference.

Targets: expanding ``node[0-99999]`` under 15 ms;
decoding and encoding an idset of 1,000,000 even ids under 1 s each (decoding to an
:class:`IdSet`), the ``idset.decode`` operation (which also expands the set into a list) under
450 ms; encoding a 100,000-host list under 300 ms.
Where python-hostlist (``hostlist``) or ClusterShell are importable, the same work done by them
is timed as well; they are never dependencies of the project.  Where flux-core's libraries
are found (see :mod:`_fluxcore`), ``idset_decode`` and ``hostlist_decode`` are timed too,
to the library's own set or list (expanding into Python objects would time ctypes, not C).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _fluxcore
from _harness import Bench, main

from flux_conformance.reference import hostlist
from flux_conformance.reference.idset import IdSet
from flux_conformance.reference.operations import run

EVEN_IDS = list(range(0, 2_000_000, 2))
EVEN_TEXT = ",".join(map(str, EVEN_IDS))
PAIRS_TEXT = ",".join(f"{i}-{i + 1}" for i in range(0, 1_500_000, 3))
HOSTS = [f"node{i}" for i in range(100_000)]
HOSTS_TEXT = ",".join(HOSTS)


def _others_expand() -> dict[str, Callable[[], object]]:
    out: dict[str, Callable[[], object]] = {}
    try:
        import hostlist as python_hostlist  # type: ignore[import-not-found]

        out["python-hostlist"] = lambda: python_hostlist.expand_hostlist("node[0-99999]")
    except ImportError:
        pass
    try:
        from ClusterShell.NodeSet import NodeSet  # type: ignore[import-not-found]

        out["ClusterShell"] = lambda: list(NodeSet("node[0-99999]"))
    except ImportError:
        pass
    return out


def _others_collect() -> dict[str, Callable[[], object]]:
    out: dict[str, Callable[[], object]] = {}
    try:
        import hostlist as python_hostlist

        # python-hostlist sorts (and may merge) rather than keeping the order: similar work.
        out["python-hostlist"] = lambda: python_hostlist.collect_hostlist(HOSTS)
    except ImportError:
        pass
    try:
        from ClusterShell.NodeSet import NodeSet

        out["ClusterShell"] = lambda: str(NodeSet.fromlist(HOSTS))
    except ImportError:
        pass
    return out


def _others_decode_flat() -> dict[str, Callable[[], object]]:
    out: dict[str, Callable[[], object]] = {}
    try:
        import hostlist as python_hostlist

        out["python-hostlist"] = lambda: python_hostlist.expand_hostlist(HOSTS_TEXT)
    except ImportError:
        pass
    return out


_FLUX = _fluxcore.ids()


def _flux(func: Callable[[_fluxcore.Ids], object]) -> dict[str, Callable[[], object]]:
    flux = _FLUX
    return {} if flux is None else {"flux-core C": lambda: func(flux)}


BENCHES = [
    Bench(
        "hostlist.decode node[0-99999]",
        lambda: hostlist.decode("node[0-99999]"),
        target=0.015,
        others={**_others_expand(), **_flux(lambda f: f.hostlist_decode(b"node[0-99999]"))},
    ),
    Bench(
        "hostlist.encode 100,000 hosts (node0..node99999)",
        lambda: hostlist.encode(HOSTS),
        target=0.300,
        others=_others_collect(),
    ),
    Bench(
        "hostlist.decode 100,000 comma-separated hosts",
        lambda: hostlist.decode(HOSTS_TEXT),
        others=_others_decode_flat(),
    ),
    Bench(
        "idset decode 1,000,000 even ids (to an IdSet)",
        lambda: IdSet.decode(EVEN_TEXT),
        target=1.0,
        repeat=3,
        others=_flux(lambda f: f.idset_decode(EVEN_TEXT.encode())),
    ),
    Bench(
        "idset decode 500,000 two-id ranges (0-1,3-4,...; to an IdSet)",
        lambda: IdSet.decode(PAIRS_TEXT),
        repeat=3,
    ),
    Bench(
        "idset.decode operation, 1,000,000 even ids (IdSet + list)",
        lambda: run("idset.decode", EVEN_TEXT),
        target=0.450,
        repeat=3,
    ),
    Bench(
        "idset encode 1,000,000 even ids (from a list)",
        lambda: IdSet.from_ids(EVEN_IDS).encode(),
        target=1.0,
        repeat=3,
    ),
    Bench(
        "idset decode 0-18446744073709551615 (never expanded)",
        lambda: IdSet.decode("0-18446744073709551615").size,
        target=0.001,
    ),
]


if __name__ == "__main__":
    sys.exit(main(BENCHES))
