"""Selecting, identifying and summarising runs: exclusions, --version, reports' headers,
badges, shipped expectations in run, the checkout-drift warning, the bundled requirements
index behind --cases, and the edition counts of check."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET

import pytest
from support import MINI, ROOT

from flux_conformance.runner.cases import SuiteError, default_cases_dir, load_suite
from flux_conformance.runner.cli import main
from flux_conformance.runner.commands._common import checkout_drift
from flux_conformance.runner.engine import Filters, select

pytest_plugins = ["pytester"]


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _case_ids(out: str) -> list[str]:
    return [json.loads(line)["case"]["id"] for line in out.splitlines() if '"case"' in line]


# -- exclusion filters -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "left"),
    [
        (["--exclude-id", "mini.l*"], {"mini.range", "mini.brackets", "mini.degenerate"}),
        (
            ["--exclude-level", "should"],
            {"mini.range", "mini.list", "mini.leading-zero", "mini.degenerate"},
        ),
        (
            ["--exclude-tag", "range"],
            {"mini.list", "mini.leading-zero", "mini.brackets", "mini.degenerate"},
        ),
        (["--exclude-operation", "idset.*"], set()),
        (["--id", "mini.l*", "--exclude-id", "mini.list"], {"mini.leading-zero"}),
    ],
)
def test_exclusions_mirror_inclusions(capsys, argv, left):
    code, out, err = _run(capsys, "run", "--cases", str(MINI), "--json", "-", *argv)
    if not left:
        assert code == 2
        assert "no case matches the filters" in err
        return
    assert code == 0
    assert set(_case_ids(out)) == left


def test_exclusions_in_list_and_filters_json():
    suite = load_suite(MINI)
    filters = Filters(exclude_ids=("mini.range",), exclude_tags=("x",))
    assert "mini.range" not in {c.id for c in select(suite.cases, filters)}
    assert filters.to_json() == {"exclude_ids": ["mini.range"], "exclude_tags": ["x"]}


def test_exclusions_in_the_pytest_plugin(pytester):
    pytester.makeconftest("")
    result = pytester.runpytest(
        "--conformance-impl",
        "reference",
        "--conformance-cases",
        str(MINI),
        "--conformance-exclude-id",
        "mini.l*",
        "--conformance-exclude-level",
        "should",
    )
    result.assert_outcomes(passed=2)


# -- what a run records ----------------------------------------------------------------------


def test_version_prints_the_suite_digest(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    out = capsys.readouterr().out
    assert info.value.code == 0
    suite = load_suite()
    assert f"{len(suite.cases)} cases" in out
    assert suite.digest() in out


def test_digest_follows_what_cases_assert_not_their_layout(tmp_path):
    copy = tmp_path / "suite"
    shutil.copytree(MINI, copy)
    path = copy / "rfc22" / "idset.decode.yaml"
    before = load_suite(copy).digest()
    path.write_text(path.read_text().replace("A range expands.", "Reworded."))
    assert load_suite(copy).digest() == before
    path.write_text(path.read_text().replace("output: [1, 5]", "output: [1, 6]"))
    assert load_suite(copy).digest() != before


def test_reports_record_the_run(capsys, tmp_path):
    junit, md, html = tmp_path / "r.xml", tmp_path / "r.md", tmp_path / "r.html"
    code, out, _ = _run(
        capsys,
        "run",
        "--cases",
        str(MINI),
        "--exclude-tag",
        "range",
        "--json",
        "-",
        "--junit",
        str(junit),
        "--markdown",
        str(md),
        "--html",
        str(html),
    )
    assert code == 0
    header = json.loads(out.splitlines()[0])["header"]
    digest = load_suite(MINI).digest()
    assert header["suite"]["digest"] == digest
    assert header["suite"]["version"]
    assert header["implementation"]["name"] == "flux-conformance reference"
    assert header["edition"] == "2026-08-13"  # the latest, which runs unless told otherwise
    assert header["filters"] == {"exclude_tags": ["range"]}
    assert header["started"]
    props = {p.get("name"): p.get("value") for p in ET.parse(junit).getroot().iter("property")}
    assert props["suite.digest"] == digest
    assert props["edition"] == "2026-08-13"
    assert json.loads(props["filters"]) == {"exclude_tags": ["range"]}
    for text in (md.read_text(), html.read_text()):
        assert digest[:12] in text
        assert "exclude_tags range" in text
        assert "edition 2026-08-13" in text


def test_html_leaves_zero_counts_plain(capsys, tmp_path):
    page = tmp_path / "r.html"
    code, _, _ = _run(capsys, "run", "--cases", str(MINI), "--html", str(page))
    assert code == 0
    text = page.read_text()
    assert "<td class='failed'>" not in text
    assert "<td class='errored'>" not in text
    assert "<td class='zero'>0</td>" in text
    assert "<td class='passed'>" in text


# -- badge -----------------------------------------------------------------------------------


def test_badge_of_a_passing_and_a_failing_run(capsys, tmp_path):
    badge = tmp_path / "badge.json"
    assert _run(capsys, "run", "--cases", str(MINI), "--badge", str(badge))[0] == 0
    doc = json.loads(badge.read_text())
    must = sum(c.level == "must" for c in load_suite(MINI).cases)
    assert must == 3
    assert doc == {
        "schemaVersion": 1,
        "label": "flux-conformance",
        "message": "conforms: 3/3 must, 1/1 ops",
        "color": "brightgreen",
    }
    _run(
        capsys,
        "run",
        "--cases",
        str(MINI),
        "--badge",
        str(badge),
        "--impl",
        "python:inprocess_fakes:Wrong",
    )
    doc = json.loads(badge.read_text())
    assert doc["color"] == "red"
    assert doc["message"].startswith("does not conform: ")
    assert doc["message"].endswith("/3 must, 1/1 ops")
    assert ": 3/" not in doc["message"]


# -- expectations: one rule for run and compare ----------------------------------------------


def test_run_applies_a_shipped_adapters_expectations(capsys, monkeypatch, tmp_path):
    import flux_conformance.runner.commands._common as common

    shipped = tmp_path / "wrong.yaml"
    shipped.write_text(
        "expectations:\n  - id: 'mini.*'\n    status: xfail\n    reason: answers []\n"
    )
    # run finds it through the one rule (commands._common.expectations_path) it shares with
    # the pytest plugin.
    monkeypatch.setattr(common, "shipped_expectations", lambda impl: shipped)
    argv = ["run", "--cases", str(MINI), "--impl", "python:inprocess_fakes:Wrong"]
    code, out, _ = _run(capsys, *argv)
    assert code == 0
    assert "xfailed" in out
    code, _, _ = _run(capsys, *argv, "--no-shipped-expectations")
    assert code == 1


# -- where the cases come from ---------------------------------------------------------------


def test_header_names_the_cases_directory_and_the_other_edition(capsys):
    code, out, _ = _run(capsys, "run", "-o", "count.values")
    assert code == 0
    assert f"cases: {default_cases_dir().resolve()}" in out
    assert "case(s) of the other edition left out" in out


def test_checkout_drift_is_reported(tmp_path):
    checkout = tmp_path / "checkout"
    (checkout / "cases").mkdir(parents=True)
    shutil.copytree(MINI / "requirements", checkout / "cases" / "requirements")
    (checkout / "pyproject.toml").write_text("")
    installed = tmp_path / "installed"
    shutil.copytree(checkout / "cases", installed)
    assert checkout_drift(installed, cwd=checkout) is None
    (checkout / "cases" / "requirements" / "rfc22.yaml").write_text("changed")
    warning = checkout_drift(installed, cwd=checkout / "cases")
    assert warning is not None
    assert "pip install -e ." in warning
    assert checkout_drift(checkout / "cases", cwd=checkout) is None
    assert checkout_drift(installed, cwd=tmp_path) is None


def test_cases_without_requirements_use_the_bundled_index(tmp_path, capsys):
    own = tmp_path / "mine" / "rfc22"
    own.mkdir(parents=True)
    (own / "idset.decode.yaml").write_text(
        "operation: idset.decode\ncases:\n  - id: mine.one\n    description: One id.\n"
        "    input: '7'\n    output: [7]\n    requirements: [rfc22.ascending]\n"
    )
    assert load_suite(own.parent).requirements  # the bundled index
    code, out, _ = _run(capsys, "run", "--cases", str(own.parent))
    assert code == 0
    assert "1 passed" in out


def test_check_explains_the_editions(capsys):
    code, out, _ = _run(capsys, "check")
    assert code == 0
    suite = load_suite()
    common = sum(c.edition is None for c in suite.cases)
    for name in suite.editions.names:
        own = sum(c.edition == name for c in suite.cases)
        assert f"{common + own} under --edition {name} ({own} of that edition only)" in out


def test_a_missing_expectations_file_is_one_clean_error(capsys, tmp_path):
    code, _, err = _run(
        capsys, "run", "--cases", str(MINI), "--expectations", str(tmp_path / "none.yaml")
    )
    assert code == 2
    assert err.startswith("error: ")
    assert "Traceback" not in err


def test_one_version_for_package_reference_and_changelog():
    from flux_conformance import reference, runner

    assert reference.__version__ == runner.__version__
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## {runner.__version__} (" in changelog


def test_an_edition_is_chosen_by_name_or_alias_and_listed(capsys):
    suite = load_suite()
    old, latest = suite.editions.names
    assert suite.editions.default == latest
    for name in (old, "seed"):
        code, out, _ = _run(
            capsys, "run", "--edition", name, "--id", "count.values.dict-max-alone-*"
        )
        assert code == 0
        assert f"(edition {old})" in out
        assert "1 passed" in out
    code, out, _ = _run(capsys, "run", "--id", "count.values.dict-max-alone-*")
    assert f"(edition {latest})" in out
    code, _, err = _run(capsys, "run", "--edition", "2019-01-01")
    assert code == 2
    assert "unknown edition '2019-01-01'" in err
    code, out, _ = _run(capsys, "list", "--editions")
    assert code == 0
    for edition in suite.editions.editions:
        assert edition.name in out
        for spec, revision in edition.revisions.items():
            assert f"{spec}: {revision.commit} ({revision.date})" in out


def test_a_case_names_an_edition_the_folder_knows(tmp_path):
    folder = tmp_path / "cases"
    (folder / "rfc22").mkdir(parents=True)
    (folder / "rfc22" / "idset.decode.yaml").write_text(
        "operation: idset.decode\ncases:\n- id: mine.one\n  description: d\n  input: '1'\n"
        "  output: [1]\n  requirements: [rfc22.ascending]\n  edition: upstream\n"
    )
    with pytest.raises(SuiteError) as info:
        load_suite(folder)
    (problem,) = info.value.problems
    assert problem.line == 3
    assert "edition 'upstream' is not one of" in problem.message


def test_a_requirements_file_cites_the_commit_its_editions_follow(tmp_path):
    folder = tmp_path / "cases"
    shutil.copytree(ROOT / "cases" / "requirements", folder / "requirements")
    shutil.copy(ROOT / "cases" / "editions.yaml", folder / "editions.yaml")
    (folder / "rfc22").mkdir()
    assert load_suite(folder).cases == ()
    index = folder / "requirements" / "rfc20.yaml"
    text = index.read_text()
    assert "'2026-08-13': 'cfd3836'" in text
    index.write_text(text.replace("'2026-08-13': 'cfd3836'", "'2026-08-13': '8da980e'"))
    with pytest.raises(SuiteError) as info:
        load_suite(folder)
    (problem,) = info.value.problems
    assert problem.file == index
    assert "RFC 20 at 8da980e for edition '2026-08-13', which follows cfd3836" in problem.message
