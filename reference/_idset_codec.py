"""The RFC 22 text codec behind :mod:`reference.idset`: idset strings to intervals and back.

Private: :mod:`reference.idset` wraps what :func:`parse` returns in an ``IdSet`` and is the
only public interface.  Intervals here are plain ``(lo, hi)`` tuples, inclusive, ascending,
disjoint and not touching (the canonical form ``IdSet`` keeps).

Grammar (RFC 22, Implementation, with the readings)::

    idset   = "[" list "]" | list
    list    = [ element { "," element } ]
    element = id [ "-" id ]
    id      = "0" | nonzero { digit }

The language is flat and idsets of a million ids are ordinary, so the rules slice the text
with ``str.split``/``str.find`` (C speed) instead of pulling one token object per character;
each rule is still one function, and every error carries the source and the span it is about.
In front of the rules sit bulk scanners for well-formed text (:func:`_scan_short` for short
lists, :func:`_scan_bulk` and :func:`_scan_ids` for long ones): they decide whole lists with a
few C-level passes and return ``None`` on anything unusual, and the rules then decode the text
element by element or report the exact error.  A scanner never accepts what the rules refuse.
"""

from __future__ import annotations

import json
import operator
import re
from collections import deque
from collections.abc import Iterable
from itertools import compress, islice, repeat

from flux_conformance.reference._limits import MAX_ID, MAX_ID_DIGITS, check_text_length
from flux_conformance.reference._speed import gc_paused
from flux_conformance.reference.errors import LimitError, ParseError

__all__ = [
    "Interval",
    "bit_flags",
    "bits_of_ends",
    "coalesce",
    "decode_bits",
    "decode_ids",
    "encode_bits",
    "encode_intervals",
    "ends_of_bits",
    "is_canonical",
    "parse",
    "scan_ends",
]

Interval = tuple[int, int]

# The whole alphabet of RFC 22 (Implementation); anything else is refused up front, which
# also keeps int() from accepting what it would (spaces, underscores, non-ASCII digits).
_FOREIGN_CHAR = re.compile(r"[^0-9,\-\[\]]")
# A text free of these is digits and commas only: at most a list of single ids.
_NOT_SINGLE_IDS = re.compile(r"[^0-9,]")
# What is left of an unbracketed list (perhaps malformed) once these are deleted is "".
_LIST_BODY = str.maketrans("", "", "0123456789,-")
_UPPER_END = re.compile(r"-[0-9]+")
# Ids of 1 to 19 digits without leading zeros (all below MAX_ID), only the first may be 0.
_CANONICAL = re.compile(
    r"(?:0|[1-9][0-9]{0,18})(?:-[1-9][0-9]{0,18})?(?:,[1-9][0-9]{0,18}(?:-[1-9][0-9]{0,18})?)*"
)
#: Lists shorter than this are decoded by :func:`_scan_short`, longer ones by
#: :func:`_scan_bulk`, whose fixed cost only pays off over many elements.
_SHORT_TEXT = 512
_MAX_SHORT_DIGITS = 20
#: Texts shorter than this are parsed without pausing the garbage collector: pausing costs
#: more than the few collections so few intervals could trigger.
_LONG_TEXT = 4096

_succ = (1).__add__


def fail(text: str, reason: str, start: int, end: int) -> ParseError:
    """A syntax error about ``text[start:end]`` (at least one character)."""
    return ParseError(reason, source=text, span=(start, max(end, start + 1)))


def coalesce(pairs: Iterable[Interval]) -> tuple[Interval, ...]:
    """Merge sorted (by lo) intervals that overlap or touch."""
    out: list[Interval] = []
    for lo, hi in pairs:
        if out and lo <= out[-1][1] + 1:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return tuple(out)


def encode_intervals(intervals: Iterable[Interval], *, brackets: bool = False) -> str:
    """The canonical RFC 22 string: runs of 2+ ids as ``lo-hi``; brackets if asked."""
    body = ",".join([str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in intervals])
    return f"[{body}]" if brackets else body


def decode_ids(text: str) -> list[int] | None:
    """The ids of a long list of single ids, ascending, or None for any other text.

    The ``idset.decode`` operation returns a list: for the commonest long idset (scattered
    single ranks) the ids json reads are that list already, and no interval is ever built.
    Any other text (short, bracketed, with ranges, or malformed) returns None, and the caller
    decodes it in full.
    """
    if len(text) < _SHORT_TEXT:
        return None
    check_text_length(text, "idset string")
    if _NOT_SINGLE_IDS.search(text) is not None:
        return None
    return _scan_ids(text)


