"""``run --write-expectations FILE``: a baseline updated by one run, for that run's cases only.

A baseline is a file people keep: reasons written by hand, comments, links to reports.  A run
changes only what it measured, and only the lines that say it:

* an entry none of whose cases ran in this run (another selection, another edition, a
  ``skip``) is kept as it is, with its comments;
* an entry whose cases are still what it says (an ``xfail`` still failing, an ``xerror`` still
  erroring) is kept as it is: its reason is the reader's, not the run's;
* an entry whose case now passes is removed; one whose case now fails the other way (a wrong
  answer where it errored, or the reverse) is rewritten with the run's reason.  A glob entry
  with such a case is replaced by one entry per case it governs, each keeping the glob's
  reason, but for the changed cases;
* a case that failed or errored with no entry gets one: ``xfail`` for a wrong answer, ``xerror``
  for a crash, hang or broken protocol (the errored outcome, never taken for a wrong answer).

Editions: an entry without ``editions:`` speaks for every edition, as a new entry does (an
implementation's answer to a case that every edition shares rarely depends on the edition), so
a run in any edition updates it.  An entry that lists its editions speaks for those alone: a
run of one of them changes only that edition's part, and the entry stays, as written, for the
others it lists.  A new entry for a case that the file governs in another edition is limited to
the run's edition, so that no two entries ever apply to one case in one edition.

The file is edited line by line (every line of a kept entry, and the comment lines just above
it, stay byte for byte), then replaced whole (:mod:`runner.atomic`).  A file whose list is
written in flow style (``[...]``), or left with no entry, is written anew, with its leading
comments.

The caller writes no baseline after a run that was interrupted or whose implementation could
not be run: such a run measured nothing it could stand by.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml

from flux_conformance.runner._yaml import load_document
from flux_conformance.runner.atomic import write_atomic
from flux_conformance.runner.engine import CaseResult, Outcome
from flux_conformance.runner.expectations import Entry, Expectations
from flux_conformance.runner.report import compact_json

__all__ = ["write_baseline"]

_HEADER = (
    "# Baseline written by flux-conformance run --write-expectations.\n"
    "# Review each reason; an xfail that starts passing fails the run.\n"
)


def _new_entry(result: CaseResult) -> dict[str, Any] | None:
    """The entry a failed or errored case gets (None for any other outcome)."""
    if result.fault:
        return None  # the adapter or the suite must be fixed; nothing to record about the impl
    if result.outcome is Outcome.FAILED:
        status = "xfail"
    elif result.outcome is Outcome.ERRORED:
        status = "xerror"
    else:
        return None
    actual = compact_json(result.reply.to_json(), 300) if result.reply else "nothing"
    expected = compact_json(result.case.expected_json(), 300)
    entry: dict[str, Any] = {
        "id": result.case.id,
        "status": status,
        "reason": f"{result.outcome.value}: answers {actual} where the case expects {expected}",
    }
    if result.case.edition:
        entry["editions"] = [result.case.edition]
    return entry


def _still_holds(result: CaseResult) -> bool:
    """Whether ``result`` leaves the entry that governs its case as it is."""
    return result.outcome not in (Outcome.XPASSED, Outcome.FAILED, Outcome.ERRORED) or bool(
        result.fault
    )


def _as_dict(entry: Entry, pattern: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"id": pattern or entry.pattern, "status": entry.status}
    out["reason"] = entry.reason
    if entry.issue:
        out["issue"] = entry.issue
    if entry.editions:
        out["editions"] = list(entry.editions)
    return out


def _dumped(entries: Sequence[dict[str, Any]], indent: str) -> list[str]:
    """Entries as block-sequence lines, each line indented by ``indent``."""
    if not entries:
        return []
    text = yaml.safe_dump(list(entries), sort_keys=False, allow_unicode=True, width=100)
    return [indent + line for line in text.splitlines(keepends=True)]


@dataclasses.dataclass(frozen=True)
class _Layout:
    """Where a file's entries are: the lines before, each entry's lines, the lines after."""

    before: list[str]
    chunks: list[list[str]]
    after: list[str]
    indent: str


def _layout(text: str, document: Any) -> _Layout | None:
    """Split ``text`` into its entries' lines, or None when the list is not in block style."""
    root = document.root
    if not isinstance(root, yaml.MappingNode):
        return None
    node = next(
        (v for k, v in root.value if isinstance(k, yaml.ScalarNode) and k.value == "expectations"),
        None,
    )
    if not isinstance(node, yaml.SequenceNode) or node.flow_style or not node.value:
        return None
    lines = text.splitlines(keepends=True)
    starts = []
    for item in node.value:
        line = item.start_mark.line
        while line > 0 and not lines[line].lstrip().startswith("-"):
            line -= 1  # an item written as a lone "-" with its mapping below
        starts.append(line)
    end = min(node.end_mark.line, len(lines))
    if node.end_mark.column:
        end = min(end + 1, len(lines))
    column = len(lines[starts[0]]) - len(lines[starts[0]].lstrip())
    chunks = [lines[a:b] for a, b in zip(starts, [*starts[1:], end], strict=True)]
    after = lines[end:]
    before = lines[: starts[0]]
    # Comment lines just above an entry belong to it (they are about it).
    while before and before[-1].lstrip().startswith("#") and before[-1][:1].isspace():
        chunks[0].insert(0, before.pop())
    for index in range(len(chunks) - 1, 0, -1):
        previous = chunks[index - 1]
        moved = 0
        while moved < len(previous) - 1 and previous[-1 - moved].lstrip().startswith("#"):
            moved += 1
        if moved:
            chunks[index][:0] = previous[-moved:]
            del previous[-moved:]
    # Comments of the list's last lines at the margin are the file's, not the last entry's.
    last = chunks[-1]
    while len(last) > 1 and (not last[-1].strip() or not last[-1][:1].isspace()) and column:
        after.insert(0, last.pop())
    return _Layout(before, chunks, after, " " * column)


