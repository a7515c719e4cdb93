"""Expectations files: the known failures of one implementation, kept honest.

A YAML file lists case ids or glob patterns, each marked ``xfail`` (the implementation is
known to fail it; ``reason`` says what it does instead, ``issue`` may link a report),
``xerror`` (it is known to crash, hang or break the protocol on it) or ``skip`` (do not run
it, with a reason).  Strict: an xfail or xerror case that passes is *xpassed* and fails the
run, an ``xerror`` case that answers wrongly fails, and an entry that matches no case of the
suite is an error, so the file never goes stale.  :mod:`runner.baseline` updates such a file
from a run (``--write-expectations``).

```yaml
implementation: flux-core 0.88
expectations:
  - id: hostlist.decode.padding-*
    status: xfail
    reason: pads each element of an idlist separately
    issue: https://example.org/issue/1
  - id: idset.decode.huge-id
    status: skip
    reason: wraps large ids silently; skipped until fixed
  - id: R.validate.zero-times-are-unset
    status: xfail
    reason: refuses an expiration of 0 after a start
    editions: ['2026-08-13']
```

``editions`` (optional) limits an entry to runs that follow those editions of the specs
(``cases/editions.yaml``); a case of one edition only runs in that one, so its entry needs none,
but ``--write-expectations`` notes it there for the reader.
"""

from __future__ import annotations

import bisect
import dataclasses
import fnmatch
import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from flux_conformance.runner._yaml import YamlError, load_document
from flux_conformance.runner.cases import Case
from flux_conformance.runner.engine import CaseResult, Outcome
from flux_conformance.runner.errors import ConformanceError

__all__ = ["STATUSES", "Entry", "Expectations", "ExpectationsError"]

#: An entry's status: ``xfail`` a wrong answer is expected (an errored case is excused too, as
#: files written before ``xerror`` record crashes so), ``xerror`` a crash, hang or broken
#: protocol is expected, ``skip`` the case is not run.
STATUSES = ("xfail", "xerror", "skip")


class ExpectationsError(ConformanceError):
    """The expectations file is malformed or stale (one problem a line)."""

    def lines(self) -> list[str]:
        """Each problem on its own line."""
        return [f"error: {line}" for line in str(self).splitlines()]


@dataclass(frozen=True)
class Entry:
    """One line of an expectations file."""

    pattern: str
    status: str
    reason: str
    issue: str | None
    line: int
    #: The editions in whose runs the entry applies (empty: every edition).
    editions: tuple[str, ...] = ()

    def matches(self, case_id: str) -> bool:
        """Whether this entry covers ``case_id`` (exact, or glob)."""
        return case_id == self.pattern or fnmatch.fnmatchcase(case_id, self.pattern)