def parse(text: str) -> tuple[Interval, ...]:
    """Parse ``idset = "[" list "]" | list`` into canonical intervals."""
    if 0 < len(text) < _SHORT_TEXT:
        # Most idsets are short (a node's cores, one rank) and canonical: one pattern
        # match decides, before the general checks below.
        quick = _scan_short(text)
        if quick is not None:
            return quick
    check_text_length(text, "idset string")
    foreign = _FOREIGN_CHAR.search(text)
    if foreign is not None:
        at = foreign.start()
        raise fail(text, f"character {text[at]!r} is not allowed in an idset", at, at + 1)
    start, end = 0, len(text)
    if text.startswith("["):
        if len(text) < 2 or not text.endswith("]"):
            raise fail(text, "'[' is not closed by a final ']'", 0, 1)
        start, end = 1, end - 1
    for bracket in "[]":
        at = text.find(bracket, start, end)
        if at >= 0:
            raise fail(text, "brackets may only surround the whole idset, once", at, at + 1)
    if end - start < _LONG_TEXT:
        return _parse_list(text, start, end)
    with gc_paused():
        return _parse_list(text, start, end)


def _parse_list(text: str, start: int, end: int) -> tuple[Interval, ...]:
    """Parse ``list = [ element { "," element } ]``, ids strictly ascending."""
    if start == end:
        return ()
    body = text[start:end]
    quick = _scan_short(body) if len(body) < _SHORT_TEXT else _scan_bulk(body)
    if quick is not None:
        return quick
    elements: list[Interval] = []
    previous = -1
    # Where the current piece starts, kept as we go: recomputing it per element would make a
    # long list of ranges quadratic.
    position = start
    for piece in body.split(","):
        lo, hi = _parse_element(text, piece, position)
        if lo <= previous:
            raise fail(
                text, "ids must be strictly ascending and unique", position, position + len(piece)
            )
        elements.append((lo, hi))
        previous = hi
        position += len(piece) + 1
    return coalesce(elements)  # 1,2 or 1-3,4: neighbours merge into one interval


def _parse_element(text: str, piece: str, position: int) -> Interval:
    """Parse ``element = id [ "-" id ]``, with lo < hi."""
    if not piece:
        raise fail(text, "empty element (expected an id)", position, position)
    hyphen = piece.find("-")
    if hyphen < 0:
        value = _parse_id(text, piece, position)
        return value, value
    lo = _parse_id(text, piece[:hyphen], position)
    hi = _parse_id(text, piece[hyphen + 1 :], position + hyphen + 1)
    if hi < lo:
        raise fail(text, "range ends below its start", position, position + len(piece))
    if hi == lo:
        # RFC 22 leaves `3-3` open; the reference refuses it, as flux-core does.
        raise fail(text, "degenerate range (write the id alone)", position, position + len(piece))
    return lo, hi


def _parse_id(text: str, digits: str, position: int) -> int:
    """Parse ``id = "0" | nonzero { digit }``, at most MAX_ID."""
    if not digits:
        raise fail(text, "expected an id", position, position)
    if not digits.isdigit():
        at = position + next(i for i, c in enumerate(digits) if not c.isdigit())
        raise fail(text, f"unexpected {text[at]!r} in an id", at, at + 1)
    if digits[0] == "0" and len(digits) > 1:
        raise fail(text, "ids are written without leading zeros", position, position + len(digits))
    if len(digits) > MAX_ID_DIGITS or int(digits) > MAX_ID:
        raise LimitError(
            f"id exceeds the limit {MAX_ID}", source=text, span=(position, position + len(digits))
        )
    return int(digits)


# -- bulk scanners: well-formed text in a few C-level passes, None for anything else ----------


def _scan_short(body: str) -> tuple[Interval, ...] | None:
    """Decode a short well-formed list (a node's cores), or return None to let the rules decide.

    One compiled pattern checks the canonical syntax (no leading zeros, ids of at most 19
    digits, so below the limit); then each element is split and converted in one step.  Ids
    out of order and ranges that do not ascend return None, as does anything the pattern
    refuses: the rules then decode the text or report the exact error.
    """
    if body.isdigit() and body.isascii() and (body[0] != "0" or len(body) == 1):
        # One id (a rank of R_lite, often): the pattern allows up to 19 digits.
        return ((int(body), int(body)),) if len(body) < _MAX_SHORT_DIGITS else None
    if _CANONICAL.fullmatch(body) is None:
        return None
    out: list[Interval] = []
    previous = -2
    for piece in body.split(","):
        first, hyphen, second = piece.partition("-")
        lo = int(first)
        hi = int(second) if hyphen else lo
        if lo <= previous or (hyphen and hi <= lo):
            return None
        if lo == previous + 1:
            out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
        previous = hi
    return tuple(out)


