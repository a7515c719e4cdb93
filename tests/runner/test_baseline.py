"""``--write-expectations`` updates a baseline for what the run measured, and nothing else.

It used to write the file anew from the run's failures: entries outside the selection were
dropped, reasons written by hand replaced, the file written after an interrupted run, an
errored case recorded as an expected wrong answer, and the file written in place.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support import MINI

from flux_conformance.runner.cli import main
from flux_conformance.runner.expectations import Expectations

WRONG = ("--impl", "python:inprocess_fakes:Wrong")
GOOD = ("--impl", "python:inprocess_fakes:good")

BASELINE = """\
# Our baseline for the Wrong fake: keep these notes.
implementation: wrong
expectations:
  # Tracked upstream; the reason is ours.
  - id: mini.range
    status: xfail
    reason: answers nothing at all (written by hand)
    issue: https://example.org/1
  - id: mini.list  # a note on the line
    status: xfail
    reason: also nothing
  - id: 'mini.b*'
    status: xfail
    reason: brackets, by hand
  - id: mini.degenerate
    status: skip
    reason: not asked
"""


def _write(capsys, tmp_path: Path, *argv: str, body: str = BASELINE) -> tuple[int, Path, str]:
    base = tmp_path / "base.yaml"
    base.write_text(body)
    argv = ("run", "--cases", str(MINI), "--expectations", str(base), *argv)
    code = main([*argv, "--write-expectations", str(base)])
    return code, base, capsys.readouterr().err


def test_entries_outside_the_selection_and_unchanged_ones_are_kept_line_for_line(
    capsys, tmp_path: Path
) -> None:
    code, base, err = _write(capsys, tmp_path, *WRONG, "--id", "mini.range", "--id", "mini.l*")
    assert code == 1  # mini.leading-zero failed with no entry
    text = base.read_text()
    assert text.startswith(BASELINE)  # every line people wrote, comments included
    added = Expectations.load(base).entries[4:]
    assert [(e.pattern, e.status) for e in added] == [("mini.leading-zero", "xfail")]
    assert f"wrote {base}" in err
    assert main(["run", "--cases", str(MINI), *WRONG, "--expectations", str(base)]) == 0
    capsys.readouterr()


def test_a_case_that_now_passes_leaves_the_file_and_only_it(capsys, tmp_path: Path) -> None:
    code, base, _ = _write(capsys, tmp_path, *GOOD, "--id", "mini.range")
    assert code == 1  # xpassed
    assert base.read_text() == BASELINE.replace(
        "  # Tracked upstream; the reason is ours.\n  - id: mini.range\n    status: xfail\n"
        "    reason: answers nothing at all (written by hand)\n"
        "    issue: https://example.org/1\n",
        "",
    )


def test_a_glob_with_a_changed_case_is_narrowed_keeping_its_reason(capsys, tmp_path) -> None:
    body = "expectations:\n  # all of them\n  - id: 'mini.*'\n    status: xfail\n    reason: mine\n"
    code, base, _ = _write(capsys, tmp_path, *GOOD, "--id", "mini.range", body=body)
    assert code == 1
    entries = Expectations.load(base).entries
    assert [(e.pattern, e.reason) for e in entries] == [
        (i, "mine") for i in ("mini.brackets", "mini.degenerate", "mini.leading-zero", "mini.list")
    ]
    assert "  # all of them\n" in base.read_text()


def test_errored_cases_are_recorded_as_errors(capsys, tmp_path: Path) -> None:
    base = tmp_path / "new.yaml"
    impl = ("--impl", "python:inprocess_fakes:RaisingAfterFirst")
    assert main(["run", "--cases", str(MINI), *impl, "--write-expectations", str(base)]) == 1
    entries = Expectations.load(base).entries
    assert len(entries) == 5
    assert {e.status for e in entries} == {"xerror"}
    assert all(e.reason.startswith("errored: ") for e in entries)
    assert main(["run", "--cases", str(MINI), *impl, "--expectations", str(base)]) == 0
    # A wrong answer is not the error the entry expects.
    assert main(["run", "--cases", str(MINI), *WRONG, "--expectations", str(base)]) == 1
    assert "expects it to error" in capsys.readouterr().out


class _Interrupting:
    """Answers the runner's first request and two cases wrongly, then is interrupted."""

    def __init__(self) -> None:
        self.calls = 0

    def run(self, operation, input, **options):
        self.calls += 1
        if self.calls > 3:
            raise KeyboardInterrupt
        return {"output": []}