def _comments(chunk: list[str]) -> list[str]:
    """The comment lines above an entry's ``-``."""
    head = []
    for line in chunk:
        if not line.lstrip().startswith("#"):
            break
        head.append(line)
    return head


def write_baseline(
    path: Path,
    results: Sequence[CaseResult],
    *,
    impl: str,
    keep: Expectations | None = None,
    suite_ids: Iterable[str] = (),
    edition: str | None = None,
    editions: Sequence[str] = (),
) -> None:
    """Update (or write) the baseline at ``path`` from this run's ``results``.

    The baseline updated is ``path`` when it exists, else the expectations file the run was
    held to (``keep``), else none.  ``suite_ids`` are the ids of the suite's cases in the
    run's ``edition``: a glob entry that must be narrowed is replaced by entries for those it
    governs.  ``editions`` are the suite's edition names, oldest first: an entry that lists
    other editions besides ``edition`` keeps applying, as it was, in those.
    """
    source = path if path.exists() else (keep.path if keep is not None else None)
    by_id = {r.case.id: r for r in results}
    if source is None:
        fresh = [e for e in map(_new_entry, results) if e]
        doc = {"implementation": impl, "expectations": fresh}
        write_atomic(path, _HEADER + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
        return
    base = Expectations.load(source)
    text = source.read_text(encoding="utf-8")
    applying = base if edition is None else _in_edition(base, edition)
    elsewhere = dataclasses.replace(
        base, entries=tuple(e for e in base.entries if e not in applying.entries)
    )
    governed: dict[int, list[str]] = {}  # entry line -> the case ids it governs
    for case_id in {*by_id, *suite_ids}:
        entry = applying.entry_for(case_id)
        if entry is not None:
            governed.setdefault(entry.line, []).append(case_id)
    replacements: dict[int, list[dict[str, Any]] | None] = {}  # entry line -> new entries
    for entry in applying.entries:
        ids = sorted(governed.get(entry.line, ()))
        if entry.status == "skip" or all(_still_holds(by_id[i]) for i in ids if i in by_id):
            continue  # not run here, or still what it says: kept with its reason
        others = _other_editions(entry, edition, editions)
        # The entry as it was, for the editions this run did not follow; then this edition's.
        new = [{**_as_dict(entry), "editions": others}] if others else []
        for case_id in ids:
            result = by_id.get(case_id)
            if result is None or _still_holds(result):
                new.append(_limited(_as_dict(entry, case_id), edition if others else None))
            else:
                fresh_entry = _new_entry(result)
                if fresh_entry:
                    new.append(_limited(fresh_entry, edition if others else None))
        replacements[entry.line] = new
    covered = {i for ids in governed.values() for i in ids}
    added = [
        _limited(e, edition if elsewhere.entry_for(i) is not None else None)
        for i, r in by_id.items()
        if i not in covered
        for e in [_new_entry(r)]
        if e
    ]
    write_atomic(path, _edited(text, base, replacements, added, source))


def _in_edition(base: Expectations, edition: str) -> Expectations:
    kept = tuple(e for e in base.entries if not e.editions or edition in e.editions)
    return dataclasses.replace(base, entries=kept)


def _other_editions(entry: Entry, edition: str | None, editions: Sequence[str]) -> list[str]:
    """The editions besides the run's that ``entry`` lists, oldest first.

    None when it lists none: it speaks for every edition, and this run's evidence updates it.
    """
    if edition is None:
        return []
    return [e for e in editions if e in entry.editions and e != edition]


def _limited(entry: dict[str, Any], edition: str | None) -> dict[str, Any]:
    """``entry`` limited to ``edition`` (None: as it is)."""
    return entry if edition is None else {**entry, "editions": [edition]}


def _edited(
    text: str,
    base: Expectations,
    replacements: dict[int, list[dict[str, Any]] | None],
    added: list[dict[str, Any]],
    source: Path,
) -> str:
    """``text`` with the replaced entries' lines rewritten and the new entries appended."""
    document = load_document(source, what="expectations file")
    layout = _layout(text, document)
    left = any(replacements.get(e.line, True) for e in base.entries) or added
    if layout is None or not left:  # flow style, or an empty list: `expectations: []`
        kept = [_as_dict(e) for e in base.entries if e.line not in replacements]
        kept += [d for e in base.entries for d in (replacements.get(e.line) or [])]
        head = "".join(line for line in text.splitlines(keepends=True) if line.startswith("#"))
        data = document.data if isinstance(document.data, dict) else {}
        doc = {**data, "expectations": [*kept, *added]}
        return (head or _HEADER) + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    out = list(layout.before)
    for entry, chunk in zip(base.entries, layout.chunks, strict=True):
        if entry.line not in replacements:
            out += chunk
            continue
        replaced = replacements[entry.line] or []
        if replaced:  # the comments above an entry go with it, or stay above what replaces it
            out += _comments(chunk) + _dumped(replaced, layout.indent)
    if out and not out[-1].endswith("\n"):
        out[-1] += "\n"
    out += _dumped(added, layout.indent)
    out += layout.after
    return "".join(out)