def _scan_bulk(body: str) -> tuple[Interval, ...] | None:
    """Decode a long well-formed list in bulk, or return None to let the rules decide."""
    ends = scan_ends(body)
    if ends is None:
        return None
    los, his = ends
    if los is his:
        return _singles(los)
    if any(map(operator.eq, islice(los, 1, None), map(_succ, his))):
        # 1,2 or 1-3,4: neighbours merge into one interval
        return coalesce(zip(los, his, strict=True))
    return tuple(zip(los, his, strict=True))


def decode_bits(text: str, width: int) -> int | None:
    """The bitset of a long, well-formed, unbracketed list of ids below ``width``, or None.

    None means "not decided here" (short, bracketed, larger ids, or malformed text): the
    caller parses the text, which also explains any error.  One ``json.loads`` reads every
    id, and the bits come from byte arrays and a few operations on whole ints, never a
    Python step per element.
    """
    if len(text) < _SHORT_TEXT or text.translate(_LIST_BODY):
        return None
    check_text_length(text, "idset string")
    try:
        # Each range's upper end as a negative number: 3,5-7 reads as [3, 5, -7].
        flat: list[int] = json.loads(f"[{text.replace('-', ',-')}]")
    except ValueError:
        return None  # malformed, or an id too long for int()
    ids = list(map(abs, flat))
    # The magnitudes must ascend strictly: in order here (sorting a sorted list is one C
    # pass), and no two equal (counted below).  JSON has refused empty elements, stray
    # hyphens and leading zeros.
    if sorted(ids) != ids or ids[-1] >= width:
        return None
    size = ids[-1] + 1
    # Lower ends scatter into the first half of a byte array, upper ends (negative indexes)
    # into the second.  Both halves are read with id 0 as the top bit, so that the carries
    # below run from a range's upper end down to its lower end.
    flags = bytearray(2 * size)
    deque(map(flags.__setitem__, flat, repeat(1)), maxlen=0)
    lows = int(flags[:size].translate(_DIGITS), 2)
    highs = int(flags[size:][::-1].translate(_DIGITS), 2) >> 1
    if lows & highs or lows.bit_count() + highs.bit_count() != len(flat):
        return None  # an id written twice (3,3 or 1-3,3)
    # A carry started just past each upper end runs through the ids strictly inside its
    # range (neither end of any element) and stops on the first end it meets, which must
    # be the range's lower end: it flips exactly the ids a range adds to its two ends.
    gaps = ((1 << size) - 1) & ~(lows | highs)
    inside = ((highs << 1) + gaps) ^ gaps
    if inside & highs:
        return None  # a carry stopped on an upper end: two in a row (1-2-3)
    return int(format(lows | highs | inside, f"0{size}b")[::-1], 2)


def bits_of_ends(los: list[int], his: list[int]) -> int:
    """The int whose bits ``lo .. hi`` are set for each pair (ascending; neighbours may touch).

    An interval's bits are ``2**(hi + 1) - 2**lo``: the lower ends and the ids just past the
    upper ends are scattered into two byte arrays in C, read as binary digits, and one
    subtraction of the two ints sums those differences (each array has every bit once, so
    an interval starting where the previous one stopped is no special case).
    """
    width = his[-1] + 2
    starts = bytearray(width)
    deque(map(starts.__setitem__, los, repeat(1)), maxlen=0)
    stops = bytearray(width)
    deque(map(memoryview(stops)[1:].__setitem__, his, repeat(1)), maxlen=0)
    return _binary(stops) - _binary(starts)


def ends_of_bits(bits: int) -> tuple[list[int], list[int]]:
    """The lower and upper ends of the runs of set bits in ``bits`` (a positive int)."""
    # The lowest bit of each run, and the highest, written lowest bit first as bytes 0 and 1:
    # compress() picks out their positions in C, from a list of positions made once (walking
    # a range would make a new int for every id, set or not).
    starts = bit_flags(bits & ~(bits << 1))
    stops = bit_flags(bits & ~(bits >> 1))
    # (The highest bit is a run's top: ``stops`` is the longer of the two.)
    positions = _POSITIONS if len(stops) <= len(_POSITIONS) else range(len(stops))
    return list(compress(positions, starts)), list(compress(positions, stops))


def bit_flags(bits: int) -> bytes:
    """Bytes 0 and 1, one per bit of ``bits``, lowest bit first (up to the highest set bit)."""
    return format(bits, "b")[::-1].encode("ascii").translate(_FLAGS)


#: The digits "0" and "1" to bytes 0 and 1.
_FLAGS = bytes.maketrans(b"01", b"\x00\x01")
#: Positions 0, 1, 2...: enough for every set held as a bitset but the widest.
_POSITIONS = list(range(1 << 16))


def is_canonical(text: str, intervals: int) -> bool:
    """Whether ``text``, which decodes to a set of ``intervals`` intervals, is its canonical text.

    The decoders refuse ``3-3``, leading zeros and disorder, so decoded text is canonical
    unless it has brackets or elements that merged (``1,2``, ``1-3,4``): one element per
    interval.
    """
    return text[0] != "[" and text.count(",") + 1 == intervals


