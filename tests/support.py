"""Helpers shared by the tests (on the path through pytest's ``pythonpath`` setting)."""

from __future__ import annotations

import shlex
import sys
import types
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

if TYPE_CHECKING:  # imported where used: a test module that imports this one loads no runner
    from flux_conformance.runner.report import Header


TESTS = Path(__file__).resolve().parent
MINI = TESTS / "data" / "mini-suite"
FAKES = TESTS / "fakes"
ROOT = TESTS.parent
CASES = ROOT / "cases"


def case_inputs(case_file: str, prefix: str) -> dict[str, Any]:
    """The inputs of the cases in ``cases/<case_file>`` whose ids start with ``prefix``.

    The specs' own examples are encoded as cases (verbatim), so tests that need them read them
    from the repository, never from a copy of the specs elsewhere on the machine.
    """
    with (CASES / case_file).open(encoding="utf-8") as handle:
        cases = yaml.safe_load(handle)["cases"]
    return {c["id"]: c["input"] for c in cases if c["id"].startswith(prefix)}


def fake_command(mode: str, arg: str | None = None) -> str:
    """The command line that starts the fake implementation in ``mode``."""
    argv = [sys.executable, str(FAKES / "fake_impl.py"), mode]
    if arg is not None:
        argv.append(arg)
    return shlex.join(argv)


def hostile_command(kind: str) -> str:
    """The command line that starts the hostile implementation (``fakes/hostile_impl.py``)."""
    return shlex.join([sys.executable, str(FAKES / "hostile_impl.py"), kind])


def ask_each(adapter: Any, *inputs: Any, operation: str = "idset.decode") -> list[Any]:
    """``adapter``'s replies to ``operation`` on each of ``inputs`` in turn; then it is closed."""
    try:
        return [adapter.run(operation, value, edition=None) for value in inputs]
    finally:
        adapter.close()


def fake_module(monkeypatch: pytest.MonkeyPatch, name: str, **attrs: Any) -> types.ModuleType:
    """Install a module ``name`` with ``attrs`` for one test (a fake of a library's API)."""
    module = types.ModuleType(name)
    for key, value in attrs.items():
        setattr(module, key, value)
    monkeypatch.setitem(sys.modules, name, module)
    return module


