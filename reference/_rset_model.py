"""RFC 20 resource sets: the model (:class:`ResourceSet`, :class:`Children`) and its sweeps.

Part of :mod:`flux_conformance.reference.rset`, which documents the readings and the API.
"""

from __future__ import annotations

import bisect
import collections
import functools
import itertools
import operator
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress
from typing import Any, TypeVar

from flux_conformance.reference import hostlist
from flux_conformance.reference._idset_codec import bit_flags, encode_bits, is_canonical
from flux_conformance.reference._rset_children import Children
from flux_conformance.reference._speed import gc_paused
from flux_conformance.reference.idset import IdSet

__all__ = [
    "BITSET_LIMIT",
    "CONTENT",
    "ILLEGAL_PROPERTY_CHARACTERS",
    "_EMPTY",
    "_HOSTNAME_CHARACTERS",
    "Children",
    "Number",
    "Path",
    "PropertySets",
    "ResourceSet",
    "Run",
    "_run_starts",
    "_segments",
    "_succ",
    "bits_pay",
    "property_name_problem",
    "ranks_of",
]

#: Characters RFC 20 ("Execution", properties) forbids in a property name.
ILLEGAL_PROPERTY_CHARACTERS = frozenset("!&'\"^`|()")

_EMPTY = IdSet.from_intervals(())

#: What RFC 29 allows in a host name: printable ASCII except space, brackets and comma.
_HOSTNAME_CHARACTERS = frozenset(chr(c) for c in range(0x21, 0x7F)) - frozenset("[],")

#: Sets of ranks below this are handled as int bitsets (an int of this many bits is 512 KiB),
#: so that set operations on scattered ranks are single C operations.
BITSET_LIMIT = 1 << 22
#: ...when they are dense enough: a bitset costs work in proportion to the largest rank, an
#: interval list in proportion to its intervals (each a Python step).  Ranks below
#: BITSET_FLOOR always qualify (a few microseconds an operation); above it, the largest rank
#: may be at most RANKS_PER_BIT times the number of ranks (measured: when one number in 32
#: is a rank, decoding, cutting and matching 64 properties cost about the same either way).
BITSET_FLOOR = 1 << 16
RANKS_PER_BIT = 32


def bits_pay(ranks: IdSet) -> bool:
    """Whether sets of these ranks (an R's) are handled as int bitsets rather than intervals.

    A few hundred ranks numbered in the millions would make every property a bitset of
    millions of bits; such sparse sets stay interval lists.
    """
    last = ranks.last()
    if last is None or last < BITSET_FLOOR:
        return True
    return last < BITSET_LIMIT and last < RANKS_PER_BIT * ranks.size


Path = tuple[str | int, ...]
Number = int | float
K = TypeVar("K")


def property_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be an RFC 20 property name, or ``None`` when it can."""
    if not name:
        return "a property name may not be empty"
    bad = sorted({ch for ch in name if ch in ILLEGAL_PROPERTY_CHARACTERS})
    if bad:
        return f"property name {name!r} contains {' '.join(bad)}, which RFC 20 forbids"
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        # Lone surrogates survive JSON decoding but are not UTF-8.
        return f"property name {name!r} is not valid UTF-8"
    return None


class PropertySets(Mapping[str, IdSet]):
    """Property name -> its ranks, where some sets are held as int bitsets until asked for.

    Reading scattered properties and merging them in set operations work on bitsets; most
    results are only written back out, so a set is decoded (once) when it is looked up, and
    :meth:`text` writes a set without decoding it when the text it was read from is canonical.
    """

    def __init__(
        self, sets: Mapping[str, IdSet | None], bits: Mapping[str, int], texts: Mapping[str, str]
    ) -> None:
        # ``sets`` names every property in order; None where only ``bits`` holds the set.
        self._sets = dict(sets)
        self._bits = bits
        self._texts = texts

    def __getitem__(self, name: str) -> IdSet:
        ids = self._sets[name]
        if ids is None:
            ids = self._sets[name] = IdSet.from_bits(self._bits[name])
        return ids

    def __contains__(self, name: object) -> bool:
        return name in self._sets

    def __iter__(self) -> Iterator[str]:
        return iter(self._sets)

    def __len__(self) -> int:
        return len(self._sets)

    def bits(self, name: str) -> int | None:
        """The bitset of ``name`` if it is held as one, else None."""
        return self._bits.get(name)

    def source_text(self, name: str) -> str | None:
        """The text ``name``'s set was read from, if it was (not necessarily canonical)."""
        return self._texts.get(name)

    def text(self, name: str) -> str:
        """The canonical RFC 22 text of ``name``'s ranks."""
        text = self._texts.get(name)
        if self._sets[name] is None and text is not None:
            # (An interval starts at each bit set whose lower neighbour is clear.)
            bits = self._bits[name]
            if is_canonical(text, (bits & ~(bits << 1)).bit_count()):
                return text
        ids = self._sets[name]
        return encode_bits(self._bits[name]) if ids is None else ids.encode()


