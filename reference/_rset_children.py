"""RFC 20 resource sets: what one execution target holds (:class:`Children`).

Part of :mod:`flux_conformance.reference.rset`.

A node's cores and GPUs are few and their ids small, and a fragmented R gives almost every rank
its own subset: thousands of distinct core lists, each decoded, combined with another and
encoded again.  So ids below :data:`SMALL_ID_LIMIT` are kept as an int bitset (bit ``i`` set
for id ``i``), where union, difference and intersection are one C operation each, and larger
ids fall back to an :class:`IdSet`.  A set is kept in one form only, chosen by its content, so
equal children are equal objects whatever way they were built.

Core lists arrive as RFC 22 text.  :func:`small_bits` reads the usual, canonical text of small
ids element by element from a table (``"5-7"`` -> its bits), checking the order of the elements
on the bits themselves; anything else (brackets, touching elements, large or malformed ids) is
left to the full idset parser, which also explains any error.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from flux_conformance.reference.idset import IdSet

__all__ = ["SMALL_ID_LIMIT", "Children", "bits_text", "small_bits"]

#: Core and GPU ids below this are kept as int bitsets (an int of at most 512 bytes).
SMALL_ID_LIMIT = 1 << 12

Ids = int | IdSet

# One element of an idset list, ids without leading zeros and below SMALL_ID_LIMIT (4 digits).
_ELEMENT = re.compile(r"(0|[1-9][0-9]{0,3})(?:-([1-9][0-9]{0,3}))?")

#: Element text -> its bits, and -> the bit of its lowest id; learnt as elements are met.
_BITS: dict[str, int] = {}
_LOWEST: dict[str, int] = {}
#: The tables stop learning past this many elements (every element of ids below 64 is 2,080).
_MAX_ELEMENTS = 1 << 16


def _learn(element: str) -> tuple[int, int] | None:
    """An element's bits and lowest bit, entered into the tables (None if not small and valid)."""
    match = _ELEMENT.fullmatch(element)
    if match is None:
        return None
    lo = int(match[1])
    hi = int(match[2]) if match[2] is not None else lo
    if hi >= SMALL_ID_LIMIT or (match[2] is not None and hi <= lo):
        return None
    if len(_BITS) >= _MAX_ELEMENTS:
        _BITS.clear()
        _LOWEST.clear()
    bits = _BITS[element] = (2 << hi) - (1 << lo)
    lowest = _LOWEST[element] = 1 << lo
    return bits, lowest


def small_bits(text: str) -> int | None:
    """The bitset of canonical RFC 22 ``text`` whose ids are all small, or None otherwise.

    None means "not decided here": the text may still be valid (bracketed, touching elements
    such as ``1,2``, large ids) or it may be malformed; the caller hands it to the parser.
    """
    parts = text.split(",")
    try:
        values = list(map(_BITS.__getitem__, parts))
        lowest: Iterable[int] = map(_LOWEST.__getitem__, parts[1:])
    except KeyError:
        entries = list(map(_learn, parts))
        if None in entries:
            return None
        values = [entry[0] for entry in entries]  # type: ignore[index]
        lowest = (entry[1] for entry in entries[1:])  # type: ignore[index]
    # Canonical text ascends with a gap of at least one id between neighbouring elements:
    # each element's lowest bit lies above twice the previous element (twice, because the bit
    # just above the previous ids must stay clear).  Pairs of neighbours are enough: each
    # element then starts at least two ids above the top of all the elements before it.
    if not all(map(operator.lt, map(operator.add, values, values), lowest)):
        return None
    return sum(values)


class _Pieces(dict[int, str]):
    """The text one byte of a bitset adds to its RFC 22 text, by what starts and ends there.

    The table of byte ``p`` (ids ``8p`` to ``8p + 7``) is keyed by ``starts << 8 | ends``:
    the byte's bits that begin a run of ids and those that end one.  Each start adds
    ``",lo"``, each end of a run longer than one id ``"-hi"``; a text is the pieces of its
    bytes joined, less the first comma.  Entries are made when first asked for (at most 1,024
    per byte: the keys a byte and its two neighbouring bits allow).
    """

    __slots__ = ("base",)

    def __init__(self, base: int) -> None:
        super().__init__()
        self.base = base

    def __missing__(self, key: int) -> str:
        starts, ends = key >> 8, key & 0xFF
        out = []
        for bit in range(8):
            if starts >> bit & 1:
                out.append(f",{self.base + bit}")
            elif ends >> bit & 1:
                out.append(f"-{self.base + bit}")
        piece = self[key] = "".join(out)
        return piece


