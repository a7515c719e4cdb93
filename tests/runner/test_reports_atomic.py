"""Every report is replaced whole: written beside its target, synced, renamed over it.

Reports used to be written in place: a SIGTERM while they were written left a torn JUnit file
and the other reports stale from the run before.  Now the old file is never opened for
writing, so whatever stops the runner, each report is the previous whole file or the new one.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from support import MINI

from flux_conformance.runner import atomic
from flux_conformance.runner.cli import main

REPORTS = {"--json": "r.jsonl", "--junit": "r.xml", "--markdown": "r.md", "--html": "r.html"}
REPORTS["--badge"] = "b.json"


def _argv(tmp_path: Path) -> list[str]:
    argv = ["run", "--cases", str(MINI)]
    for option, name in REPORTS.items():
        argv += [option, str(tmp_path / name)]
    return argv


def test_a_report_is_never_rewritten_in_place(tmp_path: Path, capsys) -> None:
    held = {}
    for name in REPORTS.values():
        (tmp_path / name).write_text("the previous report\n")
        held[name] = (tmp_path / name).open(encoding="utf-8")  # the old file, as a reader has it
    try:
        assert main(_argv(tmp_path)) == 0
        for name, reader in held.items():
            assert reader.read() == "the previous report\n", f"{name} was rewritten in place"
            assert os.fstat(reader.fileno()).st_ino != (tmp_path / name).stat().st_ino
    finally:
        for reader in held.values():
            reader.close()
    capsys.readouterr()
    lines = (tmp_path / "r.jsonl").read_text().splitlines()
    assert "footer" in json.loads(lines[-1])
    ET.parse(tmp_path / "r.xml")
    assert json.loads((tmp_path / "b.json").read_text())["schemaVersion"] == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(REPORTS.values())


def test_a_write_that_fails_leaves_the_previous_reports_whole(tmp_path: Path, capsys, monkeypatch):
    for name in REPORTS.values():
        (tmp_path / name).write_text("the previous report\n")

    def full_disk(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", full_disk)
    assert main(_argv(tmp_path)) == 2
    assert "No space left on device" in capsys.readouterr().err
    for name in REPORTS.values():
        assert (tmp_path / name).read_text() == "the previous report\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(REPORTS.values())


def test_a_replaced_file_keeps_the_permissions_of_the_old_one(tmp_path: Path) -> None:
    target = tmp_path / "kept.yaml"
    target.write_text("old\n")
    target.chmod(0o640)
    atomic.write_atomic(target, "new\n")
    assert target.read_text() == "new\n"
    assert target.stat().st_mode & 0o777 == 0o640


def test_an_exception_in_the_block_leaves_the_target_alone(tmp_path: Path) -> None:
    target = tmp_path / "r.md"
    target.write_text("old\n")

    def stopped_while_writing() -> None:
        with atomic.replacing(target) as stream:
            stream.write("half of a new report")
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        stopped_while_writing()
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["r.md"]
