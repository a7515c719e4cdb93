"""What every adapter speaks: the implementer's Protocol and the runner's view of a reply.

An implementation under test answers each case with one *outcome* (the protocol's
``outcome`` schema in ``runner/schemas/protocol.json``)::

    {"output": <value>}
    {"error": {"category": "syntax", "message": "..."}}
    {"unsupported": {"reason": "..."}}
    {"adapter_bound": {"reason": "...", "seen": "output"}}

The error category ``unknown`` (:data:`UNKNOWN_CATEGORY`) says that the implementation refused
the input without saying which kind of refusal it is (a library that raises one generic
exception for everything): the runner counts it as a refusal whose category is not checked.
``adapter_bound`` says that an adapter stopped on a safety bound of its own (time, size) before
the implementation finished; ``seen: "output"`` says the implementation was giving an output
(the adapter stopped listing it), no ``seen`` that it was not asked.  Neither is ever an
answer the adapter makes up for the implementation.

An in-process implementation returns that mapping from :meth:`Implementation.run`; a
subprocess implementation sends it with a ``seq``.  Either way the runner turns it into a
:class:`Reply`, adding the kind ``errored`` for an implementation that crashed, hung or
broke the protocol.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from flux_conformance.runner._schemas import schema
from flux_conformance.runner.errors import EXIT_UNRUNNABLE, EXIT_USAGE, ConformanceError

if TYPE_CHECKING:
    import jsonschema

#: The error category of a refusal whose kind the implementation does not say.
UNKNOWN_CATEGORY = "unknown"

__all__ = [
    "UNKNOWN_CATEGORY",
    "Adapter",
    "AdapterError",
    "ImplSpecError",
    "Implementation",
    "Reply",
    "protocol_validator",
    "reply_from_outcome",
]


@runtime_checkable
class Implementation(Protocol):
    """An implementation under test, in-process.

    ``run`` takes the operation's name and its JSON input, and returns an outcome mapping.
    ``edition`` (a keyword) is the own name of the edition the run follows, an edition's date
    such as ``"2025-07-31"`` or ``"2026-08-13"`` (``list --editions``; docs/editions.md).
    Raising is a bug: the case is reported as errored.
    """

    def run(self, operation: str, input: Any, /, **options: Any) -> Mapping[str, Any]:
        """Answer one case."""
        ...


@dataclass(frozen=True)
class Reply:
    """The runner's view of an answer.

    ``kind`` is ``output`` (``value`` is the output), ``error`` (``value`` the category,
    ``message`` the text), ``unsupported`` (``message`` the reason), ``bound`` (the adapter
    stopped on a bound of its own: ``message`` the reason, ``value`` ``"output"`` when the
    implementation was giving an output, else None) or ``errored`` (the implementation failed
    to answer: ``message`` says how, ``stderr`` holds its tail).
    ``adapter_fault`` marks an errored reply whose exception was raised by the suite's own
    adapter code rather than by the implementation behind it: a defect of the adapter, which
    an expectations file can never excuse as a finding about the implementation.
    """

    kind: Literal["output", "error", "unsupported", "bound", "errored"]
    value: Any = None
    message: str = ""
    stderr: str = ""
    adapter_fault: bool = False
    #: The output was too large to keep: ``value`` is the start of its JSON text
    #: (:func:`runner.engine.kept`).
    cut: bool = False

    def to_json(self) -> dict[str, Any]:
        """The reply as it appears in reports."""
        if self.kind == "output":
            return {"output": self.value, "cut": True} if self.cut else {"output": self.value}
        if self.kind == "error":
            return {"error": {"category": self.value, "message": self.message}}
        if self.kind == "unsupported":
            return {"unsupported": {"reason": self.message}}
        if self.kind == "bound":
            bound: dict[str, Any] = {"reason": self.message}
            if self.value:
                bound["seen"] = self.value
            return {"adapter_bound": bound}
        out: dict[str, Any] = {"errored": {"reason": self.message}}
        if self.stderr:
            out["errored"]["stderr"] = self.stderr
        if self.adapter_fault:
            out["errored"]["adapter_fault"] = True
        return out


def protocol_validator(definition: str) -> jsonschema.protocols.Validator:
    """A validator for one message of ``protocol.json`` (``outcome``, ``reply``, ``started``)."""
    import jsonschema
    import referencing

    registry: referencing.Registry[Any] = referencing.Registry().with_resource(
        "flux-conformance/protocol.json",
        referencing.Resource.from_contents(schema("protocol.json")),
    )
    return jsonschema.Draft202012Validator(
        {"$ref": f"flux-conformance/protocol.json#/$defs/{definition}"}, registry=registry
    )


@cache
def _outcome_validator() -> jsonschema.protocols.Validator:
    return protocol_validator("outcome")


def _plainly_valid(outcome: Any) -> bool:
    """A fast check that accepts only outcomes the ``outcome`` schema accepts.

    Most replies are plainly valid, and a full schema validation per case would double the
    cost of the subprocess transport; anything this does not accept goes to the schema,
    which decides and explains.
    """
    if type(outcome) is not dict or len(outcome.keys() & _KINDS) != 1:
        return False
    if "output" in outcome:
        return True
    if "error" in outcome:
        error = outcome["error"]
        return (
            type(error) is dict
            and type(error.get("category")) is str
            and bool(error["category"])
            and type(error.get("message", "")) is str
        )
    if "adapter_bound" in outcome:
        return False  # rare: the schema checks it
    reason = outcome["unsupported"]
    return type(reason) is dict and type(reason.get("reason", "")) is str


_KINDS = frozenset({"output", "error", "unsupported", "adapter_bound"})


def reply_from_outcome(outcome: Any) -> Reply:
    """Check an outcome mapping against the protocol and turn it into a :class:`Reply`."""
    if not _plainly_valid(outcome):
        import jsonschema

        errors = list(_outcome_validator().iter_errors(outcome))
        if errors:
            best = jsonschema.exceptions.best_match(errors)
            return Reply("errored", message=f"reply breaks the protocol: {best.message}")
    if "output" in outcome:
        return Reply("output", outcome["output"])
    if "error" in outcome:
        error = outcome["error"]
        return Reply("error", error["category"], str(error.get("message", "")))
    if "adapter_bound" in outcome:
        bound = outcome["adapter_bound"]
        return Reply("bound", bound.get("seen"), str(bound.get("reason", "")))
    return Reply("unsupported", message=str(outcome["unsupported"].get("reason", "")))


class Adapter(Protocol):
    """The runner's side of a transport: start, answer cases one at a time, close."""

    name: str
    version: str

    def start(self) -> None:
        """Make the implementation ready (may raise :class:`AdapterError`)."""

    def supports(self, operation: str) -> bool:
        """Whether the implementation announced ``operation``."""
        ...

    def run(self, operation: str, input: Any, *, edition: str | None) -> Reply:
        """Answer one case; never raises for the implementation's faults."""
        ...

    def close(self) -> None:
        """Release the implementation (stop a process, leave nothing behind)."""


class AdapterError(ConformanceError):
    """The implementation could not be loaded, started or asked anything (exit status 3)."""

    exit_status = EXIT_UNRUNNABLE


class ImplSpecError(AdapterError):
    """An ``--impl`` value is malformed or names nothing known (a usage error, exit status 2)."""

    exit_status = EXIT_USAGE