def missing_modules(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    """Make ``import name`` raise ImportError for one test."""
    for name in names:
        monkeypatch.setitem(sys.modules, name, None)


def globs_for(ids: list[str], count: int) -> list[str]:
    """``count`` distinct globs as people write them, several covering each case id."""

    def shapes(i: str) -> list[str]:
        return [
            i + "*",
            *(i[:-k] + "*" for k in (1, 2, 3, 4)),
            *(i[:-k] + "?" * k for k in (1, 2, 3)),
            i[:-1] + "[" + i[-1] + "]",
            i[:-1] + "[!\n]",
            i[:-2] + "?" + i[-1],
            i[:-3] + "?*",
            i[:-2] + "*?",
            i[:-5] + "*" + i[-2:],
            i[:-4] + "??*",
            i[:-3] + "*" + i[-1],
            i[:-1] + "[!.]*",
        ]

    return list(dict.fromkeys(p for i in ids for p in shapes(i)))[:count]


def github_outputs(text: str) -> dict[str, str]:
    """``$GITHUB_OUTPUT`` read as GitHub reads it: ``name=value`` or ``name<<DELIMITER``."""
    outputs: dict[str, str] = {}
    lines = iter(text.split("\n"))
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            value = []
            for inner in lines:
                if inner == delimiter:
                    break
                value.append(inner)
            outputs[name] = "\n".join(value)
        elif "=" in line:
            name, value = line.split("=", 1)
            outputs[name] = value
    return outputs


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, channels per pixel and raw rows of an 8-bit, non-interlaced PNG (as Chromium writes)."""
    import struct
    import zlib

    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks += body
        pos += 12 + length
    assert header is not None
    width, height, depth, colour, _, _, interlace = header
    assert (depth, interlace) == (8, 0)
    assert colour in (2, 6)
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(chunks)
    stride = width * channels
    rows: list[bytes] = []
    previous = bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for x in range(stride):
            left = line[x - channels] if x >= channels else 0
            up = previous[x]
            corner = previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + left) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + up) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                guess = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[x] = (line[x] + guess) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, channels, rows


class _PlainDumper(yaml.SafeDumper):
    """Writes a value met twice in full (case files allow no anchors or aliases)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def write_suite(folder: Path, cases: dict[str, list[dict[str, Any]]]) -> Path:
    """A case folder at ``folder``: one file per operation of ``cases``, each case citing
    the mini suite's ``mini.ascending`` (whose requirements file is copied)."""
    (folder / "requirements").mkdir(parents=True, exist_ok=True)
    requirements = (MINI / "requirements" / "rfc22.yaml").read_text(encoding="utf-8")
    (folder / "requirements" / "rfc22.yaml").write_text(requirements, encoding="utf-8")
    (folder / "cases").mkdir(exist_ok=True)
    for operation, listed in cases.items():
        written = [{"requirements": ["mini.ascending"], **case} for case in listed]
        text = yaml.dump(
            {"operation": operation, "cases": written}, Dumper=_PlainDumper, width=10**9
        )
        (folder / "cases" / f"{operation}.yaml").write_text(text, encoding="utf-8")
    return folder


def a_header(**changes: Any) -> Header:
    """A report :class:`Header` of a run of the mini suite, with ``changes`` applied."""
    from flux_conformance.runner.report import Header

    fields: dict[str, Any] = {
        "implementation": "fake",
        "impl_spec": "python:fake",
        "version": "1.0",
        "suite_version": "0",
        "suite_digest": "0" * 64,
        "edition": "2025",
        "cases_dir": str(MINI),
        "selected": 5,
        "started": "2026-01-01T00:00:00+00:00",
    }
    return Header(**{**fields, **changes})


# -- the allocation comparator's tests: pools, requests and answers written briefly ----------


def r_pool(*ranks: tuple[int, int], **execution: Any) -> dict[str, Any]:
    """An R whose rank ``i`` is host ``n<i>`` with the given (cores, GPUs), ids from 0."""
    entries = []
    for rank, (cores, gpus) in enumerate(ranks):
        children = {"core": f"0-{cores - 1}" if cores > 1 else "0" if cores else ""}
        if gpus:
            children["gpu"] = f"0-{gpus - 1}" if gpus > 1 else "0"
        entries.append({"rank": str(rank), "children": children})
    hosts = ",".join(f"n{rank}" for rank in range(len(ranks)))
    return {"version": 1, "execution": {"R_lite": entries, "nodelist": [hosts], **execution}}


def r_held(held: dict[int, tuple[str, str]], **execution: Any) -> dict[str, Any]:
    """An R holding, on rank ``r`` (host ``n<r>``), the (cores, GPUs) idsets ``held[r]``."""
    entries = []
    for rank, (cores, gpus) in sorted(held.items()):
        children = {"core": cores, "gpu": gpus} if gpus else {"core": cores}
        entries.append({"rank": str(rank), "children": children})
    hosts = ",".join(f"n{rank}" for rank in sorted(held))
    return {"version": 1, "execution": {"R_lite": entries, "nodelist": [hosts], **execution}}


def slot_vertex(count: Any, *leaves: tuple[str, Any], label: str = "s") -> dict[str, Any]:
    """A slot vertex of ``count`` slots holding the (type, count) leaves."""
    children = [{"type": kind, "count": n} for kind, n in leaves]
    return {"type": "slot", "label": label, "count": count, "with": children}


def node_vertex(count: Any, *children: Any, **extra: Any) -> dict[str, Any]:
    """A node vertex of ``count`` nodes with the given children."""
    return {"type": "node", "count": count, "with": list(children), **extra}


def allocation_input(
    pool: dict[str, Any], resources: list[Any], *allocated: Any, **system: Any
) -> dict[str, Any]:
    """A ``sched.allocate`` input: the pool, a jobspec of ``resources`` (its task runs in the
    slots labelled ``s``) and the Rs ``allocated``, with ``now`` 1 when any is given."""
    jobspec = {
        "version": 1,
        "resources": resources,
        "tasks": [{"command": ["x"], "slot": "s", "count": {"per_slot": 1}}],
        "attributes": {"system": system},
    }
    value: dict[str, Any] = {"pool": pool, "jobspec": jobspec}
    if allocated:
        value |= {"allocated": list(allocated), "now": 1}
    return value


def broken_rules(value: dict[str, Any], answer: dict[str, Any], edition: str) -> list[str]:
    """The allocation rules ``answer`` breaks as an answer to ``value``, read in ``edition``."""
    from flux_conformance.runner.comparators.allocation import rule_breaches
    from flux_conformance.runner.oracle import reference_oracle

    return [rule for rule, _ in rule_breaches(value, answer, reference_oracle(edition))]
