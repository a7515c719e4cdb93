"""The in-process transport: a Python object implementing :class:`Implementation`.

``--impl python:package.module:object`` imports ``package.module`` and takes ``object``:
an instance with a ``run`` method, a class (instantiated with no arguments), or a plain
function ``run(operation, input, **options)``.  ``--impl reference`` is the bundled
reference implementation.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from flux_conformance import reference
from flux_conformance.runner.adapters.base import (
    AdapterError,
    Implementation,
    ImplSpecError,
    Reply,
    reply_from_outcome,
)

__all__ = ["InProcessAdapter", "ReferenceImplementation", "as_implementation", "load_python_object"]


class ReferenceImplementation:
    """The bundled reference, as an :class:`Implementation`."""

    name = "flux-conformance reference"
    version = reference.__version__

    def __init__(self) -> None:
        from flux_conformance.reference.operations import OPERATIONS

        self.operations = tuple(OPERATIONS)

    def run(self, operation: str, input: Any, /, **options: Any) -> Mapping[str, Any]:
        """Run one operation of the reference; map its errors onto protocol errors."""
        from flux_conformance.reference.errors import FormatError
        from flux_conformance.reference.operations import run

        if operation not in self.operations:
            return {"unsupported": {"reason": f"the reference has no operation {operation!r}"}}
        try:
            return {"output": run(operation, input, edition=options.get("edition"))}
        except FormatError as exc:
            return {"error": {"category": exc.category, "message": str(exc)}}


def load_python_object(spec: str) -> Any:
    """Import ``module:object`` (the part after ``python:``), with hints when it is off.

    The module is looked for where Python looks, then in the current directory (as
    ``python -m`` would), so that ``--impl python:my_impl:Implementation`` finds
    ``./my_impl.py`` from the installed ``flux-conformance`` command too.
    """
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ImplSpecError(
            f"python implementation {spec!r} is not of the form module:object, "
            "e.g. --impl python:mypkg.conformance:Implementation"
        )
    here = os.getcwd()
    if here not in sys.path and "" not in sys.path:
        # Last, so that nothing in the current directory shadows an installed module.
        sys.path.append(here)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise AdapterError(
            f"cannot import {module_name!r}: {exc} (is it installed, or on PYTHONPATH?)"
        ) from None
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            names = ", ".join(n for n in dir(module) if not n.startswith("_"))
            raise AdapterError(f"{module_name!r} has no {attr!r}; it has: {names}") from None
    return obj


class _FunctionImplementation:
    def __init__(self, func: Callable[..., Mapping[str, Any]]) -> None:
        self._func = func

    def run(self, operation: str, input: Any, /, **options: Any) -> Mapping[str, Any]:
        return self._func(operation, input, **options)


def as_implementation(obj: Any) -> Implementation:
    """An :class:`Implementation` from an instance, a class (instantiated) or a function."""
    if isinstance(obj, type):
        try:
            obj = obj()
        except Exception as exc:
            raise AdapterError(f"could not instantiate {obj.__name__}: {exc}") from None
    if isinstance(obj, Implementation):
        return obj
    if callable(obj):
        return _FunctionImplementation(obj)
    raise AdapterError(f"{obj!r} has no run(operation, input) method and is not callable")


_SUITE = Path(__file__).resolve().parents[1]


def _raised_by_the_suite(exc: BaseException) -> bool:
    """Whether the innermost Python frame of ``exc`` is the runner's own code.

    The shipped third-party adapters live in the runner package: an exception raised there
    (a pre-check calling ``int()``, say) is the adapter's fault.  One raised inside the
    library the adapter calls has its innermost frame in the library.
    """
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return Path(tb.tb_frame.f_code.co_filename).resolve().is_relative_to(_SUITE)


class InProcessAdapter:
    """Runs a Python implementation in this process."""

    def __init__(self, impl: Any, *, name: str | None = None) -> None:
        self._impl = as_implementation(impl)
        self.name = name or str(getattr(self._impl, "name", type(self._impl).__name__))
        self.version = str(getattr(self._impl, "version", ""))
        ops = getattr(self._impl, "operations", None)
        self._operations = frozenset(ops) if ops is not None else None

    def start(self) -> None:
        """Nothing to start in-process."""

    def supports(self, operation: str) -> bool:
        """Whether the implementation lists ``operation`` (all, if it lists none)."""
        return self._operations is None or operation in self._operations

    def run(self, operation: str, input: Any, *, edition: str | None) -> Reply:
        """Call the implementation; an exception it raises makes the case errored."""
        options = {"edition": edition} if edition else {}
        try:
            outcome = self._impl.run(operation, input, **options)
        except Exception as exc:
            tail = "".join(traceback.format_exception(exc)[-6:])
            if _raised_by_the_suite(exc):
                return Reply(
                    "errored",
                    message=f"the adapter's own code raised {type(exc).__name__}: {exc} "
                    "(a defect of the adapter, not a finding about the implementation)",
                    stderr=tail,
                    adapter_fault=True,
                )
            return Reply("errored", message=f"raised {type(exc).__name__}: {exc}", stderr=tail)
        return reply_from_outcome(outcome)

    def close(self) -> None:
        """Nothing to release in-process."""
