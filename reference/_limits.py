"""Limits shared by the id-based formats (RFC 22 idsets, RFC 29 hostlists, RFC 45 ranges).

None of these texts bounds the size of an id or of a list.  The reference sets its own limits so
that no input can make it hang, exhaust memory or return a different number than it was given;
input beyond a limit is refused with :class:`~reference.errors.LimitError` (category ``limit``),
and every check is made *before* anything is expanded.

``MAX_TEXT_LENGTH``
    64 MiB (67,108,864 characters) of input text.
``MAX_ID``
    2**64 - 1: the largest id, count, range bound or operand.  Larger numbers are refused,
    never wrapped or rounded.
``MAX_EXPANSION``
    4,000,000: the longest list an operation returns (ids of an idset, hosts of a hostlist,
    acceptable counts of a count).
``MAX_OUTPUT_LENGTH``
    64 MiB (67,108,864 characters): the most characters the host names a hostlist expands to
    may hold in all.  Four million hosts are few enough, but not when each is a long prefix or
    padding repeated: ``("a" * 1000) + "[0-3999999]"`` would be four gigabytes.
``MAX_RANKS``
    1,000,000: the most ranks one RFC 20 R document may name (the hosts its nodelist expands
    to), and the most rank entries ``R.encode`` takes.  Each rank is held with its host name,
    so this bounds the memory of reading an R (and of a union of two) however short its text.
``MAX_ANSWER_BYTES``
    64 MiB: the most bytes the JSON text of one output may take (the bound the runner puts on
    one reply of an implementation).  An operation whose output can be much larger than its
    input checks a lower bound of its size before building it: ``R.decode`` of a 121-byte R
    naming a million ranks is refused, not built.
"""

from __future__ import annotations

from flux_conformance.reference.errors import LimitError

__all__ = [
    "MAX_ANSWER_BYTES",
    "MAX_EXPANSION",
    "MAX_ID",
    "MAX_ID_DIGITS",
    "MAX_OUTPUT_LENGTH",
    "MAX_RANKS",
    "MAX_TEXT_LENGTH",
    "check_answer_size",
    "check_expansion",
    "check_text_length",
]

MAX_TEXT_LENGTH = 64 * 1024 * 1024
MAX_ID = 2**64 - 1
#: Decimal digits of MAX_ID: a longer digit string (without leading zeros) is over the limit
#: without converting it, which keeps int() away from its own digit limit.
MAX_ID_DIGITS = len(str(MAX_ID))
MAX_EXPANSION = 4_000_000
MAX_OUTPUT_LENGTH = 64 * 1024 * 1024
MAX_RANKS = 1_000_000
MAX_ANSWER_BYTES = 64 * 1024 * 1024


def check_text_length(text: str, what: str) -> None:
    """Refuse ``text`` longer than :data:`MAX_TEXT_LENGTH` before any parsing starts."""
    if len(text) > MAX_TEXT_LENGTH:
        raise LimitError(
            f"{what} is {len(text)} characters long; the limit is {MAX_TEXT_LENGTH}",
            span=(MAX_TEXT_LENGTH, len(text)),
        )


def check_expansion(size: int, what: str) -> None:
    """Refuse to expand ``size`` items when that exceeds :data:`MAX_EXPANSION`."""
    if size > MAX_EXPANSION:
        raise LimitError(f"{what} would expand to {size} items; the limit is {MAX_EXPANSION}")


def check_answer_size(size: int, what: str) -> None:
    """Refuse to build an output whose JSON text takes at least ``size`` bytes, if too many."""
    if size > MAX_ANSWER_BYTES:
        raise LimitError(
            f"{what} would take at least {size} bytes as JSON; the limit is {MAX_ANSWER_BYTES}"
        )
