"""The zoo's machinery: a member (one bug, one operation), the registry, the reference as
members see it, and helpers that change a reference answer.

tests/zoo/members.py explains the zoo; the members live in members.py and, for
``sched.allocate``, members_allocate.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from flux_conformance.reference.errors import FormatError
from flux_conformance.reference.operations import run

__all__ = [
    "MEMBERS",
    "Member",
    "Outcome",
    "Ref",
    "WrongImplementation",
    "copy_json",
    "err",
    "map_output",
    "member",
    "ok",
    "retry",
    "walk",
]

Outcome = dict[str, Any]


def ok(value: Any) -> Outcome:
    return {"output": value}


def err(category: str) -> Outcome:
    return {"error": {"category": category, "message": "refused (zoo member)"}}


class Ref:
    """The reference, in the edition of the request being answered."""

    def __init__(self, operation: str, edition: str | None) -> None:
        self.operation = operation
        self.edition = edition

    def op(self, operation: str, value: Any, edition: str | None = None) -> Outcome:
        """The reference's outcome for ``operation`` on ``value``."""
        try:
            return ok(run(operation, value, edition=edition or self.edition))
        except FormatError as exc:
            return {"error": {"category": exc.category, "message": str(exc)}}

    def __call__(self, value: Any) -> Outcome:
        return self.op(self.operation, value)


Bug = Callable[[Any, Ref], "Outcome | None"]


@dataclass(frozen=True)
class Member:
    """One wrong implementation: ``bug`` applied to one operation."""

    name: str
    operation: str
    like: str
    bug: Bug
    witness: Any

    @property
    def description(self) -> str:
        """The first line of the bug's docstring."""
        return (self.bug.__doc__ or "").strip().splitlines()[0]


MEMBERS: list[Member] = []


def member(operation: str, *, like: str, witness: Any) -> Callable[[Bug], Bug]:
    """Register ``bug`` as a member breaking ``operation`` (named after the function)."""

    def register(bug: Bug) -> Bug:
        name = f"{operation}/{bug.__name__.strip('_').replace('_', '-')}"
        MEMBERS.append(Member(name, operation, like, bug, witness))
        return bug

    return register


class WrongImplementation:
    """An in-process implementation that is the reference except for one member's bug."""

    def __init__(self, item: Member) -> None:
        self.member = item
        self.name = f"zoo:{item.name}"
        self.operations = (item.operation,)

    def run(self, operation: str, value: Any, /, **options: Any) -> Outcome:
        """The bug's answer where it departs, else the reference's."""
        ref = Ref(operation, options.get("edition"))
        if operation == self.member.operation:
            changed = self.member.bug(value, ref)
            if changed is not None:
                return changed
        return ref(value)


# -- helpers ---------------------------------------------------------------------------------


def walk(node: Any) -> Iterator[Any]:
    """Every dict and list inside ``node``, ``node`` first."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield item
            stack.extend(item.values())
        elif isinstance(item, list):
            yield item
            stack.extend(item)


def copy_json(value: Any) -> Any:
    return json.loads(json.dumps(value))


def retry(value: Any, ref: Ref, fix: Callable[[Any], Any]) -> Outcome | None:
    """Where the reference refuses ``value``, answer as it does for ``fix(value)`` instead."""
    first = ref(value)
    if "output" in first:
        return None
    try:
        fixed = fix(copy_json(value))
    except (ValueError, TypeError, KeyError, IndexError, AttributeError):
        return None
    if fixed is None or fixed == value:
        return None
    second = ref(fixed)
    return second if "output" in second else None


def map_output(value: Any, ref: Ref, change: Callable[[Any], Any]) -> Outcome | None:
    first = ref(value)
    if "output" not in first:
        return None
    try:
        return ok(change(copy_json(first["output"])))
    except (ValueError, TypeError, KeyError, IndexError, AttributeError):
        return None
