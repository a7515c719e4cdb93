"""RFC 22 idsets: compact strings for sets of non-negative integer ids (``1-3,5,42``).

An :class:`IdSet` is an immutable set of ids kept as a sorted tuple of disjoint, non-adjacent,
inclusive ``(lo, hi)`` intervals; it is never expanded id by id unless iterated, so
``0-18446744073709551615`` costs two integers.

Decoding is strict: it follows RFC 22 (Implementation) and the suite's readings
(docs: docs/readings.md, "RFC 22 idsets"):

* ids are decimal, without leading zeros (``0`` itself is fine), strictly ascending and unique,
  so ``3,1``, ``1,1`` and ``1-3,2`` are refused;
* one optional pair of brackets may surround the whole string; ``""`` and ``[]`` are the empty
  set;
* a degenerate range such as ``3-3`` is refused (the text is open; the reference follows
  flux-core), as are empty elements (``1,,2``, ``,1``, ``1,``) and any character other than
  digits, ``,``, ``-``, ``[`` and ``]`` (whitespace included).

Every refusal is a :class:`~reference.errors.ParseError` (category ``syntax``) whose span points
at the offending text.

Limits (see :mod:`reference._limits`), all checked before anything is expanded:

* input text longer than 64 MiB -> ``limit``;
* an id above 2**64 - 1 -> ``limit`` (never wrapped: ids are Python integers);
* the ``idset.decode`` operation returns a list, so a set of more than 4,000,000 ids
  (``0-99999999999999``) -> ``limit``; the :class:`IdSet` itself has no size limit.

Encoding produces the canonical form: every run of two or more consecutive ids becomes
``lo-hi``, single ids stay alone, no brackets unless asked for.

The text itself (the parser, its bulk scanners and the encoder) is handled by the private
:mod:`reference._idset_codec`; this module keeps the set and its algebra.
"""

from __future__ import annotations

import functools
import operator
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain, islice
from typing import Any

from flux_conformance.reference._idset_codec import (
    Interval,
    bits_of_ends,
    coalesce,
    decode_ids,
    encode_intervals,
    ends_of_bits,
    is_canonical,
    parse,
)
from flux_conformance.reference._limits import MAX_ID, check_expansion
from flux_conformance.reference._speed import gc_paused
from flux_conformance.reference.errors import InvalidError, LimitError

__all__ = ["OPERATIONS", "IdSet", "decode", "encode"]


