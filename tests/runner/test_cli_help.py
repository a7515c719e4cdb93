"""A command line that helps: every subcommand says what it does, a typo gets the name meant,
and the editions are offered by their own names only (retired names still work, with a
warning)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from support import MINI

from flux_conformance.runner.cli import build_parser, main
from flux_conformance.runner.commands import COMMANDS


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_every_subcommand_has_a_description() -> None:
    parsers = _subparsers()
    assert sorted(parsers) == sorted(COMMANDS)
    missing = [name for name, p in parsers.items() if not (p.description or "").strip()]
    assert missing == []
    # and says more than its one-line help in the command list
    for name, parser in parsers.items():
        assert len(parser.description or "") > 60, name


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_prints_the_description(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([name, "--help"])
    assert exc.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert " ".join((_subparsers()[name].description or "").split())[:40] in out


# -- typos ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (
            ["run", "-o", "idset.decod"],
            "unknown operation 'idset.decod'; did you mean 'idset.decode'?",
        ),
        (["list", "-o", "idset.decod"], "did you mean 'idset.decode'?"),
        (["list", "--operations", "-o", "idset.decod"], "did you mean 'idset.decode'?"),
        (["export", "-o", "hostlist.encod"], "did you mean 'hostlist.encode'?"),
        (["compare", "-o", "idset.decod"], "did you mean 'idset.decode'?"),
        (["run", "--exclude-operation", "idset.decod"], "did you mean 'idset.decode'?"),
        (["run", "-o", "idsett.*"], "-o 'idsett.*' matches no operation; did you mean 'idset.*'?"),
        (["coverage", "-o", "idsett.*"], "matches no operation; did you mean 'idset.*'?"),
        (["clarify", "-o", "idset.decod"], "did you mean 'idset.decode'?"),
        (["run", "--id", "idset.decode.emty"], "unknown case id 'idset.decode.emty'; did you mean"),
        (["run", "--tag", "nosuchtag"], "unknown tag 'nosuchtag'"),
        (["run", "--impl", "clustershel"], "did you mean 'clustershell'?"),
        (["run", "--edition", "2025-07-3"], "did you mean '2025-07-31'?"),
        (["list", "--edition", "latset"], "did you mean 'latest'?"),
    ],
)
def test_a_typo_gets_the_name_meant_and_exit_2(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(capsys, *argv)
    assert code == 2
    assert said in err
    assert out == ""


def test_list_of_an_unknown_operation_is_an_error_not_an_empty_list(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert _run(capsys, "list", "-o", "nosuch")[0] == 2
    code, out, _ = _run(capsys, "list", "--operations", "-o", "idset.*")
    assert code == 0
    assert [line.split()[0] for line in out.splitlines() if not line.startswith(" ")] == [
        "idset.decode",
        "idset.encode",
    ]


def test_a_glob_that_matches_something_is_no_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "list", "--cases", str(MINI), "-o", "idset.*", "--id", "mini.r*")
    assert code == 0
    assert out.startswith("mini.range\t")


# -- retired edition names ------------------------------------------------------------------


RETIRED = ("seed", "upstream")


def test_no_list_or_message_offers_a_retired_edition_name(
    capsys: pytest.CaptureFixture[str],
) -> None:
    shown = []
    shown.append(_run(capsys, "list", "--editions")[1])
    shown.append(_run(capsys, "list", "--operations")[1])
    shown.append(_run(capsys, "run", "--edition", "nosuch")[2])
    export = _run(capsys, "export", "-o", "count.values")[1]
    shown.append(json.dumps(json.loads(export)["operations"]))
    shown.append(json.dumps(json.loads(export)["editions"]))
    for text in shown:
        for word in RETIRED:
            assert word not in text.lower()
    from flux_conformance.runner.adapters import base

    assert not any(word in (base.Implementation.__doc__ or "") for word in RETIRED)


@pytest.mark.parametrize(("old", "own"), [("seed", "2025-07-31"), ("upstream", "2026-08-13")])
def test_a_retired_edition_name_still_works_with_a_warning_naming_the_revision(
    old: str, own: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    report = tmp_path / "r.jsonl"
    code, _, err = _run(
        capsys, "run", "-o", "count.values", "--edition", old, "--json", str(report)
    )
    assert code == 0
    assert f"warning: the edition name '{old}' is retired: it stands for edition {own}" in err
    assert " at " in err  # the edition's newest spec text, by its commit
    assert f"use --edition {own}" in err
    header = json.loads(report.read_text().splitlines()[0])["header"]
    assert header["edition"] == own


# -- python: in the current directory -------------------------------------------------------


def test_python_impl_is_found_in_the_current_directory(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    (tmp_path / "my_cwd_impl.py").write_text(
        "from flux_conformance.runner.adapters.inprocess import ReferenceImplementation\n"
        "class Implementation(ReferenceImplementation):\n"
        "    pass\n",
        encoding="utf-8",
    )
    script = Path(sys.executable).parent / "flux-conformance"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [str(script), "run", "--impl", "python:my_cwd_impl:Implementation", "--cases", str(MINI)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "conforms on 1 of 1 operations (5 of 5 cases)" in done.stdout