#: One run: the inclusive rank interval ``lo..hi`` whose ranks all hold ``children``.
Run = tuple[int, int, Children]


@dataclass(frozen=True)
class ResourceSet:
    """A decoded R: rank runs, host names in rank order, properties, validity window.

    ``runs`` are sorted, disjoint and maximal (adjacent runs differ in children).
    ``hostnames[i]`` is the host of the i-th smallest rank.  ``properties`` maps each name to
    the non-empty set of ranks it applies to (always a subset of :attr:`ranks`).
    """

    runs: tuple[Run, ...]
    hostnames: tuple[str, ...]
    properties: Mapping[str, IdSet]
    starttime: Number | None = None
    expiration: Number | None = None
    _host_index: dict[str, int | list[int]] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )
    _ranks: list[IdSet] = field(default_factory=list, init=False, compare=False, repr=False)
    _bits: dict[str | None, int] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )

    @property
    def ranks(self) -> IdSet:
        """Every rank of the set (computed once)."""
        if not self._ranks:
            self._ranks.append(ranks_of(self.runs))
        return self._ranks[0]

    def __len__(self) -> int:
        return len(self.hostnames)

    def iter_ranks(self) -> Iterator[tuple[int, str, Children]]:
        """Each rank in ascending order with its host name and children."""
        index = 0
        for lo, hi, children in self.runs:
            for rank in range(lo, hi + 1):
                yield rank, self.hostnames[index], children
                index += 1

    def ranks_of_hosts(self, names: Iterable[str]) -> IdSet:
        """Return the ranks whose host name is one of ``names`` (index built on first use)."""
        index = self._host_index
        if not index and self.hostnames:
            ranks = itertools.chain.from_iterable(range(lo, hi + 1) for lo, hi, _ in self.runs)
            index.update(zip(self.hostnames, ranks, strict=True))
            if len(index) != len(self.hostnames):
                # Some host runs several ranks: map those hosts to every rank they run.
                repeated: dict[str, list[int]] = {}
                for host, rank in zip(self.hostnames, self.iter_rank_ids(), strict=True):
                    repeated.setdefault(host, []).append(rank)
                index.update({h: r for h, r in repeated.items() if len(r) > 1})
        found: list[int] = []
        for name in names:
            hit = index.get(name)
            if hit is None:
                continue
            if isinstance(hit, int):
                found.append(hit)
            else:
                found.extend(hit)
        return IdSet.from_ids(found)

    def iter_rank_ids(self) -> Iterator[int]:
        """Each rank in ascending order."""
        for lo, hi, _ in self.runs:
            yield from range(lo, hi + 1)

    @property
    def small(self) -> bool:
        """Whether sets of this set's ranks are handled as int bitsets (:func:`bits_pay`)."""
        return bits_pay(self.ranks)

    def rank_bits(self) -> int:
        """:attr:`ranks` as an int bitset (computed once; only for a :attr:`small` set)."""
        bits = self._bits.get(None)
        if bits is None:
            bits = self._bits[None] = self.ranks.to_bits()
        return bits

    def property_bits(self, name: str) -> int:
        """The ranks with property ``name`` as an int bitset (once; :attr:`small` sets only)."""
        bits = self._bits.get(name)
        if bits is None:
            held = self.held_bits(name)
            bits = self._bits[name] = self.property(name).to_bits() if held is None else held
        return bits

    def _keep_ranks(self, ranks: IdSet) -> ResourceSet:
        """Remember :attr:`ranks`, already computed from these runs by the reader."""
        if not self._ranks:
            self._ranks.append(ranks)
        return self

    def _keep_bits(self, bits: Mapping[str | None, int]) -> ResourceSet:
        """Remember bitsets already computed for this set (by reading or by a set operation)."""
        self._bits.update(bits)
        return self

    def property(self, name: str) -> IdSet:
        """Return the ranks that have property ``name`` (empty when none has it)."""
        return self.properties.get(name, _EMPTY)

    def positions(self, ids: IdSet) -> Iterator[int]:
        """The indexes (0 = the smallest rank) of ``ids``, which must all be ranks of the set."""
        # A run of ranks lo..hi sits at indexes start..start + hi - lo, and ids inside the set
        # are never split by a missing rank: each interval of ``ids`` maps to one index range.
        # Every step is a map() over C callables: properties hold thousands of intervals.
        intervals = ids.intervals
        los = list(map(_LOWER, intervals))
        spans = map(operator.sub, map(_succ, map(_UPPER, intervals)), los)
        spans_list = list(spans)
        ranks = self.ranks.intervals
        if len(ranks) == 1:
            firsts = list(map((-ranks[0][0]).__add__, los))
        else:
            run_los = [lo for lo, _, _ in self.runs]
            shift = [start - lo for start, lo in zip(_run_starts(self.runs), run_los, strict=True)]
            firsts = list(map(operator.add, los, map(shift.__getitem__, _run_of(run_los, los))))
        stops = map(operator.add, firsts, spans_list)
        return itertools.chain.from_iterable(map(range, firsts, stops))

    def to_ranks(self) -> list[dict[str, Any]]:
        """Return the decoded, per-rank form (see :func:`decode`)."""
        with gc_paused():
            return self._to_ranks()

    def _to_ranks(self) -> list[dict[str, Any]]:
        names = iter(self._property_names())
        hostnames = iter(self.hostnames)
        out: list[dict[str, Any]] = []
        for lo, hi, children in self.runs:
            cores = children.core_text()
            gpus = children.gpu_text()
            # (zip stops on the exhausted range before taking from the other two.)
            for rank, hostname, properties in zip(
                range(lo, hi + 1), hostnames, names, strict=False
            ):
                out.append(
                    {
                        "rank": rank,
                        "hostname": hostname,
                        "cores": cores,
                        "gpus": gpus,
                        "properties": list(properties),
                    }
                )
        return out

    def _property_names(self) -> Iterable[Iterable[str]]:
        """The sorted property names of each rank, in rank order (each copied by the caller)."""
        count = len(self.hostnames)
        names = sorted(self.properties)
        if not names:
            return itertools.repeat((), count)
        if sum(map(self._intervals_of, names)) * 2 < count:
            # Properties in wide blocks: sweep their segments, sharing one tuple per segment.
            out: list[tuple[str, ...]] = [()] * count
            layers = [(name, self.properties[name]) for name in names]
            for lo, hi, keys in _segments(layers):
                first = next(self.positions(IdSet(((lo, lo),))))
                out[first : first + hi - lo + 1] = [keys] * (hi - lo + 1)
            return out
        if sum(map(self._members_of, names)) * _CELLS_PER_MEMBER >= count * len(names):
            # Scattered properties on many ranks: a table of one byte per rank and property
            # (each property's column written by one slice assignment), then each rank's row
            # picks its names out in C.
            width = len(names)
            table = bytearray(count * width)
            for column, name in enumerate(names):
                table[column::width] = self._rank_flags(name)
            rows = map(
                table.__getitem__,
                map(slice, range(0, len(table), width), range(width, len(table) + width, width)),
            )
            return map(compress, itertools.repeat(names), rows)
        # Scattered properties on few ranks: append each name to the list of every rank that
        # has it, looping in C.
        lists: list[list[str]] = [[] for _ in self.hostnames]
        for name in names:
            holders = map(lists.__getitem__, self.positions(self.properties[name]))
            collections.deque(map(list.append, holders, itertools.repeat(name)), maxlen=0)
        return lists

    def _intervals_of(self, name: str) -> int:
        """How many intervals property ``name`` has (counted on its bits if it is held so)."""
        bits = self.held_bits(name)
        if bits is None:
            return len(self.properties[name].intervals)
        return (bits & ~(bits << 1)).bit_count()

    def _members_of(self, name: str) -> int:
        """How many ranks have property ``name``."""
        bits = self.held_bits(name)
        return self.properties[name].size if bits is None else bits.bit_count()

    def held_bits(self, name: str) -> int | None:
        """The bitset property ``name`` was read into from a long list, if it was."""
        props = self.properties
        return props.bits(name) if isinstance(props, PropertySets) else None

    def _rank_flags(self, name: str) -> bytes | bytearray:
        """Byte ``i`` is 1 where the ``i``-th smallest rank has property ``name``, else 0."""
        count = len(self.hostnames)
        bits = self.held_bits(name)
        if bits is None:
            scattered = bytearray(count)
            collections.deque(
                map(
                    scattered.__setitem__,
                    self.positions(self.properties[name]),
                    itertools.repeat(1),
                ),
                maxlen=0,
            )
            return scattered
        ranks = self.ranks.intervals
        if len(ranks) == 1:
            flags = bit_flags(bits >> ranks[0][0])
        else:
            flags = bytes(compress(bit_flags(bits), bit_flags(self.rank_bits())))
        return flags + bytes(count - len(flags))

    def to_json(self) -> dict[str, Any]:
        """Return an R document (version 1, execution only) describing this set."""
        with gc_paused():
            return self._to_json()

    def _to_json(self) -> dict[str, Any]:
        runs = self.runs
        if len(set(map(CONTENT, map(_CHILDREN, runs)))) == len(runs):
            # Every run holds children of its own (a fragmented set): an entry each, in rank
            # order, with no grouping (told in one C pass over the children's contents).
            r_lite = [
                {"rank": str(lo) if lo == hi else f"{lo}-{hi}", "children": children.to_json()}
                for lo, hi, children in runs
            ]
        else:
            groups: dict[Children, list[tuple[int, int]]] = {}
            for lo, hi, children in runs:
                groups.setdefault(children, []).append((lo, hi))
            # Runs are maximal, so each group's spans are already canonical (ascending, apart).
            r_lite = [
                {"rank": _encode_spans(spans), "children": children.to_json()}
                for children, spans in groups.items()
            ]
        execution: dict[str, Any] = {
            "R_lite": r_lite,
            "nodelist": [hostlist.encode(list(self.hostnames))] if self.hostnames else [],
        }
        if self.properties:
            props = self.properties
            text = props.text if isinstance(props, PropertySets) else _encoder(props)
            execution["properties"] = {name: text(name) for name in sorted(props)}
        if self.starttime is not None:
            execution["starttime"] = self.starttime
        if self.expiration is not None:
            execution["expiration"] = self.expiration
        return {"version": 1, "execution": execution}


