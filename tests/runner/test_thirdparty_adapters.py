"""The third-party adapters, with fakes of each library's API (no library needed).

Each fake is a small module injected into ``sys.modules`` that imitates the part of the
real API the adapter calls, records the calls, and raises the real library's exception
classes' look-alikes, so the tests pin what the adapter asks and how it maps each error.
Where the real library is installed, its adapter is also run against the suite with its
shipped expectations file, which must hold exactly.
"""

from __future__ import annotations

import errno
import importlib.util
import json
import os
import shutil
import sys
import types
from typing import Any

import pytest

from runner.adapters import KNOWN
from runner.adapters.base import AdapterError
from runner.adapters.thirdparty import expectations_file
from runner.adapters.thirdparty.clustershell import MAX_SPAN, ClusterShell
from runner.adapters.thirdparty.fluxcore import FluxCore
from runner.adapters.thirdparty.python_hostlist import PythonHostlist
from runner.cli import main, make_adapter
from runner.expectations import Expectations


def _module(monkeypatch: pytest.MonkeyPatch, name: str, **attrs: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    for key, value in attrs.items():
        setattr(module, key, value)
    monkeypatch.setitem(sys.modules, name, module)
    return module


def _missing(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    for name in names:
        monkeypatch.setitem(sys.modules, name, None)  # makes `import name` raise ImportError


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

    _module(
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


def test_python_hostlist_error_mapping(fake_hostlist: list[Any]) -> None:
    impl = PythonHostlist()
    assert impl.run("hostlist.decode", "bad[")["error"]["category"] == "syntax"
    assert impl.run("hostlist.decode", "n[1-999999]")["error"]["category"] == "limit"
    assert impl.run("hostlist.encode", ["a,b"])["error"]["category"] == "invalid"


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


def test_python_hostlist_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    _missing(monkeypatch, "hostlist")
    with pytest.raises(AdapterError, match=r"flux-conformance\[python-hostlist\]"):
        PythonHostlist()
    with pytest.raises(AdapterError, match="python-hostlist is not installed"):
        make_adapter("python-hostlist")


def test_cli_exit_2_when_library_missing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _missing(monkeypatch, "hostlist")
    assert main(["run", "--impl", "python-hostlist", "-o", "hostlist.decode"]) == 2
    assert "not installed" in capsys.readouterr().err


# -- ClusterShell ------------------------------------------------------------------------------


class NodeSetException(Exception):
    pass


class RangeSetException(Exception):
    pass


NOGROUP = -1


@pytest.fixture
def fake_clustershell(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any, Any]]:
    calls: list[tuple[str, Any, Any]] = []

    class NodeSet:
        def __init__(self, pattern: str, resolver: Any = None) -> None:
            calls.append(("NodeSet", pattern, resolver))
            if "[" in pattern and "]" not in pattern:
                raise NodeSetException("missing bracket")
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
                raise RangeSetException("cannot convert")
            self._ids = sorted({int(p) for p in pattern.split(",")})

        @classmethod
        def fromlist(cls, ids: list[str]) -> RangeSet:
            calls.append(("RangeSet.fromlist", ids, None))
            return cls(",".join(ids))

        def intiter(self) -> Any:
            return iter(self._ids)

        def __str__(self) -> str:
            return ",".join(map(str, self._ids))

    _module(monkeypatch, "ClusterShell", __version__="9.9")
    _module(
        monkeypatch,
        "ClusterShell.NodeSet",
        NodeSet=NodeSet,
        RESOLVER_NOGROUP=NOGROUP,
        NodeSetException=NodeSetException,
    )
    _module(
        monkeypatch, "ClusterShell.RangeSet", RangeSet=RangeSet, RangeSetException=RangeSetException
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
    assert impl.run("hostlist.decode", "foo[")["error"]["category"] == "syntax"
    assert impl.run("hostlist.encode", ["a", ""])["error"]["category"] == "invalid"
    assert impl.run("idset.decode", "[1]")["error"]["category"] == "syntax"
    assert impl.run("idset.decode", "")["error"]["category"] == "syntax"


def test_clustershell_refuses_what_it_would_materialise(fake_clustershell: list[Any]) -> None:
    impl = ClusterShell()
    wide = f"n[0-{MAX_SPAN}]"  # MAX_SPAN + 1 hosts
    assert impl.run("hostlist.decode", wide)["error"]["category"] == "limit"
    assert impl.run("hostlist.decode", "n[1-3000]x[1-3000]")["error"]["category"] == "limit"
    assert impl.run("idset.decode", f"0-{MAX_SPAN}")["error"]["category"] == "limit"
    assert impl.run("hostlist.encode", [wide])["error"]["category"] == "invalid"
    assert fake_clustershell == []  # none of them reached ClusterShell
    # At the bound, and ranges outside brackets in a nodeset, go through.
    impl.run("hostlist.decode", f"n[1-{MAX_SPAN}]")
    impl.run("hostlist.decode", "0-99999999999")
    assert [c[1] for c in fake_clustershell] == [f"n[1-{MAX_SPAN}]", "0-99999999999"]


def test_clustershell_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    _missing(monkeypatch, "ClusterShell")
    with pytest.raises(AdapterError, match=r"flux-conformance\[clustershell\]"):
        ClusterShell()


# -- flux-core ---------------------------------------------------------------------------------


class ShapeSyntaxError(Exception):
    pass


class ConstraintSyntaxError(Exception):
    pass


class FakeResourceSet:
    """Ranks 0-1 on hosts a0, a1 (4 cores each; rank 1 also has gpu 0 and property ssd)."""

    created: list[Any] = []  # noqa: RUF012 - a record of calls, shared on purpose

    def __init__(self, arg: Any = None) -> None:
        FakeResourceSet.created.append(arg)
        doc = json.loads(arg) if isinstance(arg, str) else arg
        if not isinstance(doc, dict):
            raise TypeError("ResourceSet cannot be instantiated from that")
        if doc["version"] != 1:
            raise ValueError("R version not supported")
        self.ranks = doc.get("ranks", [0, 1])

    def copy_ranks(self, rank: int) -> FakeResourceSet:
        return FakeResourceSet({"version": 1, "ranks": [rank]})

    @property
    def nodelist(self) -> list[str]:
        return [f"a{r}" for r in self.ranks]

    def encode(self) -> str:
        lite = [
            {"rank": str(r), "children": {"core": "0-3", **({"gpu": "0"} if r else {})}}
            for r in self.ranks
        ]
        return json.dumps({"version": 1, "execution": {"R_lite": lite}})

    def get_properties(self) -> str:
        return json.dumps({"ssd": "1"} if 1 in self.ranks else {})

    def union(self, other: FakeResourceSet) -> FakeResourceSet:
        return FakeResourceSet({"version": 1, "ranks": sorted({*self.ranks, *other.ranks})})

    def diff(self, other: FakeResourceSet) -> FakeResourceSet:
        return FakeResourceSet(
            {"version": 1, "ranks": [r for r in self.ranks if r not in other.ranks]}
        )

    def intersect(self, other: FakeResourceSet) -> FakeResourceSet:
        return FakeResourceSet({"version": 1, "ranks": [r for r in self.ranks if r in other.ranks]})

    def copy_constraint(self, constraint: str) -> FakeResourceSet:
        parsed = json.loads(constraint)
        if "bogus" in parsed:
            raise ValueError("unknown constraint operator")
        return FakeResourceSet({"version": 1, "ranks": [1]})


class FakeResourceCount:
    def __init__(self, values: list[int]) -> None:
        self.values = values

    @classmethod
    def from_count_spec(cls, count: Any) -> FakeResourceCount:
        if isinstance(count, str):
            if not count.isdigit():
                int(count)  # raises like ResourceCount's own parsing: invalid literal for int()
            return cls([int(count)])
        if isinstance(count, dict):
            raise ValueError("RFC 14 count: min must be >= 1, got 0")
        if isinstance(count, list):
            raise TypeError("int() argument must be a string or a number")
        return cls(list(range(1, count + 1)))

    def valid_counts(self, available: int) -> Any:
        return (v for v in sorted(self.values, reverse=True) if v <= available)


@pytest.fixture
def fake_flux(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Fakes of the flux-core modules the adapter uses; returns a record of calls."""
    record: dict[str, Any] = {"jobspecs": [], "shape_labels": []}

    class IDset:
        def __init__(self, ids: list[int]) -> None:
            if any(i < 0 or i > 2**32 for i in ids):
                raise ValueError("IDset(): Invalid argument")
            self.ids = sorted(set(ids))

        def __str__(self) -> str:
            return ",".join(map(str, self.ids))

    def idset_decode(text: str) -> list[int]:
        if not text.replace(",", "").isdigit():
            raise ValueError(f"IDset(): Invalid argument: {text}")
        return [int(i) for i in text.split(",")]

    class Hostlist:
        def __init__(self, hosts: list[str]) -> None:
            if any(not isinstance(h, str) for h in hosts):
                raise TypeError("Hostlist(): expected string")
            if "" in hosts:
                raise ValueError("Invalid hostlist: ''")
            self.hosts = hosts

        def encode(self) -> str:
            return ",".join(self.hosts)

    def hostlist_decode(text: str) -> list[str]:
        if "[" in text and "]" not in text:
            raise ValueError(f"Invalid hostlist: '{text}'")
        return text.split(",")

    def validate_jobspec(text: str) -> Any:
        doc = json.loads(text)
        record["jobspecs"].append(doc)
        if doc is None:
            return (1, "Unable to parse JSON")
        if doc == {"version": "eio"}:
            raise OSError(errno.EINVAL, "jobspec must not be None/NULL")
        if doc == {"version": "eacces"}:
            raise OSError(errno.EACCES, "cannot reach the broker")
        constraints = doc.get("attributes", {}).get("system", {}).get("constraints")
        if constraints is not None and "bogus" in constraints:
            raise TypeError("unknown constraint operator 'bogus'")
        if "resources" not in doc:
            raise ValueError("Missing key (resources)")
        return (True, object())

    class ShapeParser:
        builds = 0

        def __init__(self) -> None:
            ShapeParser.builds += 1
            self.default_slot_label = "task"

        def parse(self, text: str) -> Any:
            record["shape_labels"].append(self.default_slot_label)
            if text.startswith("["):
                raise ShapeSyntaxError("Unclosed bracket")
            if text == "node=0":
                raise ValueError("count must be > 0")
            return [{"type": "slot", "count": 1, "label": self.default_slot_label}]

    class ConstraintParser:
        pass

    class MiniConstraintParser(ConstraintParser):
        def parse(self, query: Any) -> Any:
            if not isinstance(query, str):
                raise ValueError("Expected a string")  # what PLY raises
            if query.endswith("|"):
                raise ConstraintSyntaxError("Unexpected end of input")
            return {"properties": query.split(",")}

    FakeResourceSet.created = []
    _module(monkeypatch, "flux")
    _module(monkeypatch, "flux.idset", IDset=IDset, decode=idset_decode)
    _module(monkeypatch, "flux.hostlist", Hostlist=Hostlist, decode=hostlist_decode)
    _module(
        monkeypatch, "flux.resource", ResourceSet=FakeResourceSet, ResourceCount=FakeResourceCount
    )
    _module(monkeypatch, "flux.job", validate_jobspec=validate_jobspec)
    _module(monkeypatch, "flux.job._utils", MiniConstraintParser=MiniConstraintParser)
    _module(monkeypatch, "flux.shape")
    _module(
        monkeypatch, "flux.shape.parser", ShapeParser=ShapeParser, ShapeSyntaxError=ShapeSyntaxError
    )
    _module(monkeypatch, "flux.constraint")
    _module(
        monkeypatch,
        "flux.constraint.parser",
        ConstraintParser=ConstraintParser,
        ConstraintSyntaxError=ConstraintSyntaxError,
    )
    record["ShapeParser"] = ShapeParser
    return record


def test_flux_core_operations(fake_flux: dict[str, Any]) -> None:
    impl = FluxCore()
    assert set(impl.operations) == {
        "idset.decode",
        "idset.encode",
        "hostlist.decode",
        "hostlist.encode",
        "count.values",
        "shape.parse",
        "jobspec.validate",
        "constraint.validate",
        "constraint.parse_query",
        "constraint.match",
        "R.validate",
        "R.decode",
        "R.union",
        "R.diff",
        "R.intersect",
    }
    for op in ("range.decode", "R.encode", "jobspec.from_shape", "slurm.extra.parse"):
        assert "unsupported" in impl.run(op, "x")


def test_flux_core_without_shape_module(
    fake_flux: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    _missing(monkeypatch, "flux.shape.parser")
    assert "shape.parse" not in FluxCore().operations


def test_flux_core_idsets_and_hostlists(fake_flux: dict[str, Any]) -> None:
    impl = FluxCore()
    assert impl.run("idset.decode", "1,2") == {"output": [1, 2]}
    assert impl.run("idset.decode", "1,x")["error"]["category"] == "syntax"
    assert impl.run("idset.encode", [3, 1, 3]) == {"output": "1,3"}
    assert impl.run("idset.encode", [1, -1])["error"]["category"] == "invalid"
    assert impl.run("idset.encode", [2**40])["error"]["category"] == "limit"
    assert impl.run("hostlist.decode", "a,b") == {"output": ["a", "b"]}
    assert impl.run("hostlist.decode", "a[")["error"]["category"] == "syntax"
    assert impl.run("hostlist.encode", ["a", "b"]) == {"output": "a,b"}
    assert impl.run("hostlist.encode", ["a", ""])["error"]["category"] == "invalid"


def test_flux_core_counts(fake_flux: dict[str, Any]) -> None:
    impl = FluxCore()
    assert impl.run("count.values", {"count": 4, "limit": 3}) == {"output": [1, 2, 3]}
    assert impl.run("count.values", {"count": "2", "limit": 9}) == {"output": [2]}
    # A string that does not parse is syntax; a broken count rule, or a wrong type, invalid.
    assert impl.run("count.values", {"count": "x", "limit": 9})["error"]["category"] == "syntax"
    assert impl.run("count.values", {"count": {}, "limit": 9})["error"]["category"] == "invalid"
    assert impl.run("count.values", {"count": [], "limit": 9})["error"]["category"] == "invalid"


def test_flux_core_count_values_bounded(
    fake_flux: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("runner.adapters.thirdparty.fluxcore.MAX_VALUES", 5)
    impl = FluxCore()
    assert impl.run("count.values", {"count": 6, "limit": 10})["error"]["category"] == "limit"
    assert impl.run("count.values", {"count": 5, "limit": 10})["output"] == [1, 2, 3, 4, 5]


def test_flux_core_shapes(fake_flux: dict[str, Any]) -> None:
    impl = FluxCore()
    out = impl.run("shape.parse", {"shape": "slot/node"})
    assert out == {"output": [{"type": "slot", "count": 1, "label": "task"}]}  # its own default
    impl.run("shape.parse", {"shape": "slot/node", "default_label": "x"})
    impl.run("shape.parse", {"shape": "slot/node"})
    assert fake_flux["shape_labels"] == ["task", "x", "task"]
    assert fake_flux["ShapeParser"].builds == 1  # the PLY parser is built once
    assert impl.run("shape.parse", {"shape": "[node"})["error"]["category"] == "syntax"
    assert impl.run("shape.parse", {"shape": "node=0"})["error"]["category"] == "invalid"


def test_flux_core_jobspec_validation(fake_flux: dict[str, Any]) -> None:
    impl = FluxCore()
    assert impl.run("jobspec.validate", {"resources": []}) == {"output": {"warnings": []}}
    assert impl.run("jobspec.validate", {"version": 1})["error"]["category"] == "invalid"
    # validate_jobspec returns (1, reason) for JSON null instead of raising.
    assert impl.run("jobspec.validate", None)["error"]["category"] == "invalid"
    assert impl.run("jobspec.validate", {"version": "eio"})["error"]["category"] == "invalid"
    with pytest.raises(PermissionError):  # not a verdict on the jobspec: the case errors
        impl.run("jobspec.validate", {"version": "eacces"})


def test_flux_core_constraint_validate_uses_a_carrier_jobspec(fake_flux: dict[str, Any]) -> None:
    impl = FluxCore()
    assert impl.run("constraint.validate", {"properties": ["a"]}) == {"output": {"warnings": []}}
    carrier = fake_flux["jobspecs"][-1]
    assert carrier["attributes"]["system"]["constraints"] == {"properties": ["a"]}
    assert carrier["version"] == 1
    assert carrier["tasks"][0]["slot"] == "task"
    assert impl.run("constraint.validate", {"bogus": []})["error"]["category"] == "invalid"
    # The carrier is fresh each time.
    impl.run("constraint.validate", {})
    assert fake_flux["jobspecs"][-1]["attributes"]["system"]["constraints"] == {}


def test_flux_core_parse_query(fake_flux: dict[str, Any]) -> None:
    impl = FluxCore()
    assert impl.run("constraint.parse_query", "a,b") == {"output": {"properties": ["a", "b"]}}
    assert impl.run("constraint.parse_query", "a|")["error"]["category"] == "syntax"
    assert impl.run("constraint.parse_query", 5)["error"]["category"] == "invalid"


def test_flux_core_parse_query_from_older_cli_module(
    fake_flux: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    older = sys.modules["flux.job._utils"]
    _missing(monkeypatch, "flux.job._utils")
    _module(monkeypatch, "flux.cli.base", MiniConstraintParser=older.MiniConstraintParser)
    assert FluxCore().run("constraint.parse_query", "a") == {"output": {"properties": ["a"]}}


def test_flux_core_resource_sets(fake_flux: dict[str, Any]) -> None:
    impl = FluxCore()
    r = {"version": 1}
    assert impl.run("R.validate", r) == {"output": {"warnings": []}}
    assert FakeResourceSet.created[-1] == json.dumps(r)  # documents go in serialised
    assert impl.run("R.validate", {"version": 2})["error"]["category"] == "invalid"
    assert impl.run("R.validate", {})["error"]["category"] == "invalid"  # KeyError
    assert impl.run("R.validate", "text")["error"]["category"] == "invalid"  # TypeError
    assert impl.run("R.decode", r) == {
        "output": [
            {"rank": 0, "hostname": "a0", "cores": "0-3", "gpus": "", "properties": []},
            {"rank": 1, "hostname": "a1", "cores": "0-3", "gpus": "0", "properties": ["ssd"]},
        ]
    }
    b = {"version": 1, "ranks": [1]}
    union = impl.run("R.union", {"a": r, "b": b})["output"]
    assert [e["rank"] for e in union["execution"]["R_lite"]] == ["0", "1"]
    diff = impl.run("R.diff", {"a": r, "b": b})["output"]
    assert [e["rank"] for e in diff["execution"]["R_lite"]] == ["0"]
    inter = impl.run("R.intersect", {"a": r, "b": b})["output"]
    assert [e["rank"] for e in inter["execution"]["R_lite"]] == ["1"]
    assert impl.run("R.union", {"a": r})["error"]["category"] == "invalid"
    assert impl.run("R.union", [r, b])["error"]["category"] == "invalid"


def test_flux_core_constraint_match(fake_flux: dict[str, Any]) -> None:
    impl = FluxCore()
    value = {"constraint": {"properties": ["ssd"]}, "R": {"version": 1}}
    assert impl.run("constraint.match", value) == {"output": [1]}
    value["constraint"] = {"bogus": []}
    assert impl.run("constraint.match", value)["error"]["category"] == "invalid"


def test_flux_core_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    _missing(monkeypatch, "flux")
    with pytest.raises(AdapterError, match="flux-core is not on PyPI"):
        FluxCore()


def test_flux_core_through_the_runner(
    fake_flux: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    # The fake is wrong on most cases; what matters is that every case gets a verdict.
    code = main(
        [
            "run",
            "--impl",
            "flux-core",
            "--no-shipped-expectations",
            "-o",
            "idset.decode",
            "--json",
            "-",
        ]
    )
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    results = [line["case"] for line in lines if "case" in line]
    assert code == 1
    assert results
    assert {r["outcome"] for r in results} <= {"passed", "failed"}


# -- registry and shipped files ----------------------------------------------------------------


def test_known_adapters_registered() -> None:
    assert set(KNOWN) >= {"python-hostlist", "clustershell", "flux-core", "slurm-hostlist", "pdsh"}


@pytest.mark.parametrize(
    "name", ["python-hostlist", "clustershell", "flux-core", "slurm-hostlist", "pdsh"]
)
def test_expectations_files_load_and_are_not_stale(name: str) -> None:
    from runner.cases import load_suite

    expectations = Expectations.load(expectations_file(name))
    assert expectations.entries
    assert all(e.status == "xfail" and e.reason.strip() for e in expectations.entries)
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
    from runner.adapters.thirdparty.slurm_hostlist import _library_present

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
