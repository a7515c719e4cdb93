"""Mutation testing of the conformance suite: does some case fail each plausible wrong reference?

A *mutant* is the reference with one small change made by an operator over its syntax tree
(``<`` for ``<=``, ``and`` for ``or``, a constant off by one, a ``raise`` dropped ...).  The
suite *kills* a mutant when at least one case that passes against the reference fails against
the mutant.  A mutant nobody kills is either a missing case, an equivalent mutant (no input can
tell it from the original: listed with a reason in ``equivalent.yaml``), or dead code.

How a run goes:

1. Load the suite, run every case once against the reference in-process, with a line tracer on
   the reference's files: which lines each case executes.  Cases that do not pass are left out.
2. Enumerate the mutants of each module.  A mutant on lines L..M runs only against the cases
   that executed one of those lines; one in code that runs at import time (constants, class
   bodies, default arguments) runs against every case.  A mutant that no case reaches survives
   ("no case executes it").
3. Each mutant runs in a forked child: the child drops the reference's modules, installs the
   mutated source of one module, imports the reference again (so ``from reference.idset import
   IdSet`` elsewhere binds the mutated class), runs the selected cases through the in-process
   adapter and the engine's judge, and reports the failing cases through a pipe.  The oracle that
   comparators consult stays the *original* reference (the parent's functions, which keep their
   own module globals).  A child over its time budget is killed: the mutant counts as killed
   (timeout); memory is capped so a mutant that expands without bound fails instead of swapping.

Usage::

    python tests/mutation/mutate.py                      # every module, full kill matrix
    python tests/mutation/mutate.py --module idset --module ranges --first-kill
    python tests/mutation/mutate.py --list --module shape  # the mutants, not run

Exit status 1 when any module scores under ``--threshold`` (default 90%).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import resource
import select
import signal
import sys
import time
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Protocol

__all__ = [
    "OPERATORS",
    "Harness",
    "Mutant",
    "MutationRun",
    "Result",
    "apply_mutant",
    "enumerate_mutants",
    "main",
    "record_coverage",
    "run_mutants",
]

ROOT = Path(__file__).resolve().parents[2]
EQUIVALENT_FILE = Path(__file__).resolve().with_name("equivalent.yaml")

#: Reference modules left out by default: the error hierarchy (mutating it breaks every case
#: at once and says nothing about the suite) and the operation table.
DEFAULT_EXCLUDED = frozenset({"__init__", "errors", "operations"})

#: Characters a one- or two-character string constant must consist of to count as grammar.
GRAMMAR_CHARS = frozenset("[]{}()<>=!,;:.+-*/^&|@#%~?'\"\\_ \t\n")


# --------------------------------------------------------------------------------------------
# Mutants and operators
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mutant:
    """One change to one module, identified by where it is and what it does."""

    #: ``module:line:col:operator:original -> mutated`` (``#2`` appended on a rare tie).
    id: str
    module: str
    line: int
    col: int
    end_line: int
    operator: str
    original: str
    mutated: str
    #: False when the code runs at import time (module or class body, defaults, decorators).
    runtime: bool
    #: The original source line, stripped, and the line with the change made.
    source: str
    changed: str
    #: Qualified name of the innermost function the change lies in ("" at module level).
    function: str = ""
    #: Whether the change lies in an input-type guard of an ``_op_*`` entry point (an ``if``
    #: testing ``isinstance``/``type`` of the input): see :func:`_op_guard_lines`.
    guard: bool = False

    @property
    def lines(self) -> range:
        """The source lines the mutated node spans."""
        return range(self.line, self.end_line + 1)


#: Replaces a node in its parent.
Replace = Callable[[ast.AST], None]
#: Makes a change at a node (in any parse of the same source) and returns what to show instead.
Transform = Callable[[ast.AST, Replace], ast.AST]


@dataclass(frozen=True)
class _Site:
    """A place an operator can change."""

    operator: str
    original: str
    mutated: str
    transform: Transform
    #: Where the site is named; defaults to the node's start.
    where: tuple[int, int] | None = None
    #: Attribute of the node whose source text the change replaces (None: the node itself).
    segment: str | None = None


_CMP_SWAPS: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_CMP_TEXT: dict[type[ast.cmpop], str] = {
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Is: "is",
    ast.IsNot: "is not",
}


def _swap_cmp(index: int, op: type[ast.cmpop], node: ast.AST, replace: Replace) -> ast.AST:
    assert isinstance(node, ast.Compare)
    node.ops[index] = op()
    return node


def _compare(node: ast.AST) -> Iterator[_Site]:
    assert isinstance(node, ast.Compare)
    for i, op in enumerate(node.ops):
        swap = _CMP_SWAPS.get(type(op))
        if swap is None:
            continue
        # A chained comparison names each operator by the operand on its left.
        anchor = node.left if i == 0 else node.comparators[i - 1]
        yield _Site(
            "compare",
            _CMP_TEXT[type(op)],
            _CMP_TEXT[swap],
            partial(_swap_cmp, i, swap),
            (anchor.lineno, anchor.col_offset),
        )


def _set_field(name: str, make: Callable[[], Any], node: ast.AST, replace: Replace) -> ast.AST:
    setattr(node, name, make())
    return node


def _boolop(node: ast.AST) -> Iterator[_Site]:
    assert isinstance(node, ast.BoolOp)
    if isinstance(node.op, ast.And):
        yield _Site("boolop", "and", "or", partial(_set_field, "op", ast.Or))
    else:
        yield _Site("boolop", "or", "and", partial(_set_field, "op", ast.And))


def _drop_not(node: ast.AST, replace: Replace) -> ast.AST:
    assert isinstance(node, ast.UnaryOp)
    replace(node.operand)
    return node.operand


def _unary(node: ast.AST) -> Iterator[_Site]:
    assert isinstance(node, ast.UnaryOp)
    if isinstance(node.op, ast.Not):
        yield _Site("not", "not", "(removed)", _drop_not)


def _constant(node: ast.AST) -> Iterator[_Site]:
    assert isinstance(node, ast.Constant)
    value = node.value
    if type(value) is int:
        for new in dict.fromkeys((value + 1, value - 1)):
            yield _Site(
                "number", repr(value), repr(new), partial(_set_field, "value", partial(int, new))
            )
    elif type(value) is str and 0 < len(value) <= 2 and set(value) <= GRAMMAR_CHARS:
        yield _Site("string", repr(value), "''", partial(_set_field, "value", str))


def _is_text(node: ast.expr) -> bool:
    return isinstance(node, ast.JoinedStr) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str)
    )


_ARITH: dict[type[ast.operator], tuple[str, str, type[ast.operator]]] = {
    ast.Add: ("+", "-", ast.Sub),
    ast.Sub: ("-", "+", ast.Add),
}


def _binop(node: ast.AST) -> Iterator[_Site]:
    assert isinstance(node, ast.BinOp)
    swap = _ARITH.get(type(node.op))
    # String concatenation with "-" only raises TypeError: every case kills it, it tests nothing.
    if swap is None or _is_text(node.left) or _is_text(node.right):
        return
    old, new, op = swap
    # Nested sums start at the same column; the right operand tells them apart.
    where = (node.right.lineno, node.right.col_offset)
    yield _Site("arith", old, new, partial(_set_field, "op", op), where)


def _augassign(node: ast.AST) -> Iterator[_Site]:
    assert isinstance(node, ast.AugAssign)
    swap = _ARITH.get(type(node.op))
    if swap is None or _is_text(node.value):
        return
    old, new, op = swap
    yield _Site("arith", old + "=", new + "=", partial(_set_field, "op", op))


def _flip_return(node: ast.AST, replace: Replace) -> ast.AST:
    assert isinstance(node, ast.Return)
    assert isinstance(node.value, ast.Constant)
    node.value.value = not node.value.value
    return node


def _return(node: ast.AST) -> Iterator[_Site]:
    assert isinstance(node, ast.Return)
    value = node.value
    if isinstance(value, ast.Constant) and type(value.value) is bool:
        yield _Site("return", repr(value.value), repr(not value.value), _flip_return)


def _substitute(make: Callable[[], ast.AST], node: ast.AST, replace: Replace) -> ast.AST:
    new = ast.copy_location(make(), node)
    replace(new)
    return new


def _jump(node: ast.AST) -> Iterator[_Site]:
    if isinstance(node, ast.Break):
        yield _Site("jump", "break", "continue", partial(_substitute, ast.Continue))
    else:
        yield _Site("jump", "continue", "break", partial(_substitute, ast.Break))


def _raise(node: ast.AST) -> Iterator[_Site]:
    del node
    yield _Site("raise", "raise", "pass", partial(_substitute, ast.Pass))


def _move_bound(name: str, op: type[ast.operator], node: ast.AST, replace: Replace) -> ast.AST:
    bound = getattr(node, name)
    new = ast.copy_location(ast.BinOp(left=bound, op=op(), right=ast.Constant(1)), bound)
    setattr(node, name, new)
    return new


def _slice(node: ast.AST) -> Iterator[_Site]:
    assert isinstance(node, ast.Slice)
    for name in ("lower", "upper"):
        bound = getattr(node, name)
        # A literal bound is already moved by the number operator.
        if bound is None or isinstance(bound, ast.Constant):
            continue
        text = ast.unparse(bound)
        where = (bound.lineno, bound.col_offset)
        for op, sign in ((ast.Add, "+"), (ast.Sub, "-")):
            yield _Site(
                "slice",
                f"[{name}] {text}",
                f"{text} {sign} 1",
                partial(_move_bound, name, op),
                where,
                name,
            )


#: The mutation operators, by the node type each looks at; each yields that node's sites.
OPERATORS: dict[type[ast.AST], Callable[[ast.AST], Iterator[_Site]]] = {
    ast.Compare: _compare,
    ast.BoolOp: _boolop,
    ast.UnaryOp: _unary,
    ast.Constant: _constant,
    ast.BinOp: _binop,
    ast.AugAssign: _augassign,
    ast.Return: _return,
    ast.Break: _jump,
    ast.Continue: _jump,
    ast.Raise: _raise,
    ast.Slice: _slice,
}

# Type annotations do nothing at run time.
_SKIPPED_FIELDS = frozenset({"annotation", "returns", "type_comment"})
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _is_skipped(node: ast.AST) -> bool:
    """Nodes whose contents do not behave: docstrings, f-strings, ``__all__``, TYPE_CHECKING."""
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.Expr):
        return isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    if isinstance(node, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
    if isinstance(node, ast.If):
        test = node.test
        return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
            isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
        )
    return False


#: Keyword arguments that only shape an error's message (cases assert categories, never text).
_MESSAGE_KEYWORDS = frozenset({"span", "source", "path"})


def _children(node: ast.AST, name: str, value: Any) -> list[tuple[ast.AST, Replace]]:
    if isinstance(node, ast.keyword) and node.arg in _MESSAGE_KEYWORDS:
        return []
    if isinstance(node, ast.Raise) and name == "exc" and isinstance(value, ast.Call):
        # ``raise SomeError(reason, span=...)``: the class is the category; the arguments only
        # word the message.  The raise itself is still mutated (raise -> pass).
        return []
    if isinstance(value, list):
        return [
            (item, partial(_set_item, value, i))
            for i, item in enumerate(value)
            if isinstance(item, ast.AST)
        ]
    if isinstance(value, ast.AST):
        return [(value, partial(setattr, node, name))]
    return []


def _set_item(items: list[Any], index: int, value: ast.AST) -> None:
    items[index] = value


def _walk(node: ast.AST, runtime: bool) -> Iterator[tuple[ast.AST, Replace, bool]]:
    """Every node under ``node`` in a fixed order, with how to replace it and whether it runs
    when a function is called (True) or when the module is imported (False)."""
    for name, value in ast.iter_fields(node):
        if name in _SKIPPED_FIELDS:
            continue
        inner = runtime or (name == "body" and isinstance(node, _FUNCTIONS))
        for child, replace in _children(node, name, value):
            if not _is_skipped(child):
                yield child, replace, inner
                yield from _walk(child, inner)


def _sites(module: str, tree: ast.Module) -> Iterator[tuple[str, ast.AST, Replace, bool, _Site]]:
    """Every site of ``tree`` with its stable id, in a fixed order."""
    seen: dict[str, int] = {}
    for node, replace, runtime in _walk(tree, False):
        operator = OPERATORS.get(type(node))
        if operator is None:
            continue
        for site in operator(node):
            line, col = site.where or (node.lineno, node.col_offset)  # type: ignore[attr-defined]
            key = f"{module}:{line}:{col}:{site.operator}:{site.original} -> {site.mutated}"
            seen[key] = seen.get(key, 0) + 1
            if seen[key] > 1:
                key += f"#{seen[key]}"
            yield key, node, replace, runtime, site


def _changed_line(lines: Sequence[str], node: ast.AST, shown: ast.AST) -> str:
    """The source line of ``node`` with ``shown`` written in its place (offsets are UTF-8)."""
    start: int = node.lineno  # type: ignore[attr-defined]
    end: int = node.end_lineno or start  # type: ignore[attr-defined]
    head = lines[start - 1].encode()[: node.col_offset].decode()  # type: ignore[attr-defined]
    tail = lines[end - 1].encode()[node.end_col_offset :].decode()  # type: ignore[attr-defined]
    text = ast.unparse(shown).splitlines()[0] if shown is not None else ""
    if start != end:
        text += " ..."
    return (head + text + tail).strip()


def _noop(node: ast.AST) -> None:
    del node


def _function_lines(tree: ast.Module) -> dict[int, str]:
    """Line -> qualified name of the innermost function (or method) containing it."""
    names: dict[int, str] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                if not isinstance(child, ast.ClassDef):
                    end = child.end_lineno or child.lineno
                    for line in range(child.lineno, end + 1):
                        names[line] = name
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return names


def _is_type_test(node: ast.expr) -> bool:
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _TYPE_TESTS
        for n in ast.walk(node)
    )


_TYPE_TESTS = frozenset({"isinstance", "type"})


def _entry_points(tree: ast.Module) -> frozenset[str]:
    """Names of a module's operation functions: ``_op_*``, and those its ``OPERATIONS`` table
    names (a value ``f`` or a factory call ``f(...)``, whose nested functions are inside it)."""
    names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    entries = {name for name in names if name.startswith("_op_")}
    for statement in tree.body:
        target: ast.expr | None = None
        if isinstance(statement, ast.AnnAssign):
            target = statement.target
        elif isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
        value = getattr(statement, "value", None)
        if not (isinstance(target, ast.Name) and target.id == "OPERATIONS"):
            continue
        if isinstance(value, ast.Dict):
            for item in value.values:
                called = item.func if isinstance(item, ast.Call) else item
                if isinstance(called, ast.Name):
                    entries.add(called.id)
    # A factory's inner function is the entry point itself.
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef) and function.name in entries:
            entries.update(
                n.name
                for n in ast.walk(function)
                if isinstance(n, ast.FunctionDef) and n is not function
            )
    return frozenset(entries)


def _op_guard_lines(tree: ast.Module) -> frozenset[int]:
    """Lines of the input-type guards of the operation entry points (see _entry_points).

    A guard is an ``if`` in an entry point whose test looks at the type of the input
    (``isinstance``/``type``) and whose body only raises: the wrongly typed JSON the common
    brief says must be refused as invalid.  Schema-valid cases never reach the raise; which
    lines of a guard some case does execute is up to the coverage.
    """
    found: set[int] = set()
    entries = _entry_points(tree)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.FunctionDef) and node.name in entries):
            continue
        for statement in ast.walk(node):
            if (
                isinstance(statement, ast.If)
                and _is_type_test(statement.test)
                and all(isinstance(s, ast.Raise) for s in statement.body)
            ):
                end = statement.end_lineno or statement.lineno
                found.update(range(statement.lineno, end + 1))
    return frozenset(found)


def enumerate_mutants(module: str, source: str) -> list[Mutant]:
    """Every mutant of ``source`` (the text of module ``module``), in source order."""
    import copy

    lines = source.splitlines()
    mutants = []
    tree = ast.parse(source)
    functions = _function_lines(tree)
    guards = _op_guard_lines(tree)
    for key, node, _, runtime, site in _sites(module, tree):
        line, col = site.where or (node.lineno, node.col_offset)  # type: ignore[attr-defined]
        segment = getattr(node, site.segment) if site.segment else node
        shown = site.transform(copy.deepcopy(node), _noop)
        mutants.append(
            Mutant(
                id=key,
                module=module,
                line=line,
                col=col,
                end_line=node.end_lineno or line,  # type: ignore[attr-defined]
                operator=site.operator,
                original=site.original,
                mutated=site.mutated,
                runtime=runtime,
                source=lines[segment.lineno - 1].strip(),  # type: ignore[union-attr]
                changed=_changed_line(lines, segment, shown),
                function=functions.get(line, ""),
                guard=line in guards,
            )
        )
    return mutants


def apply_mutant(module: str, source: str, mutant_id: str) -> ast.Module:
    """The tree of ``source`` with mutant ``mutant_id`` applied."""
    tree = ast.parse(source)
    for key, node, replace, _, site in _sites(module, tree):
        if key == mutant_id:
            site.transform(node, replace)
            return ast.fix_missing_locations(tree)
    raise KeyError(f"no mutant {mutant_id!r} in module {module}")


# --------------------------------------------------------------------------------------------
# Harnesses: what a case is, how to run it, how to judge it
# --------------------------------------------------------------------------------------------


class Harness(Protocol):
    """A suite the mutants run against.  ``execute`` is what the line tracer watches."""

    names: Sequence[str]

    def execute(self, index: int) -> Any:
        """Run case ``index`` against whatever modules are imported now; return its reply."""
        ...

    def passes(self, index: int, reply: Any) -> bool:
        """Whether ``reply`` is what case ``index`` permits."""
        ...


class SuiteHarness:
    """The conformance suite through the in-process reference adapter and the engine's judge.

    The oracle comparators consult is the reference as imported when the harness is made:
    those functions keep their own module globals, so a mutant installed later cannot fool
    the comparison that judges it.
    """

    def __init__(self, cases: Sequence[Any], operations: Mapping[str, Any]) -> None:
        from reference.errors import FormatError
        from reference.operations import run

        self.cases = list(cases)
        self.names: Sequence[str] = [c.id for c in self.cases]
        self.operations = operations
        from runner.adapters.inprocess import InProcessAdapter
        from runner.comparators import Oracle

        #: The unmutated reference's entry point and error base (kept across the fork).
        self.original_run = run
        self.error_class: type[Exception] = FormatError
        adapter = InProcessAdapter(_Original(run, FormatError))
        self.oracles = {edition: Oracle(adapter, edition) for edition in (None, "seed", "upstream")}

    def execute(self, index: int) -> Any:
        """The reply of the reference imported now (mutated, in a child) to case ``index``."""
        from runner.adapters.inprocess import InProcessAdapter, ReferenceImplementation

        case = self.cases[index]
        adapter = InProcessAdapter(ReferenceImplementation())
        return adapter.run(case.operation, case.input, edition=case.edition)

    def passes(self, index: int, reply: Any) -> bool:
        """The engine's verdict on ``reply``, judged with the original reference as oracle."""
        from runner.engine import Outcome, judge

        case = self.cases[index]
        oracle = self.oracles[case.edition]
        result = judge(case, reply, self.operations[case.operation], oracle)
        return result.outcome is Outcome.PASSED