def _encoder(props: Mapping[str, IdSet]) -> Callable[[str], str]:
    return lambda name: props[name].encode()


def ranks_of(runs: Iterable[Run]) -> IdSet:
    """The ranks of sorted, disjoint runs."""
    spans: list[tuple[int, int]] = []
    for lo, hi, _ in runs:
        if spans and spans[-1][1] == lo - 1:
            spans[-1] = (spans[-1][0], hi)
        else:
            spans.append((lo, hi))
    return IdSet(tuple(spans))


def _encode_spans(spans: list[tuple[int, int]]) -> str:
    """The RFC 22 string of spans already canonical (a fragmented R_lite entry has one)."""
    if len(spans) == 1:
        lo, hi = spans[0]
        return str(lo) if lo == hi else f"{lo}-{hi}"
    # The constructor checks that the spans ascend apart, which runs kept maximal guarantee.
    return IdSet(tuple(spans)).encode()


# ---------------------------------------------------------------------------------------------
# Interval sweeps: the one algorithm behind R_lite merging, properties and set operations.


def _segments(layers: Sequence[tuple[K, IdSet]]) -> list[tuple[int, int, tuple[K, ...]]]:
    """Split the union of the layers' sets into maximal segments of constant membership.

    Returns ``(lo, hi, keys)`` for each segment, ascending, where ``keys`` are the layers (in
    the order given) whose set holds every id of ``lo..hi``.  Work is proportional to the
    number of intervals, never to the number of ids.
    """
    events: list[tuple[int, int, int]] = []  # (position, +1 start / -1 stop, layer index)
    for index, (_key, ids) in enumerate(layers):
        for lo, hi in ids.intervals:
            events.append((lo, 1, index))
            events.append((hi + 1, -1, index))
    if not events:
        return []
    events.sort()
    active: set[int] = set()
    out: list[tuple[int, int, tuple[K, ...]]] = []
    position = events[0][0]
    i = 0
    while i < len(events):
        here = events[i][0]
        if active and here > position:
            keys = tuple(layers[k][0] for k in sorted(active))
            if out and out[-1][1] == position - 1 and out[-1][2] == keys:
                out[-1] = (out[-1][0], here - 1, keys)
            else:
                out.append((position, here - 1, keys))
        while i < len(events) and events[i][0] == here:
            _, delta, layer = events[i]
            if delta > 0:
                active.add(layer)
            else:
                active.discard(layer)
            i += 1
        position = here
    return out


_succ = (1).__add__
#: A table of one byte per rank and property pays when at least one cell in this many is
#: set: filling a cell is a C step, appending a name to a rank's list a Python call.
_CELLS_PER_MEMBER = 16
_LOWER: Callable[[tuple[int, int]], int] = operator.itemgetter(0)
_UPPER: Callable[[tuple[int, int]], int] = operator.itemgetter(1)
_CHILDREN: Callable[[Run], Children] = operator.itemgetter(2)
#: What a :class:`Children` compares and hashes by, as a tuple made in C.
CONTENT: Callable[[Children], tuple[object, object]] = operator.attrgetter("core_ids", "gpu_ids")


def _run_of(run_los: list[int], ranks: list[int]) -> Iterator[int]:
    """For each rank (each inside some run), the index of its run among ``run_los``."""
    return map((-1).__add__, map(functools.partial(bisect.bisect_right, run_los), ranks))


def _run_starts(runs: Sequence[Run]) -> list[int]:
    starts: list[int] = []
    total = 0
    for lo, hi, _ in runs:
        starts.append(total)
        total += hi - lo + 1
    return starts
