"""What the third-party adapters share: outcome builders and dispatch by operation.

The rule every adapter follows: it reports what the library did, and never decides an answer
for it.  A refusal gets a category only when the library itself names the kind (an exception
class or error code of its own for that kind, such as a parser's syntax error); a refusal by a
generic exception (``ValueError``, ``TypeError``, one catch-all class, a NULL return) is
:func:`refused`, category ``unknown``, whatever its message says and whatever the input was.
A bound of the adapter's own (a list too long to hold, a run too long to wait for) is
:func:`adapter_bound`, never a ``limit`` the library did not report.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from flux_conformance.runner.adapters.base import UNKNOWN_CATEGORY, AdapterError

__all__ = [
    "Handler",
    "ThirdPartyImplementation",
    "adapter_bound",
    "constraint_carrier",
    "error",
    "import_or_fail",
    "output",
    "refused",
    "unsupported",
]

#: One operation of an adapter: JSON input -> outcome mapping.
Handler = Callable[[Any], Mapping[str, Any]]


def constraint_carrier(constraint: Any) -> dict[str, Any]:
    """The smallest jobspec flux-core and Fluxion accept, carrying ``constraint``.

    ``constraint.validate`` reaches their jobspec validators through it.  Both refuse a
    jobspec without ``attributes.system.duration`` (0 is unlimited).
    """
    return {
        "version": 1,
        "resources": [
            {"type": "slot", "count": 1, "label": "task", "with": [{"type": "core", "count": 1}]}
        ],
        "tasks": [{"command": ["true"], "slot": "task", "count": {"per_slot": 1}}],
        "attributes": {"system": {"duration": 0, "constraints": constraint}},
    }


def output(value: Any) -> dict[str, Any]:
    """An ``output`` outcome."""
    return {"output": value}


def error(category: str, exc: BaseException | str) -> dict[str, Any]:
    """An ``error`` outcome carrying the library's own message (never compared)."""
    message = exc if isinstance(exc, str) else f"{type(exc).__name__}: {exc}"
    return {"error": {"category": category, "message": message}}


def refused(exc: BaseException | str) -> dict[str, Any]:
    """An ``error`` outcome of category ``unknown``: the library refused without a category."""
    return error(UNKNOWN_CATEGORY, exc)


def adapter_bound(reason: str, *, seen_output: bool = False) -> dict[str, Any]:
    """The adapter stopped on a bound of its own; ``seen_output``: the library was answering."""
    bound: dict[str, Any] = {"reason": reason}
    if seen_output:
        bound["seen"] = "output"
    return {"adapter_bound": bound}


def unsupported(reason: str) -> dict[str, Any]:
    """An ``unsupported`` outcome."""
    return {"unsupported": {"reason": reason}}


def import_or_fail(module: str, *, what: str, install: str) -> ModuleType:
    """Import ``module`` or raise :class:`AdapterError` saying how to get it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise AdapterError(f"{what} is not installed ({exc}); {install}") from None


class ThirdPartyImplementation:
    """Base of the adapters: ``run`` dispatches to the handler registered per operation.

    Subclasses fill ``handlers`` in ``__init__`` (after importing their library); the
    ``operations`` attribute lists exactly those, so the runner skips the rest without
    asking.  A handler maps the library's exceptions to the operation's categories and
    lets anything unexpected propagate: the runner then reports the case as errored, which
    is what a crash of the library on that input is.
    """

    name = "third-party"
    version = ""

    def __init__(self, handlers: Mapping[str, Handler]) -> None:
        self._handlers = dict(handlers)
        self.operations = tuple(sorted(self._handlers))

    def run(self, operation: str, input: Any, /, **options: Any) -> Mapping[str, Any]:
        """Answer one case (``options`` such as ``edition`` are not used by libraries)."""
        del options
        handler = self._handlers.get(operation)
        if handler is None:
            return unsupported(f"{self.name} has no API for {operation}")
        return handler(input)
