"""The "did you mean ..." of a mistyped name: one helper for every command's messages."""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Iterable

__all__ = ["did_you_mean", "glob_suggestion", "matches_any"]


def did_you_mean(name: str, known: Iterable[str], *, cutoff: float = 0.6) -> str:
    """``"; did you mean 'idset.decode'?"``: the closest of ``known`` to ``name``, or ``""``.

    ``cutoff`` is difflib's similarity (0 to 1) below which nothing is suggested.
    """
    close = difflib.get_close_matches(name, sorted(set(known)), n=1, cutoff=cutoff)
    return f"; did you mean {close[0]!r}?" if close else ""


def glob_suggestion(glob: str, names: Iterable[str]) -> str:
    """The suggestion for a glob that matched none of ``names`` (``""`` when there is none).

    A glob is compared with the names and with each dotted family's glob (``idset.*``), so
    ``idsett.*`` gets ``idset.*`` and ``idset.decod`` gets ``idset.decode``.
    """
    names = sorted(set(names))
    families = {f"{name.rsplit('.', 1)[0]}.*" for name in names if "." in name}
    known = [*names, *sorted(families)]
    # A glob's wildcards match nothing as text: compare it without them too.
    plain = glob.replace("*", "").replace("?", "")
    # Stricter than for a plain name: ``no.such.*`` shares too much punctuation with
    # ``sched.*`` for the default cutoff.
    return did_you_mean(glob, known, cutoff=0.75) or (
        did_you_mean(plain, names, cutoff=0.75) if plain != glob else ""
    )


def matches_any(glob: str, names: Iterable[str]) -> bool:
    """Whether ``glob`` matches one of ``names`` (case-sensitive, as the filters match)."""
    return any(fnmatch.fnmatchcase(name, glob) for name in names)