#: Bitsets of at most this many bits are written through the tables (a core or GPU list).
_TABLE_BITS = 1 << 10
_PIECES = [_Pieces(8 * byte) for byte in range(_TABLE_BITS // 8)]
_BYTE_HIGH = (256).__mul__


def bits_text(bits: int) -> str:
    """The canonical RFC 22 text of a bitset (``""`` for 0)."""
    size = bits.bit_length()
    if size > _TABLE_BITS:
        return _runs_text(bits)
    if not bits:
        return ""
    # One table look-up per byte, in C (about three times as fast as a step per run).
    size = (size + 7) >> 3
    starts = (bits & ~(bits << 1)).to_bytes(size, "little")
    ends = (bits & ~(bits >> 1)).to_bytes(size, "little")
    return "".join(map(_get, _PIECES, map(operator.or_, map(_BYTE_HIGH, starts), ends)))[1:]


def _runs_text(bits: int) -> str:
    """:func:`bits_text` of any bitset, one step per run."""
    out: list[str] = []
    while bits:
        low = bits & -bits
        lo = low.bit_length() - 1
        bits += low  # clears the run starting at lo and sets the bit just above it
        above = bits & -bits
        hi = above.bit_length() - 2
        bits -= above
        out.append(str(lo) if lo == hi else f"{lo}-{hi}")
    return ",".join(out)


_get = operator.getitem


def _pack(ids: Ids) -> Ids:
    """The one form a set is kept in: bits when every id is small, else the IdSet."""
    if isinstance(ids, int):
        return ids if ids.bit_length() <= SMALL_ID_LIMIT else IdSet.from_bits(ids)
    last = ids.last()
    if last is None:
        return 0
    return ids.to_bits() if last < SMALL_ID_LIMIT else ids


def _as_idset(ids: Ids) -> IdSet:
    return IdSet.from_bits(ids) if isinstance(ids, int) else ids


def _text(ids: Ids) -> str:
    return bits_text(ids) if isinstance(ids, int) else ids.encode()


@dataclass(frozen=True, slots=True)
class Children:
    """The compute resources one execution target holds: logical core and GPU ids.

    Built from two :class:`IdSet` (or int bitsets); :attr:`cores` and :attr:`gpus` give them
    back as IdSets whatever form they are kept in.
    """

    core_ids: Ids
    gpu_ids: Ids
    # The canonical texts, once known: [core, gpu].
    _texts: list[str | None] = field(
        default_factory=lambda: [None, None], init=False, compare=False, repr=False
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "core_ids", _pack(self.core_ids))
        object.__setattr__(self, "gpu_ids", _pack(self.gpu_ids))

    @staticmethod
    def _small(cores: int, gpus: int, texts: list[str | None]) -> Children:
        """Children of bits already below the limit (and their texts, where known)."""
        # (Set through the slots themselves: a fragmented R makes one per rank, and this is
        # a third of the cost of object.__setattr__ by name.)
        made = _new_children(Children)
        _set_cores(made, cores)
        _set_gpus(made, gpus)
        _set_texts(made, texts)
        return made

    @property
    def cores(self) -> IdSet:
        """The core ids."""
        return _as_idset(self.core_ids)

    @property
    def gpus(self) -> IdSet:
        """The GPU ids."""
        return _as_idset(self.gpu_ids)

    @property
    def empty(self) -> bool:
        """Whether the target holds neither cores nor GPUs."""
        return not self.core_ids and not self.gpu_ids

    def core_text(self) -> str:
        """The canonical RFC 22 text of the cores (computed once)."""
        text = self._texts[0]
        if text is None:
            text = self._texts[0] = _text(self.core_ids)
        return text

    def gpu_text(self) -> str:
        """The canonical RFC 22 text of the GPUs (computed once)."""
        text = self._texts[1]
        if text is None:
            text = self._texts[1] = _text(self.gpu_ids)
        return text

    def to_json(self) -> dict[str, str]:
        """Return the ``children`` object of an R_lite entry (``gpu`` only when there are GPUs)."""
        out = {"core": self.core_text()}
        if self.gpu_ids:
            out["gpu"] = self.gpu_text()
        return out

    def overlaps(self, other: Children) -> bool:
        """Whether the two share a core id or a GPU id."""
        both = self.intersection(other)
        return bool(both.core_ids) or bool(both.gpu_ids)

    def union(self, other: Children) -> Children:
        """The cores and GPUs of either."""
        return self._combined(other, operator.or_, IdSet.union)

    def difference(self, other: Children) -> Children:
        """The cores and GPUs of this one that ``other`` lacks."""
        return self._combined(other, _and_not, IdSet.difference)

    def intersection(self, other: Children) -> Children:
        """The cores and GPUs both hold."""
        return self._combined(other, operator.and_, IdSet.intersection)

    def _combined(
        self,
        other: Children,
        on_bits: Callable[[int, int], int],
        on_sets: Callable[[IdSet, IdSet], IdSet],
    ) -> Children:
        """Cores with cores and GPUs with GPUs: as bitsets when all four are, else as IdSets."""
        a, b, c, d = self.core_ids, other.core_ids, self.gpu_ids, other.gpu_ids
        if isinstance(a, int) and isinstance(b, int) and isinstance(c, int) and isinstance(d, int):
            return Children._small(on_bits(a, b), on_bits(c, d), [None, None])
        return Children(on_sets(self.cores, other.cores), on_sets(self.gpus, other.gpus))


def _and_not(x: int, y: int) -> int:
    return x & ~y


def _slot_setter(name: str) -> Callable[[Children, object], None]:
    """The setter of one of Children's slots (its member descriptor's ``__set__``)."""
    setter: Callable[[Children, object], None] = vars(Children)[name].__set__
    return setter


_new_children = object.__new__
_set_cores = _slot_setter("core_ids")
_set_gpus = _slot_setter("gpu_ids")
_set_texts = _slot_setter("_texts")