def test_an_interrupted_run_writes_nothing(capsys, tmp_path: Path, monkeypatch) -> None:
    import inprocess_fakes

    monkeypatch.setattr(inprocess_fakes, "Interrupting", _Interrupting, raising=False)
    before = (tmp_path / "base.yaml", BASELINE)
    code, base, err = _write(capsys, tmp_path, "--impl", "python:inprocess_fakes:Interrupting")
    assert code == 130
    assert base.read_text() == before[1]
    assert f"not written: {base} (the run was interrupted)" in err


def test_the_baseline_is_replaced_whole(capsys, tmp_path: Path) -> None:
    base = tmp_path / "base.yaml"
    base.write_text(BASELINE)
    with base.open(encoding="utf-8") as reader:
        code, base, _ = _write(capsys, tmp_path, *WRONG)
        assert code == 1
        assert reader.read() == BASELINE  # the old file was not rewritten in place
        assert os.fstat(reader.fileno()).st_ino != base.stat().st_ino
    assert sorted(p.name for p in tmp_path.iterdir()) == ["base.yaml"]


@pytest.mark.parametrize("body", ["expectations: [{id: mini.list, status: xfail, reason: r}]\n"])
def test_a_flow_style_file_is_written_anew_with_its_entries(capsys, tmp_path, body) -> None:
    code, base, _ = _write(capsys, tmp_path, *WRONG, "--id", "mini.range", body=body)
    assert code == 1
    entries = Expectations.load(base).entries
    assert [(e.pattern, e.reason) for e in entries[:1]] == [("mini.list", "r")]
    assert [e.pattern for e in entries[1:]] == ["mini.range"]


# -- how the file is edited: comments go with the entry below them, the rest stays ------------

COMMENTED = """\
expectations:

  # about range
  - id: mini.range
    status: xfail
    reason: r1
  # about list
  - id: mini.list
    status: xfail
    reason: r2
  # about brackets, one
  # about brackets, two
  - id: mini.brackets
    status: xfail
    reason: r3
  - {id: mini.degenerate, status: xfail, reason: r4}
  # about leading-zero
  - id: mini.leading-zero
    status: xfail
    reason: r5

# about the implementation
implementation: good
"""

RANGE_BRACKETS_LEADING_ZERO_GONE = """\
expectations:

  # about list
  - id: mini.list
    status: xfail
    reason: r2
  - {id: mini.degenerate, status: xfail, reason: r4}

# about the implementation
implementation: good
"""

LIST_DEGENERATE_GONE = """\
expectations:

  # about range
  - id: mini.range
    status: xfail
    reason: r1
  # about brackets, one
  # about brackets, two
  - id: mini.brackets
    status: xfail
    reason: r3
  # about leading-zero
  - id: mini.leading-zero
    status: xfail
    reason: r5

# about the implementation
implementation: good
"""


@pytest.mark.parametrize(
    ("passing", "left"),
    [
        (("mini.range", "mini.brackets", "mini.leading-zero"), RANGE_BRACKETS_LEADING_ZERO_GONE),
        (("mini.list", "mini.degenerate"), LIST_DEGENERATE_GONE),
    ],
    ids=["first-middle-last", "second-and-one-line"],
)
def test_a_removed_entry_takes_the_comments_above_it_and_nothing_else(
    capsys, tmp_path: Path, passing, left
) -> None:
    ids = [arg for case_id in passing for arg in ("--id", case_id)]
    code, base, _ = _write(capsys, tmp_path, *GOOD, *ids, body=COMMENTED)
    assert code == 1  # xpassed
    assert base.read_text() == left


LONE_DASHES = """\
expectations:
  -
    id: mini.range
    status: xfail
    reason: r1
  -
    id: mini.list
    status: xfail
    reason: r2
"""


def test_an_entry_written_below_a_lone_dash_is_removed_with_its_dash(capsys, tmp_path) -> None:
    code, base, _ = _write(capsys, tmp_path, *GOOD, "--id", "mini.list", body=LONE_DASHES)
    assert code == 1
    assert base.read_text() == LONE_DASHES[: LONE_DASHES.index("  -\n    id: mini.list")]


