"""The pdsh adapter: a fake of the two programs pins the command lines the adapter runs and
how it maps their exit status, stdout and stderr; where Debian's pdsh is installed, the
real programs are run too.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence

import pytest

from flux_conformance.runner.adapters.base import AdapterError
from flux_conformance.runner.adapters.thirdparty import pdsh as pdsh_module
from flux_conformance.runner.adapters.thirdparty.pdsh import (
    MAX_HOSTS,
    Pdsh,
    _host_bound,
    pdsh_may_reinterpret,
)


class FakePrograms:
    """Answers for ``pdsh -q``, ``pdsh -R exec`` and ``dshbak -c``, with the calls recorded."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], str]] = []
        self.timeouts: list[float | None] = []
        self.listing = subprocess.CompletedProcess[str]([], 0, "-- Target nodes --\n", "")
        self.hosts = "a1\na1\na2\n"
        self.exec_status = 0
        self.dshbak = "----------------\nn[1-3]\n----------------\nx\n"

    def __call__(
        self, argv: Sequence[str], stdin: str = "", *, timeout: float | None = None
    ) -> subprocess.CompletedProcess[str]:
        self.calls.append((list(argv), stdin))
        self.timeouts.append(timeout)
        if argv[0] == "/bin/dshbak":
            return subprocess.CompletedProcess(list(argv), 0, self.dshbak, "")
        if argv[1] == "-q":
            return self.listing
        return subprocess.CompletedProcess(list(argv), self.exec_status, self.hosts, "")


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakePrograms:
    programs = FakePrograms()
    monkeypatch.setattr(pdsh_module.shutil, "which", lambda name: f"/bin/{name}")
    monkeypatch.setattr(pdsh_module, "_package_version", lambda: "2.34-test")
    monkeypatch.setattr(pdsh_module, "_run", programs)
    return programs


def test_operations_and_version(fake: FakePrograms) -> None:
    impl = Pdsh()
    assert impl.version == "2.34-test"
    assert impl.operations == ("hostlist.decode", "hostlist.encode", "idset.encode")


def test_decode_lists_then_runs_echo_once_per_host(fake: FakePrograms) -> None:
    assert Pdsh().run("hostlist.decode", "a[1,1,2]") == {"output": ["a1", "a1", "a2"]}
    assert [argv for argv, _ in fake.calls] == [
        ["/bin/pdsh", "-q", "-w", "a[1,1,2]"],
        ["/bin/pdsh", "-R", "exec", "-f", "1", "-N", "-w", "a[1,1,2]", "echo", "%h"],
    ]
    # Listing only parses, so a hang there is told sooner than one in the per-host run.
    assert fake.timeouts == [pdsh_module.LIST_TIMEOUT, None]


@pytest.mark.parametrize(
    "stderr",
    [
        "pdsh@vm: hostlist.c:1421: Too many hosts in range `0-99999'\n",
        "pdsh@vm: hostlist.c:1431: Invalid range: `3-1'\n",
        "",
    ],
)
def test_decode_refusals_have_no_category(fake: FakePrograms, stderr: str) -> None:
    # pdsh says what went wrong only in its message: no category is read from it.
    fake.listing = subprocess.CompletedProcess([], 1, "", stderr)
    assert Pdsh().run("hostlist.decode", "n[x]")["error"]["category"] == "unknown"
    assert len(fake.calls) == 1  # nothing was run on any host


def test_decode_no_hosts_is_the_empty_list(fake: FakePrograms) -> None:
    fake.listing = subprocess.CompletedProcess([], 1, "", "pdsh@vm: no remote hosts specified\n")
    assert Pdsh().run("hostlist.decode", ",") == {"output": []}


def test_decode_failing_exec_is_a_refusal_without_category(fake: FakePrograms) -> None:
    fake.exec_status = 1
    assert Pdsh().run("hostlist.decode", "a")["error"]["category"] == "unknown"


@pytest.mark.parametrize(
    "text", ["ssh:a", "a@b", "^/etc/hosts", "-a", "a,-b", "a /x/", "/a/", "a\0b", "a" * 100_001]
)
def test_decode_never_passes_what_w_reads_as_options(fake: FakePrograms, text: str) -> None:
    assert "unsupported" in Pdsh().run("hostlist.decode", text)
    assert fake.calls == []


def test_decode_too_many_hosts_is_not_run(fake: FakePrograms) -> None:
    answer = Pdsh().run("hostlist.decode", f"n[1-{MAX_HOSTS + 1}]")
    # pdsh accepted the list: an adapter bound that saw an output, never a limit pdsh gave.
    assert answer["adapter_bound"]["seen"] == "output"
    assert len(fake.calls) == 1  # listed (pdsh accepted it), never run


