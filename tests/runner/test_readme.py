"""The README is a front door: short, current, and every example in it works as written."""

from __future__ import annotations

import re
import shlex

import pytest
import yaml
from readme import PERF, README, TOUR, run_command, tour
from support import ROOT

from flux_conformance.runner.cli import build_parser

TEXT = README.read_text(encoding="utf-8")
#: The documents written beside the README, checked for the same habits.
DOCS = [
    ROOT / "docs" / name
    for name in (
        "performance.md",
        "export.md",
        "protocol.md",
        "releasing.md",
        "site.md",
        "history.md",
    )
]


def _prose(text: str) -> str:
    """The README without its generated blocks."""
    return PERF.sub("", TOUR.sub("", text))


def words(text: str) -> list[str]:
    """The words of a text: runs of letters and digits (a table's pipes and rules are none)."""
    return re.findall(r"[A-Za-z0-9](?:[\w.'/-]|,(?=\d))*", text)


def test_the_readme_reads_in_five_minutes():
    assert words("the `-j 2` option | 1,500 --- words") == [
        "the",
        "j",
        "2",
        "option",
        "1,500",
        "words",
    ]
    assert len(words(TEXT)) < 1500


@pytest.mark.parametrize("name", [name for name, _, _ in tour(TEXT)])
def test_the_tour_shows_what_its_commands_print(name):
    pytest.importorskip("ClusterShell")
    pytest.importorskip("hostlist")
    command, shown = next((c, s) for n, c, s in tour(TEXT) if n == name)
    assert run_command(command) == shown, "python tests/readme.py --write"


def test_the_tour_has_a_run_a_failure_and_a_matrix():
    names = [name for name, _, _ in tour(TEXT)]
    assert names == ["run", "failure", "compare"]
    shown = {name: output for name, _, output in tour(TEXT)}
    assert "conforms on" in shown["run"]
    assert "FAILED" in shown["failure"]
    assert "replay:" in shown["failure"]
    assert "| case | level |" in shown["compare"]
    assert "clustershell 1.10.1**: matches its baseline: " in shown["compare"]


def test_the_two_set_up_commands_are_there_exactly():
    # .ci/run runs the second; the first is what a newcomer types.
    assert "\n       pip install . && flux-conformance run\n" in TEXT
    assert "\n       pip install tox && tox\n" in TEXT


def _commands() -> list[str]:
    found = []
    for line in TEXT.splitlines():
        stripped = line.strip().removeprefix("$ ")
        if stripped.startswith("flux-conformance ") and (line.startswith(("    ", "$"))):
            found.append(stripped)
    return found


@pytest.mark.parametrize("command", _commands())
def test_every_command_of_the_readme_parses(command):
    argv = shlex.split(command)
    build_parser().parse_args(argv[1:])


def test_every_pytest_option_of_the_readme_exists():
    source = (ROOT / "runner" / "plugin.py").read_text(encoding="utf-8")
    options = re.findall(r"(--conformance-[a-z-]+)", TEXT)
    assert options
    for option in options:
        word = option.removeprefix("--conformance-")
        assert f'"--conformance-{word}"' in source or 'f"--conformance-{word}"' in source, option


def test_the_action_example_uses_real_inputs_and_says_what_its_placeholders_are():
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    block = TEXT.split("- uses: ", 1)[1].split("\n\n", 1)[0]
    uses = block.splitlines()[0]
    assert uses == "OWNER/flux-conformance@REF"
    keys = re.findall(r"^\s+([a-z-]+):", block, re.M)
    assert "with" in keys
    assert set(keys) - {"with"} <= set(action["inputs"])
    assert "`OWNER` stands for" in TEXT
    assert "`REF` for" in TEXT
    for word in re.findall(r"`([a-z-]+)`", TEXT.split("## In CI", 1)[1].split("## ", 1)[0]):
        if word in ("packages", "args", "implementation", "expectations", "suite"):
            assert word in action["inputs"], word


def test_every_link_resolves():
    for document in [README, *DOCS]:
        text = document.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if "://" in target:
                continue
            assert (document.parent / target).exists(), f"{document.name}: {target}"


@pytest.mark.parametrize("document", [README, *DOCS], ids=lambda p: p.name)
def test_no_machine_path_and_no_history_words(document):
    text = document.read_text(encoding="utf-8")
    assert not re.search(r"(?<![\w.])/(work|root|home|tmp)/", text)
    assert not re.search(r"\bissue \d+|\bmission\b|\bseed edition\b", text, re.I)


def test_no_count_is_typed_by_hand_in_the_readme():
    # A number of cases, implementations, operations or specs goes stale with the next case:
    # the README shows them only in generated blocks.
    prose = _prose(TEXT)
    assert not re.search(
        r"\b\d[\d,]*\s+(cases|implementations|operations|specs|statements)\b", prose
    )


@pytest.mark.parametrize(
    "path", [README, *DOCS, ROOT / "docs" / "verdicts.md"], ids=lambda p: p.name
)
def test_no_table_is_split_by_a_blank_line(path):
    """Each run of table rows starts with its header and rule: a blank line inside a table
    would start a second, headless one (rendered as text)."""
    blocks: list[list[str]] = []
    previous_was_row = False
    for line in path.read_text(encoding="utf-8").splitlines():
        row = line.strip().startswith("|")
        if row and not previous_was_row:
            blocks.append([])
        if row:
            blocks[-1].append(line.strip())
        previous_was_row = row
    for block in blocks:
        assert len(block) >= 2, block[0]
        assert set(block[1]) <= set("|-: "), block[0]
