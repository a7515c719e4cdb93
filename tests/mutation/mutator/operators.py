"""Mutants and the operators that make them, over the syntax tree of one module.

A mutant is named by a stable id, ``module:line:col:operator:original -> mutated``: the same
source gives the same ids, and code added below a line leaves its ids alone.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

__all__ = ["GRAMMAR_CHARS", "OPERATORS", "Mutant", "apply_mutant", "enumerate_mutants"]

#: Characters a one- or two-character string constant must consist of to count as grammar.
GRAMMAR_CHARS = frozenset("[]{}()<>=!,;:.+-*/^&|@#%~?'\"\\_ \t\n")


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
    # So is a helper an entry point hands its raw input to (``_members(value, ...)``): the
    # checks of the input's shape that several operations share.
    helpers = {
        call.func.id
        for function in ast.walk(tree)
        if isinstance(function, ast.FunctionDef) and function.name in entries
        for call in ast.walk(function)
        if isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id in names
        and call.args
        and isinstance(call.args[0], ast.Name)
        and call.args[0].id == "value"
    }
    return frozenset(entries | helpers)


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
