"""RFC 29 hostlists: compact strings for ordered lists of host names (``node[1-4,7]-ib``).

Decoding is strict: it follows RFC 29 (Implementation, Test Vectors) and the suite's readings
(docs: docs/readings.md, "RFC 29 hostlists"):

* a hostlist is an *ordered list*: order and duplicates are kept (``foo[1,1,2,1]``);
* a hostlist string is comma-separated expressions ``prefix[idlist]suffix``, each part
  optional; an empty expression is an empty list, so ``foo,,bar`` is ``foo, bar``;
* prefix and suffix are printable, non-whitespace ASCII other than ``[``, ``]`` and ``,``; at
  most one bracketed idlist per expression (``rack[1-2]n[1-4]`` is refused);
* an idlist is comma-separated ids or ``lo-hi`` ranges (``lo <= hi``; ``foo[3-3]`` is foo3),
  repeats allowed, never empty (``foo[]``, ``foo[1,,2]`` are refused);
* padding: the first id written in the idlist fixes the width of every id in it, when it has a
  leading zero: ``foo[005,4,11-13]`` is foo005, foo004, foo011, foo012, foo013; ``[00-2]`` is
  00, 01, 02; ``[1-010]`` is 1 .. 10 unpadded, and ``foo[1,02]`` is foo1, foo2.

Refusals of the text are :class:`~reference.errors.ParseError` (category ``syntax``).

Limits (see :mod:`reference._limits`), checked before anything is expanded:

* input text longer than 64 MiB -> ``limit``;
* an id in an idlist above 2**64 - 1 -> ``limit``;
* a hostlist of more than 4,000,000 hosts (``h[0-999999999999]``) -> ``limit``, computed from
  the ranges without expanding them;
* host names holding more than 64 MiB of characters in all (a long prefix or padding repeated
  over many ids) -> ``limit``, computed the same way.

Encoding (:func:`encode`) keeps the order and the duplicates and compresses each run of
neighbouring hosts that share a prefix, a suffix and a padding into one bracketed idlist, with
consecutive ids as ranges.  Its output always decodes back, strictly, to the same list: a host
joins a run only if the run's padding rule reproduces its digits exactly (``node01, node1``
never share brackets).  Host names given to it must be non-empty printable, non-whitespace
ASCII without ``[ ] ,`` (``InvalidError`` otherwise): no hostlist string can denote others.
"""

from __future__ import annotations

import itertools
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from flux_conformance.reference._idset_codec import scan_ends
from flux_conformance.reference._limits import (
    MAX_EXPANSION,
    MAX_ID,
    MAX_ID_DIGITS,
    MAX_OUTPUT_LENGTH,
    check_expansion,
    check_text_length,
)
from flux_conformance.reference.errors import InvalidError, LimitError, ParseError

__all__ = ["OPERATIONS", "decode", "encode", "expressions", "parse"]

# RFC 29 (Implementation): affixes are printable, non-whitespace ASCII (0x21-0x7e) except the
# three special characters.  The whole text is checked once, up front.
_FOREIGN_CHAR = re.compile(r"[^\x21-\x7e]")
_HOST = re.compile(r"[\x21-\x2b\x2d-\x5a\x5c\x5e-\x7e]+")
_SPECIAL = re.compile(r"[\[\],]")
_DIGITS = re.compile(r"[0-9]+")
_upper = operator.itemgetter(1)
_lower = operator.itemgetter(0)
_ID_CHARACTERS = re.compile(r"[0-9,\-]+")

# Expanding long ranges (Expression._extend_blocks): ids written as a head and a tail of
# _TAIL_DIGITS digits, a block of _BLOCK ids sharing one head; ranges of more than
# _LONG_RANGE ids take that path (no shorter one holds a whole block).
_TAIL_DIGITS = 3
_BLOCK = 10**_TAIL_DIGITS
_TAILS = [f"{i:0{_TAIL_DIGITS}d}" for i in range(_BLOCK)]
_LONG_RANGE = _BLOCK


