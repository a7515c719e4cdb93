"""Matching an expectations file's entries to case ids: the plain rule, found by an index.

The rule (``Expectations.entry_for``): the first entry whose pattern is the case id itself,
else the first entry whose glob matches it.  ``_plain_entry_for`` and ``_plain_stale`` below
state it as a loop over every entry; the index must find the same entries while trying far
fewer of them (a file of 28,000 globs took minutes when every entry met every case).
"""

from __future__ import annotations

import fnmatch
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from support import globs_for

from flux_conformance.runner import expectations as module
from flux_conformance.runner.cases import load_suite
from flux_conformance.runner.expectations import Entry, Expectations


def _plain_entry_for(entries: tuple[Entry, ...], case_id: str) -> Entry | None:
    for entry in entries:
        if entry.pattern == case_id:
            return entry
    for entry in entries:
        if fnmatch.fnmatchcase(case_id, entry.pattern):
            return entry
    return None


def _plain_stale(entries: tuple[Entry, ...], ids: list[str]) -> list[Entry]:
    return [
        e
        for e in entries
        if not any(i == e.pattern or fnmatch.fnmatchcase(i, e.pattern) for i in ids)
    ]


def _expectations(patterns: list[str]) -> Expectations:
    entries = tuple(Entry(p, "xfail", f"reason {n}", None, n + 1) for n, p in enumerate(patterns))
    return Expectations(Path("exp.yaml"), entries)


_ID_TEXT = st.text(alphabet="ab.-[]!", max_size=6)
_PATTERN = st.text(alphabet="ab.-*?[]!", max_size=6)


@settings(max_examples=400, deadline=None)
@given(patterns=st.lists(_PATTERN | _ID_TEXT, max_size=8), ids=st.lists(_ID_TEXT, max_size=8))
def test_the_index_finds_what_the_plain_rule_finds(patterns: list[str], ids: list[str]) -> None:
    exp = _expectations(patterns)
    for case_id in ids:
        assert exp.entry_for(case_id) is _plain_entry_for(exp.entries, case_id), case_id
    assert exp.stale(ids) == _plain_stale(exp.entries, ids)


def test_an_exact_id_wins_over_an_earlier_glob_and_the_first_glob_wins() -> None:
    exp = _expectations(["idset.*", "idset.decode.*", "idset.decode.range", "idset.decode.r*"])
    assert exp.entry_for("idset.decode.range").pattern == "idset.decode.range"
    assert exp.entry_for("idset.decode.rest").pattern == "idset.*"
    assert exp.entry_for("hostlist.x") is None
    assert [e.pattern for e in exp.stale(["idset.decode.range"])] == []
    assert [e.pattern for e in exp.stale(["idset.encode.x"])] == [
        "idset.decode.*",
        "idset.decode.range",
        "idset.decode.r*",
    ]


def test_28000_globs_are_matched_without_trying_each_against_each_case(monkeypatch) -> None:
    ids = [c.id for c in load_suite().cases]
    patterns = globs_for(ids, 28_000)
    assert len(patterns) == 28_000
    exp = _expectations(patterns)
    tries = 0
    original = module._Glob.matches

    def counted(self: module._Glob, case_id: str) -> bool:
        nonlocal tries
        tries += 1
        return original(self, case_id)

    monkeypatch.setattr(module._Glob, "matches", counted)
    firsts = [exp.entry_for(case_id) for case_id in ids]
    assert exp.stale(ids) == []
    # Every entry tried on every case would be 28,000 tries a case, and as many again for
    # the stale check: a few tries a case and one or two an entry are what grouping costs.
    assert tries < 2 * len(patterns) + 20 * len(ids), (tries, len(ids))
    # The plain rule, on a sample (it is the slow way): each id's first covering entry is
    # among the first sixteen shapes written for every id.
    plain = exp.entries[: 16 * len(ids)]
    for first, case_id in list(zip(firsts, ids, strict=True))[::300]:
        assert first is _plain_entry_for(plain, case_id)


def test_a_glob_that_starts_with_a_wildcard_is_tried_on_every_id() -> None:
    exp = _expectations(["*.decode.range", "?dset.encode.x", "hostlist.*"])
    assert exp.entry_for("idset.decode.range").pattern == "*.decode.range"
    assert exp.entry_for("hostlist.decode.range").pattern == "*.decode.range"
    assert exp.entry_for("idset.encode.x").pattern == "?dset.encode.x"
    assert exp.entry_for("idset.decode.rangex") is None
    assert exp.stale(["idset.decode.range", "idset.encode.x"]) == [exp.entries[2]]


def test_an_entry_covers_its_own_id_and_what_its_glob_matches() -> None:
    glob = Entry("idset.decode.*", "xfail", "r", None, 1)
    assert glob.matches("idset.decode.range")
    assert not glob.matches("idset.encode.range")
    # Brackets are a glob's character class, and an id written with them covers itself too.
    bracketed = Entry("mini.b[1]", "xfail", "r", None, 1)
    assert bracketed.matches("mini.b[1]")
    assert bracketed.matches("mini.b1")
    assert not bracketed.matches("mini.b2")
