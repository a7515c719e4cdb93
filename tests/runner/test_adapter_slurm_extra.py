"""The slurm-extra adapter: finding the build, starting it, and holding it to its expectations.

The unit tests drive a fake program (a Python script speaking the protocol) laid out like a
build; it checks the adapter's plumbing only and is never evidence about Slurm.  The last
test runs the real build when ``SLURM_EXTRA_BUILD`` names one, and skips otherwise.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from flux_conformance.runner.adapters import KNOWN
from flux_conformance.runner.adapters.base import AdapterError
from flux_conformance.runner.adapters.subprocess import SubprocessAdapter
from flux_conformance.runner.adapters.thirdparty import expectations_file
from flux_conformance.runner.adapters.thirdparty.slurm_extra import (
    ENV,
    PROGRAM,
    SlurmExtra,
    command,
)
from flux_conformance.runner.cli import main, make_adapter
from flux_conformance.runner.expectations import Expectations

#: A stand-in for the built driver: answers hello, one canned outcome per operation, and
#: dies on the expression "crash" (as a segfaulting Slurm would).
_FAKE = """\
import json, os, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg["cmd"] == "hello":
        print(json.dumps({"protocol": 1, "implementation": {"name": "slurm-extra",
              "version": "fake"}, "operations": ["slurm.extra.match", "slurm.extra.parse"]}))
    elif msg["cmd"] == "run":
        expr = msg["input"]["expression"] if isinstance(msg["input"], dict) else msg["input"]
        if expr == "crash":
            os._exit(139)
        if expr == "a=1":
            reply = {"output": True}
        else:
            reply = {"error": {"category": "syntax", "message": "Invalid extra"}}
        print(json.dumps({"seq": msg["seq"], **reply}))
    else:
        break
    sys.stdout.flush()
"""


@pytest.fixture
def fake_build(tmp_path: Path) -> Path:
    program = tmp_path / PROGRAM
    program.write_text(f"#!{sys.executable}\n{_FAKE}")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "serializer_json.so").write_bytes(b"")
    return tmp_path


def test_registered() -> None:
    assert (
        KNOWN["slurm-extra"] == "flux_conformance.runner.adapters.thirdparty.slurm_extra:SlurmExtra"
    )


@pytest.mark.parametrize("build", [None, ""])
def test_no_build_says_how_to_make_one(build: str | None) -> None:
    with pytest.raises(AdapterError, match=r"build\.sh SLURM_SOURCE OUT.*SLURM_EXTRA_BUILD"):
        command(build)


def test_a_directory_without_the_program_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AdapterError, match="holds no slurm-extra build"):
        command(str(tmp_path))


def test_a_build_without_the_json_plugin_is_refused(fake_build: Path) -> None:
    (fake_build / "plugins" / "serializer_json.so").unlink()
    with pytest.raises(AdapterError, match="holds no slurm-extra build"):
        command(str(fake_build))


def test_command_passes_the_plugin_directory(fake_build: Path) -> None:
    assert command(str(fake_build)) == f"{fake_build / PROGRAM} {fake_build / 'plugins'}"


def test_cli_without_a_build_exits_3(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(ENV, raising=False)
    assert main(["run", "--impl", "slurm-extra", "-o", "slurm.extra.parse"]) == 3
    assert "implementations/slurm-extra/build.sh" in capsys.readouterr().err


def test_factory_gives_a_subprocess_adapter_with_the_timeout(
    fake_build: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV, str(fake_build))
    adapter = make_adapter("slurm-extra", timeout=3.5)
    assert isinstance(adapter, SlurmExtra)
    assert isinstance(adapter, SubprocessAdapter)
    assert adapter.timeout == 3.5


def test_answers_come_from_the_program(fake_build: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, str(fake_build))
    adapter = make_adapter("slurm-extra")
    adapter.start()
    try:
        assert adapter.name == "slurm-extra"
        assert adapter.supports("slurm.extra.match")
        assert not adapter.supports("slurm.extra.select")
        match = {"expression": "a=1", "extra": '{"a": 1}'}
        reply = adapter.run("slurm.extra.match", match, edition=None)
        assert (reply.kind, reply.value) == ("output", True)
        reply = adapter.run("slurm.extra.parse", "a=", edition=None)
        assert (reply.kind, reply.value) == ("error", "syntax")
    finally:
        adapter.close()


def test_a_crash_of_the_program_is_errored_not_an_adapter_fault(
    fake_build: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV, str(fake_build))
    adapter = make_adapter("slurm-extra")
    adapter.start()
    try:
        crashed = adapter.run("slurm.extra.parse", "crash", edition=None)
        assert crashed.kind == "errored"
        assert not crashed.adapter_fault
        # The next case starts a fresh process.
        reply = adapter.run("slurm.extra.parse", "a=1", edition=None)
        assert (reply.kind, reply.value) == ("output", True)
    finally:
        adapter.close()


def test_expectations_file_loads_and_is_not_stale() -> None:
    from flux_conformance.runner.cases import load_suite

    expectations = Expectations.load(expectations_file("slurm-extra"))
    assert all(e.status == "xfail" and e.reason.strip() for e in expectations.entries)
    assert expectations.stale(c.id for c in load_suite().cases) == []


def test_real_build_matches_its_expectations(capsys: pytest.CaptureFixture[str]) -> None:
    build = os.environ.get(ENV)
    if not build:
        pytest.skip(f"{ENV} is not set (implementations/slurm-extra/build.sh makes a build)")
    argv = ["run", "--impl", "slurm-extra", "-o", "slurm.*", "--json", "-"]
    argv += ["--expectations", str(expectations_file("slurm-extra"))]
    code = main(argv)
    out = capsys.readouterr()
    assert code == 0, out.out[-3000:] + out.err[-2000:]
    lines = [json.loads(line) for line in out.out.splitlines()]
    results = [line["case"] for line in lines if "case" in line]
    assert len(results) > 300
    assert {r["outcome"] for r in results} == {"passed"}
