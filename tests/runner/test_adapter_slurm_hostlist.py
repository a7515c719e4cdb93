"""The slurm-hostlist adapter: a fake of libslurm's C functions pins what the adapter calls
and how it maps each answer; where Debian's libslurm38 is installed, the real library is
called in-process and through the worker process the runner starts.

The fake hands out real C strings (``ctypes`` buffers kept alive by the fake), so the
adapter's ``string_at`` and ``free`` calls run exactly as they do against libslurm.
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from typing import Any

import pytest

from flux_conformance.runner.adapters.base import AdapterError
from flux_conformance.runner.adapters.thirdparty import slurm_hostlist
from flux_conformance.runner.adapters.thirdparty.slurm_hostlist import (
    LIBRARY,
    SlurmHostlist,
    SlurmHostlistLibrary,
    _library_present,
)
from flux_conformance.runner.cli import make_adapter

# -- a fake of libslurm's hostlist functions ---------------------------------------------------


class _Function:
    """A C function of the fake: callable, with the ``restype``/``argtypes`` ctypes sets."""

    def __init__(self, body: Any) -> None:
        self._body = body
        self.restype: Any = None
        self.argtypes: Any = None

    def __call__(self, *args: Any) -> Any:
        return self._body(*args)


class FakeSlurm:
    """Hostlists are Python lists; names go out as C strings the adapter must free."""

    def __init__(self, decoded: dict[bytes, list[bytes] | None], count: int | None = None) -> None:
        self.decoded = decoded
        self.count = count
        self.lists: dict[int, list[bytes]] = {}
        self.live: dict[int, ctypes.Array[ctypes.c_char]] = {}
        self.freed: list[int] = []
        self.destroyed: list[int] = []
        self.created: list[bytes | None] = []
        self.pushed: list[bytes] = []
        for name in (
            "slurm_hostlist_create",
            "slurm_hostlist_count",
            "slurm_hostlist_shift",
            "slurm_hostlist_push_host",
            "slurm_hostlist_ranged_string_malloc",
            "slurm_hostlist_destroy",
            "slurm_api_version",
            "free",
        ):
            setattr(self, name, _Function(getattr(self, "_" + name)))

    def _c_string(self, value: bytes) -> int:
        buffer = ctypes.create_string_buffer(value)
        self.live[ctypes.addressof(buffer)] = buffer
        return ctypes.addressof(buffer)

    def _slurm_hostlist_create(self, text: bytes | None) -> int | None:
        self.created.append(text)
        hosts = [] if text is None else self.decoded.get(text)
        if hosts is None:
            return None
        handle = 1000 + len(self.lists)
        self.lists[handle] = list(hosts)
        return handle

    def _slurm_hostlist_count(self, handle: int) -> int:
        return len(self.lists[handle]) if self.count is None else self.count

    def _slurm_hostlist_shift(self, handle: int) -> int | None:
        hosts = self.lists[handle]
        return self._c_string(hosts.pop(0)) if hosts else None

    def _slurm_hostlist_push_host(self, handle: int, name: bytes) -> int:
        self.pushed.append(name)
        self.lists[handle].append(name)
        return 1

    def _slurm_hostlist_ranged_string_malloc(self, handle: int) -> int:
        return self._c_string(b",".join(self.lists[handle]))

    def _slurm_hostlist_destroy(self, handle: int) -> None:
        self.destroyed.append(handle)

    def _slurm_api_version(self) -> int:
        return 0x260000

    def _free(self, pointer: int) -> None:
        self.freed.append(pointer)
        del self.live[pointer]


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeSlurm]:
    lib = FakeSlurm(
        {
            b"foo[1,1,2,1]": [b"foo1", b"foo1", b"foo2", b"foo1"],
            b"bad[": None,
            b"n\xc3\xb6de1": [b"n\xc3\xb6de1"],
            b"many": [b"a", b"b", b"c"],
        }
    )
    monkeypatch.setattr(slurm_hostlist.ctypes, "CDLL", lambda name: lib)
    monkeypatch.setattr(slurm_hostlist, "_package_version", lambda: "22.05.8-test")
    yield lib
    assert not lib.live, "every C string libslurm hands out is freed"


def test_version_names_package_and_api(fake: FakeSlurm) -> None:
    impl = SlurmHostlistLibrary()
    assert impl.version == "22.05.8-test (API 38.0.0)"
    assert impl.operations == ("hostlist.decode", "hostlist.encode", "idset.encode")
    assert impl.run("idset.decode", "1-3") == {
        "unsupported": {"reason": "slurm-hostlist has no API for idset.decode"}
    }


def test_decode_shifts_every_name_in_order(fake: FakeSlurm) -> None:
    impl = SlurmHostlistLibrary()
    assert impl.run("hostlist.decode", "foo[1,1,2,1]") == {
        "output": ["foo1", "foo1", "foo2", "foo1"]
    }
    assert impl.run("hostlist.decode", "nöde1") == {"output": ["nöde1"]}
    assert len(fake.freed) == 5
    assert fake.destroyed == [1000, 1001]


def test_decode_null_is_a_refusal_without_category(fake: FakeSlurm) -> None:
    answer = SlurmHostlistLibrary().run("hostlist.decode", "bad[")
    assert answer["error"]["category"] == "unknown"
    assert fake.destroyed == []


def test_decode_nul_is_never_passed(fake: FakeSlurm) -> None:
    answer = SlurmHostlistLibrary().run("hostlist.decode", "a\0b")
    assert "unsupported" in answer
    assert fake.created == []


@pytest.mark.parametrize("count", [-5, 4_000_001])
def test_decode_refuses_a_count_over_the_limit_before_shifting(fake: FakeSlurm, count: int) -> None:
    fake.count = count
    answer = SlurmHostlistLibrary().run("hostlist.decode", "many")
    # Slurm accepted the list: the adapter's bound, never a limit Slurm did not report.
    assert answer["adapter_bound"]["seen"] == "output"
    assert "adapter lists at most" in answer["adapter_bound"]["reason"]
    assert fake.lists[1000] == [b"a", b"b", b"c"]  # nothing shifted
    assert fake.destroyed == [1000]


def test_decode_stops_shifting_past_the_limit_when_the_count_wrapped(
    fake: FakeSlurm, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A C int count that wrapped round looks small; the shifting itself is bounded too.
    monkeypatch.setattr(slurm_hostlist, "MAX_EXPANSION", 2)
    fake.count = 1
    answer = SlurmHostlistLibrary().run("hostlist.decode", "many")
    assert answer["adapter_bound"]["seen"] == "output"
    assert fake.destroyed == [1000]


def test_decode_stops_past_the_output_length(
    fake: FakeSlurm, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(slurm_hostlist, "MAX_OUTPUT_LENGTH", 2)
    answer = SlurmHostlistLibrary().run("hostlist.decode", "many")
    assert "adapter stops shifting" in answer["adapter_bound"]["reason"]


def test_encode_pushes_each_name_in_order(fake: FakeSlurm) -> None:
    impl = SlurmHostlistLibrary()
    assert impl.run("hostlist.encode", ["n2", "n1", "n1"]) == {"output": "n2,n1,n1"}
    assert fake.created == [None]
    assert fake.pushed == [b"n2", b"n1", b"n1"]
    assert fake.destroyed == [1000]


def test_encode_nul_is_never_passed(fake: FakeSlurm) -> None:
    assert "unsupported" in SlurmHostlistLibrary().run("hostlist.encode", ["a", "b\0"])
    assert fake.pushed == []


def test_idset_encode_writes_ids_in_decimal(fake: FakeSlurm) -> None:
    impl = SlurmHostlistLibrary()
    assert impl.run("idset.encode", [3, 1]) == {"output": "3,1"}
    assert fake.pushed == [b"3", b"1"]
    assert "unsupported" in impl.run("idset.encode", [1, -1])


def test_library_that_does_not_load(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(name: str) -> Any:
        raise OSError(f"{name}: cannot open shared object file")

    monkeypatch.setattr(slurm_hostlist.ctypes, "CDLL", refuse)
    with pytest.raises(AdapterError, match="apt-get install libslurm38"):
        SlurmHostlistLibrary()


def test_adapter_without_the_library(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(slurm_hostlist, "_library_present", lambda: False)
    with pytest.raises(AdapterError, match="apt-get install libslurm38"):
        SlurmHostlist()


def test_worker_command_and_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(slurm_hostlist, "_library_present", lambda: True)
    adapter = SlurmHostlist(timeout=5)
    assert adapter.command.endswith(
        "-m flux_conformance.runner.adapters.thirdparty._worker "
        "flux_conformance.runner.adapters.thirdparty.slurm_hostlist:SlurmHostlistLibrary "
        f"--memory {slurm_hostlist.WORKER_MEMORY}"
    )
    assert adapter.timeout == slurm_hostlist.MIN_TIMEOUT


# -- the real library --------------------------------------------------------------------------

real = pytest.mark.skipif(not _library_present(), reason=f"{LIBRARY} is not installed")


@real
def test_real_library_in_process() -> None:
    impl = SlurmHostlistLibrary()
    assert impl.version.endswith("(API 38.0.0)")
    assert impl.run("hostlist.decode", "foo[1,1,2,1]") == {
        "output": ["foo1", "foo1", "foo2", "foo1"]
    }
    assert impl.run("hostlist.decode", "foo[3-1]")["error"]["category"] == "unknown"
    # Order and repeats kept, consecutive names merged; nothing sorted.
    assert impl.run("hostlist.encode", ["n3", "n1", "n2", "n2"]) == {"output": "n[3,1-2,2]"}


@real
def test_real_worker_survives_a_fatal_input() -> None:
    adapter = make_adapter("slurm-hostlist")
    try:
        adapter.start()
        assert adapter.run("hostlist.decode", "a[1-2]", edition=None).value == ["a1", "a2"]
        # More than 262,144 ranges in one bracket: libslurm calls fatal(), which exits.
        fatal = "n[" + ",".join(["1"] * 262_145) + "]"
        reply = adapter.run("hostlist.decode", fatal, edition=None)
        assert reply.kind == "errored"
        assert "Too many ranges" in reply.stderr
        # The next case gets a new worker.
        assert adapter.run("hostlist.decode", "b1", edition=None).value == ["b1"]
    finally:
        adapter.close()


@real
def test_real_worker_refuses_a_wrapped_count() -> None:
    # 65,536 x 32,768 hosts: libslurm holds them as ranges, and its int count wraps negative; the
    # adapter's own bound stops the expansion.
    adapter = make_adapter("slurm-hostlist")
    try:
        reply = adapter.run("hostlist.decode", "a[0-65535]b[0-32767]", edition=None)
        assert (reply.kind, reply.value) == ("bound", "output")
    finally:
        adapter.close()
