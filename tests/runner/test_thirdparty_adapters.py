"""The third-party adapters, with fakes of each library's API (no library needed).

Each fake is a small module injected into ``sys.modules`` that imitates the part of the
real API the adapter calls, records the calls, and raises the real library's exception
classes' look-alikes, so the tests pin what the adapter asks and how it maps each error.
Where the real library is installed, its adapter is also run against the suite with its
shipped expectations file, which must hold exactly.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from typing import Any

import pytest
from support import fake_module, missing_modules

from flux_conformance.runner.adapters import KNOWN
from flux_conformance.runner.adapters.base import AdapterError
from flux_conformance.runner.adapters.thirdparty import expectations_file
from flux_conformance.runner.adapters.thirdparty.clustershell import MAX_SPAN, ClusterShell
from flux_conformance.runner.adapters.thirdparty.python_hostlist import PythonHostlist
from flux_conformance.runner.cli import main, make_adapter
from flux_conformance.runner.expectations import Expectations

# -- python-hostlist ---------------------------------------------------------------------------


class BadHostlist(Exception):
    pass


@pytest.fixture
def fake_hostlist(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any, dict[str, Any]]]:
    calls: list[tuple[str, Any, dict[str, Any]]] = []

    def expand_hostlist(text: str, **kwargs: Any) -> list[str]:
        calls.append(("expand", text, kwargs))
        if text == "bad[":
            raise BadHostlist("unbalanced brackets")
        if text == "n[1-999999]":
            raise BadHostlist("range too large")
        return ["n1", "n1"] if kwargs.get("allow_duplicates") else ["n1"]

    def collect_hostlist(hosts: list[str], silently_discard_bad: bool = False) -> str:
        calls.append(("collect", hosts, {}))
        if any("," in h for h in hosts):
            raise BadHostlist("forbidden character")
        return "[" + ",".join(hosts) + "]"

    fake_module(
        monkeypatch,
        "hostlist",
        BadHostlist=BadHostlist,
        expand_hostlist=expand_hostlist,
        collect_hostlist=collect_hostlist,
    )
    return calls


def test_python_hostlist_keeps_duplicates(fake_hostlist: list[Any]) -> None:
    impl = PythonHostlist()
    assert impl.run("hostlist.decode", "n[1,1]") == {"output": ["n1", "n1"]}
    assert fake_hostlist[-1] == ("expand", "n[1,1]", {"allow_duplicates": True})


def test_python_hostlist_refusals_have_no_category(fake_hostlist: list[Any]) -> None:
    # BadHostlist is python-hostlist's one class for every refusal, its size guard included:
    # the adapter never picks a category from the message.
    impl = PythonHostlist()
    assert impl.run("hostlist.decode", "bad[")["error"]["category"] == "unknown"
    assert impl.run("hostlist.decode", "n[1-999999]")["error"]["category"] == "unknown"
    assert impl.run("hostlist.encode", ["a,b"])["error"]["category"] == "unknown"


def test_python_hostlist_encoders(fake_hostlist: list[Any]) -> None:
    impl = PythonHostlist()
    assert impl.run("hostlist.encode", ["n2", "n1"]) == {"output": "[n2,n1]"}
    assert impl.run("idset.encode", [3, 1]) == {"output": "[3,1]"}
    assert fake_hostlist[-1] == ("collect", ["3", "1"], {})
    # A negative id cannot be asked of a hostlist library: declined, not faked.
    assert "unsupported" in impl.run("idset.encode", [1, -2])


def test_python_hostlist_offers_no_idset_decoder(fake_hostlist: list[Any]) -> None:
    impl = PythonHostlist()
    assert impl.operations == ("hostlist.decode", "hostlist.encode", "idset.encode")
    assert "unsupported" in impl.run("idset.decode", "1-3")
    assert fake_hostlist == []


def test_python_hostlistmissing_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    missing_modules(monkeypatch, "hostlist")
    with pytest.raises(AdapterError, match=r"flux-conformance\[python-hostlist\]"):
        PythonHostlist()
    with pytest.raises(AdapterError, match="python-hostlist is not installed"):
        make_adapter("python-hostlist")


def test_cli_exit_3_when_library_missing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    missing_modules(monkeypatch, "hostlist")
    assert main(["run", "--impl", "python-hostlist", "-o", "hostlist.decode"]) == 3
    assert "not installed" in capsys.readouterr().err


# -- ClusterShell ------------------------------------------------------------------------------


class NodeSetException(Exception):
    pass


class NodeSetParseError(NodeSetException):
    pass


class RangeSetException(Exception):
    pass


class RangeSetParseError(RangeSetException):
    pass


NOGROUP = -1


@pytest.fixture
def fake_clustershell(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any, Any]]:
    calls: list[tuple[str, Any, Any]] = []

    class NodeSet:
        def __init__(self, pattern: str, resolver: Any = None) -> None:
            calls.append(("NodeSet", pattern, resolver))
            if "[" in pattern and "]" not in pattern:
                raise NodeSetParseError("missing bracket")
            if pattern == "@group":
                raise NodeSetException("no resolver")
            self._nodes = sorted(set(pattern.split(",")))

        @classmethod
        def fromlist(cls, hosts: list[str], resolver: Any = None) -> NodeSet:
            calls.append(("fromlist", hosts, resolver))
            if "" in hosts:
                raise NodeSetException("empty node name")
            return cls(",".join(hosts), resolver=resolver)

        def __iter__(self) -> Any:
            return iter(self._nodes)

        def __str__(self) -> str:
            return ",".join(self._nodes)

    class RangeSet:
        def __init__(self, pattern: str) -> None:
            calls.append(("RangeSet", pattern, None))
            if not pattern or "[" in pattern:
                raise RangeSetParseError("cannot convert")
            self._ids = sorted({int(p) for p in pattern.split(",")})

        @classmethod
        def fromlist(cls, ids: list[str]) -> RangeSet:
            calls.append(("RangeSet.fromlist", ids, None))
            return cls(",".join(ids))

        def intiter(self) -> Any:
            return iter(self._ids)

        def __str__(self) -> str:
            return ",".join(map(str, self._ids))

    fake_module(monkeypatch, "ClusterShell", __version__="9.9")
    fake_module(
        monkeypatch,
        "ClusterShell.NodeSet",
        NodeSet=NodeSet,
        RESOLVER_NOGROUP=NOGROUP,
        NodeSetException=NodeSetException,
        NodeSetParseError=NodeSetParseError,
    )
    fake_module(
        monkeypatch,
        "ClusterShell.RangeSet",
        RangeSet=RangeSet,
        RangeSetException=RangeSetException,
        RangeSetParseError=RangeSetParseError,
    )
    return calls


def test_clustershell_answers_as_a_set_without_groups(fake_clustershell: list[Any]) -> None:
    impl = ClusterShell()
    assert impl.version == "9.9"
    # The NodeSet answer (sorted, de-duplicated) is passed on as it is: a finding, not fixed.
    assert impl.run("hostlist.decode", "b,a,a") == {"output": ["a", "b"]}
    assert fake_clustershell[-1] == ("NodeSet", "b,a,a", NOGROUP)
    assert impl.run("hostlist.encode", ["n2", "n1"]) == {"output": "n1,n2"}
    assert fake_clustershell[-2] == ("fromlist", ["n2", "n1"], NOGROUP)
    assert impl.run("idset.decode", "3,1") == {"output": [1, 3]}
    assert impl.run("idset.encode", [5, 2]) == {"output": "2,5"}


def test_clustershell_error_mapping(fake_clustershell: list[Any]) -> None:
    impl = ClusterShell()
    # A parse error class is ClusterShell naming the kind; its other errors name none.
    assert impl.run("hostlist.decode", "foo[")["error"]["category"] == "syntax"
    assert impl.run("hostlist.decode", "@group")["error"]["category"] == "unknown"
    assert impl.run("hostlist.encode", ["a", ""])["error"]["category"] == "unknown"
    assert impl.run("idset.decode", "[1]")["error"]["category"] == "syntax"
    assert impl.run("idset.decode", "")["error"]["category"] == "syntax"


def test_clustershell_refuses_what_it_would_materialise(fake_clustershell: list[Any]) -> None:
    impl = ClusterShell()
    wide = f"n[0-{MAX_SPAN}]"  # MAX_SPAN + 1 hosts
    # The adapter's own bound, reported as such (never a limit ClusterShell did not report),
    # and ClusterShell was not asked (no seen output).
    for op, value in [
        ("hostlist.decode", wide),
        ("hostlist.decode", "n[1-3000]x[1-3000]"),
        ("idset.decode", f"0-{MAX_SPAN}"),
        ("hostlist.encode", [wide]),
    ]:
        answer = impl.run(op, value)
        assert set(answer) == {"adapter_bound"}
        assert "seen" not in answer["adapter_bound"]
        assert "adapter bound" in answer["adapter_bound"]["reason"]
    assert fake_clustershell == []  # none of them reached ClusterShell
    # At the bound, and ranges outside brackets in a nodeset, go through.
    impl.run("hostlist.decode", f"n[1-{MAX_SPAN}]")
    impl.run("hostlist.decode", "0-99999999999")
    assert [c[1] for c in fake_clustershell] == [f"n[1-{MAX_SPAN}]", "0-99999999999"]


def test_clustershellmissing_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    missing_modules(monkeypatch, "ClusterShell")
    with pytest.raises(AdapterError, match=r"flux-conformance\[clustershell\]"):
        ClusterShell()


# -- flux-core: tests/runner/test_adapter_fluxcore.py ----------------------------------------


# -- registry and shipped files ----------------------------------------------------------------


def test_known_adapters_registered() -> None:
    assert set(KNOWN) >= {"python-hostlist", "clustershell", "flux-core", "slurm-hostlist", "pdsh"}


@pytest.mark.parametrize(
    "name", ["python-hostlist", "clustershell", "flux-core", "slurm-hostlist", "pdsh"]
)
def test_expectations_files_load_and_are_not_stale(name: str) -> None:
    from flux_conformance.runner.cases import load_suite

    expectations = Expectations.load(expectations_file(name))
    assert expectations.entries
    # skip only where running the case would not come back (an in-process library that hangs).
    assert all(e.status in ("xfail", "skip") and e.reason.strip() for e in expectations.entries)
    assert all("never returns" in e.reason for e in expectations.entries if e.status == "skip")
    assert expectations.stale(c.id for c in load_suite().cases) == []


# -- the real libraries, when installed --------------------------------------------------------

_REAL = {
    "python-hostlist": "hostlist",
    "clustershell": "ClusterShell",
    "flux-core": "flux",
}


@pytest.mark.parametrize("name", sorted(_REAL))
def test_real_library_matches_its_expectations(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    if importlib.util.find_spec(_REAL[name]) is None:
        pytest.skip(f"{_REAL[name]} is not installed")
    argv = ["run", "--impl", name, "--expectations", str(expectations_file(name))]
    if name != "flux-core":
        argv += ["-o", "hostlist.*", "-o", "idset.*"]
    code = main(argv)
    out = capsys.readouterr()
    assert code == 0, out.out[-3000:] + out.err[-2000:]


def _slurm_hostlist_present() -> bool:
    from flux_conformance.runner.adapters.thirdparty.slurm_hostlist import _library_present

    return _library_present()


#: Adapters of implementations that come from Debian packages, not from PyPI, each with the
#: package and a check that it is installed.  CI installs them (.ci/run) and sets
#: FLUX_CONFORMANCE_REQUIRE_SYSTEM_LIBRARIES, so there a missing one fails instead of skipping.
_SYSTEM = {
    "slurm-hostlist": ("libslurm38", _slurm_hostlist_present),
    "pdsh": ("pdsh", lambda: shutil.which("pdsh") is not None),
}


@pytest.mark.parametrize("name", sorted(_SYSTEM))
def test_system_library_matches_its_expectations(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    package, present = _SYSTEM[name]
    if not present():
        if os.environ.get("FLUX_CONFORMANCE_REQUIRE_SYSTEM_LIBRARIES"):
            pytest.fail(f"{package} is not installed (apt-get install {package})")
        pytest.skip(f"{package} is not installed")
    argv = ["run", "--impl", name, "--expectations", str(expectations_file(name))]
    code = main([*argv, "-o", "hostlist.*", "-o", "idset.*"])
    out = capsys.readouterr()
    assert code == 0, out.out[-3000:] + out.err[-2000:]


def test_the_flux_core_findings_counts_in_the_docs_match_its_expectations_file() -> None:
    """docs/adapters.md counts flux-core's findings per group; the counts follow the file."""
    import re
    from collections import Counter

    from support import ROOT

    entries = Expectations.load(expectations_file("flux-core")).entries
    groups: Counter[str] = Counter()
    for entry in entries:
        if entry.status == "xfail":
            first = entry.pattern.split(".")[0]
            groups["parse_query" if entry.pattern.startswith("constraint.parse_") else first] += 1
    text = (ROOT / "docs" / "adapters.md").read_text(encoding="utf-8")
    section = text[text.index("## flux-core") : text.index("## slurm-extra")]
    assert f"Findings ({sum(groups.values())} cases" in section
    named = {"idset": "idset", "hostlist": "hostlist", "counts": "count", "jobspec": "jobspec"}
    named |= {"R": "R", "shape": "shape"}
    for word, group in named.items():
        assert re.search(rf"\*\*{word}\*\* \({groups[group]}\)", section), word
    both = f"({groups['constraint']} match/validate, {groups['parse_query']} parse_query)"
    assert both in section
    assert f"(`sched.allocate`, {groups['sched']};" in section
