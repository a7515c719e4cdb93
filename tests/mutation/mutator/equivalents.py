"""The mutants left out of the score (``equivalent.yaml``), and code no operation reaches.

Every entry of ``equivalent:`` names exactly one mutant, so that its reason is read against
the mutants it names and no other: either by ``id`` (``module:line:col:operator:original ->
mutated``, which goes stale when lines move), or by position: ``module``, the stripped
``source`` line, and ``at``, one or more ``col:operator:original -> mutated`` (the id without
module and line), which follows the code when lines move and goes stale only when the line
itself changes.  An entry that covers a whole source line (``module`` and ``source`` alone) is
refused: it used to hide mutants nobody had looked at.  The report lists the mutant each
position covers, flags one whose mutant some case kills, one that matches no mutant (stale),
one that matches several (ambiguous: a line repeated in the module; ``function`` tells them
apart), and a mutant named twice.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from .kill import UNREACHED, Result
from .operators import Mutant

__all__ = [
    "EQUIVALENT_FILE",
    "EQUIVALENT_KINDS",
    "Equivalent",
    "EquivalentError",
    "LibraryOnly",
    "Matched",
    "classify_unreachable",
    "load_equivalents",
    "load_library_only",
    "match_equivalents",
]

EQUIVALENT_FILE = Path(__file__).resolve().parent.with_name("equivalent.yaml")

#: Why a listed mutant is left out of the score.
EQUIVALENT_KINDS = {
    "equivalent": "behaves like the original on every input that reaches it",
    "conforming": (
        "behaves differently, but only in ways the specs and readings permit (another valid "
        "encoding, either outcome of an open point): the mutant is itself a conforming "
        "implementation, so no case may fail it"
    ),
    "message": "changes only an error's message or position, which cases never assert",
}

#: One position on a line: ``col:operator:original -> mutated`` (the original may hold ``:``).
_AT = re.compile(r"(?P<col>\d+):(?P<operator>[a-z]+):(?P<change>.+ -> .*)")


class EquivalentError(ValueError):
    """``equivalent.yaml`` holds an entry the loader refuses (the message says which, why)."""


@dataclass(frozen=True)
class Equivalent:
    """An entry of ``equivalent.yaml``: one mutant by ``id``, or mutants by position.

    A position is ``module`` + ``source`` (the stripped line the report shows as ``-``) + one
    ``at`` item, ``col:operator:original -> mutated``; ``function`` (the qualified name of the
    function the line lies in) tells apart a line that occurs twice in the module.
    """

    reason: str
    kind: str
    id: str = ""
    module: str = ""
    source: str = ""
    at: tuple[str, ...] = ()
    function: str = ""
    #: False for an entry split mechanically out of an old whole-line entry whose reason has
    #: not yet been re-read against this mutant: the report counts those apart.
    reviewed: bool = True

    def units(self) -> list[Equivalent]:
        """The entry split into one entry per mutant it names (an id entry is one already)."""
        if self.id or len(self.at) == 1:
            return [self]
        return [replace(self, at=(item,)) for item in self.at]

    def matches(self, mutant: Mutant) -> bool:
        """Whether this entry names ``mutant``."""
        if self.id:
            return mutant.id == self.id
        return (
            mutant.module == self.module
            and f"{mutant.col}:{mutant.operator}:{mutant.original} -> {mutant.mutated}" in self.at
            and mutant.source == self.source
            and (not self.function or mutant.function == self.function)
        )

    @property
    def target_module(self) -> str:
        """The module the entry's mutants lie in."""
        return self.module or self.id.partition(":")[0]

    @property
    def label(self) -> str:
        """How the report names the entry."""
        if self.id:
            return self.id
        where = f" in {self.function}" if self.function else ""
        at = " | ".join(self.at) or "(no at)"
        return f"{self.module}: {self.source!r} at {at}{where}"

    @classmethod
    def position_of(cls, mutant: Mutant, kind: str, reason: str) -> Equivalent:
        """The position entry naming ``mutant``."""
        return cls(
            reason,
            kind,
            module=mutant.module,
            source=mutant.source,
            at=(f"{mutant.col}:{mutant.operator}:{mutant.original} -> {mutant.mutated}",),
        )