@dataclass(frozen=True)
class Expectations:
    """A loaded expectations file."""

    path: Path
    entries: tuple[Entry, ...]

    @classmethod
    def load(cls, path: Path) -> Expectations:
        """Read and check ``path``."""
        try:
            doc = load_document(path)
        except (YamlError, OSError) as exc:
            raise ExpectationsError(f"{path}: {exc}") from None
        data = doc.data
        if not isinstance(data, dict) or not isinstance(data.get("expectations"), list):
            raise ExpectationsError(f"{path}:1: needs a top-level 'expectations' list")
        unknown = set(data) - {"implementation", "expectations"}
        if unknown:
            raise ExpectationsError(f"{path}:1: unknown top-level keys {sorted(unknown)}")
        entries = []
        for index, raw in enumerate(data["expectations"]):
            line = doc.line_of(["expectations", index])
            if not isinstance(raw, dict):
                raise ExpectationsError(
                    f"{path}:{line}: an entry is a mapping with id, status, reason"
                )
            extra = set(raw) - {"id", "status", "reason", "issue", "editions"}
            if extra:
                raise ExpectationsError(f"{path}:{line}: unknown fields {sorted(extra)}")
            if not isinstance(raw.get("id"), str) or not raw["id"]:
                raise ExpectationsError(f"{path}:{line}: 'id' (a case id or glob) is required")
            if raw.get("status") not in STATUSES:
                raise ExpectationsError(f"{path}:{line}: 'status' must be xfail, xerror or skip")
            if not isinstance(raw.get("reason"), str) or not raw["reason"].strip():
                raise ExpectationsError(
                    f"{path}:{line}: 'reason' must say what the implementation does"
                )
            issue = raw.get("issue")
            if issue is not None and not isinstance(issue, str):
                raise ExpectationsError(f"{path}:{line}: 'issue' must be a string (a link)")
            editions = raw.get("editions", [])
            if "editions" in raw and not (
                isinstance(editions, list)
                and editions
                and all(isinstance(e, str) and e for e in editions)
            ):
                raise ExpectationsError(
                    f"{path}:{line}: 'editions' is a list of edition names (quoted dates)"
                )
            entries.append(
                Entry(raw["id"], raw["status"], raw["reason"], issue, line, tuple(editions))
            )
        return cls(path, tuple(entries))

    def in_edition(self, edition: str, known: Iterable[str]) -> Expectations:
        """The entries that apply in a run following ``edition``.

        ``known`` are the suite's edition names: an entry naming another is an error.
        """
        names = set(known)
        wrong = [e for e in self.entries if set(e.editions) - names]
        if wrong:
            raise ExpectationsError(
                "\n".join(
                    f"{self.path}:{e.line}: editions {list(e.editions)} are not all among "
                    f"{sorted(names)}"
                    for e in wrong
                )
            )
        kept = tuple(e for e in self.entries if not e.editions or edition in e.editions)
        return dataclasses.replace(self, entries=kept)

    @functools.cached_property
    def _index(self) -> _Index:
        return _Index(self.entries)

    def entry_for(self, case_id: str) -> Entry | None:
        """The entry covering ``case_id``: an exact id wins over a glob; else the first glob.

        The rule, plainly: the first entry whose pattern is ``case_id`` itself, else the first
        whose glob matches it.  :class:`_Index` finds the same entry without trying every one.
        """
        found = self._index.first(case_id)
        return None if found is None else self.entries[found]

    def stale(self, case_ids: Iterable[str]) -> list[Entry]:
        """Entries that match no case of the suite.

        The rule, plainly: an entry is stale when no case id is its pattern or matches its
        glob.  :class:`_Index` tries each glob only on the ids that start with its prefix.
        """
        unmatched = self._index.unmatched(case_ids)
        return [e for i, e in enumerate(self.entries) if i in unmatched]

    def check_not_stale(self, case_ids: Iterable[str]) -> None:
        """Raise :class:`ExpectationsError` naming every entry that matches no case."""
        stale = self.stale(case_ids)
        if stale:
            raise ExpectationsError(
                "\n".join(
                    f"{self.path}:{entry.line}: {entry.pattern!r} matches no case "
                    "(stale entry: remove or fix it)"
                    for entry in stale
                )
            )

    def skip_reason(self, case: Case) -> str | None:
        """Why ``case`` is not to be run, if the file says so."""
        entry = self.entry_for(case.id)
        return f"expectations: {entry.reason}" if entry and entry.status == "skip" else None

    def decide(self, result: CaseResult) -> CaseResult:
        """Turn expected failures into xfailed, and unexpected passes into xpassed."""
        entry = self.entry_for(result.case.id)
        if entry is None or entry.status == "skip":
            return result
        where = f"{self.path}:{entry.line}"
        if result.fault:
            reason = f"{result.reason}; {where} cannot excuse it: the {result.fault} is at fault"
            return dataclasses.replace(result, reason=reason)
        if entry.status == "xerror" and result.outcome is Outcome.FAILED:
            reason = f"{result.reason}; {where} expects it to error ({entry.reason}): update it"
            return dataclasses.replace(result, reason=reason)
        if result.outcome in (Outcome.FAILED, Outcome.ERRORED):
            reason = f"expected failure ({where}): {entry.reason}; this run: {result.reason}"
            return CaseResult(
                result.case, Outcome.XFAILED, result.reply, reason, result.diff, result.seconds
            )
        if result.outcome in (Outcome.PASSED, Outcome.UNCHECKED):
            did = "passed" if result.outcome is Outcome.PASSED else "refused (category not checked)"
            reason = f"{did}, but {where} expects it to fail ({entry.reason}): remove the entry"
            return CaseResult(
                result.case, Outcome.XPASSED, result.reply, reason, "", result.seconds
            )
        return result


