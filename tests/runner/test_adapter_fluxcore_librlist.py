"""The flux-core-librlist adapter: its translation of each case into librlist calls.

The unit tests hand :class:`LibrlistImplementation` a fake library (:class:`FakeLibrlist`)
that records the calls and answers from a small table; it checks the adapter's translation
and bookkeeping only and is never evidence about librlist.  The tests at the end load the
real shared object when ``FLUX_CORE_LIBRLIST`` names one (``build_librlist.sh`` makes it), and
skip otherwise.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from flux_conformance.runner.adapters import KNOWN
from flux_conformance.runner.adapters.base import AdapterError
from flux_conformance.runner.adapters.subprocess import SubprocessAdapter
from flux_conformance.runner.adapters.thirdparty import expectations_file
from flux_conformance.runner.adapters.thirdparty.fluxcore_librlist import (
    ENV,
    FluxCoreLibrlist,
    LibrlistError,
    LibrlistImplementation,
)
from flux_conformance.runner.cli import main, make_adapter
from flux_conformance.runner.expectations import Expectations

R2 = {
    "version": 1,
    "execution": {
        "R_lite": [{"rank": "0-1", "children": {"core": "0-3"}}],
        "nodelist": ["n[0-1]"],
        "properties": {"ssd": "1"},
    },
}


class FakeLibrlist:
    """Stands in for :class:`Librlist`: handles are ints; every call is logged."""

    version = "0.0-fake"

    def __init__(self, *, refuse: str = "") -> None:
        self.refuse = refuse  # the name of the one call that fails
        self.calls: list[tuple[Any, ...]] = []
        self.live: set[int] = set()
        self._next = 0

    def _handle(self, what: str) -> int:
        if self.refuse == what:
            raise LibrlistError(f"{what}: refused by the fake")
        self._next += 1
        self.live.add(self._next)
        return self._next

    def load_r(self, text: str) -> Any:
        self.calls.append(("load_r", json.loads(text)))
        return self._handle("load_r")

    def destroy(self, rl: Any) -> None:
        self.calls.append(("destroy", rl))
        self.live.remove(rl)

    def encode(self, rl: Any) -> str:
        self.calls.append(("encode", rl))
        if self.refuse == "encode":
            raise LibrlistError("rlist_encode returned NULL")
        one = {"rank": str(rl), "children": {"core": f"0-{rl}"}}
        return json.dumps({"version": 1, "execution": {"R_lite": [one]}})

    def ranks(self, rl: Any) -> list[int]:
        self.calls.append(("ranks", rl))
        return [0, 5]

    def copy_rank(self, rl: Any, rank: int) -> Any:
        self.calls.append(("copy_rank", rl, rank))
        return self._handle("copy_rank")

    def first_host(self, rl: Any) -> str:
        self.calls.append(("first_host", rl))
        return f"host{rl}"

    def properties(self, rl: Any) -> str:
        self.calls.append(("properties", rl))
        return json.dumps({"zeta": str(rl), "alpha": str(rl)})

    def set_op(self, name: str, a: Any, b: Any) -> Any:
        self.calls.append(("set_op", name, a, b))
        return self._handle("set_op")

    def copy_constraint(self, rl: Any, constraint: str) -> Any:
        self.calls.append(("copy_constraint", rl, json.loads(constraint)))
        return self._handle("copy_constraint")

    def check_constraint(self, constraint: str) -> None:
        self.calls.append(("check_constraint", json.loads(constraint)))
        if self.refuse == "check_constraint":
            raise LibrlistError("job_constraint_create: unknown constraint operator")

    def create(self) -> Any:
        self.calls.append(("create",))
        return self._handle("create")

    def append_rank_cores(self, rl: Any, host: str, rank: int, cores: str) -> None:
        self.calls.append(("append_rank_cores", rl, host, rank, cores))
        if self.refuse == "append_rank_cores":
            raise LibrlistError(f"rlist_append_rank_cores refused rank {rank}")

    def add_gpus(self, rl: Any, rank: int, gpus: str) -> None:
        self.calls.append(("add_gpus", rl, rank, gpus))

    def assign_properties(self, rl: Any, properties: str) -> None:
        self.calls.append(("assign_properties", rl, json.loads(properties)))

    def set_times(self, rl: Any, starttime: float, expiration: float) -> None:
        self.calls.append(("set_times", rl, starttime, expiration))


def _impl(**kwargs: Any) -> tuple[LibrlistImplementation, FakeLibrlist]:
    fake = FakeLibrlist(**kwargs)
    return LibrlistImplementation(fake), fake


def test_registered_as_a_worker_adapter() -> None:
    assert KNOWN["flux-core-librlist"].endswith("fluxcore_librlist:FluxCoreLibrlist")
    assert issubclass(FluxCoreLibrlist, SubprocessAdapter)


def test_operations_and_version() -> None:
    impl, _ = _impl()
    assert impl.operations == (
        "R.decode",
        "R.diff",
        "R.encode",
        "R.intersect",
        "R.union",
        "R.validate",
        "constraint.match",
        "constraint.validate",
    )
    assert impl.version == "0.0-fake (librlist)"


def test_without_the_variable_the_adapter_says_how_to_build(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(ENV, raising=False)
    with pytest.raises(AdapterError, match=r"build_librlist\.sh BUILD PREFIX OUT"):
        make_adapter("flux-core-librlist")
    with pytest.raises(AdapterError, match=f"{ENV} is not set"):
        LibrlistImplementation()
    # Exit status 3: the implementation could not be run (docs/verdicts.md).
    assert main(["run", "--impl", "flux-core-librlist", "-o", "R.validate"]) == 3
    assert "build_librlist.sh" in capsys.readouterr().err


def test_a_missing_object_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv(ENV, str(tmp_path / "nothing.so"))
    with pytest.raises(AdapterError, match="is not a file"):
        make_adapter("flux-core-librlist")


def test_validate_loads_and_frees() -> None:
    impl, fake = _impl()
    assert impl.run("R.validate", R2) == {"output": {"warnings": []}}
    assert fake.calls == [("load_r", R2), ("destroy", 1)]
    assert not fake.live


def test_a_refusal_is_unknown_with_librlists_message() -> None:
    impl, fake = _impl(refuse="load_r")
    outcome = impl.run("R.validate", {"version": 2})
    assert outcome == {"error": {"category": "unknown", "message": "load_r: refused by the fake"}}
    assert not fake.live


def test_decode_asks_librlist_rank_by_rank() -> None:
    impl, fake = _impl()
    out = impl.run("R.decode", R2)
    # The fake's copies are handles 2 and 3; their encodings name cores 0-2 and 0-3.
    assert out == {
        "output": [
            {
                "rank": 0,
                "hostname": "host2",
                "cores": "0-2",
                "gpus": "",
                "properties": ["alpha", "zeta"],
            },
            {
                "rank": 5,
                "hostname": "host3",
                "cores": "0-3",
                "gpus": "",
                "properties": ["alpha", "zeta"],
            },
        ]
    }
    assert ("copy_rank", 1, 5) in fake.calls
    assert not fake.live


def test_decode_frees_the_copy_when_librlist_refuses_midway() -> None:
    impl, fake = _impl(refuse="encode")
    assert impl.run("R.decode", R2)["error"]["category"] == "unknown"
    assert not fake.live


@pytest.mark.parametrize("op", ["union", "diff", "intersect"])
def test_set_operations(op: str) -> None:
    impl, fake = _impl()
    out = impl.run(f"R.{op}", {"a": R2, "b": {"version": 1}})
    assert out == {
        "output": {
            "version": 1,
            "execution": {"R_lite": [{"rank": "3", "children": {"core": "0-3"}}]},
        }
    }
    assert ("set_op", op, 1, 2) in fake.calls
    assert not fake.live


def test_set_operation_refused_by_librlist() -> None:
    impl, fake = _impl(refuse="set_op")
    assert impl.run("R.union", {"a": R2, "b": R2})["error"]["category"] == "unknown"
    assert not fake.live


@pytest.mark.parametrize("value", [[R2, R2], {"a": R2}, "R"])
def test_set_operation_without_two_documents_is_unsupported(value: Any) -> None:
    impl, fake = _impl()
    assert "unsupported" in impl.run("R.diff", value)
    assert fake.calls == []


def test_match_lists_the_ranks_of_the_copy() -> None:
    impl, fake = _impl()
    out = impl.run("constraint.match", {"R": R2, "constraint": {"properties": ["ssd"]}})
    assert out == {"output": [0, 5]}
    assert ("copy_constraint", 1, {"properties": ["ssd"]}) in fake.calls
    assert ("ranks", 2) in fake.calls
    assert not fake.live


def test_match_constraint_refused() -> None:
    impl, fake = _impl(refuse="copy_constraint")
    out = impl.run("constraint.match", {"R": R2, "constraint": {"nope": []}})
    assert out["error"]["category"] == "unknown"
    assert not fake.live


def test_constraint_validate() -> None:
    impl, fake = _impl()
    assert impl.run("constraint.validate", {}) == {"output": {"warnings": []}}
    assert fake.calls == [("check_constraint", {})]
    impl, _ = _impl(refuse="check_constraint")
    outcome = impl.run("constraint.validate", {"nope": []})
    assert outcome["error"]["category"] == "unknown"
    assert "unknown constraint operator" in outcome["error"]["message"]


def test_encode_calls_what_flux_r_encode_calls() -> None:
    impl, fake = _impl()
    ranks = [
        {"rank": 3, "hostname": "b", "cores": "0-1", "gpus": "0", "properties": ["ssd"]},
        {"rank": 1, "hostname": "a", "cores": "0-3", "properties": ["ssd", "big"]},
    ]
    out = impl.run("R.encode", {"ranks": ranks, "starttime": 10, "expiration": 20.5})
    assert "output" in out
    assert fake.calls[:-2] == [
        ("create",),
        ("append_rank_cores", 1, "b", 3, "0-1"),
        ("add_gpus", 1, 3, "0"),
        ("append_rank_cores", 1, "a", 1, "0-3"),
        ("assign_properties", 1, {"ssd": "1,3", "big": "1"}),
        ("set_times", 1, 10.0, 20.5),
    ]
    assert fake.calls[-2:] == [("encode", 1), ("destroy", 1)]


def test_encode_without_times_or_properties_leaves_them_to_librlist() -> None:
    impl, fake = _impl()
    impl.run("R.encode", [{"rank": 0, "hostname": "a", "cores": "0", "gpus": ""}])
    names = [c[0] for c in fake.calls]
    assert "set_times" not in names
    assert "assign_properties" not in names
    assert "add_gpus" not in names


def test_encode_refusal_is_unknown_and_frees() -> None:
    impl, fake = _impl(refuse="append_rank_cores")
    out = impl.run("R.encode", [{"rank": 0, "hostname": "a", "cores": "x"}])
    assert out["error"]["category"] == "unknown"
    assert not fake.live


@pytest.mark.parametrize(
    "value",
    [
        {"ranks": "0"},
        [{"rank": -1, "hostname": "a", "cores": "0"}],
        [{"rank": 2**32, "hostname": "a", "cores": "0"}],
        [{"rank": True, "hostname": "a", "cores": "0"}],
        [{"rank": 0, "cores": "0"}],
        [{"rank": 0, "hostname": "a\0b", "cores": "0"}],
        [{"rank": 0, "hostname": "a", "cores": "0", "properties": "ssd"}],
        {"ranks": [], "starttime": None},
        {"ranks": [], "nslots": 1},
        [{"rank": 0, "hostname": "a", "cores": "0", "extra": 1}],
        ["not an item"],
    ],
)
def test_encode_inputs_without_c_arguments_are_unsupported(value: Any) -> None:
    impl, fake = _impl()
    assert "unsupported" in impl.run("R.encode", value)
    assert fake.calls == []


def test_expectations_file_loads_and_is_not_stale() -> None:
    from flux_conformance.runner.cases import load_suite

    expectations = Expectations.load(expectations_file("flux-core-librlist"))
    assert expectations.entries
    assert all(e.status == "xfail" and e.reason.strip() for e in expectations.entries)
    assert expectations.stale(c.id for c in load_suite().cases) == []


# -- the real librlist ----------------------------------------------------------------------


@pytest.fixture
def real() -> LibrlistImplementation:
    if not os.environ.get(ENV):
        pytest.skip(f"{ENV} is not set (implementations/flux-core/build_librlist.sh makes it)")
    return LibrlistImplementation()


def test_real_librlist_decodes(real: LibrlistImplementation) -> None:
    assert real.version.endswith("(librlist)")
    assert real.run("R.decode", R2) == {
        "output": [
            {"rank": 0, "hostname": "n0", "cores": "0-3", "gpus": "", "properties": []},
            {"rank": 1, "hostname": "n1", "cores": "0-3", "gpus": "", "properties": ["ssd"]},
        ]
    }


def test_real_librlist_matches_and_refuses(real: LibrlistImplementation) -> None:
    match = {"R": R2, "constraint": {"not": [{"properties": ["ssd"]}]}}
    assert real.run("constraint.match", match) == {"output": [0]}
    refused = real.run("R.validate", {"version": 2, "execution": {"R_lite": []}})
    assert refused["error"]["category"] == "unknown"
    assert "version" in refused["error"]["message"]


def test_real_librlist_encodes_times_as_set(real: LibrlistImplementation) -> None:
    ranks = [{"rank": 0, "hostname": "n0", "cores": "0-1"}]
    out = real.run("R.encode", {"ranks": ranks, "starttime": 5, "expiration": 9})
    execution = out["output"]["execution"]
    assert (execution["starttime"], execution["expiration"]) == (5, 9)
    assert execution["R_lite"] == [{"rank": "0", "children": {"core": "0-1"}}]


def test_real_build_matches_its_expectations(capsys: pytest.CaptureFixture[str]) -> None:
    if not os.environ.get(ENV):
        pytest.skip(f"{ENV} is not set (implementations/flux-core/build_librlist.sh makes it)")
    argv = ["run", "--impl", "flux-core-librlist", "-o", "R.*", "-o", "constraint.*"]
    argv += ["--json", "-", "--expectations", str(expectations_file("flux-core-librlist"))]
    code = main(argv)
    out = capsys.readouterr()
    assert code == 0, out.out[-3000:] + out.err[-2000:]
    results = [json.loads(line)["case"] for line in out.out.splitlines() if '"case"' in line]
    assert len(results) > 400
    assert {r["outcome"] for r in results} <= {"passed", "xfailed", "skipped", "unchecked"}
