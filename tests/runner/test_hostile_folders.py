"""Hostile case folders: ``--cases`` reads only regular files inside the folder, with bounded
reads, and never prints what a file that is not a case file holds.

Every entry below once gave a traceback, a hang, gigabytes of memory, or printed a private
file; now each is one clear problem, exit status 2, for ``check``, ``run`` and ``compare``
(``diff`` reads ``--cases`` only to propose requirement ids: it goes on without them).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from support import CASES, MINI

from flux_conformance.runner.cli import main

SECRET = "PRIVATE-KEY-CONTENT-do-not-print"


def _link(target: str) -> Callable[[Path], None]:
    def make(folder: Path) -> None:
        (folder / "rfc22" / "hostile.yaml").symlink_to(target)

    return make


def _secret_link(folder: Path) -> None:
    secret = folder.parent / "id_rsa"
    secret.write_text(f"-----BEGIN KEY-----\n{SECRET}\n-----END KEY-----\n")
    (folder / "rfc22" / "hostile.yaml").symlink_to(secret)


def _env_file(folder: Path) -> None:
    (folder / "rfc22" / "hostile.yaml").write_text(f"API_TOKEN={SECRET}\nOTHER=1\n")


def _mapping_of_secrets(folder: Path) -> None:
    (folder / "rfc22" / "hostile.yaml").write_text(f"aws_secret: {SECRET}\nport: no\n")


def _fifo(folder: Path) -> None:
    os.mkfifo(folder / "rfc22" / "hostile.yaml")


def _loop(folder: Path) -> None:
    (folder / "rfc22" / "hostile.yaml").symlink_to(folder / "rfc22" / "hostile.yaml")


def _directory(folder: Path) -> None:
    (folder / "rfc22" / "hostile.yaml").mkdir()


def _linked_directory(folder: Path) -> None:
    outside = folder.parent / "elsewhere"
    outside.mkdir()
    (outside / "more.yaml").write_text(f"{SECRET}: 1\n")
    (folder / "rfc22" / "linked").symlink_to(outside)


def _linked_requirements(folder: Path) -> None:
    # The index itself a link out: its files are regular files, each with a value to leak.
    outside = folder.parent / "index"
    shutil.move(folder / "requirements", outside)
    text = (outside / "rfc22.yaml").read_text()
    (outside / "rfc22.yaml").write_text(text.replace("id: mini.uncited", f"id: '{SECRET}!'", 1))
    (folder / "requirements").symlink_to(outside)


def _linked_editions(folder: Path) -> None:
    outside = folder.parent / "editions.yaml"
    text = (CASES / "editions.yaml").read_text()
    outside.write_text(text.replace("default: '2026-08-13'", f"default: '{SECRET}'", 1))
    (folder / "editions.yaml").symlink_to(outside)


def _dangling_requirements(folder: Path) -> None:
    shutil.rmtree(folder / "requirements")
    (folder / "requirements").symlink_to(folder.parent / "no-such-folder")


def _many_nodes(folder: Path) -> None:
    # 16 MB, 8,000,000 nodes: took 56 s and 3.1 GB before it was refused.
    text = "operation: idset.decode\ncases: [" + "1," * 7_999_990 + "1]\n"
    (folder / "rfc22" / "hostile.yaml").write_text(text)


def _long_integer(folder: Path) -> None:
    text = (MINI / "rfc22" / "idset.decode.yaml").read_text()
    (folder / "rfc22" / "hostile.yaml").write_text(
        text.replace('input: "1-3"', "input: " + "1" * 5000).replace("mini.", "other.")
    )


def _id_with_newline(folder: Path) -> None:
    text = (MINI / "rfc22" / "idset.decode.yaml").read_text()
    (folder / "rfc22" / "hostile.yaml").write_text(
        text.replace("id: mini.range", 'id: "other.range\\n"').replace("mini.list", "other.list")
    )


#: name -> (how to plant it, words of the one problem printed)
HOSTILE = {
    "link-to-a-private-file": (_secret_link, "symbolic link to outside the case folder"),
    "link-to-dev-zero": (_link("/dev/zero"), "symbolic link to outside the case folder"),
    "dangling-link": (_link("no-such-file"), "dangling or looping symbolic link"),
    "looping-link": (_loop, "dangling or looping symbolic link"),
    "fifo": (_fifo, "not a regular file"),
    "directory-named-yaml": (_directory, "is a directory, not a case file"),
    "linked-directory": (_linked_directory, "symbolic link to outside the case folder"),
    "env-file": (_env_file, "not a case file: its top level is text"),
    "mapping-of-secrets": (_mapping_of_secrets, "not a case file: it has no"),
    "linked-requirements": (_linked_requirements, "symbolic link to outside the case folder"),
    "linked-editions": (_linked_editions, "symbolic link to outside the case folder"),
    "dangling-requirements": (_dangling_requirements, "dangling or looping symbolic link"),
    "eight-million-nodes": (_many_nodes, "more than 200000 nodes"),
    "five-thousand-digits": (_long_integer, "a plain integer of 5000 digits"),
    "id-ending-in-newline": (_id_with_newline, "does not match"),
}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    target = tmp_path / "suite"
    shutil.copytree(MINI, target)
    return target


@pytest.mark.parametrize("command", ["check", "run", "compare"])
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_entry_is_one_clear_problem(
    name: str, command: str, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plant, words = HOSTILE[name]
    plant(folder)
    start = time.monotonic()
    code = main([command, "--cases", str(folder)])
    seconds = time.monotonic() - start
    out, err = capsys.readouterr()
    assert code == 2
    assert words in err
    assert err.rstrip().endswith("problem(s): the suite cannot run")
    assert SECRET not in out + err
    assert "Traceback" not in out + err
    assert seconds < 60  # the node limit is met while the tree is built (seconds, not minutes)


def test_diff_goes_on_without_the_folder_it_cannot_read(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _secret_link(folder)
    out_file = tmp_path / "found.yaml"
    argv = ["diff", "--impl", "python:inprocess_fakes:Wrong", "-o", "idset.decode"]
    argv += ["--seconds", "20", "--examples", "5", "--seed", "1", "--max", "1"]
    code = main([*argv, "--cases", str(folder), "--out", str(out_file)])
    out, err = capsys.readouterr()
    assert code == 1
    assert "REVIEWER-MUST-FILL-IN" in out_file.read_text()
    assert SECRET not in out + err + out_file.read_text()


def test_links_inside_the_folder_are_read(folder: Path, capsys) -> None:
    (folder / "rfc22" / "idset.decode.yaml").rename(folder / "cases.txt")
    (folder / "rfc22" / "idset.decode.yaml").symlink_to(folder / "cases.txt")
    assert main(["check", "--cases", str(folder)]) == 0
    assert "5 cases" in capsys.readouterr().out
