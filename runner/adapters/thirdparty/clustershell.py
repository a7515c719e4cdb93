"""Adapter for ClusterShell (``pip install ClusterShell``): ``--impl clustershell``.

What it answers, and through which API (node groups are switched off with
``RESOLVER_NOGROUP``, so no ``groups.conf`` on the machine changes an answer):

* ``hostlist.decode`` -- ``list(NodeSet(text))``.  A NodeSet is a *set*: it sorts and drops
  duplicates, and ClusterShell has no parser that keeps the written order.  RFC 29 keeps
  both, so inputs whose order or repeats matter are answered the NodeSet way and show up as
  findings in the expectations file; nothing here reorders the answer to hide that.  The
  extended syntax (``!``, ``&``, ``^``, ``/step``) is ClusterShell's and is answered as such.
* ``hostlist.encode`` -- ``str(NodeSet.fromlist(hosts))`` (sorted and de-duplicated too).
* ``idset.decode`` -- ``RangeSet(text).intiter()``: the text is given as written.
* ``idset.encode`` -- ``str(RangeSet.fromlist([str(id), ...]))``.

Errors: ClusterShell names parse errors by class (``NodeSetParseError``,
``RangeSetParseError`` and their subclasses, padding mismatches among them): when decoding,
those are ``syntax``.  Every other ``NodeSetException`` or ``RangeSetException``, and any
refusal when encoding (ClusterShell then reads a name as a pattern, so its parse error is not a
verdict on a host name), is reported as ``unknown``: counted as a refusal, its category not
checked (``hostlist.encode`` registers one category, so there it is that one).  Anything else
propagates (the case is errored).

One guard belongs to the adapter, not to ClusterShell: NodeSet and RangeSet hold every
member, so a range such as ``n[0-99999999999]`` would exhaust memory.  An input that could
expand to more than :data:`MAX_SPAN` members is not given to ClusterShell: it is reported as
an adapter bound (the case is skipped, saying so), never as a ``limit`` ClusterShell did not
report.
"""

from __future__ import annotations

import decimal
import re
from collections.abc import Mapping
from typing import Any

from flux_conformance.runner.adapters.thirdparty._base import (
    ThirdPartyImplementation,
    adapter_bound,
    error,
    import_or_fail,
    output,
    refused,
)

__all__ = ["MAX_SPAN", "ClusterShell"]

#: Widest ``lo-hi`` range the adapter lets ClusterShell materialise.
MAX_SPAN = 4_000_000

_RANGE = re.compile(r"(\d+)-(\d+)")
_BRACKETED = re.compile(r"\[([^\]]*)")
_TOP_LEVEL_SEPARATORS = frozenset(",!&^")


def _range_size(low: str, high: str) -> int:
    """Members of ``low-high``, digit strings of any length (at least 1, capped above the limit).

    Padding can make the digits longer than ``int()`` converts (4,300), and this guard must never
    fail on an input that ClusterShell would answer itself, so the arithmetic is done in exact
    decimals.
    """
    with decimal.localcontext() as context:
        context.prec = max(len(low), len(high)) + 2
        size = decimal.Decimal(high) - decimal.Decimal(low) + 1
    return int(min(max(size, decimal.Decimal(1)), decimal.Decimal(MAX_SPAN + 1)))


def _span(ranges: str) -> int:
    """How many members a comma-separated list of ``lo-hi`` ranges can hold, at most."""
    total = 0
    for part in ranges.split(","):
        match = _RANGE.search(part)
        total += _range_size(match.group(1), match.group(2)) if match else 1
    return total


def _elements(text: str) -> list[str]:
    """``text`` split at the separators that are outside brackets."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        depth += char == "["
        depth -= char == "]"
        if depth <= 0 and char in _TOP_LEVEL_SEPARATORS:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def _too_wide(text: str, *, bracketed: bool) -> str | None:
    """Why ClusterShell must not be given ``text``, or None.

    An upper bound of the members it would hold: in a nodeset, the product of the bracket
    groups of each element (ClusterShell expands several groups as a cross product),
    summed over the elements; in a rangeset, the ranges themselves.
    """
    if bracketed:
        total = 0
        for element in _elements(text):
            size = 1
            for group in _BRACKETED.finditer(element):
                size *= _span(group.group(1))
            total += size
    else:
        total = _span(text)
    if total > MAX_SPAN:
        return (
            f"not given to ClusterShell, which would hold up to {total:,} members in memory "
            f"(adapter bound {MAX_SPAN:,})"
        )
    return None


class ClusterShell(ThirdPartyImplementation):
    """ClusterShell's ``NodeSet`` and ``RangeSet``."""

    name = "clustershell"

    def __init__(self) -> None:
        lib = import_or_fail(
            "ClusterShell",
            what="ClusterShell",
            install="install it with: pip install 'flux-conformance[clustershell]'",
        )
        nodeset = import_or_fail("ClusterShell.NodeSet", what="ClusterShell", install="")
        rangeset = import_or_fail("ClusterShell.RangeSet", what="ClusterShell", install="")
        self.version = str(getattr(lib, "__version__", "unknown"))
        self._NodeSet = nodeset.NodeSet
        self._nogroup = nodeset.RESOLVER_NOGROUP
        self._RangeSet = rangeset.RangeSet
        self._errors: tuple[type[BaseException], ...] = (
            nodeset.NodeSetException,
            rangeset.RangeSetException,
        )
        self._parse_errors: tuple[type[BaseException], ...] = (
            nodeset.NodeSetParseError,
            rangeset.RangeSetParseError,
        )
        super().__init__(
            {
                "hostlist.decode": self._hostlist_decode,
                "hostlist.encode": self._hostlist_encode,
                "idset.decode": self._idset_decode,
                "idset.encode": self._idset_encode,
            }
        )

    def _hostlist_decode(self, text: Any) -> Mapping[str, Any]:
        bound = _too_wide(text, bracketed=True)
        if bound:
            return adapter_bound(bound)
        try:
            return output([str(host) for host in self._NodeSet(text, resolver=self._nogroup)])
        except self._errors as exc:
            return self._decode_error(exc)

    def _hostlist_encode(self, hosts: Any) -> Mapping[str, Any]:
        for host in hosts:
            bound = _too_wide(host, bracketed=True)
            if bound:
                return adapter_bound(bound)
        try:
            return output(str(self._NodeSet.fromlist(list(hosts), resolver=self._nogroup)))
        except self._errors as exc:
            return refused(exc)

    def _idset_decode(self, text: Any) -> Mapping[str, Any]:
        bound = _too_wide(text, bracketed=False)
        if bound:
            return adapter_bound(bound)
        try:
            return output([int(i) for i in self._RangeSet(text).intiter()])
        except self._errors as exc:
            return self._decode_error(exc)

    def _idset_encode(self, ids: Any) -> Mapping[str, Any]:
        try:
            return output(str(self._RangeSet.fromlist([str(i) for i in ids])))
        except self._errors as exc:
            return refused(exc)

    def _decode_error(self, exc: BaseException) -> Mapping[str, Any]:
        """A parse error class is ``syntax``; any other refusal has no category."""
        if isinstance(exc, self._parse_errors):
            return error("syntax", exc)
        return refused(exc)
