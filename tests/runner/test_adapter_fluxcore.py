"""The flux-core adapter: its two modes (a flux-core build; the flux-python wheel alone).

Most tests use fakes of flux-core's modules injected into ``sys.modules`` (no library
needed): they pin what the adapter asks and how it maps each error.  The wheel-only mode is
tested against a fake wheel written to a temporary directory, and, where flux-python is
installed (the default tox env installs it), against the real wheel.
"""

from __future__ import annotations

import errno
import importlib.util
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import fake_module, missing_modules

from flux_conformance.runner.adapters.base import AdapterError
from flux_conformance.runner.adapters.thirdparty.fluxcore import PREFIX_VARIABLE, FluxCore
from flux_conformance.runner.cli import main

_REPO = Path(__file__).resolve().parents[2]


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
    monkeypatch.delenv(PREFIX_VARIABLE, raising=False)
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
    fake_module(monkeypatch, "flux")
    fake_module(monkeypatch, "flux.idset", IDset=IDset, decode=idset_decode)
    fake_module(monkeypatch, "flux.hostlist", Hostlist=Hostlist, decode=hostlist_decode)
    fake_module(
        monkeypatch, "flux.resource", ResourceSet=FakeResourceSet, ResourceCount=FakeResourceCount
    )
    fake_module(monkeypatch, "flux.job", validate_jobspec=validate_jobspec)
    fake_module(monkeypatch, "flux.job._utils", MiniConstraintParser=MiniConstraintParser)
    fake_module(monkeypatch, "flux.shape")
    fake_module(
        monkeypatch, "flux.shape.parser", ShapeParser=ShapeParser, ShapeSyntaxError=ShapeSyntaxError
    )
    fake_module(monkeypatch, "flux.constraint")
    fake_module(
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


def test_flux_core_without_shapefake_module(
    fake_flux: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    missing_modules(monkeypatch, "flux.shape.parser")
    assert "shape.parse" not in FluxCore().operations


def test_flux_core_idsets_and_hostlists(fake_flux: dict[str, Any]) -> None:
    impl = FluxCore()
    assert impl.run("idset.decode", "1,2") == {"output": [1, 2]}
    # flux-core raises ValueError for every refusal: no category is picked from the input.
    assert impl.run("idset.decode", "1,x")["error"]["category"] == "unknown"
    assert impl.run("idset.encode", [3, 1, 3]) == {"output": "1,3"}
    assert impl.run("idset.encode", [1, -1])["error"]["category"] == "unknown"
    assert impl.run("idset.encode", [2**40])["error"]["category"] == "unknown"
    assert impl.run("hostlist.decode", "a,b") == {"output": ["a", "b"]}
    assert impl.run("hostlist.decode", "a[")["error"]["category"] == "unknown"
    assert impl.run("hostlist.encode", ["a", "b"]) == {"output": "a,b"}
    assert impl.run("hostlist.encode", ["a", ""])["error"]["category"] == "unknown"


def test_flux_core_counts(fake_flux: dict[str, Any]) -> None:
    impl = FluxCore()
    assert impl.run("count.values", {"count": 4, "limit": 3}) == {"output": [1, 2, 3]}
    assert impl.run("count.values", {"count": "2", "limit": 9}) == {"output": [2]}
    # ResourceCount raises ValueError for everything: never a category from the message or
    # from the type of the input.
    assert impl.run("count.values", {"count": "x", "limit": 9})["error"]["category"] == "unknown"
    assert impl.run("count.values", {"count": {}, "limit": 9})["error"]["category"] == "unknown"
    assert impl.run("count.values", {"count": [], "limit": 9})["error"]["category"] == "unknown"


def test_flux_core_count_values_bounded(
    fake_flux: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("flux_conformance.runner.adapters.thirdparty.fluxcore.MAX_VALUES", 5)
    impl = FluxCore()
    # Past the adapter's bound flux-core was still answering: an adapter bound, seen output.
    bound = impl.run("count.values", {"count": 6, "limit": 10})["adapter_bound"]
    assert bound["seen"] == "output"
    assert "the adapter lists" in bound["reason"]
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
    assert impl.run("shape.parse", {"shape": "node=0"})["error"]["category"] == "unknown"


def test_flux_core_jobspec_validation(fake_flux: dict[str, Any]) -> None:
    impl = FluxCore()
    assert impl.run("jobspec.validate", {"resources": []}) == {"output": {"warnings": []}}
    assert impl.run("jobspec.validate", {"version": 1})["error"]["category"] == "unknown"
    # validate_jobspec returns (1, reason) for JSON null instead of raising.
    assert impl.run("jobspec.validate", None)["error"]["category"] == "unknown"
    assert impl.run("jobspec.validate", {"version": "eio"})["error"]["category"] == "unknown"
    with pytest.raises(PermissionError):  # not a verdict on the jobspec: the case errors
        impl.run("jobspec.validate", {"version": "eacces"})


def test_flux_core_constraint_validate_uses_a_carrier_jobspec(fake_flux: dict[str, Any]) -> None:
    impl = FluxCore()
    assert impl.run("constraint.validate", {"properties": ["a"]}) == {"output": {"warnings": []}}
    carrier = fake_flux["jobspecs"][-1]
    assert carrier["attributes"]["system"]["constraints"] == {"properties": ["a"]}
    assert carrier["version"] == 1
    assert carrier["tasks"][0]["slot"] == "task"
    assert carrier["attributes"]["system"]["duration"] == 0  # flux-core requires it
    assert impl.run("constraint.validate", {"bogus": []})["error"]["category"] == "unknown"
    # The carrier is fresh each time.
    impl.run("constraint.validate", {})
    assert fake_flux["jobspecs"][-1]["attributes"]["system"]["constraints"] == {}


def test_flux_core_parse_query(fake_flux: dict[str, Any]) -> None:
    impl = FluxCore()
    assert impl.run("constraint.parse_query", "a,b") == {"output": {"properties": ["a", "b"]}}
    assert impl.run("constraint.parse_query", "a|")["error"]["category"] == "syntax"
    assert impl.run("constraint.parse_query", 5)["error"]["category"] == "unknown"


def test_flux_core_parse_query_from_older_clifake_module(
    fake_flux: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    older = sys.modules["flux.job._utils"]
    missing_modules(monkeypatch, "flux.job._utils")
    fake_module(monkeypatch, "flux.cli.base", MiniConstraintParser=older.MiniConstraintParser)
    assert FluxCore().run("constraint.parse_query", "a") == {"output": {"properties": ["a"]}}


def test_flux_core_resource_sets(fake_flux: dict[str, Any]) -> None:
    impl = FluxCore()
    r = {"version": 1}
    assert impl.run("R.validate", r) == {"output": {"warnings": []}}
    assert FakeResourceSet.created[-1] == json.dumps(r)  # documents go in serialised
    assert impl.run("R.validate", {"version": 2})["error"]["category"] == "unknown"
    assert impl.run("R.validate", {})["error"]["category"] == "unknown"  # KeyError
    assert impl.run("R.validate", "text")["error"]["category"] == "unknown"  # TypeError
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
    assert impl.run("R.union", {"a": r})["error"]["category"] == "unknown"
    assert impl.run("R.union", [r, b])["error"]["category"] == "unknown"


def test_flux_core_constraint_match(fake_flux: dict[str, Any]) -> None:
    impl = FluxCore()
    value = {"constraint": {"properties": ["ssd"]}, "R": {"version": 1}}
    assert impl.run("constraint.match", value) == {"output": [1]}
    value["constraint"] = {"bogus": []}
    assert impl.run("constraint.match", value)["error"]["category"] == "unknown"


def test_flux_coremissing_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PREFIX_VARIABLE, raising=False)
    missing_modules(monkeypatch, "flux")
    with pytest.raises(AdapterError, match=r"flux-conformance\[flux-core\].*FLUX_CORE_PREFIX"):
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
    assert {r["outcome"] for r in results} <= {"passed", "failed", "unchecked"}


def test_flux_core_lists_at_most_max_values(
    fake_flux: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # flux-core holds 0-276447231 compactly; a Python list of it would not fit.
    monkeypatch.setattr("flux_conformance.runner.adapters.thirdparty.fluxcore.MAX_VALUES", 2)
    impl = FluxCore()
    assert impl.run("idset.decode", "1,2") == {"output": [1, 2]}
    # Not a limit error: flux-core did not refuse it (and may have decoded something else).
    # An adapter bound that says flux-core was answering with an output.
    bound = impl.run("idset.decode", "1,2,3")["adapter_bound"]
    assert bound["seen"] == "output"
    assert "answered with 3 ids" in bound["reason"]
    assert "more than the adapter lists" in bound["reason"]
    hosts = impl.run("hostlist.decode", "a,b,c")["adapter_bound"]
    assert "answered with 3 hosts" in hosts["reason"]


# -- the flux-python wheel alone -----------------------------------------------------------------

#: A stand-in for the wheel: ``flux/__init__`` fails like the real one without libflux-core.
_FAKE_WHEEL = {
    "flux/__init__.py": "raise ImportError('libflux-core.so.2: cannot open shared object file')\n",
    "flux/shape/__init__.py": "",
    "flux/shape/parser.py": """
class ShapeSyntaxError(Exception):
    pass


class ShapeParser:
    def __init__(self):
        self.default_slot_label = "task"

    def parse(self, query):
        if query.startswith("["):
            raise ShapeSyntaxError("Unclosed bracket")
        return [{"type": query, "count": 1, "label": self.default_slot_label}]
""",
    "flux/constraint/__init__.py": "",
    "flux/constraint/parser.py": """
class ConstraintSyntaxError(Exception):
    pass


class ConstraintParser:
    operator_map = {}

    def parse(self, query):
        if query.endswith("|"):
            raise ConstraintSyntaxError("Unexpected end of input")
        op, _, value = query.rpartition(":")
        return {self.operator_map[op or None]: [value]}
""",
    # Only the class statement may run: the module's own imports need the C bindings.
    "flux/job/_utils.py": """
import _flux._core_that_is_not_there


class MiniConstraintParser(ConstraintParser):
    operator_map = {None: "properties", "host": "hostlist"}
""",
}


@pytest.fixture
def fake_wheel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fake flux-python wheel first on sys.path; new flux modules are dropped afterwards."""
    for name, text in _FAKE_WHEEL.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    monkeypatch.delenv(PREFIX_VARIABLE, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield from _dropping_flux_modules(tmp_path)


def _dropping_flux_modules(path: Path) -> Iterator[Path]:
    def ours() -> set[str]:
        return {n for n in sys.modules if n.split(".")[0] in ("flux", "_flux_conformance_wheel")}

    before = {n: sys.modules[n] for n in ours()}
    for name in before:
        del sys.modules[name]
    try:
        yield path
    finally:
        for name in ours():
            del sys.modules[name]
        sys.modules.update(before)


def test_flux_core_wheel_only_answers_with_its_python_parsers(fake_wheel: Path) -> None:
    impl = FluxCore()
    assert impl.mode == "wheel"
    assert "flux-python wheel" in impl.version
    assert impl.run("shape.parse", {"shape": "node"})["output"][0]["label"] == "task"
    assert impl.run("shape.parse", {"shape": "node", "default_label": "x"})["output"] == [
        {"type": "node", "count": 1, "label": "x"}
    ]
    assert impl.run("shape.parse", {"shape": "[node"})["error"]["category"] == "syntax"
    # MiniConstraintParser's table came from flux/job/_utils.py, whose imports did not run.
    assert impl.run("constraint.parse_query", "a") == {"output": {"properties": ["a"]}}
    assert impl.run("constraint.parse_query", "host:n1") == {"output": {"hostlist": ["n1"]}}
    assert impl.run("constraint.parse_query", "a|")["error"]["category"] == "syntax"
    assert "flux" not in sys.modules  # the wheel's parsers never pass for flux.*


def test_flux_core_wheel_only_says_the_rest_needs_a_build(fake_wheel: Path) -> None:
    impl = FluxCore()
    for op in ("idset.decode", "hostlist.encode", "count.values", "R.union", "jobspec.validate"):
        reason = impl.run(op, "x")["unsupported"]["reason"]
        assert "libflux-core.so.2" in reason
        assert "implementations/flux-core/build.sh" in reason
        assert PREFIX_VARIABLE in reason
    # Operations flux-core has no API for say so, as in the full bindings.
    assert impl.run("R.encode", "x") == {
        "unsupported": {"reason": "flux-core has no API for R.encode"}
    }


def test_flux_core_wheel_without_ply(fake_wheel: Path) -> None:
    parser = fake_wheel / "flux" / "shape" / "parser.py"
    parser.write_text("import ply_that_is_not_installed\n" + parser.read_text(), encoding="utf-8")
    with pytest.raises(AdapterError, match=r"ply_that_is_not_installed.*\[flux-core\]"):
        FluxCore()


def test_flux_core_real_wheel(monkeypatch: pytest.MonkeyPatch) -> None:
    """With flux-python installed and no build, the real parsers answer from their files."""
    spec = importlib.util.find_spec("flux")
    if spec is None or importlib.util.find_spec("ply") is None:
        pytest.skip("flux-python (the flux-core extra) is not installed")
    monkeypatch.delenv(PREFIX_VARIABLE, raising=False)
    impl = FluxCore()
    if impl.mode != "wheel":
        pytest.skip("flux-core's full bindings import here; the wheel mode is not in use")
    assert impl.version.startswith("0.88.0")
    assert impl.run("shape.parse", {"shape": "node=2/core"}) == {
        "output": [{"type": "node", "count": 2, "with": [{"type": "core", "count": 1}]}]
    }
    assert impl.run("constraint.parse_query", "a host:n[1-2]") == {
        "output": {"and": [{"properties": ["a"]}, {"hostlist": ["n[1-2]"]}]}
    }
    shape = sys.modules["_flux_conformance_wheel.shape.parser"]
    assert Path(shape.__file__).parent.parent == Path(next(iter(spec.submodule_search_locations)))


# -- a flux-core build (FLUX_CORE_PREFIX) --------------------------------------------------------


@pytest.fixture
def fake_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A prefix whose site-packages holds a tiny ``flux`` with just ``flux.idset``."""
    site = tmp_path / "lib" / "python3.11" / "site-packages" / "flux"
    site.mkdir(parents=True)
    (site / "__init__.py").write_text("", encoding="utf-8")
    (site / "idset.py").write_text(
        "def decode(text):\n    return [int(i) for i in text.split(',')]\n\n"
        "class IDset(list):\n    pass\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setenv(PREFIX_VARIABLE, str(tmp_path))
    yield from _dropping_flux_modules(tmp_path)


def test_flux_core_build_from_prefix(fake_build: Path) -> None:
    impl = FluxCore()
    assert impl.mode == "bindings"
    assert impl.run("idset.decode", "1,5") == {"output": [1, 5]}
    assert str(fake_build.resolve()) in sys.modules["flux"].__file__
    # Only what this build has: no shape parser, no resource module.
    assert "shape.parse" not in impl.operations
    assert "R.decode" not in impl.operations


def test_flux_core_prefix_without_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PREFIX_VARIABLE, str(tmp_path))
    with pytest.raises(AdapterError, match=r"holds no flux-core build.*build\.sh"):
        FluxCore()


def test_flux_core_prefix_never_falls_back(fake_build: Path) -> None:
    init = fake_build / "lib" / "python3.11" / "site-packages" / "flux" / "__init__.py"
    init.write_text("raise ImportError('libflux-core.so.2: no such file')\n", encoding="utf-8")
    with pytest.raises(AdapterError, match=r"do not import \(libflux-core\.so\.2"):
        FluxCore()


def test_flux_core_prefix_after_another_flux(
    fake_build: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_module(monkeypatch, "flux", __file__="/elsewhere/flux/__init__.py")
    with pytest.raises(AdapterError, match="already imported from /elsewhere"):
        FluxCore()


# -- tox -e flux-core's guard --------------------------------------------------------------------


def _require_build(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    script = _REPO / "implementations" / "flux-core" / "require_build.py"
    return subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, check=False
    )


def test_require_build_says_how_to_build(tmp_path: Path) -> None:
    unset = _require_build({})
    assert unset.returncode == 1
    assert len(unset.stderr.splitlines()) == 1
    assert "FLUX_CORE_PREFIX is not set" in unset.stderr
    assert "implementations/flux-core/build.sh" in unset.stderr
    empty = _require_build({PREFIX_VARIABLE: str(tmp_path)})
    assert empty.returncode == 1
    assert "no flux-core build in" in empty.stderr
    init = tmp_path / "lib" / "python3.11" / "site-packages" / "flux" / "__init__.py"
    init.parent.mkdir(parents=True)
    init.write_text("", encoding="utf-8")
    assert _require_build({PREFIX_VARIABLE: str(tmp_path)}).returncode == 0


def test_flux_core_parse_query_fresh_parser_each_time(fake_flux: dict[str, Any]) -> None:
    # flux-core's lexer carries a pending "op:" token from one failed parse into the next.
    built: list[Any] = []
    parser_cls = sys.modules["flux.job._utils"].MiniConstraintParser

    class Recording(parser_cls):  # type: ignore[misc,valid-type]
        def __init__(self) -> None:
            built.append(self)

    sys.modules["flux.job._utils"].MiniConstraintParser = Recording
    impl = FluxCore()
    impl.run("constraint.parse_query", "a|")
    impl.run("constraint.parse_query", "b")
    assert len(built) == 2
