"""The registry of operations the suite knows, read from ``runner/schemas/operations``.

Each operation is registered by one JSON file (see ``docs/writing-cases.md``): its spec,
input and output JSON Schemas, the error categories an implementation may report (each with
its meaning), and the comparator that judges an output.  The registry is data so that an
implementer can read exactly what each operation takes and gives without reading Python.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from flux_conformance.runner._schemas import schema
from flux_conformance.runner.bounds import cut
from flux_conformance.runner.comparators import COMPARATORS, Comparator, Oracle
from flux_conformance.runner.errors import ConformanceError

if TYPE_CHECKING:
    import jsonschema

__all__ = ["OperationSpec", "RegistryError", "load_registry", "schema"]


class RegistryError(ConformanceError):
    """An operation registration is malformed (a bug in the suite, not in a case)."""


@dataclass(frozen=True)
class OperationSpec:
    """One registered operation."""

    name: str
    spec: str
    summary: str
    input_schema: Mapping[str, Any]
    output_schema: Mapping[str, Any]
    errors: Mapping[str, str]
    comparator_name: str
    comparator_doc: str
    #: The form of a case's expected output, when it is not the output's own (a comparator
    #: that judges by rules reads a description of what is determined); None: the output's.
    expected_schema: Mapping[str, Any] | None = None
    _validators: dict[str, jsonschema.protocols.Validator] = field(
        default_factory=dict, compare=False, repr=False
    )

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> OperationSpec:
        """An operation from its registration (the JSON of ``schemas/operations/<name>.json``)."""
        return cls(
            name=data["operation"],
            spec=data["spec"],
            summary=data["summary"],
            input_schema=data["input"],
            output_schema=data["output"],
            errors=data["errors"],
            comparator_name=data["comparator"],
            comparator_doc=data["comparator_doc"],
            expected_schema=data.get("expected"),
        )

    def to_json(self) -> dict[str, Any]:
        """The registration this operation was read from."""
        return {
            "operation": self.name,
            "spec": self.spec,
            "summary": self.summary,
            "input": self.input_schema,
            "output": self.output_schema,
            "errors": dict(self.errors),
            "comparator": self.comparator_name,
            "comparator_doc": self.comparator_doc,
            **({"expected": self.expected_schema} if self.expected_schema is not None else {}),
        }

    @property
    def comparator(self) -> Comparator:
        """The comparator function this operation's outputs are judged by."""
        return COMPARATORS[self.comparator_name]

    def compare(self, expected: Any, actual: Any, oracle: Oracle, value: Any) -> str | None:
        """Judge ``actual`` (the answer to the input ``value``) against ``expected``.

        Most comparators see the two outputs only; one that judges by rules of the input
        (marked ``needs_input``, e.g. ``allocation_rules``) is given the input as well.
        """
        func: Any = self.comparator
        if getattr(func, "needs_input", False):
            reason: str | None = func(expected, actual, oracle, value)
            return reason
        return self.comparator(expected, actual, oracle)

    def expected_problems(self, value: Any) -> list[str]:
        """Why ``value`` is not a valid expected output in a case (empty when it is)."""
        return self._problems("expected", value)

    def _validator(self, which: str) -> jsonschema.protocols.Validator:
        import jsonschema

        if which not in self._validators:
            schemas = {
                "input": self.input_schema,
                "output": self.output_schema,
                "expected": self.expected_schema or self.output_schema,
            }
            sch = schemas[which]
            cls = jsonschema.validators.validator_for(sch, default=jsonschema.Draft202012Validator)
            self._validators[which] = cls(sch)
        return self._validators[which]

    def input_problems(self, value: Any) -> list[str]:
        """Why ``value`` is not a valid input for this operation (empty when it is)."""
        return self._problems("input", value)

    def output_problems(self, value: Any) -> list[str]:
        """Why ``value`` is not a valid output of this operation (empty when it is)."""
        return self._problems("output", value)

    def first_output_problem(self, value: Any) -> str | None:
        """The first reason ``value`` is not a valid output (None when it is valid).

        Unlike :meth:`output_problems`, this stops at the first error: an answer of a
        million wrong items is refused after one.
        """
        try:
            error = next(iter(self._validator("output").iter_errors(value)), None)
        except RecursionError:
            return "value: nested too deeply to check against the output schema"
        return None if error is None else _describe(error)

    def _problems(self, which: str, value: Any) -> list[str]:
        try:
            return [_describe(e) for e in self._validator(which).iter_errors(value)]
        except RecursionError:
            return [f"value: nested too deeply to check against the {which} schema"]


#: The longest schema message kept: jsonschema quotes the whole offending value.
_MESSAGE_LIMIT = 300


def _describe(error: jsonschema.ValidationError) -> str:
    where = "".join(f"[{p!r}]" for p in error.absolute_path)
    return f"{where or 'value'}: {cut(error.message, _MESSAGE_LIMIT)}"


@cache
def load_registry() -> Mapping[str, OperationSpec]:
    """Every registered operation, by name, in name order."""
    import jsonschema

    meta = jsonschema.Draft202012Validator(schema("operation.json"))
    folder = resources.files("flux_conformance.runner").joinpath("schemas").joinpath("operations")
    found: dict[str, OperationSpec] = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".json"):
            continue
        try:
            data = json.loads(entry.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise RegistryError(f"{entry.name}: not JSON: {exc}") from None
        problems = [_describe(e) for e in meta.iter_errors(data)]
        if problems:
            raise RegistryError(f"{entry.name}: " + "; ".join(problems))
        name = data["operation"]
        if entry.name != f"{name}.json":
            raise RegistryError(f"{entry.name}: registers {name!r}; the file must be {name}.json")
        if data["comparator"] not in COMPARATORS:
            raise RegistryError(f"{entry.name}: unknown comparator {data['comparator']!r}")
        for which in ("input", "output", "expected"):
            if which in data:
                jsonschema.Draft202012Validator.check_schema(data[which])
        found[name] = OperationSpec.from_json(data)
    return found