@pytest.mark.parametrize(
    ("body", "left"),
    [
        # A list indented by one space; the file's last line has no newline.
        (
            "expectations:\n # about range\n - id: mini.range\n   status: xfail\n   reason: r1\n"
            " # about list\n - {id: mini.list, status: xfail, reason: r2}\n# the end",
            "expectations:\n # about list\n - {id: mini.list, status: xfail, reason: r2}\n"
            "# the end",
        ),
        (
            "expectations:\n - id: mini.list\n   status: xfail\n   reason: r2\n"
            " - {id: mini.range, status: xfail, reason: r1}\n\n# the end\n",
            "expectations:\n - id: mini.list\n   status: xfail\n   reason: r2\n\n# the end\n",
        ),
        (
            "expectations:\n - id: mini.list\n   status: xfail\n   reason: r2\n"
            " # about range\n - {id: mini.range, status: xfail, reason: r1}\n# the end\n",
            "expectations:\n - id: mini.list\n   status: xfail\n   reason: r2\n# the end\n",
        ),
    ],
    ids=["first-entry", "last-entry-then-blank-line", "last-entry-with-comment"],
)
def test_lines_after_the_list_at_the_margin_stay(capsys, tmp_path, body, left) -> None:
    code, base, _ = _write(capsys, tmp_path, *GOOD, "--id", "mini.range", body=body)
    assert code == 1
    assert base.read_text() == left


# PyYAML's own loader (without libyaml) ends the list in the middle of a last line that has no
# newline; libyaml's ends it on the line after.  The file is edited alike with either.
@pytest.mark.parametrize("loader", ["libyaml-if-installed", "pure-python"])
def test_an_entry_is_added_on_a_line_of_its_own_after_a_last_line_without_newline(
    capsys, tmp_path, monkeypatch, loader
) -> None:
    if loader == "pure-python":
        import yaml

        from flux_conformance.runner import _yaml

        monkeypatch.setattr(_yaml, "_Loader", yaml.SafeLoader)
    body = "expectations:\n  - id: mini.range\n    status: xfail\n    reason: r1"
    code, base, _ = _write(
        capsys, tmp_path, *WRONG, "--id", "mini.range", "--id", "mini.list", body=body
    )
    assert code == 1
    assert base.read_text() == body + (
        "\n  - id: mini.list\n    status: xfail\n"
        '    reason: \'failed: answers {"output": []} where the case expects {"output": [1, 5]}\'\n'
    )


def test_a_glob_narrowed_keeps_the_comments_above_it_not_those_inside(capsys, tmp_path) -> None:
    body = (
        "expectations:\n  # all of them\n  - id: 'mini.*'\n    # inside\n"
        "    status: xfail\n    reason: mine\n"
    )
    code, base, _ = _write(capsys, tmp_path, *GOOD, "--id", "mini.range", body=body)
    assert code == 1
    text = base.read_text()
    assert text.startswith("expectations:\n  # all of them\n  - id: mini.brackets\n")
    assert "# inside" not in text


def test_a_file_left_with_no_entry_is_still_an_expectations_file(capsys, tmp_path) -> None:
    body = "# ours\nexpectations:\n  - id: mini.range\n    status: xfail\n    reason: r1\n"
    code, base, _ = _write(capsys, tmp_path, *GOOD, "--id", "mini.range", body=body)
    assert code == 1
    assert base.read_text() == "# ours\nexpectations: []\n"
    assert Expectations.load(base).entries == ()


def test_a_flow_style_file_keeps_its_leading_comments(capsys, tmp_path) -> None:
    body = "# ours\nexpectations: [{id: mini.list, status: xfail, reason: r}]\n"
    code, base, _ = _write(
        capsys, tmp_path, *WRONG, "--id", "mini.list", "--id", "mini.range", body=body
    )
    assert code == 1
    assert base.read_text().startswith("# ours\nexpectations:\n- id: mini.list\n")


def test_an_entry_of_another_edition_is_neither_used_nor_changed(capsys, tmp_path) -> None:
    limited = "expectations:\n  - id: mini.range\n    status: xfail\n    reason: r1\n"
    limited += "    editions: ['2025-07-31']\n"
    # The latest edition: the entry does not apply, the failure gets an entry of its own.
    code, base, _ = _write(capsys, tmp_path, *WRONG, "--id", "mini.range", body=limited)
    assert code == 1
    entries = Expectations.load(base).entries
    assert [(e.pattern, e.status, e.editions) for e in entries] == [
        ("mini.range", "xfail", ("2025-07-31",)),
        ("mini.range", "xfail", ("2026-08-13",)),  # never two entries for one edition
    ]
    assert base.read_text().startswith(limited)
    # Its own edition: the entry applies, and a pass removes it.
    code, base, _ = _write(
        capsys, tmp_path, *GOOD, "--id", "mini.range", "--edition", "2025-07-31", body=limited
    )
    assert code == 1
    assert Expectations.load(base).entries == ()
    assert base.read_text().endswith("\nexpectations: []\n")


