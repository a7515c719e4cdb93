"""Slurm's ``--extra`` node constraints: a job's filter expression tested on each node's Extra.

A node may carry *Extra* data, a JSON object; a job's ``--extra`` string such as
``(load<0.9&load>0.5)|gpu=true`` selects the nodes whose Extra satisfies it.  Slurm's
documentation page (https://slurm.schedmd.com/extra_constraints.html) describes the syntax only
in part; this module reproduces what current Slurm does, as written down in the suite's readings
(docs/readings.md, "Slurm --extra").  Where the two disagree the readings win.

Syntax
    A *leaf* is ``key OP value``.  ``OP`` is the longest run of the characters ``< > = !`` after
    the key and must be one of ``=  !=  <  <=  >  >=``.  Key and value are non-empty and contain
    none of ``, & | < > = ! ( )``.  Nothing is trimmed and nothing is quoted: spaces and quote
    characters belong to the key or value.  Terms (leaves or parenthesised sequences) are joined
    by ``&`` or ``,`` (both AND, and they may be mixed) or ``|`` (OR); a run of several boolean
    characters is an error, and each parenthesis level holds one kind of boolean operator only.
    Anything else (empty input, ``()``, unbalanced parentheses, a term right after a term or a
    ``)``) is a :class:`~reference.errors.ParseError` (category ``syntax``).  Slurm's controller
    refuses an expression longer than 1024 bytes; so does :func:`parse`, with
    :class:`LengthError` (category ``length``), before looking at the syntax.

Evaluation
    A leaf looks its key up among the top-level members of the node's Extra (exactly, case
    included).  A missing key, or a value that is null, an object or an array, makes the leaf
    false whatever the operator, ``!=`` included.  Otherwise the JSON type of the node's value
    decides how the request's value is read:

    * number: the request value must be a C double in full (:func:`read_number`); if it is not,
      the leaf is false for every operator.  Two numbers are equal when their difference lies
      strictly inside (-0.00001, 0.00001) (the documentation's "0.0001" is a typo); within that
      band ``<`` and ``>`` are false; a NaN on either side compares as greater.
    * boolean: the request value is coerced to a boolean (:func:`coerce_bool`) and
      false < true.
    * string: byte-wise comparison of the UTF-8 text (C ``strcmp``), case-sensitive.

    ``&``/``,`` need every child true, ``|`` any child.  A node without Extra never matches.

Extra documents are read as strict JSON (RFC 8259): Slurm's own reader is more lenient
(comments, single quotes, trailing commas); the suite leaves those cases open.

The parse tree is made of :class:`Group` and :class:`Leaf` nodes: a parenthesised sequence of two or
more terms, and the top level when it has two or more terms, is a :class:`Group`; parentheses
around a single term add nothing, so ``((a=1))`` is the same tree as ``a=1``.  Nested groups
are kept as written (``(a=1&b=2)&c=3`` is not flattened).

Parse once, evaluate many: :meth:`Expression.compile` parses the text and turns the tree into
plain closures with every request value already read as a number, a boolean and a string, so
testing a node costs a dictionary lookup and a comparison per leaf.  Nothing here recurses on
the depth of the input: the parser keeps an explicit stack, and tree walks are iterative.

This module is the public face: the operations, :func:`select`, and every public name.  The
tree and its parser (on the shared tokenizer of ``_tokens``) live in ``_slurm_extra_parse``;
reading request values, decoding Extra and the compiled :class:`Expression` in
``_slurm_extra_eval``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from flux_conformance.reference._slurm_extra_eval import (
    EPSILON,
    MAX_EXTRA_DEPTH,
    Expression,
    ExtraError,
    coerce_bool,
    load_extra,
    read_number,
)
from flux_conformance.reference._slurm_extra_parse import (
    COMPARISONS,
    MAX_LENGTH,
    Group,
    Leaf,
    LengthError,
    Node,
    node_from_json,
    parse,
    to_text,
)
from flux_conformance.reference.errors import InvalidError, LimitError

__all__ = [
    "COMPARISONS",
    "EPSILON",
    "MAX_EXTRA_DEPTH",
    "MAX_LENGTH",
    "OPERATIONS",
    "Expression",
    "ExtraError",
    "Group",
    "Leaf",
    "LengthError",
    "Node",
    "coerce_bool",
    "load_extra",
    "node_from_json",
    "parse",
    "read_number",
    "select",
    "to_text",
]


def select(expression: str | Expression, nodes: Mapping[str, str | None]) -> list[str]:
    """Return the sorted names of the ``nodes`` (name -> Extra text) satisfying ``expression``.

    The expression is parsed once (its errors are raised even when there are no nodes).  A
    node whose Extra is missing, empty or not a usable JSON object is simply not selected, as
    Slurm never selects a node it cannot read constraints from.
    """
    compiled = expression if isinstance(expression, Expression) else Expression.compile(expression)
    chosen = []
    for name, text in nodes.items():
        try:
            extra = load_extra(text)
        except (ExtraError, LimitError):
            continue
        # load_extra gives a dict or None: the Mapping check matches() makes is not needed.
        if extra is not None and compiled._test(extra):
            chosen.append(name)
    chosen.sort()
    return chosen


# --------------------------------------------------------------------------------------------
# Operations


def _op_parse(value: Any, *, edition: str) -> Any:
    del edition
    if not isinstance(value, str):
        raise InvalidError(f"input must be a string, not {type(value).__name__}")
    return parse(value).to_json()


def _members(value: Any, names: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidError(f"input must be an object, not {type(value).__name__}")
    if set(value) != set(names):
        raise InvalidError(f"input must have exactly the members {', '.join(names)}")
    if not isinstance(value["expression"], str):
        raise InvalidError("expression must be a string", path=("expression",))
    return value


def _op_match(value: Any, *, edition: str) -> Any:
    del edition
    members = _members(value, ("expression", "extra"))
    extra = members["extra"]
    if extra is not None and not isinstance(extra, str):
        raise InvalidError("extra must be a string or null", path=("extra",))
    # The expression is judged first: Slurm refuses a bad one when the job is submitted.
    compiled = Expression.compile(members["expression"])
    return compiled.matches_text(extra)


def _op_select(value: Any, *, edition: str) -> Any:
    del edition
    members = _members(value, ("expression", "nodes"))
    nodes = members["nodes"]
    if not isinstance(nodes, dict):
        raise InvalidError("nodes must be an object", path=("nodes",))
    for name, text in nodes.items():
        if text is not None and not isinstance(text, str):
            raise InvalidError("a node's Extra must be a string or null", path=("nodes", name))
    return select(members["expression"], nodes)


#: The suite's operations on ``--extra`` expressions (see runner/schemas/operations).
OPERATIONS: dict[str, Callable[..., Any]] = {
    "slurm.extra.parse": _op_parse,
    "slurm.extra.match": _op_match,
    "slurm.extra.select": _op_select,
}