def encode_bits(bits: int) -> str:
    """The canonical RFC 22 text of the ids whose bits are set in ``bits`` (``""`` for 0)."""
    if not bits:
        return ""
    size = bits.bit_length()
    if size > _PIECE_LIMIT:
        los, his = ends_of_bits(bits)
        return ",".join(
            [str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in zip(los, his, strict=True)]
        )
    # Every run adds ",lo" at its first id and, when longer than one id, "-hi" at its last:
    # the pieces of all positions lie in one table in that order (",0", "-0", ",1", "-1"...),
    # so one compress() over the table picks the text's pieces, in C, with no number
    # formatted (half the time of finding the ends and writing each run).
    starts = bits & ~(bits << 1)
    flags = bytearray(2 * size)
    firsts = bit_flags(starts)
    flags[0 : 2 * len(firsts) : 2] = firsts
    lasts = bit_flags(bits & ~(bits >> 1) & ~starts)
    flags[1 : 2 * len(lasts) : 2] = lasts
    return "".join(compress(_pieces(size), flags))[1:]


#: Sets up to this many ids wide are written through the table of pieces (two strings a
#: position: a few MB at most).
_PIECE_LIMIT = 1 << 16
#: The table, in a holder: a larger one replaces it whole, so a reader never sees it grow.
_PIECE_TABLE: list[list[str]] = [[]]


def _pieces(size: int) -> list[str]:
    """The pieces of positions 0 .. at least ``size - 1`` (see :func:`encode_bits`)."""
    table = _PIECE_TABLE[0]
    have = len(table) // 2
    if have < size:
        # (Grown by doubling at least: a set a little wider than the last costs no rebuild.)
        more = range(have, max(size, 2 * have))
        table = _PIECE_TABLE[0] = table + [p for i in more for p in (f",{i}", f"-{i}")]
    return table


#: Bytes 0 and 1 to the digits "0" and "1".
_DIGITS = bytes.maketrans(b"\x00\x01", b"01")


def _binary(flags: bytearray) -> int:
    """The int whose bit ``i`` is ``flags[i]`` (each 0 or 1)."""
    return int(flags.translate(_DIGITS)[::-1], 2)


def scan_ends(body: str) -> tuple[list[int], list[int]] | None:
    """The lower and upper ends of a long well-formed list's elements, or None.

    ``body`` holds digits, commas and hyphens only.  Without its ``-hi`` parts it lists every
    element's lower end; reversed, the same substitution drops the ``lo-`` parts instead,
    leaving the upper ends (a single id is both): ``3,5-7`` reads as ``[3, 5]`` and ``[3, 7]``,
    converted by ``json.loads`` in C.  JSON itself refuses an empty element, a leading zero
    and a stray hyphen; what is left to check is done once over the whole lists.  A list of
    single ids returns the same list twice.  Neighbours (``1,2``) are not merged.
    """
    ranges = body.count("-")
    if not ranges:
        ids = _scan_ids(body)
        return None if ids is None else (ids, ids)
    try:
        los: list[int] = json.loads(f"[{_UPPER_END.sub('', body)}]")
        his: list[int] = json.loads(f"[{_UPPER_END.sub('', body[::-1])[::-1]}]")
    except ValueError:
        return None  # malformed, or an id too long for int() (over the limit anyway)
    if (
        # Each element gives one pair; a single id has lo == hi, a range must have lo < hi.
        # Exactly ``ranges`` pairs with lo < hi means every hyphen belongs to one ascending
        # range (``3-3``, ``5-3`` and ``1-2-3`` all fall short).
        sum(map(operator.lt, los, his)) != ranges
        or not all(map(operator.gt, islice(los, 1, None), his))
        or his[-1] > MAX_ID
    ):
        return None
    return los, his


def _scan_ids(body: str) -> list[int] | None:
    """The ids of a list of single ids (``body``: digits and commas only), or None.

    JSON refuses empty elements and leading zeros, so what it reads is a list of ids written
    as RFC 22 writes them; they must still ascend strictly and stay within the limit.
    """
    try:
        ids: list[int] = json.loads(f"[{body}]")
    except ValueError:
        return None  # malformed, or an id too long for int() (over the limit anyway)
    if not all(map(operator.gt, islice(ids, 1, None), ids)) or ids[-1] > MAX_ID:
        return None
    return ids


def _singles(ids: list[int]) -> tuple[Interval, ...]:
    """The intervals of strictly ascending ids (neighbours merged)."""
    if all(map(operator.gt, islice(ids, 1, None), map(_succ, ids))):
        return tuple(zip(ids, ids, strict=True))
    return coalesce(zip(ids, ids, strict=True))