def _entry(raw: Any, where: str) -> Equivalent:
    """One ``equivalent:`` entry, checked: kind, reason, and each mutant named exactly."""
    if not isinstance(raw, dict):
        raise EquivalentError(f"{where}: an entry is a mapping, not {raw!r}")
    known = {f.name for f in fields(Equivalent)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise EquivalentError(f"{where}: unknown key(s) {', '.join(unknown)} in {raw!r}")
    at = raw.get("at", [])
    at = [at] if isinstance(at, str) else at
    if not (isinstance(at, list) and all(isinstance(a, str) for a in at)):
        raise EquivalentError(f"{where}: at is a string or a list of strings, not {at!r}")
    reviewed = raw.get("reviewed", True)
    if type(reviewed) is not bool:
        raise EquivalentError(f"{where}: reviewed is true or false, not {reviewed!r}")
    values: dict[str, Any] = {k: str(v) for k, v in raw.items() if k not in ("at", "reviewed")}
    values["reviewed"] = reviewed
    values.setdefault("kind", "")
    values.setdefault("reason", "")
    entry = Equivalent(**values, at=tuple(at))
    label = entry.label
    if entry.kind not in EQUIVALENT_KINDS:
        raise EquivalentError(f"{where}: unknown kind {entry.kind!r} in {label}")
    if not entry.reason.strip():
        raise EquivalentError(f"{where}: {label}: no reason")
    given = [k for k in ("module", "source", "at", "function") if raw.get(k) not in (None, "", [])]
    if entry.id:
        if given:
            raise EquivalentError(
                f"{where}: {entry.id}: an id entry names nothing else ({', '.join(given)})"
            )
        return entry
    missing = [k for k in ("module", "source", "at") if k not in given]
    if missing:
        raise EquivalentError(
            f"{where}: {label}: an entry names its mutants, by id or by module, source and at "
            f"(col:operator:original -> mutated); this one lacks {', '.join(missing)} (an entry "
            "covering a whole line is refused: `mutate.py --list --module M` gives each "
            "mutant's position)"
        )
    for item in entry.at:
        if not _AT.fullmatch(item):
            raise EquivalentError(
                f"{where}: {label}: {item!r} is not col:operator:original -> mutated"
            )
    if len(set(entry.at)) != len(entry.at):
        raise EquivalentError(f"{where}: {label}: a position given twice")
    return entry


def _section(path: Path, key: str) -> list[Any]:
    """The list under ``key`` in the YAML file ``path`` (empty if the file is missing)."""
    import yaml

    if not path.exists():
        return []
    data = yaml.safe_load(path.read_text()) or {}
    entries = data.get(key) or []
    if not isinstance(entries, list):
        raise EquivalentError(f"{path}: {key} is a list")
    return entries


def load_equivalents(path: Path = EQUIVALENT_FILE) -> list[Equivalent]:
    """The ``equivalent:`` entries of ``path``, each checked (see :func:`_entry`)."""
    return [
        _entry(raw, f"{path.name}: equivalent #{i + 1}")
        for i, raw in enumerate(_section(path, "equivalent"))
    ]


@dataclass(frozen=True)
class Matched:
    """The entries matched against the mutants of a run."""

    #: Mutant id -> the entry naming it.
    by_mutant: dict[str, Equivalent]
    #: Per position or id of the entries (in file order), the mutants it covers.
    covered: list[tuple[Equivalent, list[Mutant]]]

    @property
    def stale(self) -> list[Equivalent]:
        """Entries matching no mutant: the code they named has changed."""
        return [e for e, found in self.covered if not found]

    @property
    def duplicates(self) -> list[tuple[Mutant, list[Equivalent]]]:
        """Mutants named by more than one entry (each needs one reason, in one place)."""
        naming: dict[str, tuple[Mutant, list[Equivalent]]] = {}
        for entry, found in self.covered:
            for mutant in found:
                naming.setdefault(mutant.id, (mutant, []))[1].append(entry)
        return [(m, entries) for m, entries in naming.values() if len(entries) > 1]

    @property
    def ambiguous(self) -> list[tuple[Equivalent, list[Mutant]]]:
        """Entries matching more than one mutant (a repeated line): each needs ``function``."""
        return [(e, found) for e, found in self.covered if len(found) > 1]


def match_equivalents(mutants: Sequence[Mutant], entries: Sequence[Equivalent]) -> Matched:
    """Which mutant each position (or id) of the entries names; the first entry naming a
    mutant keeps it.  ``covered`` has one item per position (see :meth:`Equivalent.units`)."""
    by_mutant: dict[str, Equivalent] = {}
    covered = []
    for entry in (unit for e in entries for unit in e.units()):
        found = [m for m in mutants if entry.matches(m)]
        for mutant in found:
            by_mutant.setdefault(mutant.id, entry)
        covered.append((entry, found))
    return Matched(by_mutant, covered)


@dataclass(frozen=True)
class LibraryOnly:
    """An entry of ``library_only:``: a function of the reference no operation calls (only
    its own unit tests, as library API).  Its mutants on lines no case executes are reported
    as unreachable from the operations, not scored; its executed lines are scored as usual."""

    module: str
    function: str
    reason: str

    def matches(self, mutant: Mutant) -> bool:
        """Whether ``mutant`` lies in this function (or a function nested in it)."""
        return mutant.module == self.module and (
            mutant.function == self.function or mutant.function.startswith(self.function + ".")
        )


def load_library_only(path: Path = EQUIVALENT_FILE) -> list[LibraryOnly]:
    """The ``library_only:`` entries of ``path``; each must give a reason."""
    entries = []
    for raw in _section(path, "library_only"):
        entry = LibraryOnly(**{k: str(v) for k, v in raw.items()})
        if not entry.reason.strip():
            raise EquivalentError(
                f"{path}: library_only {entry.module}.{entry.function}: no reason"
            )
        entries.append(entry)
    return entries


def classify_unreachable(
    results: Sequence[Result], library: Sequence[LibraryOnly]
) -> tuple[list[Result], list[LibraryOnly]]:
    """Survivors no case executes that lie in a ``library_only`` function or in an ``_op_*``
    input-type guard become ``unreachable``; and the entries naming no mutant (stale).

    Only mutants on lines no case executes are reclassified: a survivor on an executed line
    is a missing case wherever it lies.
    """
    used: set[LibraryOnly] = set()
    out = []
    for result in results:
        m = result.mutant
        for entry in library:
            if entry.matches(m):
                used.add(entry)
        if result.status != "survived" or result.note != UNREACHED:
            out.append(result)
            continue
        owner = next((e for e in library if e.matches(m)), None)
        if owner is not None:
            note = f"library only: {owner.function}"
        elif m.guard:
            note = f"input-type guard of {m.function} (schema-valid cases never reach it)"
        else:
            out.append(result)
            continue
        out.append(Result(m, "unreachable", (), 0, note))
    modules = {r.mutant.module for r in results}
    stale = [e for e in library if e not in used and e.module in modules]
    return out, stale
