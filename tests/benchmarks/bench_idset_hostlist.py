"""Benchmark: RFC 22 idsets and RFC 29 hostlists in the reference.

Targets (from the task brief): expanding ``node[0-99999]`` under 60 ms; decoding and encoding
an idset of 1,000,000 even ids under 1 s each (decoding to an :class:`IdSet`; the operation,
which also expands the set into a list, is timed without a target); encoding a 100,000-host
list under 300 ms.
Where python-hostlist (``hostlist``) or ClusterShell are importable, the same work done by them
is timed as well; they are never dependencies of the project.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import Bench, main

from reference import hostlist
from reference.idset import IdSet
from reference.operations import run

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


BENCHES = [
    Bench(
        "hostlist.decode node[0-99999]",
        lambda: hostlist.decode("node[0-99999]"),
        target=0.060,
        others=_others_expand(),
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
    ),
    Bench(
        "idset decode 500,000 two-id ranges (0-1,3-4,...; to an IdSet)",
        lambda: IdSet.decode(PAIRS_TEXT),
        repeat=3,
    ),
    Bench(
        "idset.decode operation, 1,000,000 even ids (IdSet + list)",
        lambda: run("idset.decode", EVEN_TEXT),
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