_GLOB_CHARACTERS = re.compile(r"[*?\[]")


class _Glob:
    """One glob entry: its index in the file, its literal prefix, and the rest as a matcher.

    Only the rest after the prefix is compiled (``fnmatch.translate`` reads a glob from left
    to right, and the prefix holds no wildcard, so the prefix and the rest can be matched one
    after the other), and rests are shared: ``*``, ``?`` or ``[0-9]*`` are compiled once for a
    whole file, where compiling each of 28,000 globs whole takes seconds.
    """

    __slots__ = ("_rest", "index", "prefix")

    def __init__(self, index: int, pattern: str, prefix: str) -> None:
        self.index = index
        self.prefix = prefix
        self._rest = pattern[len(prefix) :]

    def matches(self, case_id: str) -> bool:
        """``fnmatchcase(case_id, pattern)``."""
        return (
            case_id.startswith(self.prefix)
            and _rest_matcher(self._rest)(case_id, len(self.prefix)) is not None
        )


@functools.lru_cache(maxsize=4096)
def _rest_matcher(rest: str) -> Callable[[str, int], object]:
    return re.compile(fnmatch.translate(rest)).match


class _Index:
    """The entries of an expectations file, indexed so that a case is matched in few steps.

    Exact patterns (no ``*``, ``?`` or ``[``) are looked up in a dict.  Globs are grouped by
    their literal prefix (the text before the first of those characters, which a matching id
    must start with), so a case id tries only the globs whose prefix it starts with: one dict
    lookup per distinct prefix length, not one match per entry.  A glob that starts with a
    wildcard has the empty prefix and is tried for every id.
    """

    def __init__(self, entries: Sequence[Entry]) -> None:
        self.exact: dict[str, list[int]] = {}
        self.globs: dict[str, list[_Glob]] = {}
        for index, entry in enumerate(entries):
            # An exact id wins over a glob even when the "glob" is that very id.
            self.exact.setdefault(entry.pattern, []).append(index)
            wildcard = _GLOB_CHARACTERS.search(entry.pattern)
            if wildcard is not None:
                prefix = entry.pattern[: wildcard.start()]
                self.globs.setdefault(prefix, []).append(_Glob(index, entry.pattern, prefix))
        self.lengths = sorted({len(prefix) for prefix in self.globs})
        self.size = len(entries)

    def _groups(self, case_id: str) -> list[list[_Glob]]:
        groups = []
        for length in self.lengths:
            if length > len(case_id):
                break
            group = self.globs.get(case_id[:length])
            if group is not None:
                groups.append(group)
        return groups

    def first(self, case_id: str) -> int | None:
        """The index of the entry covering ``case_id`` (the rule of ``entry_for``)."""
        exact = self.exact.get(case_id)
        if exact is not None:
            return exact[0]
        best: int | None = None
        for group in self._groups(case_id):
            for glob in group:  # in file order: the first match is the group's best
                if best is not None and glob.index > best:
                    break
                if glob.matches(case_id):
                    best = glob.index
                    break
        return best

    def unmatched(self, case_ids: Iterable[str]) -> set[int]:
        """The indexes of the entries that cover none of ``case_ids``."""
        ids = sorted(set(case_ids))
        present = set(ids)
        found = {
            i for pattern, indexes in self.exact.items() if pattern in present for i in indexes
        }
        for prefix, group in self.globs.items():
            # The ids starting with the prefix lie together in sorted order.
            start = bisect.bisect_left(ids, prefix)
            end = start
            while end < len(ids) and ids[end].startswith(prefix):
                end += 1
            for glob in group:
                if glob.index not in found and any(map(glob.matches, ids[start:end])):
                    found.add(glob.index)
        return set(range(self.size)) - found