@dataclass(frozen=True)
class IdSet:
    """An immutable set of non-negative integer ids, stored as sorted inclusive intervals.

    ``intervals`` is canonical: ascending, each ``lo <= hi``, and no two intervals overlap or
    touch (``(1, 2), (3, 4)`` is written ``(1, 4)``).  The constructor checks that; use
    :meth:`from_intervals` to normalise arbitrary intervals.
    """

    intervals: tuple[Interval, ...] = ()
    # The text the set was decoded from, until encode() finds it canonical (then the
    # canonical text, kept): a set read from canonical text encodes without work.
    _text: str | None = field(default=None, init=False, compare=False, repr=False)
    _canonical: bool = field(default=False, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        previous = -2
        for pair in self.intervals:
            if not (isinstance(pair, tuple) and len(pair) == 2):
                raise InvalidError(f"an interval must be a (lo, hi) pair, not {pair!r}")
            lo, hi = pair
            _check_id(lo)
            _check_id(hi)
            if lo > hi or lo <= previous + 1:
                raise InvalidError(
                    "intervals must ascend, be disjoint and not touch; "
                    "use IdSet.from_intervals() to normalise them"
                )
            previous = hi

    @classmethod
    def _trusted(cls, intervals: tuple[Interval, ...]) -> IdSet:
        # Internal results are canonical by construction; skip the O(n) re-check.
        obj = object.__new__(cls)
        object.__setattr__(obj, "intervals", intervals)
        return obj

    # -- constructors -------------------------------------------------------------------------

    @classmethod
    def decode(cls, text: str) -> IdSet:
        """Strictly decode an RFC 22 idset string (``ParseError``/``LimitError`` on bad input)."""
        intervals = parse(text)
        if not intervals:
            return _EMPTY
        ids = cls._trusted(intervals)
        object.__setattr__(ids, "_text", text)
        return ids

    @classmethod
    def from_ids(cls, ids: Iterable[int]) -> IdSet:
        """Return the set of ``ids`` (any order, duplicates allowed).

        Raises :class:`InvalidError` for anything but a non-negative ``int`` and
        :class:`LimitError` for an id above 2**64 - 1.
        """
        with gc_paused():
            return cls._from_ids(ids)

    @classmethod
    def _from_ids(cls, ids: Iterable[int]) -> IdSet:
        values = list(ids)
        if not all(type(value) is int for value in values):
            for value in values:
                _check_id(value)
            # int subclasses (IntEnum...) would print as their names: keep plain ints.
            values = [int(value) for value in values]
        # Input is often sorted already; checking that in C is far cheaper than set + sort.
        if all(map(operator.lt, values, islice(values, 1, None))):
            ordered = values
        else:
            ordered = sorted(set(values))
        if not ordered:
            return _EMPTY
        _check_id(ordered[0])
        _check_id(ordered[-1])
        out: list[Interval] = []
        lo = hi = ordered[0]
        for value in ordered[1:]:
            if value == hi + 1:
                hi = value
            else:
                out.append((lo, hi))
                lo = hi = value
        out.append((lo, hi))
        return cls._trusted(tuple(out))

    @classmethod
    def from_intervals(cls, intervals: Iterable[Interval]) -> IdSet:
        """Return the union of inclusive ``(lo, hi)`` intervals (any order, overlaps allowed)."""
        pairs = []
        for pair in intervals:
            if not (isinstance(pair, tuple | list) and len(pair) == 2):
                raise InvalidError(f"an interval must be a (lo, hi) pair, not {pair!r}")
            lo, hi = pair
            _check_id(lo)
            _check_id(hi)
            if lo > hi:
                raise InvalidError(f"interval ({lo}, {hi}) has lo > hi")
            pairs.append((lo, hi))
        pairs.sort()
        return cls._trusted(coalesce(pairs))

    @classmethod
    def from_bits(cls, bits: int) -> IdSet:
        """Return the set of the positions of the bits set in ``bits`` (a non-negative int)."""
        if type(bits) is not int or bits < 0:
            raise InvalidError(f"a bitset must be a non-negative int, not {bits!r}")
        if bits.bit_length() > MAX_ID + 1:
            raise LimitError(f"a bitset may hold ids up to {MAX_ID}")
        return _from_bits(bits)

    def to_bits(self) -> int:
        """Return the set as an int whose bit ``i`` is set when id ``i`` is in the set.

        Meant for sets of small ids (ranks of one R, cores of one node), where ``&``, ``|``
        and ``& ~`` on ints do in C what interval merges do in Python; the int holds as many
        bits as the largest id, so never call it on a set reaching towards 2**64.
        """
        return _to_bits(self.intervals) if self.intervals else 0

    # -- encoding -----------------------------------------------------------------------------

    def encode(self, *, brackets: bool = False) -> str:
        """Return the canonical RFC 22 string: runs of 2+ ids as ``lo-hi``; brackets if asked."""
        if brackets:
            return encode_intervals(self.intervals, brackets=True)
        text = self._text
        if text is not None and self._canonical:
            return text
        if text is None or not is_canonical(text, len(self.intervals)):
            text = encode_intervals(self.intervals)
        object.__setattr__(self, "_text", text)
        object.__setattr__(self, "_canonical", True)
        return text

    def __str__(self) -> str:
        return self.encode()

    def __repr__(self) -> str:
        return f"IdSet.decode({self.encode()!r})"

    # -- queries ------------------------------------------------------------------------------

    @property
    def size(self) -> int:
        """The number of ids (unbounded, unlike ``len()`` which Python caps at sys.maxsize)."""
        # Sums over C-level maps: a million intervals would cost a Python step each.
        intervals = self.intervals
        return sum(map(_upper, intervals)) - sum(map(_lower, intervals)) + len(intervals)

    def __len__(self) -> int:
        return self.size

    def __bool__(self) -> bool:
        return bool(self.intervals)

    def __iter__(self) -> Iterator[int]:
        for lo, hi in self.intervals:
            if lo == hi:
                yield lo
            else:
                yield from range(lo, hi + 1)

    def to_list(self) -> list[int]:
        """Return every id, ascending, as a list (faster than ``list(ids)``)."""
        intervals = self.intervals
        los = list(map(_lower, intervals))
        if all(map(operator.eq, los, map(_upper, intervals))):
            return los  # single ids only: the lower ends are the list
        ends = map(_succ, map(_upper, intervals))
        return list(chain.from_iterable(map(range, los, ends)))

    def __contains__(self, item: object) -> bool:
        if type(item) is not int:
            return False
        index = bisect_right(self.intervals, item, key=_lower) - 1
        return index >= 0 and self.intervals[index][1] >= item

    def first(self) -> int | None:
        """Return the smallest id, or ``None`` for the empty set."""
        return self.intervals[0][0] if self.intervals else None

    def last(self) -> int | None:
        """Return the largest id, or ``None`` for the empty set."""
        return self.intervals[-1][1] if self.intervals else None

    # -- set algebra (linear merges over the interval lists) ----------------------------------

    def union(self, other: IdSet) -> IdSet:
        """Ids in either set."""
        a, b = self.intervals, other.intervals
        if not a or not b:
            return self if a else other
        # Two sorted runs: timsort merges them in C, faster than heapq.merge's generator.
        return IdSet._trusted(coalesce(sorted(a + b)))

    def intersection(self, other: IdSet) -> IdSet:
        """Ids in both sets."""
        a, b = self.intervals, other.intervals
        if not a or not b:
            return _EMPTY
        if len(b) == 1 or len(a) == 1:
            # One span (all the ranks of an R, often): cut the other set's ends off.
            (lo, hi), whole = (b[0], self) if len(b) == 1 else (a[0], other)
            many = whole.intervals
            if lo <= many[0][0] and many[-1][1] <= hi:
                return whole  # nothing to cut (and the set keeps the text it came from)
            return _clip(many, lo, hi)
        out: list[Interval] = []
        i = j = 0
        while i < len(a) and j < len(b):
            lo = max(a[i][0], b[j][0])
            hi = min(a[i][1], b[j][1])
            if lo <= hi:
                out.append((lo, hi))
            if a[i][1] < b[j][1]:
                i += 1
            else:
                j += 1
        return IdSet._trusted(tuple(out))

    def difference(self, other: IdSet) -> IdSet:
        """Ids in this set and not in ``other``."""
        a, b = self.intervals, other.intervals
        if not a or not b:
            return self
        out: list[Interval] = []
        j = 0
        for lo, hi in self.intervals:
            start = lo
            # Skip intervals of ``other`` that end before this one starts.
            while j < len(b) and b[j][1] < start:
                j += 1
            k = j
            while k < len(b) and b[k][0] <= hi:
                if b[k][0] > start:
                    out.append((start, b[k][0] - 1))
                start = max(start, b[k][1] + 1)
                if start > hi:
                    break
                k += 1
            if start <= hi:
                out.append((start, hi))
        return IdSet._trusted(tuple(out))

    def isdisjoint(self, other: IdSet) -> bool:
        """Whether the sets share no id."""
        return not self.intersection(other)

    def issubset(self, other: IdSet) -> bool:
        """Whether every id of this set is in ``other``."""
        return other.subset_test()(self)

    def subset_test(self) -> Callable[[IdSet], bool]:
        """Return a function telling whether a set lies inside this one.

        Checking many sets against one (the properties of an R against its ranks) builds the
        search table once.
        """
        b = self.intervals
        if len(b) <= 1:
            lo, hi = b[0] if b else (0, -1)
            return lambda ids: (
                not ids.intervals or (lo <= ids.intervals[0][0] and ids.intervals[-1][1] <= hi)
            )
        # Flattened, ``b`` is the ascending list lo0, hi0 + 1, lo1, hi1 + 1, ...: an id is in
        # ``b`` when an odd number of those bounds are <= it, and an interval of ``a`` is
        # inside ``b`` when its ends fall after the same bound.  bisect over map runs in C.
        bounds = list(
            chain.from_iterable(zip(map(_lower, b), map(_succ, map(_upper, b)), strict=True))
        )
        find = functools.partial(bisect_right, bounds)

        def test(ids: IdSet) -> bool:
            a = ids.intervals
            firsts = list(map(find, map(_lower, a)))
            lasts = map(find, map(_upper, a))
            return all(map((1).__and__, firsts)) and all(map(operator.eq, firsts, lasts))

        return test

    def __or__(self, other: object) -> IdSet:
        return self.union(other) if isinstance(other, IdSet) else NotImplemented

    def __and__(self, other: object) -> IdSet:
        return self.intersection(other) if isinstance(other, IdSet) else NotImplemented

    def __sub__(self, other: object) -> IdSet:
        return self.difference(other) if isinstance(other, IdSet) else NotImplemented

    def __le__(self, other: object) -> bool:
        return self.issubset(other) if isinstance(other, IdSet) else NotImplemented


# The ends of an interval, as C callables: map() over them never enters Python code.
_lower: Callable[[Interval], int] = operator.itemgetter(0)
_upper: Callable[[Interval], int] = operator.itemgetter(1)


_succ = (1).__add__


def _to_bits(intervals: tuple[Interval, ...]) -> int:
    """The set as a Python int whose bit ``i`` is set when id ``i`` is in it."""
    return bits_of_ends(list(map(_lower, intervals)), list(map(_upper, intervals)))


def _from_bits(bits: int) -> IdSet:
    """The set whose ids are the bits set in ``bits`` (the inverse of :func:`_to_bits`)."""
    if not bits:
        return _EMPTY
    los, his = ends_of_bits(bits)
    return IdSet._trusted(tuple(zip(los, his, strict=True)))


def _clip(intervals: tuple[Interval, ...], lo: int, hi: int) -> IdSet:
    """The part of ``intervals`` inside ``lo..hi`` (found by bisection, not by a walk)."""
    first = bisect_left(intervals, lo, key=_upper)
    stop = bisect_right(intervals, hi, key=_lower)
    if first >= stop:
        return _EMPTY
    if first == 0 and stop == len(intervals) and intervals[0][0] >= lo and intervals[-1][1] <= hi:
        return IdSet._trusted(intervals)
    part = list(intervals[first:stop])
    part[0] = (max(part[0][0], lo), part[0][1])
    part[-1] = (part[-1][0], min(part[-1][1], hi))
    return IdSet._trusted(tuple(part))


def _check_id(value: object) -> None:
    """Refuse anything but an ``int`` (``bool`` excluded) in ``0 .. MAX_ID``."""
    if type(value) is not int:
        if isinstance(value, int) and not isinstance(value, bool):
            value = int(value)
        else:
            raise InvalidError(f"an id must be a non-negative integer, not {value!r}")
    if value < 0:
        raise InvalidError(f"an id must be non-negative, not {value}")
    if value > MAX_ID:
        raise LimitError(f"id {value} exceeds the limit {MAX_ID}")


_EMPTY = IdSet._trusted(())


# -- module functions and operations ------------------------------------------------------------


def decode(text: str) -> IdSet:
    """Strictly decode an RFC 22 idset string; see :meth:`IdSet.decode`."""
    return IdSet.decode(text)


def encode(ids: Iterable[int]) -> str:
    """Return the canonical RFC 22 string for ``ids`` (any order, duplicates ignored)."""
    return IdSet.from_ids(ids).encode()


def _op_decode(value: Any, *, edition: str) -> list[int]:
    del edition
    if not isinstance(value, str):
        raise InvalidError(f"idset.decode takes a string, not {type(value).__name__}")
    listed = decode_ids(value)
    if listed is not None:
        # A long list of single ids: the list json read is the answer, no IdSet is built.
        check_expansion(len(listed), "idset")
        return listed
    ids = IdSet.decode(value)
    check_expansion(ids.size, "idset")
    return ids.to_list()


def _op_encode(value: Any, *, edition: str) -> str:
    del edition
    if not isinstance(value, list):
        raise InvalidError(f"idset.encode takes a list of ids, not {type(value).__name__}")
    return encode(value)


OPERATIONS: dict[str, Callable[..., Any]] = {
    "idset.decode": _op_decode,
    "idset.encode": _op_encode,
}