def test_a_pass_in_one_edition_leaves_the_entry_for_the_others_it_lists(capsys, tmp_path) -> None:
    body = "expectations:\n  # ours\n  - id: mini.range\n    status: xfail\n    reason: r1\n"
    both = body + "    editions: ['2025-07-31', '2026-08-13']\n"
    code, base, _ = _write(
        capsys, tmp_path, *GOOD, "--id", "mini.range", "--edition", "2025-07-31", body=both
    )
    assert code == 1  # xpassed in 2025-07-31; the latest edition was not run
    assert base.read_text() == body + "    editions:\n    - '2026-08-13'\n"
    # The latest edition still holds the wrong fake to its entry.
    argv = ["run", "--cases", str(MINI), *WRONG, "--id", "mini.range"]
    assert main([*argv, "--expectations", str(base)]) == 0
    capsys.readouterr()
    # An entry that lists no edition speaks for every one: a pass removes it.
    code, base, _ = _write(
        capsys, tmp_path, *GOOD, "--id", "mini.range", "--edition", "2025-07-31", body=body
    )
    assert code == 1
    assert Expectations.load(base).entries == ()


def test_a_change_in_one_edition_is_written_for_it_alone(capsys, tmp_path) -> None:
    body = "expectations:\n  - id: 'mini.*'\n    status: xerror\n    reason: mine\n"
    body += "    editions: ['2025-07-31', '2026-08-13']\n"
    code, base, _ = _write(capsys, tmp_path, *WRONG, "--edition", "2025-07-31", body=body)
    assert code == 1  # wrong answers where the entry expects errors
    entries = Expectations.load(base).entries
    # The glob stays, as written, for the edition not run; this edition's cases are its own.
    assert (entries[0].pattern, entries[0].status, entries[0].reason, entries[0].editions) == (
        "mini.*",
        "xerror",
        "mine",
        ("2026-08-13",),
    )
    assert [(e.status, e.editions) for e in entries[1:]] == [("xfail", ("2025-07-31",))] * 5
    argv = ["run", "--cases", str(MINI), *WRONG, "--expectations", str(base)]
    assert main([*argv, "--edition", "2025-07-31"]) == 0
    assert main(argv) == 1  # the latest edition still expects errors
    capsys.readouterr()


def test_a_new_entry_quotes_300_characters_of_the_answer_and_of_the_expected_output(
    tmp_path: Path,
) -> None:
    import dataclasses
    import json

    from flux_conformance.runner.adapters.base import Reply
    from flux_conformance.runner.baseline import write_baseline
    from flux_conformance.runner.cases import Expected, load_suite
    from flux_conformance.runner.engine import CaseResult, Outcome

    wanted = list(range(1000, 1200))
    case = load_suite(MINI).cases[0]
    case = dataclasses.replace(case, expected=(Expected("output", wanted),))
    result = CaseResult(case, Outcome.FAILED, Reply("output", list(range(200))), "wrong")
    path = tmp_path / "new.yaml"
    write_baseline(path, [result], impl="x")
    (entry,) = Expectations.load(path).entries
    answer = json.dumps({"output": list(range(200))})[:300]
    expected = json.dumps({"output": wanted})[:300]
    assert entry.reason == (
        f"failed: answers {answer}... (cut) where the case expects {expected}... (cut)"
    )


def test_a_long_reason_is_written_folded_at_100_columns(capsys, tmp_path) -> None:
    reason = "a" * 11 + " bbb" * 20 + " cccc" + " ddd" * 25
    body = f"expectations:\n  - id: 'mini.*'\n    status: xfail\n    reason: {reason}\n"
    code, base, _ = _write(capsys, tmp_path, *GOOD, "--id", "mini.range", body=body)
    assert code == 1
    assert (
        "  - id: mini.brackets\n    status: xfail\n    reason: aaaaaaaaaaa" + " bbb" * 20 + "\n"
        "      cccc" + " ddd" * 24 + "\n      ddd\n"
    ) in base.read_text()
    assert all(e.reason == reason for e in Expectations.load(base).entries)