# --------------------------------------------------------------------------------------------
# Coverage: which lines of the modules under test each case executes
# --------------------------------------------------------------------------------------------


@dataclass
class Baseline:
    """Per case: whether it passes unmutated, its time, and the lines it executed."""

    passing: list[bool]
    seconds: list[float]
    lines: list[dict[str, frozenset[int]]]
    #: Per module: itself and every module that imports it, directly or through others.
    users: dict[str, frozenset[str]] = field(default_factory=dict)


def module_users(target: Target) -> dict[str, frozenset[str]]:
    """For each module of ``target``: itself and the modules that import it, transitively."""
    every = sorted(p.stem for p in target.directory.glob("*.py"))
    imports: dict[str, set[str]] = {}
    for module in every:
        found = imports.setdefault(module, set())
        for node in ast.walk(ast.parse(target.path(module).read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                name = node.module
                if name == target.package:
                    found.update(a.name for a in node.names)
                elif name.startswith(target.package + "."):
                    found.add(name.removeprefix(target.package + "."))
            elif isinstance(node, ast.Import):
                found.update(
                    a.name.removeprefix(target.package + ".")
                    for a in node.names
                    if a.name.startswith(target.package + ".")
                )
    users = {m: {m} for m in every}
    changed = True
    while changed:
        changed = False
        for module, used in imports.items():
            for dependency in used & users.keys():
                before = len(users[dependency])
                users[dependency] |= users[module]
                changed |= len(users[dependency]) != before
    return {m: frozenset(u) for m, u in users.items()}


def record_coverage(harness: Harness, files: Mapping[str, str]) -> Baseline:
    """Run every case once with a line tracer on ``files`` (path -> module name)."""
    passing: list[bool] = []
    seconds: list[float] = []
    covered: list[dict[str, frozenset[int]]] = []
    for index in range(len(harness.names)):
        hits: dict[str, set[int]] = {}

        def local(
            frame: types.FrameType, event: str, arg: Any, hits: dict[str, set[int]] = hits
        ) -> Any:
            if event == "line":
                hits[files[frame.f_code.co_filename]].add(frame.f_lineno)
            return local

        def tracer(
            frame: types.FrameType,
            event: str,
            arg: Any,
            hits: dict[str, set[int]] = hits,
            local: Any = local,
        ) -> Any:
            name = files.get(frame.f_code.co_filename)
            if name is None:
                return None
            hits.setdefault(name, set()).add(frame.f_lineno)
            return local

        sys.settrace(tracer)
        try:
            reply = harness.execute(index)
        finally:
            sys.settrace(None)
        start = time.perf_counter()
        reply = harness.execute(index)
        seconds.append(time.perf_counter() - start)
        passing.append(harness.passes(index, reply))
        covered.append({k: frozenset(v) for k, v in hits.items()})
    return Baseline(passing, seconds, covered)


# --------------------------------------------------------------------------------------------
# Running mutants in forked children
# --------------------------------------------------------------------------------------------


#: The note of a survivor that no case reaches.
UNREACHED = "no case executes it"


@dataclass(frozen=True)
class Result:
    """What became of one mutant."""

    mutant: Mutant
    #: killed, survived, timeout (counts as killed), unreachable (no operation reaches it: see
    #: :func:`classify_unreachable`), or not-run (out of time).
    status: str
    #: Indexes of the cases that failed against the mutant.
    killers: tuple[int, ...] = ()
    #: How many cases ran against it, and why it survived or was killed when no case says.
    ran: int = 0
    note: str = ""

    @property
    def killed(self) -> bool:
        """Whether some case (or the time budget) caught the mutant."""
        return self.status in ("killed", "timeout")


class _CodeLoader(importlib.abc.Loader):
    def __init__(self, code: types.CodeType) -> None:
        self._code = code

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        exec(self._code, module.__dict__)  # the module's own (possibly mutated) code


class _CodeFinder(importlib.abc.MetaPathFinder):
    """Serves modules from code objects compiled ahead (one of them mutated)."""

    def __init__(self, codes: Mapping[str, tuple[str, types.CodeType]]) -> None:
        self._codes = codes

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        found = self._codes.get(fullname)
        if found is None:
            return None
        origin, code = found
        spec = importlib.util.spec_from_loader(fullname, _CodeLoader(code), origin=origin)
        if spec is not None:
            spec.has_location = True
        return spec


@dataclass(frozen=True)
class Target:
    """The package whose modules are mutated."""

    package: str
    directory: Path
    modules: tuple[str, ...]
    #: Modules left as they are in the child (the error classes every caller catches).
    keep: tuple[str, ...] = ()
    #: Modules imported in the child before any case runs (the entry points).
    entry: tuple[str, ...] = ()

    def path(self, module: str) -> Path:
        """The source file of ``module``."""
        return self.directory / f"{module}.py"

    def qualified(self, module: str) -> str:
        """``package.module``."""
        return f"{self.package}.{module}"


def _install(
    target: Target,
    module: str,
    code: types.CodeType,
    compiled: Mapping[str, types.CodeType],
    users: frozenset[str],
) -> None:
    """In a child: import ``module`` mutated, and again every module that imports from it.

    Modules that do not depend on ``module`` keep their objects; the others are dropped and
    imported afresh (served from code compiled in the parent: no compiling per mutant), so a
    ``from package.module import name`` elsewhere binds the mutated object.
    """
    package = sys.modules[target.package]
    again = (users | {module, *target.entry}) - set(target.keep)
    for short in again:
        sys.modules.pop(target.qualified(short), None)
        # ``from package import mod`` looks at the package's attribute before importing.
        with contextlib.suppress(AttributeError):
            delattr(package, short)
    codes = {
        target.qualified(m): (str(target.path(m)), code if m == module else compiled[m])
        for m in again
        if m == module or m in compiled
    }
    sys.meta_path.insert(0, _CodeFinder(codes))
    for name in (*target.entry, module):
        importlib.import_module(target.qualified(name))


def _child(
    run: MutationRun,
    mutant: Mutant,
    source: str,
    compiled: Mapping[str, types.CodeType],
    *,
    cases: Sequence[int],
    out: int,
) -> None:
    """Body of the forked child: report failing cases as JSON on ``out``, then exit."""
    target, harness = run.target, run.harness
    failed: list[int] = []
    note = ""
    try:
        resource.setrlimit(resource.RLIMIT_AS, (run.memory, run.memory))
        # Libraries' chatter about the mutant's wrong answers is not the report.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        try:
            tree = apply_mutant(mutant.module, source, mutant.id)
            code = compile(tree, str(target.path(mutant.module)), "exec")
        except Exception as exc:  # a bug of this tool, not a verdict on the suite
            broken = {"failed": [], "note": f"tool error: {exc!r}", "broken": True}
            os.write(out, json.dumps(broken).encode())
            return
        try:
            _install(
                target,
                mutant.module,
                code,
                compiled,
                run.baseline.users.get(mutant.module, frozenset()),
            )
        except BaseException as exc:  # the mutant broke the import: nothing works
            note = f"import failed: {type(exc).__name__}"
            failed = list(cases)
        else:
            for index in cases:
                try:
                    ok = harness.passes(index, harness.execute(index))
                except BaseException:  # MemoryError and the like: the case did not pass
                    ok = False
                if not ok:
                    failed.append(index)
                    if run.first_kill:
                        break
        payload = json.dumps({"failed": failed, "note": note}).encode()
        view = memoryview(payload)
        while view:
            view = view[os.write(out, view) :]
    finally:
        os._exit(0)


@dataclass
class _Job:
    pid: int
    task: Any
    deadline: float
    chunks: list[bytes] = field(default_factory=list)


def _run_forked(
    tasks: Sequence[Any],
    *,
    jobs: int,
    child: Callable[[Any, int], None],
    budget: Callable[[Any], float],
    done: Callable[[Any, bytes], None],
    timed_out: Callable[[Any], None],
    stop: float | None = None,
) -> list[Any]:
    """Run ``child(task, fd)`` in a forked process per task, ``jobs`` at a time.

    Each child writes its answer to ``fd`` and exits; ``done(task, answer)`` receives it.  A
    child still running ``budget(task)`` seconds after it started is killed and reported to
    ``timed_out``.  No task starts after the monotonic time ``stop``; those not started are
    returned, in order.
    """
    pending = list(reversed(tasks))
    running: dict[int, _Job] = {}
    sys.stdout.flush()
    sys.stderr.flush()
    while pending or running:
        while pending and len(running) < jobs and (stop is None or time.monotonic() < stop):
            task = pending.pop()
            read, write = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(read)
                child(task, write)
                os._exit(0)  # the child functions exit themselves; this is a backstop
            os.close(write)
            running[read] = _Job(pid, task, time.monotonic() + budget(task))
        if not running:
            break
        timeout = max(0.0, min(j.deadline for j in running.values()) - time.monotonic())
        ready, _, _ = select.select(list(running), [], [], timeout)
        for fd in ready:
            job = running[fd]
            data = os.read(fd, 1 << 16)
            if data:
                job.chunks.append(data)
                continue
            del running[fd]
            os.close(fd)
            os.waitpid(job.pid, 0)
            done(job.task, b"".join(job.chunks))
        now = time.monotonic()
        for fd, job in list(running.items()):
            if now >= job.deadline:
                del running[fd]
                os.kill(job.pid, signal.SIGKILL)
                os.waitpid(job.pid, 0)
                os.close(fd)
                timed_out(job.task)
    return list(reversed(pending))


def _compiled_modules(
    run: MutationRun, mutants: Sequence[Mutant]
) -> tuple[dict[str, str], dict[str, Any]]:
    """The source of each mutated module, and every module of the target compiled once."""
    sources = {m: run.target.path(m).read_text() for m in {x.module for x in mutants}}
    compiled = {
        path.stem: compile(path.read_text(), str(path), "exec")
        for path in sorted(run.target.directory.glob("*.py"))
        if path.stem != "__init__"
    }
    return sources, compiled


@dataclass
class MutationRun:
    """Settings of one run."""

    target: Target
    harness: Harness
    baseline: Baseline
    jobs: int = 2
    first_kill: bool = False
    seconds: float | None = None
    memory: int = 3 << 30
    #: Time allowed per mutant: ``budget_base + budget_factor * (baseline seconds of its cases)``.
    budget_base: float = 5.0
    budget_factor: float = 20.0
    progress: Callable[[Result], None] | None = None
    #: Hunting: inputs generated per operation, and the time one input may take a mutant.
    hunt_examples: int = 5000
    hunt_input_seconds: float = 3.0


def _selected_cases(mutant: Mutant, baseline: Baseline) -> tuple[int, ...]:
    passing = [i for i, ok in enumerate(baseline.passing) if ok]
    if not mutant.runtime:
        # Import-time code reaches a case only through the module's functions or through a
        # module that imports from it (directly or not).
        users = baseline.users.get(mutant.module, frozenset({mutant.module}))
        chosen = [i for i in passing if users & baseline.lines[i].keys()]
    else:
        wanted = set(mutant.lines)
        chosen = [i for i in passing if wanted & baseline.lines[i].get(mutant.module, frozenset())]
    # Cheap cases first: with --first-kill a mutant dies sooner.
    return tuple(sorted(chosen, key=lambda i: baseline.seconds[i]))


def run_mutants(run: MutationRun, mutants: Sequence[Mutant]) -> list[Result]:
    """Run every mutant in a forked child, ``run.jobs`` at a time; results in mutant order."""
    sources, compiled = _compiled_modules(run, mutants)
    results: dict[str, Result] = {}
    pending: list[tuple[Mutant, tuple[int, ...]]] = []
    for mutant in mutants:
        cases = _selected_cases(mutant, run.baseline)
        if cases:
            pending.append((mutant, cases))
        else:
            results[mutant.id] = Result(mutant, "survived", note=UNREACHED)

    def finish(result: Result) -> None:
        results[result.mutant.id] = result
        if run.progress:
            run.progress(result)

    def child(task: tuple[Mutant, tuple[int, ...]], out: int) -> None:
        mutant, cases = task
        _child(run, mutant, sources[mutant.module], compiled, cases=cases, out=out)

    def budget(task: tuple[Mutant, tuple[int, ...]]) -> float:
        return run.budget_base + run.budget_factor * sum(run.baseline.seconds[i] for i in task[1])

    def timed_out(task: tuple[Mutant, tuple[int, ...]]) -> None:
        mutant, cases = task
        finish(Result(mutant, "timeout", ran=len(cases), note="over its time budget"))

    not_started = _run_forked(
        pending,
        jobs=run.jobs,
        child=child,
        budget=budget,
        done=lambda task, data: finish(_verdict(task[0], task[1], data)),
        timed_out=timed_out,
        stop=time.monotonic() + run.seconds if run.seconds is not None else None,
    )
    for mutant, _ in not_started:
        results[mutant.id] = Result(mutant, "not-run", note="out of time (--seconds)")
    return [results[m.id] for m in mutants]


def _verdict(mutant: Mutant, cases: tuple[int, ...], data: bytes) -> Result:
    try:
        reply = json.loads(data)
    except ValueError:
        # The child died before it could answer (a crash in C, the memory cap): caught.
        return Result(mutant, "killed", ran=len(cases), note="the child crashed")
    failed = tuple(reply["failed"])
    ran = len(cases)
    if reply.get("broken"):
        return Result(mutant, "not-run", note=reply["note"])
    if failed:
        return Result(mutant, "killed", failed, ran, reply["note"])
    return Result(mutant, "survived", (), ran, "no case fails")


# --------------------------------------------------------------------------------------------
# Hunting: generated inputs on which a surviving mutant answers differently
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """An input of ``operation`` on which a mutant and the original reference disagree."""

    mutant: Mutant
    operation: str
    input: Any
    mutant_reply: dict[str, Any]
    reference_reply: dict[str, Any]
    reason: str


@dataclass(frozen=True)
class HuntResult:
    """What the hunt for one mutant found (no finding: none within its budget)."""

    mutant: Mutant
    operations: tuple[str, ...]
    finding: Finding | None = None
    evaluated: int = 0
    note: str = ""


class _Hang(Exception):
    """Raised by the per-input alarm: the mutant took too long on one input."""


class _Timed:
    """An implementation whose every answer must come within ``limit`` seconds (SIGALRM)."""

    def __init__(self, impl: Any, limit: float) -> None:
        self._impl = impl
        self._limit = limit
        self.name = getattr(impl, "name", "mutant")
        self.operations = getattr(impl, "operations", None)

    def run(self, operation: str, input: Any, /, **options: Any) -> Any:
        def alarm(signum: int, frame: Any) -> None:
            raise _Hang(f"no answer within {self._limit} s")

        previous = signal.signal(signal.SIGALRM, alarm)
        signal.setitimer(signal.ITIMER_REAL, self._limit)
        try:
            return self._impl.run(operation, input, **options)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


class _Original:
    """The unmutated reference, through functions captured in the parent before any fork."""

    name = "reference"

    def __init__(self, run: Callable[..., Any], error: type[Exception]) -> None:
        self._run = run
        self._error = error

    def run(self, operation: str, input: Any, /, **options: Any) -> Any:
        try:
            return {"output": self._run(operation, input, edition=options.get("edition"))}
        except self._error as exc:
            return {"error": {"category": getattr(exc, "category", ""), "message": str(exc)}}


def hunt_operations(mutant: Mutant, harness: SuiteHarness, baseline: Baseline) -> tuple[str, ...]:
    """The operations with an input strategy worth hunting ``mutant`` with.

    Those of the passing cases that execute the mutant's lines; when none does, those of the
    cases that reach its module (or, for import-time code, a module using it).
    """
    from runner.tools.strategies import STRATEGIES

    passing = [i for i, ok in enumerate(baseline.passing) if ok]
    wanted = set(mutant.lines)
    chosen = (
        [i for i in passing if wanted & baseline.lines[i].get(mutant.module, frozenset())]
        if mutant.runtime
        else []
    )
    if not chosen:
        users = baseline.users.get(mutant.module, frozenset({mutant.module}))
        chosen = [i for i in passing if users & baseline.lines[i].keys()]
    found = dict.fromkeys(harness.cases[i].operation for i in chosen)
    return tuple(op for op in found if op in STRATEGIES)


def _hunt_child(
    run: MutationRun,
    mutant: Mutant,
    source: str,
    compiled: Mapping[str, types.CodeType],
    *,
    operations: Sequence[str],
    seconds: float,
    seed: int,
    out: int,
) -> None:
    """Body of a forked hunting child: report the first disagreement found as JSON on ``out``."""
    harness = run.harness
    assert isinstance(harness, SuiteHarness)
    reply: dict[str, Any] = {"evaluated": 0, "note": ""}
    try:
        resource.setrlimit(resource.RLIMIT_AS, (run.memory, run.memory))
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        from runner.adapters.inprocess import InProcessAdapter, ReferenceImplementation
        from runner.tools.diff import differential
        from runner.tools.strategies import STRATEGIES

        tree = apply_mutant(mutant.module, source, mutant.id)
        code = compile(tree, str(run.target.path(mutant.module)), "exec")
        try:
            _install(
                run.target,
                mutant.module,
                code,
                compiled,
                run.baseline.users.get(mutant.module, frozenset()),
            )
        except BaseException as exc:  # pragma: no cover - the matrix kills these first
            reply["note"] = f"import failed: {type(exc).__name__}"
        else:
            mutated = InProcessAdapter(_Timed(ReferenceImplementation(), run.hunt_input_seconds))
            original = InProcessAdapter(_Original(harness.original_run, harness.error_class))
            each = seconds / max(1, len(operations))
            for operation in operations:
                spec = harness.operations[operation]
                # Only inputs a case may hold: the input schema refuses the rest at `check`.
                valid: Callable[[Any], bool] = partial(_schema_valid, spec)
                strategy: Any = STRATEGIES[operation]().filter(valid)
                found = differential(
                    operation,
                    mutated,
                    original,
                    examples=run.hunt_examples,
                    seconds=each,
                    seed=seed,
                    max_found=1,
                    oracle=harness.oracles[None],
                    strategy=strategy,
                )
                reply["evaluated"] += found.evaluated
                if found.disagreements:
                    d = found.disagreements[0]
                    reply["finding"] = {
                        "operation": operation,
                        "input": d.input,
                        "mutant": d.actual.to_json(),
                        "reference": d.expected.to_json(),
                        "reason": d.reason,
                    }
                    break
    except BaseException as exc:  # a bug of this tool (or the mutant broke hypothesis)
        reply["note"] = f"hunt failed: {exc!r}"[:300]
    finally:
        try:
            payload = json.dumps(reply, default=repr).encode()
            view = memoryview(payload)
            while view:
                view = view[os.write(out, view) :]
        finally:
            os._exit(0)


def _schema_valid(spec: Any, value: Any) -> bool:
    return not spec.input_problems(value)


def hunt_mutants(
    run: MutationRun,
    mutants: Sequence[Mutant],
    *,
    seconds: float,
    seed: int = 0,
    progress: Callable[[HuntResult], None] | None = None,
) -> list[HuntResult]:
    """Hunt each of ``mutants`` for ``seconds`` in a forked child, ``run.jobs`` at a time."""
    harness = run.harness
    assert isinstance(harness, SuiteHarness)
    sources, compiled = _compiled_modules(run, mutants)
    results: dict[str, HuntResult] = {}
    pending: list[tuple[Mutant, tuple[str, ...]]] = []
    for mutant in mutants:
        operations = hunt_operations(mutant, harness, run.baseline)
        if operations:
            pending.append((mutant, operations))
        else:
            results[mutant.id] = HuntResult(mutant, (), note="no operation with a strategy")

    def finish(result: HuntResult) -> None:
        results[result.mutant.id] = result
        if progress:
            progress(result)

    def child(task: tuple[Mutant, tuple[str, ...]], out: int) -> None:
        mutant, operations = task
        _hunt_child(
            run,
            mutant,
            sources[mutant.module],
            compiled,
            operations=operations,
            seconds=seconds,
            seed=seed,
            out=out,
        )

    _run_forked(
        pending,
        jobs=run.jobs,
        child=child,
        # Shrinking stops at the hunt's own deadline; the margin covers one slow input.
        budget=lambda task: seconds + 3 * run.hunt_input_seconds + 10,
        done=lambda task, data: finish(_hunt_verdict(task[0], task[1], data)),
        timed_out=lambda task: finish(
            HuntResult(task[0], task[1], note="hunt over its time budget")
        ),
    )
    return [results[m.id] for m in mutants]


def _hunt_verdict(mutant: Mutant, operations: tuple[str, ...], data: bytes) -> HuntResult:
    try:
        reply = json.loads(data)
    except ValueError:
        return HuntResult(mutant, operations, note="the hunting child crashed")
    finding = reply.get("finding")
    return HuntResult(
        mutant,
        operations,
        Finding(
            mutant,
            finding["operation"],
            finding["input"],
            finding["mutant"],
            finding["reference"],
            finding["reason"],
        )
        if finding
        else None,
        reply.get("evaluated", 0),
        reply.get("note", ""),
    )


def render_hunt(results: Sequence[HuntResult]) -> str:
    """The hunt's findings (each a case to write) and the mutants it found nothing for."""
    found = [r for r in results if r.finding]
    out = [f"Hunt: {len(found)} of {len(results)} surviving mutants answer differently:"]
    for r in found:
        f = r.finding
        assert f is not None
        out.append(f"  [{r.mutant.id}]  {f.operation}")
        out.append(f"      - {r.mutant.source}")
        out.append(f"      + {r.mutant.changed}")
        out.append(f"      input:     {json.dumps(f.input, ensure_ascii=False)}")
        out.append(f"      reference: {json.dumps(f.reference_reply, ensure_ascii=False)[:200]}")
        out.append(f"      mutant:    {json.dumps(f.mutant_reply, ensure_ascii=False)[:200]}")
    rest = [r for r in results if not r.finding]
    if rest:
        out.append(f"Nothing found for {len(rest)} mutants (each needs a case or a reason):")
        for r in rest:
            detail = r.note or f"{r.evaluated} inputs of {', '.join(r.operations)}"
            out.append(f"  [{r.mutant.id}]  ({detail})")
    return "\n".join(out)


# --------------------------------------------------------------------------------------------
# Equivalent mutants and the report
# --------------------------------------------------------------------------------------------


#: Why a listed mutant is left out of the score.
EQUIVALENT_KINDS = {
    "equivalent": "behaves like the original on every input that reaches it",
    "conforming": (
        "behaves differently, but only in ways the specs and readings permit (another valid "
        "encoding, either outcome of an open point): the mutant is itself a conforming "
        "implementation, so no case may fail it"
    ),
    "message": "changes only an error's message or position, which cases never assert",
}


@dataclass(frozen=True)
class Equivalent:
    """An entry of ``equivalent.yaml``: one mutant by ``id``, or every mutant on the source
    line ``source`` of ``module`` (optionally only those of one ``operator``)."""

    reason: str
    kind: str = "equivalent"
    id: str = ""
    module: str = ""
    source: str = ""
    operator: str = ""

    def matches(self, mutant: Mutant) -> bool:
        """Whether this entry names ``mutant`` (by id, or by module and source line)."""
        if self.id:
            return mutant.id == self.id
        return (
            mutant.module == self.module
            and mutant.source == self.source
            and (not self.operator or mutant.operator == self.operator)
        )

    @property
    def label(self) -> str:
        """How the report names the entry."""
        return self.id or f"{self.module}: {self.source}" + (
            f" [{self.operator}]" if self.operator else ""
        )


_NONE = Equivalent("")


@dataclass(frozen=True)
class LibraryOnly:
    """An entry of ``library_only:``: a function of the reference no operation calls (only
    its own unit tests, as library API).  Its mutants on lines no case executes are reported
    as unreachable from the operations, not scored; its executed lines are scored as usual."""

    module: str
    function: str
    reason: str

    def matches(self, mutant: Mutant) -> bool:
        """Whether ``mutant`` lies in this function (or a function nested in it)."""
        return mutant.module == self.module and (
            mutant.function == self.function or mutant.function.startswith(self.function + ".")
        )


def _section(path: Path, key: str) -> list[dict[str, Any]]:
    """The list under ``key`` in the YAML file ``path`` (empty if the file is missing)."""
    import yaml

    if not path.exists():
        return []
    data = yaml.safe_load(path.read_text()) or {}
    entries: list[dict[str, Any]] = data.get(key, [])
    return entries


def load_library_only(path: Path = EQUIVALENT_FILE) -> list[LibraryOnly]:
    """The ``library_only:`` entries of ``equivalent.yaml``; each must give a reason."""
    entries = []
    for raw in _section(path, "library_only"):
        entry = LibraryOnly(**{k: str(v) for k, v in raw.items()})
        if not entry.reason.strip():
            raise SystemExit(f"{path}: library_only {entry.module}.{entry.function}: no reason")
        entries.append(entry)
    return entries


def classify_unreachable(
    results: Sequence[Result], library: Sequence[LibraryOnly]
) -> tuple[list[Result], list[LibraryOnly]]:
    """Survivors no case executes that lie in a ``library_only`` function or in an ``_op_*``
    input-type guard become ``unreachable``; and the entries naming no mutant (stale).

    Only mutants on lines no case executes are reclassified: a survivor on an executed line
    is a missing case wherever it lies.
    """
    used: set[LibraryOnly] = set()
    out = []
    for result in results:
        m = result.mutant
        for entry in library:
            if entry.matches(m):
                used.add(entry)
        if result.status != "survived" or result.note != UNREACHED:
            out.append(result)
            continue
        owner = next((e for e in library if e.matches(m)), None)
        if owner is not None:
            note = f"library only: {owner.function}"
        elif m.guard:
            note = f"input-type guard of {m.function} (schema-valid cases never reach it)"
        else:
            out.append(result)
            continue
        out.append(Result(m, "unreachable", (), 0, note))
    modules = {r.mutant.module for r in results}
    stale = [e for e in library if e not in used and e.module in modules]
    return out, stale


def load_equivalents(path: Path = EQUIVALENT_FILE) -> list[Equivalent]:
    """The entries of ``equivalent.yaml`` (none if the file is missing)."""
    entries = []
    for raw in _section(path, "equivalent"):
        entry = Equivalent(**{k: str(v) for k, v in raw.items()})
        if entry.kind not in EQUIVALENT_KINDS:
            raise SystemExit(f"{path}: unknown kind {entry.kind!r} in {entry.label}")
        if bool(entry.id) == bool(entry.module and entry.source):
            raise SystemExit(f"{path}: an entry names an id, or a module and a source line")
        entries.append(entry)
    return entries


def match_equivalents(
    mutants: Sequence[Mutant], entries: Sequence[Equivalent]
) -> tuple[dict[str, Equivalent], list[Equivalent]]:
    """The mutants the entries name, with their entry; and the entries naming none (stale)."""
    matched: dict[str, Equivalent] = {}
    stale = []
    for entry in entries:
        found = [m for m in mutants if entry.matches(m)]
        for mutant in found:
            matched.setdefault(mutant.id, entry)
        if not found:
            stale.append(entry)
    return matched, stale


@dataclass
class ModuleScore:
    """The counts of one module."""

    module: str
    mutants: int = 0
    killed: int = 0
    survived: int = 0
    equivalent: int = 0
    not_run: int = 0
    unreachable: int = 0

    @property
    def score(self) -> float | None:
        """killed / (mutants - equivalent - unreachable - not run), or None if nothing counts."""
        counted = self.mutants - self.equivalent - self.unreachable - self.not_run
        return self.killed / counted if counted else None


def score(
    results: Sequence[Result], equivalents: Mapping[str, Equivalent]
) -> dict[str, ModuleScore]:
    """Counts per module.  A listed equivalent that some case kills counts as killed."""
    table: dict[str, ModuleScore] = {}
    for result in results:
        row = table.setdefault(result.mutant.module, ModuleScore(result.mutant.module))
        row.mutants += 1
        if result.killed:
            row.killed += 1
        elif result.status == "not-run":
            row.not_run += 1
        elif result.status == "unreachable":
            row.unreachable += 1
        elif result.mutant.id in equivalents:
            row.equivalent += 1
        else:
            row.survived += 1
    return table


def render_table(table: Mapping[str, ModuleScore]) -> str:
    """The per-module table, as Markdown."""
    lines = [
        "| module | mutants | killed | survived | equivalent | unreachable | not run | score |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    total = ModuleScore("total")
    for row in table.values():
        for name in ("mutants", "killed", "survived", "equivalent", "unreachable", "not_run"):
            setattr(total, name, getattr(total, name) + getattr(row, name))
    for row in [*table.values(), total]:
        value = row.score
        shown = f"{value:.1%}" if value is not None else "-"
        lines.append(
            f"| {row.module} | {row.mutants} | {row.killed} | {row.survived} | "
            f"{row.equivalent} | {row.unreachable} | {row.not_run} | {shown} |"
        )
    return "\n".join(lines)


def report(
    run: MutationRun,
    results: Sequence[Result],
    equivalents: Mapping[str, Equivalent],
    stale: Sequence[Equivalent],
    threshold: float,
) -> tuple[str, bool]:
    """The text report and whether every module reached ``threshold``."""
    table = score(results, equivalents)
    out = [render_table(table), ""]
    survivors = [r for r in results if r.status == "survived" and r.mutant.id not in equivalents]
    if survivors:
        out.append(f"Surviving mutants ({len(survivors)}):")
        for r in survivors:
            m = r.mutant
            out.append(f"  {run.target.package}/{m.module}.py:{m.line}  [{m.id}]  ({r.note})")
            out.append(f"      - {m.source}")
            out.append(f"      + {m.changed}")
        out.append("")
    unreachable = [r for r in results if r.status == "unreachable"]
    if unreachable:
        notes: dict[str, int] = {}
        for r in unreachable:
            key = f"{r.mutant.module}: {r.note}"
            notes[key] = notes.get(key, 0) + 1
        out.append(f"Unreachable from the operations, not scored ({len(unreachable)}):")
        out.extend(f"  {n:3d}  {key}" for key, n in sorted(notes.items()))
        out.append("")
    # An entry by source line covers the survivors on that line; one by id claims its mutant.
    wrongly = [r for r in results if r.killed and equivalents.get(r.mutant.id, _NONE).id]
    for r in wrongly:
        killers = ", ".join(run.harness.names[i] for i in r.killers[:3]) or r.status
        out.append(f"Listed as equivalent but killed ({killers}): {r.mutant.id}")
    out.extend(f"Stale equivalent entry (no such mutant): {e.label}" for e in stale)
    kinds: dict[str, int] = {}
    for r in results:
        entry = equivalents.get(r.mutant.id)
        if entry is not None and not r.killed:
            kinds[entry.kind] = kinds.get(entry.kind, 0) + 1
    if kinds:
        out.append(
            "Left out of the score (equivalent.yaml): "
            + ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
        )
    not_run = sum(r.status == "not-run" for r in results)
    if not_run:
        out.append(f"{not_run} mutants not run (out of time): scores count only those run.")
    mutated = {r.mutant.module for r in results}
    exercised = {
        i
        for i, ok in enumerate(run.baseline.passing)
        if ok and mutated & run.baseline.lines[i].keys()
    }
    killing = {i for r in results for i in r.killers}
    idle = sorted(exercised - killing)
    out.append(
        f"Cases that kill no mutant ({len(idle)} of {len(exercised)} cases that reach a "
        "mutated module):"
        + (
            " [--first-kill: a case counts only when it was the first to fail]"
            if run.first_kill
            else ""
        )
    )
    out.extend(f"  {run.harness.names[i]}" for i in idle)
    ok = all(row.score is None or row.score >= threshold for row in table.values())
    failing = [m for m, row in table.items() if row.score is not None and row.score < threshold]
    out.append("")
    out.append(
        f"Threshold {threshold:.0%}: "
        + ("every module reaches it." if ok else "under it: " + ", ".join(failing))
    )
    return "\n".join(out), ok


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def reference_target(modules: Sequence[str] = ()) -> Target:
    """The bundled reference: every module but the error hierarchy and the operation table."""
    import reference

    directory = Path(reference.__file__).resolve().parent
    every = sorted(p.stem for p in directory.glob("*.py") if p.stem not in DEFAULT_EXCLUDED)
    unknown = sorted(set(modules) - {p.stem for p in directory.glob("*.py")})
    if unknown:
        raise SystemExit(
            f"no such reference module: {', '.join(unknown)} (have: {', '.join(every)})"
        )
    return Target(
        package="reference",
        directory=directory,
        modules=tuple(modules) or tuple(every),
        keep=("errors",),
        entry=("operations",),
    )


def _sample(mutants: list[Mutant], limit: int | None) -> list[Mutant]:
    if limit is None or len(mutants) <= limit:
        return mutants
    step = len(mutants) / limit
    return [mutants[int(i * step)] for i in range(limit)]


def _files(target: Target) -> dict[str, str]:
    files = {}
    for module in target.modules:
        path = target.path(module)
        files[str(path)] = module
        files[str(path.resolve())] = module
    return files


def main(argv: Sequence[str] | None = None) -> int:
    """Run the suite against mutants of the reference and report; 1 if under the threshold."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--module",
        action="append",
        default=[],
        help="a reference module (repeatable; default: all)",
    )
    parser.add_argument("--max-mutants", type=int, help="run at most N mutants, spread evenly")
    parser.add_argument("--seconds", type=float, help="start no mutant after S seconds")
    parser.add_argument("--json", type=Path, help="write every mutant's result to FILE")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="children at once")
    parser.add_argument(
        "--first-kill",
        action="store_true",
        help="stop a mutant at its first failing case (faster; the idle-case list is then only indicative)",
    )
    parser.add_argument(
        "--threshold", type=float, default=90.0, help="minimum score per module, in percent"
    )
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--cases", type=Path, help="the case directory (default: the suite's)")
    parser.add_argument(
        "--hunt",
        action="store_true",
        help="then search generated inputs for one each surviving mutant answers differently on",
    )
    parser.add_argument(
        "--hunt-seconds", type=float, default=8.0, help="hunting time per mutant (default 8)"
    )
    parser.add_argument(
        "--survivors",
        type=Path,
        metavar="JSON",
        help="hunt the survivors recorded by an earlier --json run (no kill matrix)",
    )
    parser.add_argument("--seed", type=int, default=0, help="hypothesis seed of the hunt")
    args = parser.parse_args(argv)

    target = reference_target(args.module)
    mutants = [
        m
        for module in target.modules
        for m in enumerate_mutants(module, target.path(module).read_text())
    ]
    if args.list:
        for m in mutants:
            print(f"{m.id}\n    - {m.source}\n    + {m.changed}")
        return 0
    mutants = _sample(mutants, args.max_mutants)

    from runner.cases import load_suite

    started = time.monotonic()
    suite = load_suite(args.cases)
    harness = SuiteHarness(suite.cases, suite.operations)
    baseline = record_coverage(harness, _files(target))
    baseline.users = module_users(target)
    broken = [harness.names[i] for i, ok in enumerate(baseline.passing) if not ok]
    print(
        f"{len(harness.names)} cases ({len(broken)} not passing against the reference, left out); "
        f"{len(mutants)} mutants of {len(target.modules)} modules; coverage in "
        f"{time.monotonic() - started:.1f} s",
        file=sys.stderr,
    )
    for name in broken:
        print(f"  not passing: {name}", file=sys.stderr)

    done = [0, 0]

    def progress(result: Result) -> None:
        done[0] += 1
        done[1] += result.killed
        if done[0] % 100 == 0:
            print(
                f"  {done[0]}/{len(mutants)} mutants, {done[1]} killed, "
                f"{time.monotonic() - started:.0f} s",
                file=sys.stderr,
            )

    run = MutationRun(
        target,
        harness,
        baseline,
        jobs=args.jobs,
        first_kill=args.first_kill,
        seconds=args.seconds,
        progress=progress,
    )
    hunt_done = [0, 0]

    def hunt_progress(result: HuntResult) -> None:
        hunt_done[0] += 1
        hunt_done[1] += result.finding is not None
        if hunt_done[0] % 25 == 0:
            print(
                f"  hunt: {hunt_done[0]} mutants, {hunt_done[1]} with a finding, "
                f"{time.monotonic() - started:.0f} s",
                file=sys.stderr,
            )

    if args.survivors:
        recorded = json.loads(args.survivors.read_text())["mutants"]
        wanted = {m["id"] for m in recorded if m["status"] == "survived"}
        found = hunt_mutants(
            run,
            [m for m in mutants if m.id in wanted],
            seconds=args.hunt_seconds,
            seed=args.seed,
            progress=hunt_progress,
        )
        print(render_hunt(found))
        if args.json:
            args.json.write_text(json.dumps({"hunt": _hunt_json(found)}, indent=1))
        return 0
    results = run_mutants(run, mutants)
    results, stale_library = classify_unreachable(results, load_library_only())
    matched, stale = match_equivalents(
        [
            m
            for module in target.modules
            for m in enumerate_mutants(module, target.path(module).read_text())
        ],
        load_equivalents(),
    )
    stale = [e for e in stale if (e.module or e.id.partition(":")[0]) in target.modules]
    text, ok = report(run, results, matched, stale, args.threshold / 100)
    print(text)
    for entry in stale_library:
        print(f"Stale library_only entry (no mutant in it): {entry.module}.{entry.function}")
    hunted: list[HuntResult] = []
    if args.hunt:
        survivors = [
            r.mutant for r in results if r.status == "survived" and r.mutant.id not in matched
        ]
        hunted = hunt_mutants(
            run, survivors, seconds=args.hunt_seconds, seed=args.seed, progress=hunt_progress
        )
        print()
        print(render_hunt(hunted))
    elapsed = time.monotonic() - started
    print(f"\n{len(results)} mutants in {elapsed:.0f} s with {args.jobs} jobs.")
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "seconds": round(elapsed, 1),
                    "table": {k: v.__dict__ for k, v in score(results, matched).items()},
                    "mutants": [
                        {
                            "id": r.mutant.id,
                            "status": "equivalent"
                            if r.status == "survived" and r.mutant.id in matched
                            else r.status,
                            "note": r.note,
                            "cases_run": r.ran,
                            "killed_by": [harness.names[i] for i in r.killers],
                            "source": r.mutant.source,
                            "changed": r.mutant.changed,
                        }
                        for r in results
                    ],
                    "hunt": _hunt_json(hunted),
                },
                indent=1,
            )
        )
    return 0 if ok else 1


def _hunt_json(results: Sequence[HuntResult]) -> list[dict[str, Any]]:
    return [
        {
            "id": r.mutant.id,
            "operations": list(r.operations),
            "evaluated": r.evaluated,
            "note": r.note,
            "finding": None
            if r.finding is None
            else {
                "operation": r.finding.operation,
                "input": r.finding.input,
                "reference": r.finding.reference_reply,
                "mutant": r.finding.mutant_reply,
                "reason": r.finding.reason,
            },
        }
        for r in results
    ]


if __name__ == "__main__":
    sys.exit(main())
