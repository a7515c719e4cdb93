"""What every strategy shares: numbers at the edges, and near-valid text by small edits."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

__all__ = ["EDGES", "ID_EDGES", "mostly", "near_valid", "number", "small", "weighted"]


#: Numbers at the edges of common integer types, and the one flux-core wraps.
EDGES = (2**31, 2**32 - 1, 2**32, 2**63, 2**64 - 1, 2**64, 99999999999)

small = st.integers(0, 12)
number = st.one_of(small, st.integers(0, 2000), st.sampled_from(EDGES))

#: One edit: (kind, position, character); the position is taken modulo the length.
_Edit = tuple[str, int, str]


def _apply(text: str, edits: list[_Edit]) -> str:
    for kind, position, char in edits:
        at = position % (len(text) + 1)
        if kind == "insert":
            text = text[:at] + char + text[at:]
        elif not text:
            continue
        elif kind == "delete":
            at = min(at, len(text) - 1)
            text = text[:at] + text[at + 1 :]
        else:
            at = min(at, len(text) - 1)
            text = text[:at] + char + text[at + 1 :]
    return text


def near_valid(valid: st.SearchStrategy[str], alphabet: str) -> st.SearchStrategy[str]:
    """Strings from ``valid``, each with zero to two edits using characters of ``alphabet``."""
    edit = st.tuples(
        st.sampled_from(("insert", "delete", "replace")),
        st.integers(0, 40),
        st.sampled_from(alphabet),
    )
    return st.builds(_apply, valid, st.lists(edit, max_size=2))


#: Ids where the integer types of C, JSON readers and doubles give out: 2**32 (unsigned 32 bits:
#: flux-core's idsets wrap there), 2**31 (signed 32 bits), 2**53 (a double's exact integers),
#: 2**64 (unsigned 64 bits) and beyond.  Hypothesis draws (and shrinks towards) the first ones
#: most: 2**31 - 1 comes last, as a bitmap of that many ids takes flux-core seconds to build.
ID_EDGES = (
    2**32, 2**32 + 1, 2**31, 2**53, 2**64 - 1, 2**64, 2**63, 2**32 - 1, 2**53 + 1, 2**64 + 1,
    2**31 - 1,
)  # fmt: skip


def mostly(good: tuple[Any, ...], odd: tuple[Any, ...]) -> st.SearchStrategy[Any]:
    """One of ``good`` five times in six, else one of ``odd`` (shrinking towards ``good``).

    A plain ``sampled_from`` of both would not do: hypothesis draws the first values of a
    sample far more often than the rest, and a structure of many such draws would be mostly
    invalid.
    """
    return weighted(st.sampled_from(good), st.sampled_from(odd))


def weighted(
    good: st.SearchStrategy[Any], odd: st.SearchStrategy[Any], one_in: int = 6
) -> st.SearchStrategy[Any]:
    """``odd`` once in ``one_in`` draws, else ``good``; shrinks towards ``good``.

    ``one_of`` would draw each half the time, and merges repeated branches.
    """
    return st.integers(0, one_in - 1).flatmap(lambda i: odd if i == one_in - 1 else good)


def sometimes(draw: st.DrawFn, one_in: int) -> bool:
    """True once in ``one_in`` draws; shrinks towards False (towards the plain input)."""
    return bool(draw(st.integers(0, one_in - 1)) == one_in - 1)