@dataclass(frozen=True)
class Expression:
    """One decoded hostlist expression: ``prefix[idlist]suffix`` (or a plain ``prefix``).

    ``ranges`` holds the idlist's elements as inclusive ``(lo, hi)`` pairs in the order written
    (repeats allowed); ``None`` when the expression has no brackets.  ``width`` is the padding
    fixed by the first id (0: no padding).
    """

    prefix: str
    ranges: tuple[tuple[int, int], ...] | None = None
    width: int = 0
    suffix: str = ""

    @property
    def size(self) -> int:
        """How many hosts the expression denotes."""
        if self.ranges is None:
            return 1
        return sum(hi - lo + 1 for lo, hi in self.ranges)

    @property
    def length(self) -> int:
        """How many characters its host names hold in all (computed without expanding)."""
        if self.ranges is None:
            return len(self.prefix)
        affixes = len(self.prefix) + len(self.suffix)
        total = 0
        for lo, hi in self.ranges:
            total += (hi - lo + 1) * affixes
            # Ids of d digits are those in [10**(d-1), 10**d - 1] (0 has one digit); each is
            # written with max(d, width) characters.
            for digits in range(len(str(lo)), len(str(hi)) + 1):
                first = max(lo, 10 ** (digits - 1) if digits > 1 else 0)
                last = min(hi, 10**digits - 1)
                total += (last - first + 1) * max(digits, self.width)
        return total

    @property
    def length_bound(self) -> int:
        """At least :attr:`length`, in one pass: every host as long as the longest."""
        if self.ranges is None:
            return len(self.prefix)
        digits = max(self.width, len(str(max(map(_upper, self.ranges)))))
        return self.size * (len(self.prefix) + len(self.suffix) + digits)

    def id_of(self, host: str) -> int | None:
        """The id ``host`` is written with here, or None if it cannot be one of these hosts.

        None: another prefix, suffix or padding, or no brackets.  Whether the id is one of
        :attr:`ranges` is left to the caller.
        """
        prefix, suffix = self.prefix, self.suffix
        if self.ranges is None or not (host.startswith(prefix) and host.endswith(suffix)):
            return None
        # (Empty, and no id, when the prefix and the suffix overlap in ``host``.)
        digits = host[len(prefix) : len(host) - len(suffix)]
        significant = digits.lstrip("0") or "0"
        if not (digits.isascii() and digits.isdigit()) or len(significant) > MAX_ID_DIGITS:
            return None
        value = int(significant)
        # :meth:`hosts` writes each id one way only: the host must be written exactly so.
        written = f"{value:0{self.width}d}" if self.width else significant
        return value if written == digits else None

    def hosts(self) -> list[str]:
        """Return the host names, in order."""
        ranges = self.ranges
        if ranges is None:
            return [self.prefix]
        if (
            max(map(operator.sub, map(_upper, ranges), map(_lower, ranges)), default=0)
            < _LONG_RANGE
        ):
            # (No long range, the usual idlist: its ids in one loop, told by a C pass.)
            return self._written(ranges)
        out: list[str] = []
        short: list[tuple[int, int]] = []
        for lo, hi in ranges:
            if hi - lo < _LONG_RANGE:
                short.append((lo, hi))
                continue
            if short:
                out += self._written(short)
                short = []
            self._extend_blocks(out, lo, hi)
        if short:
            out += self._written(short)
        return out

    def _written(self, ranges: Sequence[tuple[int, int]]) -> list[str]:
        """The host names of ``ranges``, each id formatted on its own (one loop over them all)."""
        prefix, suffix, width = self.prefix, self.suffix, self.width
        ids = itertools.chain.from_iterable(
            itertools.starmap(range, ((lo, hi + 1) for lo, hi in ranges))
        )
        if not width:
            return [f"{prefix}{i}{suffix}" for i in ids]
        return [f"{prefix}{i:0{width}d}{suffix}" for i in ids]

    def _extend_blocks(self, out: list[str], lo: int, hi: int) -> None:
        """Append the host names of ``lo..hi``, a long range, to ``out``.

        Ids from 1000 on, in whole blocks of a thousand, are written as the block's head (the
        prefix and the id's leading digits, padded to the width less three) joined to a
        three-digit tail: one concatenation per host instead of formatting a number, which
        is a third of the cost of expanding ``node[0-99999]``.  The ids outside whole blocks,
        and those below 1000 (which have no head digits), are formatted one by one.
        """
        start = max(-(-lo // _BLOCK), 1)  # the first whole block (block 0 has no head)
        stop = (hi + 1) // _BLOCK  # one past the last whole block
        if start >= stop:
            out += self._written(((lo, hi),))
            return
        prefix, width = self.prefix, max(self.width - _TAIL_DIGITS, 0)
        tails = _TAILS if not self.suffix else [tail + self.suffix for tail in _TAILS]
        if lo < start * _BLOCK:
            out += self._written(((lo, start * _BLOCK - 1),))
        for block in range(start, stop):
            head = f"{prefix}{block:0{width}d}"
            out += [head + tail for tail in tails]
        if stop * _BLOCK <= hi:
            out += self._written(((stop * _BLOCK, hi),))


# -- the parser ---------------------------------------------------------------------------------
#
# Grammar (RFC 29, Implementation, with the readings):
#
#     hostlist   = [ expression ] { "," [ expression ] }
#     expression = affix | [ affix ] "[" idlist "]" [ affix ]
#     idlist     = element { "," element }
#     element    = number [ "-" number ]
#     number     = digit { digit }
#     affix      = achar { achar }      (printable, non-whitespace ASCII except "[", "]", ",")
#
# Commas separate expressions outside brackets and ids inside them, so the parser walks from
# one special character ("[", "]", ",") to the next with a compiled search (C speed); a list of
# a hundred thousand plain host names costs a hundred thousand searches, not a token per byte.


def _fail(text: str, reason: str, start: int, end: int) -> ParseError:
    return ParseError(reason, source=text, span=(start, max(end, start + 1)))


def expressions(text: str) -> list[Expression]:
    """Strictly parse a hostlist string into its expressions, without expanding any."""
    check_text_length(text, "hostlist string")
    foreign = _FOREIGN_CHAR.search(text)
    if foreign is not None:
        at = foreign.start()
        raise _fail(text, f"character {text[at]!r} is not allowed in a hostlist", at, at + 1)
    return _parse_hostlist(text)


def _parse_hostlist(text: str) -> list[Expression]:
    """Parse ``hostlist = [ expression ] { "," [ expression ] }``."""
    out: list[Expression] = []
    position = 0
    while position <= len(text):
        expression, position = _parse_expression(text, position)
        if expression is not None:
            out.append(expression)
        # _parse_expression stops at a top-level comma or at the end.
        position += 1
    return out


def _parse_expression(text: str, start: int) -> tuple[Expression | None, int]:
    """Parse ``expression = affix | [ affix ] "[" idlist "]" [ affix ]``; return it and its end."""
    special = _SPECIAL.search(text, start)
    if special is None or special.group() == ",":
        end = len(text) if special is None else special.start()
        if end == start:
            return None, end  # an empty expression is an empty list
        return Expression(text[start:end]), end
    at = special.start()
    if special.group() == "]":
        raise _fail(text, "']' without a matching '['", at, at + 1)
    prefix = text[start:at]
    close = text.find("]", at + 1)
    if close < 0:
        raise _fail(text, "'[' is never closed", at, at + 1)
    reopened = text.find("[", at + 1, close)
    if reopened >= 0:
        raise _fail(text, "brackets do not nest", reopened, reopened + 1)
    ranges, width = _parse_idlist(text, at + 1, close)
    special = _SPECIAL.search(text, close + 1)
    end = len(text) if special is None else special.start()
    if special is not None and special.group() != ",":
        where = special.start()
        raise _fail(text, "an expression may hold only one bracketed idlist", where, where + 1)
    return Expression(prefix, ranges, width, text[close + 1 : end]), end


def _parse_idlist(text: str, start: int, end: int) -> tuple[tuple[tuple[int, int], ...], int]:
    """Parse ``idlist = element { "," element }``; return it and the width its first id fixes."""
    if start == end:
        raise _fail(text, "empty idlist", start - 1, end + 1)
    body = text[start:end]
    if _ID_CHARACTERS.fullmatch(body) is not None:
        # Ascending ids without padding (an R's nodelist: node[1,3-5,...]) are an RFC 22
        # list, which the idset scanner reads in a few C passes; anything else is None.
        ends = scan_ends(body)
        if ends is not None:
            return tuple(zip(*ends, strict=True)), 0
    ranges: list[tuple[int, int]] = []
    position = start
    width = 0
    for piece in text[start:end].split(","):
        lo_digits, lo, hi = _parse_element(text, piece, position)
        if not ranges and len(lo_digits) > 1 and lo_digits[0] == "0":
            # RFC 29: leading zeros of the first element are kept for every id in the list.
            width = len(lo_digits)
        ranges.append((lo, hi))
        position += len(piece) + 1
    return tuple(ranges), width


def _parse_element(text: str, piece: str, position: int) -> tuple[str, int, int]:
    """Parse ``element = number [ "-" number ]`` (lo <= hi); return lo's digits, lo and hi."""
    if not piece:
        raise _fail(text, "empty element in an idlist (expected an id)", position, position)
    hyphen = piece.find("-")
    if hyphen < 0:
        value = _parse_number(text, piece, position)
        return piece, value, value
    lo_digits = piece[:hyphen]
    lo = _parse_number(text, lo_digits, position)
    hi = _parse_number(text, piece[hyphen + 1 :], position + hyphen + 1)
    if hi < lo:
        raise _fail(text, "range ends below its start", position, position + len(piece))
    return lo_digits, lo, hi


def _parse_number(text: str, digits: str, position: int) -> int:
    """Parse ``number = digit { digit }`` (leading zeros allowed: they set the padding)."""
    if not digits:
        raise _fail(text, "expected an id", position, position)
    if not (digits.isascii() and digits.isdigit()):
        at = position + next(i for i, c in enumerate(digits) if not c.isdigit())
        raise _fail(text, f"unexpected {text[at]!r} in an idlist", at, at + 1)
    # Convert only the significant digits: padding may be longer than int()'s own digit limit.
    significant = digits.lstrip("0") or "0"
    if len(significant) > MAX_ID_DIGITS or int(significant) > MAX_ID:
        raise LimitError(
            f"id exceeds the limit {MAX_ID}", source=text, span=(position, position + len(digits))
        )
    return int(significant)


def _check_length(parsed: list[Expression]) -> None:
    """Refuse a list whose host names would hold more than MAX_OUTPUT_LENGTH characters."""
    if sum(expression.length_bound for expression in parsed) <= MAX_OUTPUT_LENGTH:
        return
    length = sum(expression.length for expression in parsed)
    if length > MAX_OUTPUT_LENGTH:
        raise LimitError(
            f"hostlist would expand to {length} characters of host names; "
            f"the limit is {MAX_OUTPUT_LENGTH}"
        )


def parse(text: str, *, limit: int = MAX_EXPANSION) -> list[Expression]:
    """Strictly parse an RFC 29 hostlist string into its expressions, within the limits.

    The limits are those of :func:`decode` (more than ``limit`` hosts, or host names of more
    than 64 MiB in all, raise :class:`LimitError`), decided without expanding anything.
    """
    parsed = expressions(text)
    total = sum(expression.size for expression in parsed)
    if total > limit:
        raise LimitError(f"hostlist would expand to {total} hosts; the limit is {limit}")
    _check_length(parsed)
    return parsed


def decode(text: str, *, limit: int = MAX_EXPANSION) -> list[str]:
    """Strictly decode an RFC 29 hostlist string into its hosts, order and repeats kept.

    Raises :class:`ParseError` for a malformed string and :class:`LimitError` when the list
    would hold more than ``limit`` hosts (default 4,000,000), decided before expanding.
    """
    parsed = parse(text, limit=limit)
    if len(parsed) == 1:
        return parsed[0].hosts()
    out: list[str] = []
    for expression in parsed:
        out += expression.hosts()
    return out


# -- the encoder --------------------------------------------------------------------------------


@dataclass
class _Run:
    """Neighbouring hosts ``prefix + digits + suffix`` sharing one padding rule."""

    prefix: str
    suffix: str
    width: int
    ids: list[int]

    def fits(self, host: str) -> int | None:
        """Return the id of ``host`` if it can join this run (same affixes and padding)."""
        prefix, suffix = self.prefix, self.suffix
        end = len(host) - len(suffix)
        if end <= len(prefix) or not host.startswith(prefix) or not host.endswith(suffix):
            return None
        digits = host[len(prefix) : end]
        return _id_for(digits, self.width)

    def render(self) -> str:
        if len(self.ids) == 1:
            # A lone host is written as itself: no brackets, no padding question.
            return (
                f"{self.prefix}{_render_range(self.ids[0], self.ids[0], self.width)}{self.suffix}"
            )
        return f"{self.prefix}[{_render_ids(self.ids, self.width)}]{self.suffix}"


def _id_for(digits: str, width: int) -> int | None:
    """Return the id whose rendering under ``width`` is exactly ``digits``, if any."""
    significant = digits.lstrip("0") or "0"
    if not (digits.isascii() and digits.isdigit()) or len(significant) > MAX_ID_DIGITS:
        return None
    value = int(significant)
    if value > MAX_ID:
        return None
    rendered = f"{value:0{width}d}" if width else str(value)
    return value if rendered == digits else None


def _render_ids(ids: list[int], width: int) -> str:
    """Ids in order, consecutive ascending runs as ``lo-hi``, padded to ``width``."""
    parts: list[str] = []
    lo = hi = ids[0]
    for value in ids[1:]:
        if value == hi + 1:
            hi = value
            continue
        parts.append(_render_range(lo, hi, width))
        lo = hi = value
    parts.append(_render_range(lo, hi, width))
    return ",".join(parts)


def _render_range(lo: int, hi: int, width: int) -> str:
    if width:
        return f"{lo:0{width}d}" if lo == hi else f"{lo:0{width}d}-{hi:0{width}d}"
    return str(lo) if lo == hi else f"{lo}-{hi}"


def _digit_run(host: str, start: int, end: int) -> tuple[int, int]:
    """Widen ``start:end`` to the whole run of ASCII digits around it."""
    while start > 0 and host[start - 1] in "0123456789":
        start -= 1
    while end < len(host) and host[end] in "0123456789":
        end += 1
    return start, end


def _start_run(host: str, following: str | None) -> _Run | None:
    """Open a run at ``host``, splitting it where it differs from ``following``.

    The numeric part is the digit run in which the two hosts differ; when they do not differ
    in digits only (or there is no next host), the last digit run of ``host``.  ``None`` when
    ``host`` has no usable number.
    """
    if _DIGITS.search(host) is None:
        return None  # nothing to number: written as itself
    split: tuple[int, int] | None = None
    if following is not None and following != host:
        common = 0
        limit = min(len(host), len(following))
        while common < limit and host[common] == following[common]:
            common += 1
        tail = 0
        while (
            tail < limit - common
            and host[len(host) - 1 - tail] == following[len(following) - 1 - tail]
        ):
            tail += 1
        start, end = _digit_run(host, common, len(host) - tail)
        other_start, other_end = _digit_run(following, common, len(following) - tail)
        if (
            start == other_start
            and len(host) - end == len(following) - other_end
            and start < end
            and host[start:end].isdigit()
            and other_start < other_end
            and following[other_start:other_end].isdigit()
        ):
            split = (start, end)
    if split is None:
        runs = _DIGITS.findall(host)
        if not runs:
            return None
        end = host.rindex(runs[-1]) + len(runs[-1])
        split = (end - len(runs[-1]), end)
    start, end = split
    digits = host[start:end]
    width = len(digits) if len(digits) > 1 and digits[0] == "0" else 0
    value = _id_for(digits, width)
    if value is None:
        return None
    return _Run(host[:start], host[end:], width, [value])


def encode(hosts: Sequence[str]) -> str:
    """Return a compact RFC 29 string that strictly decodes to ``hosts`` (order, repeats kept)."""
    numbered = _encode_numbered(hosts)
    if numbered is not None:
        return numbered
    for index, host in enumerate(hosts):
        if not isinstance(host, str) or _HOST.fullmatch(host) is None:
            raise InvalidError(
                f"host {host!r} cannot appear in a hostlist (it must be non-empty printable, "
                "non-whitespace ASCII without '[', ']' or ',')",
                path=(index,),
            )
    parts: list[str] = []
    run: _Run | None = None
    for index, host in enumerate(hosts):
        if run is not None:
            value = run.fits(host)
            if value is not None:
                run.ids.append(value)
                continue
            parts.append(run.render())
        following = hosts[index + 1] if index + 1 < len(hosts) else None
        run = _start_run(host, following)
        if run is None:
            parts.append(host)
    if run is not None:
        parts.append(run.render())
    return ",".join(parts)


#: A host that is a prefix without digits and a decimal number without leading zeros.
_NUMBERED_HOST = re.compile(r"([^0-9]*)(?:0|[1-9][0-9]*)")
#: Numbers of such hosts joined by commas: 1 to MAX_ID_DIGITS digits each.
_NUMBER = rf"(?:0|[1-9][0-9]{{0,{MAX_ID_DIGITS - 1}}})"
_NUMBERS = re.compile(rf"{_NUMBER}(?:,{_NUMBER})*")


def _encode_numbered(hosts: Sequence[str]) -> str | None:
    """The usual list in one pass, or None: ``prefix<n>`` hosts, one prefix, n ascending.

    The nodelist of an R is such a list (``node17``, ``node19``, ...), and for it the run
    encoder below would pick that prefix and that number for every host; checked in bulk,
    its answer is ``prefix[<the numbers as an idset>]``.
    """
    if len(hosts) < 2 or type(hosts[0]) is not str or _HOST.fullmatch(hosts[0]) is None:
        return None
    first = _NUMBERED_HOST.fullmatch(hosts[0])
    if first is None:
        return None
    prefix = first[1]
    if not all(type(host) is str and host.startswith(prefix) for host in hosts):
        return None
    numbers = ",".join([host[len(prefix) :] for host in hosts])
    if _NUMBERS.fullmatch(numbers) is None:
        return None
    ids = list(map(int, numbers.split(",")))
    if ids[-1] > MAX_ID or not all(map(operator.lt, ids, itertools.islice(ids, 1, None))):
        return None
    return f"{prefix}[{_render_ids(ids, 0)}]"


# -- operations ---------------------------------------------------------------------------------


def _op_decode(value: Any, *, edition: str) -> list[str]:
    del edition
    if not isinstance(value, str):
        raise InvalidError(f"hostlist.decode takes a string, not {type(value).__name__}")
    parsed = expressions(value)
    check_expansion(sum(expression.size for expression in parsed), "hostlist")
    _check_length(parsed)
    out: list[str] = []
    for expression in parsed:
        out.extend(expression.hosts())
    return out


def _op_encode(value: Any, *, edition: str) -> str:
    del edition
    if not isinstance(value, list):
        raise InvalidError(f"hostlist.encode takes a list of hosts, not {type(value).__name__}")
    return encode(value)


OPERATIONS: dict[str, Callable[..., Any]] = {
    "hostlist.decode": _op_decode,
    "hostlist.encode": _op_encode,
}
