"""The reference's editions: the same names, default and revisions as the suite's editions.yaml."""

from __future__ import annotations

import pytest

from flux_conformance.reference import editions
from flux_conformance.reference.errors import InvalidError
from flux_conformance.reference.operations import run
from flux_conformance.runner.cases import load_suite


def test_the_reference_follows_the_editions_the_suite_lists() -> None:
    listed = load_suite().editions
    assert tuple(editions.EDITIONS) == listed.names
    assert editions.DEFAULT_EDITION == listed.default == editions.LATEST
    for edition in listed.editions:
        mine = editions.EDITIONS[edition.name]
        for spec, revision in edition.revisions.items():
            number = int(spec.removeprefix("RFC "))
            assert mine.revisions[number] == f"{revision.commit} ({revision.date})", spec
        assert set(mine.revisions) == {int(s.removeprefix("RFC ")) for s in edition.revisions}
        for alias in edition.aliases:
            assert editions.resolve(alias) == edition.name


def test_an_unknown_edition_is_refused_by_every_operation() -> None:
    with pytest.raises(InvalidError, match="unknown edition"):
        run("idset.decode", "1", edition="2019-01-01")
    assert editions.resolve(None) == editions.LATEST


def test_the_latest_edition_differs_from_the_first_by_its_rules_only() -> None:
    old, new = (editions.EDITIONS[name] for name in editions.EDITIONS)
    assert not any((old.range_max_optional, old.r_nslots, old.r_zero_time_unset))
    assert all((new.range_max_optional, new.r_nslots, new.r_zero_time_unset))
    count = {"count": {"min": 2, "max": 8}, "limit": 10}
    with pytest.raises(InvalidError):
        run("count.values", count, edition=old.name)
    assert run("count.values", count, edition=new.name) == [2, 3, 4, 5, 6, 7, 8]