@pytest.mark.parametrize(
    ("text", "bound"),
    [
        ("a", 1),
        ("a,b c", 3),
        ("n[1-3],m[1-2]x[1-2]", 7),
        ("n[1,3-4,9]", 4),
        ("n[3-1]", 1),
        ("n[" + "0" * 5000 + "1-3]", 3),
        ("n[0-999999999999]", MAX_HOSTS + 1),
        ("n[0-1000]m[0-1000]", MAX_HOSTS + 1),
        ("n[1-3", 3),
        ("n]1-3[", 1),
        ("n[ +1- 3000]", MAX_HOSTS + 1),
    ],
)
def test_host_bound(text: str, bound: int) -> None:
    assert _host_bound(text) == bound


def test_host_bound_never_raises_on_odd_text() -> None:
    for text in ["[[[", "]]]", "[-]", "[1-]", "[-1]", "[,,]", "", "a[1-2]]]b[", "[\u0663-\u0665]"]:
        assert 0 <= _host_bound(text) <= MAX_HOSTS + 1


def test_reinterpretation_rule() -> None:
    assert not pdsh_may_reinterpret("a-b,n[1-3]-x,c/d")
    assert pdsh_may_reinterpret("a,/b")
    assert pdsh_may_reinterpret("a\t-b")


def test_encode_feeds_dshbak_one_line_per_host(fake: FakePrograms) -> None:
    assert Pdsh().run("hostlist.encode", ["n3", "n1", "n2"]) == {"output": "n[1-3]"}
    assert fake.calls == [(["/bin/dshbak", "-c"], "n3: x\nn1: x\nn2: x\n")]


def test_encode_empty_list(fake: FakePrograms) -> None:
    fake.dshbak = ""
    assert Pdsh().run("hostlist.encode", []) == {"output": ""}


def test_encode_several_groups_is_not_one_hostlist(fake: FakePrograms) -> None:
    fake.dshbak = "----------------\na\n----------------\nx\n" * 2
    assert "unsupported" in Pdsh().run("hostlist.encode", ["a", "b"])


@pytest.mark.parametrize("hosts", [["a", "a"], ["a", ""], ["a b"], ["a:b"], ["a\nb"]])
def test_encode_names_dshbak_cannot_take(fake: FakePrograms, hosts: list[str]) -> None:
    assert "unsupported" in Pdsh().run("hostlist.encode", hosts)
    assert fake.calls == []


def test_idset_encode_gives_each_id_once(fake: FakePrograms) -> None:
    Pdsh().run("idset.encode", [3, 1, 3])
    assert fake.calls == [(["/bin/dshbak", "-c"], "3: x\n1: x\n")]
    assert "unsupported" in Pdsh().run("idset.encode", [1, -1])


def test_missing_programs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pdsh_module.shutil, "which", lambda name: None)
    with pytest.raises(AdapterError, match="apt-get install pdsh"):
        Pdsh()


# -- the real programs -------------------------------------------------------------------------

real = pytest.mark.skipif(shutil.which("pdsh") is None, reason="pdsh is not installed")


@real
def test_real_pdsh() -> None:
    impl = Pdsh()
    assert impl.version.startswith("2.34")
    assert impl.run("hostlist.decode", "foo[1,1,2,1],bar") == {
        "output": ["foo1", "foo1", "foo2", "foo1", "bar"]
    }
    assert impl.run("hostlist.decode", "n[0-99999999]")["error"]["category"] == "unknown"
    assert impl.run("hostlist.decode", "n[3-1]")["error"]["category"] == "unknown"
    assert impl.run("hostlist.decode", "") == {"output": []}
    assert impl.run("hostlist.encode", ["n3", "n1", "n2"]) == {"output": "n[1-3]"}
    assert impl.run("idset.encode", [5, 1, 2, 3]) == {"output": "[1-3,5]"}


def test_run_kills_the_session_on_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pdsh_module, "TIMEOUT", 0.2)
    with pytest.raises(subprocess.TimeoutExpired):
        pdsh_module._run(["sh", "-c", "sleep 30 & sleep 30"])


def test_run_reports_a_program_killed_by_a_signal_as_a_crash() -> None:
    # pdsh aborts on a failed assertion for some ids at 2**64 - 1: that is a crash, raised by
    # the standard library (the case is errored), never mapped to an error category.
    with pytest.raises(subprocess.CalledProcessError, match="SIGABRT"):
        pdsh_module._run(["sh", "-c", "kill -ABRT $$"])


@real
def test_real_pdsh_crash_is_errored_not_a_verdict() -> None:
    from flux_conformance.runner.adapters.inprocess import InProcessAdapter

    adapter = InProcessAdapter(Pdsh(), name="pdsh")
    reply = adapter.run(
        "hostlist.decode", "n[18446744073709551614-18446744073709551615]", edition=None
    )
    assert reply.kind == "errored"
    assert not reply.adapter_fault


def test_output_lines_split_at_newlines_only(fake: FakePrograms) -> None:
    fake.hosts = "a\x1cb\na\x85\n"
    assert Pdsh().run("hostlist.decode", "x") == {"output": ["a\x1cb", "a\x85"]}
    assert pdsh_module._lines("") == []
    assert pdsh_module._lines("a") == ["a"]
