"""The shared worker entry of the third-party adapters (librlist, Slurm's hostlist, Fluxion).

A fake implementation, written to a temporary module, is served by the real worker process:
an answer is a reply, and a failure of the implementation (``ImplementationFailed``, or any
other exception) errors that one case with the worker's message, never a refusal.
"""

from __future__ import annotations

import io
import json
import os
import textwrap
from pathlib import Path
from typing import Any, NoReturn

import pytest

from flux_conformance.runner.adapters.base import AdapterError
from flux_conformance.runner.adapters.thirdparty._worker import (
    ImplementationFailed,
    WorkerAdapter,
    serve_worker,
    worker_command,
)

_FAKE = textwrap.dedent(
    """
    from flux_conformance.runner.adapters.thirdparty._worker import ImplementationFailed

    class Fake:
        name = "fake"
        version = "1.0"
        operations = ("idset.decode",)

        def run(self, operation, value, /, **options):
            if value == "fail":
                raise ImplementationFailed("the library aborted")
            if value == "raise":
                raise KeyError("oops")
            return {"output": [len(value)]}

    class Missing:
        def __init__(self):
            from flux_conformance.runner.adapters.base import AdapterError
            raise AdapterError("libfake is not installed; apt-get install libfake")
    """
)


@pytest.fixture
def fake_module(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "fake_worker_impl.py").write_text(_FAKE, encoding="utf-8")
    path = os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])
    return dict(os.environ, PYTHONPATH=path)


def test_command_names_the_target_and_the_memory_cap() -> None:
    command = worker_command("pkg.mod:Impl", memory=1024)
    assert command.endswith(
        "-m flux_conformance.runner.adapters.thirdparty._worker pkg.mod:Impl --memory 1024"
    )


def test_answers_and_failures_through_a_real_worker(fake_module: dict[str, str]) -> None:
    adapter = WorkerAdapter("fake_worker_impl:Fake", timeout=30, env=fake_module)
    adapter.start()
    try:
        assert adapter.version == "1.0"
        assert adapter.run("idset.decode", "abc", edition=None).value == [3]
        failed = adapter.run("idset.decode", "fail", edition=None)
        assert failed.kind == "errored"
        assert "fake: the library aborted" in (failed.stderr or "")
        # Any other exception is a failure too, not a refusal of category "internal".
        raised = adapter.run("idset.decode", "raise", edition=None)
        assert raised.kind == "errored"
        assert "fake: raised KeyError" in (raised.stderr or "")
        # A fresh worker answers the next case.
        assert adapter.run("idset.decode", "ab", edition=None).value == [2]
    finally:
        adapter.close()


def test_an_implementation_that_cannot_be_built_says_why(fake_module: dict[str, str]) -> None:
    adapter = WorkerAdapter("fake_worker_impl:Missing", timeout=30, env=fake_module)
    with pytest.raises(AdapterError, match="apt-get install libfake"):
        adapter.start()
    adapter.close()


class _Ended(BaseException):  # serve answers an Exception; the end of a worker is not one
    pass


def _end(message: str) -> NoReturn:
    raise _Ended(message)


def test_serve_worker_ends_on_failure_in_process() -> None:
    class Impl:
        name, version, operations = "inproc", "2", ("idset.decode",)

        def run(self, operation: str, value: Any, /, **options: Any) -> Any:
            raise ImplementationFailed("hung for 120 s")

    request = json.dumps({"cmd": "run", "seq": 1, "operation": "idset.decode", "input": "1"})
    stdin, stdout = io.StringIO(request + "\n"), io.StringIO()
    with pytest.raises(_Ended, match="inproc: hung for 120 s"):
        serve_worker(Impl, end=_end, stdin=stdin, stdout=stdout)
    assert stdout.getvalue() == ""  # no reply: the case ends with the worker
