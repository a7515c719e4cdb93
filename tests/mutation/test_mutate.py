"""Tests of the mutation tester: its operators, the stability of mutant ids, and a whole run
over a small fixture package with a tiny suite (planted mutants that must be killed, one no
case reaches, one equivalent, one that loops)."""

from __future__ import annotations

import ast
import importlib
import sys
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from mutation.mutator import (
    Baseline,
    Equivalent,
    EquivalentError,
    MutationRun,
    Target,
    apply_mutant,
    enumerate_mutants,
    load_equivalents,
    load_library_only,
    match_equivalents,
    module_users,
    record_coverage,
    report,
    run_mutants,
    score,
)


def _mutants(source: str) -> list[Any]:
    return enumerate_mutants("m", textwrap.dedent(source))


def _call(source: str, mutant_id: str, name: str, *args: Any) -> Any:
    source = textwrap.dedent(source)
    namespace: dict[str, Any] = {}
    exec(compile(apply_mutant("m", source, mutant_id), "m.py", "exec"), namespace)
    return namespace[name](*args)


def _only(source: str, operator: str) -> list[tuple[str, str]]:
    return [(m.original, m.mutated) for m in _mutants(source) if m.operator == operator]


# --------------------------------------------------------------------------------------------
# Operators: each makes the intended change, and the result is valid code
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "swapped"),
    [
        ("a < b", "<="),
        ("a <= b", "<"),
        ("a > b", ">="),
        ("a >= b", ">"),
        ("a == b", "!="),
        ("a != b", "=="),
        ("a in b", "not in"),
        ("a not in b", "in"),
        ("a is b", "is not"),
        ("a is not b", "is"),
    ],
)
def test_comparison_swaps(expr: str, swapped: str) -> None:
    source = f"def f(a, b):\n    return {expr}\n"
    (mutant,) = _mutants(source)
    assert mutant.operator == "compare"
    assert mutant.mutated == swapped
    assert mutant.changed == f"return a {swapped} b"
    tree = apply_mutant("m", source, mutant.id)
    assert ast.unparse(tree).endswith(f"return a {swapped} b")


def test_comparison_changes_behaviour_at_the_boundary() -> None:
    source = "def f(a, b):\n    return a < b\n"
    (mutant,) = _mutants(source)
    assert _call(source, mutant.id, "f", 1, 1) is True


def test_chained_comparison_gives_one_mutant_per_operator_with_distinct_ids() -> None:
    mutants = _mutants("def f(a, b, c):\n    return a < b < c\n")
    assert [m.mutated for m in mutants] == ["<=", "<="]
    assert len({m.id for m in mutants}) == 2
    assert mutants[1].changed == "return a < b <= c"


def test_boolean_operator_swap() -> None:
    source = "def f(a, b):\n    return a and b\n"
    (mutant,) = _mutants(source)
    assert (mutant.original, mutant.mutated) == ("and", "or")
    assert _call(source, mutant.id, "f", True, False) is True
    assert _only("def f(a, b):\n    return a or b\n", "boolop") == [("or", "and")]


def test_not_removal() -> None:
    source = "def f(a):\n    return not a\n"
    (mutant,) = _mutants(source)
    assert mutant.operator == "not"
    assert mutant.changed == "return a"
    assert _call(source, mutant.id, "f", 0) == 0


def test_integer_constants_move_by_one_and_zero_becomes_one() -> None:
    assert _only("def f(x):\n    return x[3]\n", "number") == [("3", "4"), ("3", "2")]
    assert _only("def f(x):\n    return x[0]\n", "number") == [("0", "1"), ("0", "-1")]
    assert _only("def f(x):\n    return x[1]\n", "number") == [("1", "2"), ("1", "0")]
    source = "def f():\n    return 7\n"
    assert [_call(source, m.id, "f") for m in _mutants(source)] == [8, 6]


def test_booleans_are_not_numbers() -> None:
    assert _only("def f():\n    x = True\n    return x\n", "number") == []


def test_grammar_strings_are_emptied_other_strings_left() -> None:
    source = 'def f(s):\n    return s.split(",")\n'
    (mutant,) = _mutants(source)
    assert (mutant.operator, mutant.original, mutant.mutated) == ("string", "','", "''")
    with pytest.raises(ValueError, match="empty separator"):
        _call(source, mutant.id, "f", "a,b")
    assert _only('def f(s):\n    return s == "ab"\n', "string") == []
    assert _only('def f(s):\n    return s == "a-b"\n', "string") == []


def test_arithmetic_swaps() -> None:
    source = "def f(a, b):\n    return a + b\n"
    (mutant,) = _mutants(source)
    assert (mutant.original, mutant.mutated) == ("+", "-")
    assert _call(source, mutant.id, "f", 5, 3) == 2
    assert _only("def f(a, b):\n    return a - b\n", "arith") == [("-", "+")]
    source = "def f(a):\n    a += 2\n    return a\n"
    ids = [m.id for m in _mutants(source) if m.operator == "arith"]
    assert _call(source, ids[0], "f", 5) == 3


def test_nested_sums_have_distinct_ids() -> None:
    mutants = _mutants("def f(a, b, c):\n    return a + b + c\n")
    assert len(mutants) == 2
    assert len({m.id for m in mutants}) == 2


def test_string_concatenation_is_not_swapped() -> None:
    assert _only('def f(a):\n    return a + "x"\n', "arith") == []
    assert _only('def f(a):\n    return f"{a}" + a\n', "arith") == []


def test_return_boolean_flip() -> None:
    source = "def f():\n    return True\n"
    (mutant,) = _mutants(source)
    assert (mutant.operator, mutant.mutated) == ("return", "False")
    assert _call(source, mutant.id, "f") is False


def test_break_and_continue_swap() -> None:
    source = """
    def f(items):
        out = []
        for x in items:
            if x == 0:
                break
            out.append(x)
        return out
    """
    (mutant,) = [m for m in _mutants(source) if m.operator == "jump"]
    assert (mutant.original, mutant.mutated) == ("break", "continue")
    assert _call(source, mutant.id, "f", [1, 0, 2]) == [1, 2]
    source = source.replace("break", "continue")
    (mutant,) = [m for m in _mutants(source) if m.operator == "jump"]
    assert _call(source, mutant.id, "f", [1, 0, 2]) == [1]


def test_raise_becomes_pass() -> None:
    source = """
    def f(x):
        if x < 0:
            raise ValueError("negative", x - 1)
        return x
    """
    mutants = _mutants(source)
    (mutant,) = [m for m in mutants if m.operator == "raise"]
    assert mutant.changed == "pass"
    assert _call(source, mutant.id, "f", -1) == -1
    # The message arguments of the raised error are left alone: cases never see them.
    assert [m for m in mutants if m.operator == "arith"] == []


def test_error_span_keywords_are_left_alone() -> None:
    source = "def f(e, i):\n    return e('bad', span=(i, i + 1))\n"
    assert _mutants(source) == []


def test_slice_bound_off_by_one() -> None:
    source = "def f(s, i):\n    return s[:i]\n"
    mutants = _mutants(source)
    assert [m.changed for m in mutants] == ["return s[:i + 1]", "return s[:i - 1]"]
    assert _call(source, mutants[0].id, "f", "abcd", 2) == "abc"
    assert _call(source, mutants[1].id, "f", "abcd", 2) == "a"
    # A literal bound is the number operator's.
    assert [m.operator for m in _mutants("def f(s):\n    return s[1:]\n")] == ["number", "number"]


def test_docstrings_annotations_all_and_fstrings_are_not_mutated() -> None:
    source = '''
    """Doc: a < b, -1."""
    from typing import TYPE_CHECKING

    __all__ = ["f"]

    if TYPE_CHECKING:
        X = 1

    def f(a: "list[int]" = None) -> "tuple[int, int]":
        """Return -."""
        return f"{a[0]}-{a[1]}"
    '''
    assert _mutants(source) == []


def test_mutants_of_every_reference_module_compile() -> None:
    # Every operator's first mutant in each module, and every 80th: the whole set is the
    # mutation run's job (a mutant that does not compile is reported there as a tool error).
    directory = Path(importlib.import_module("flux_conformance.reference").__file__ or "").parent
    for path in sorted(directory.glob("*.py")):
        source = path.read_text()
        mutants = enumerate_mutants(path.stem, source)
        firsts = {m.operator: m for m in reversed(mutants)}.values()
        for mutant in {*firsts, *mutants[::80]}:
            compile(apply_mutant(path.stem, source, mutant.id), str(path), "exec")


# --------------------------------------------------------------------------------------------
# Stable ids
# --------------------------------------------------------------------------------------------

_STABLE = """
LIMIT = 10

def f(a, b):
    if a < b and not a:
        return a + 1
    return b[1:a]
"""


def test_ids_name_module_line_column_operator_and_change() -> None:
    mutants = _mutants(_STABLE)
    assert "m:5:7:compare:< -> <=" in {m.id for m in mutants}
    assert "m:2:8:number:10 -> 11" in {m.id for m in mutants}
    for m in mutants:
        module, line, col, operator, change = m.id.split(":", 4)
        assert (module, int(line), int(col), operator) == ("m", m.line, m.col, m.operator)
        assert change == f"{m.original} -> {m.mutated}"


def test_ids_are_unique_and_the_same_on_every_enumeration() -> None:
    first = [m.id for m in _mutants(_STABLE)]
    assert len(first) == len(set(first))
    assert first == [m.id for m in _mutants(_STABLE)]


def test_ids_survive_edits_below_them() -> None:
    before = [m.id for m in _mutants(_STABLE)]
    after = [m.id for m in _mutants(_STABLE + "\ndef g(x):\n    return x - 1\n")]
    assert after[: len(before)] == before
    assert len(after) > len(before)


def test_import_time_code_is_marked() -> None:
    source = "N = 3\n\ndef f(x, d=4):\n    return x + 5\n"
    runtime = {m.original: m.runtime for m in _mutants(source)}
    assert runtime == {"3": False, "4": False, "+": True, "5": True}


def _position(source: str, *at: str, **more: Any) -> Equivalent:
    return Equivalent("reason", "equivalent", module="m", source=source, at=at, **more)


def test_equivalent_entries_by_id_or_by_position() -> None:
    mutants = _mutants(_STABLE)
    by_position = _position("if a < b and not a:", "7:compare:< -> <=")
    by_id = Equivalent("reason", "equivalent", id="m:2:8:number:10 -> 11")
    stale = Equivalent("reason", "equivalent", id="m:1:0:raise:raise -> pass")
    matched = match_equivalents(mutants, [by_position, by_id, stale])
    assert sorted(matched.by_mutant) == ["m:2:8:number:10 -> 11", "m:5:7:compare:< -> <="]
    assert matched.stale == [stale]
    # Each entry covers exactly the one mutant it names, not the others of its line.
    assert [len(found) for _, found in matched.covered] == [1, 1, 0]
    on_line = [m for m in mutants if m.line == 5]
    assert len(on_line) > 1
    # A position entry follows its line when code above it moves.
    moved = match_equivalents(_mutants("\n\n" + _STABLE), [by_position])
    assert list(moved.by_mutant) == ["m:7:7:compare:< -> <="]
    assert not moved.stale
    # ... and goes stale when the line itself changes.
    edited = match_equivalents(
        _mutants(_STABLE.replace("a < b and", "a < b + 0 and")), [by_position]
    )
    assert edited.stale == [by_position]
    # A mutant named by two entries is reported: its reason belongs in one place.
    twice = match_equivalents(mutants, [by_position, by_id, replace(by_position, reason="again")])
    assert [(m.id, len(e)) for m, e in twice.duplicates] == [("m:5:7:compare:< -> <=", 2)]


def test_a_position_entry_on_a_repeated_line_is_ambiguous_unless_it_names_the_function() -> None:
    source = "def f(a):\n    return a < 1\n\ndef g(a):\n    return a < 1\n"
    loose = _position("return a < 1", "11:compare:< -> <=")
    exact = _position("return a < 1", "11:compare:< -> <=", function="g")
    matched = match_equivalents(_mutants(source), [loose, exact])
    assert [(e, len(found)) for e, found in matched.ambiguous] == [(loose, 2)]
    assert [m.function for m in matched.covered[1][1]] == ["g"]


def _load(tmp_path: Path, text: str) -> list[Equivalent]:
    path = tmp_path / "equivalent.yaml"
    path.write_text(textwrap.dedent(text))
    return load_equivalents(path)


def test_an_entry_may_name_several_positions_of_its_line_each_checked_on_its_own() -> None:
    mutants = _mutants(_STABLE)
    entry = _position("if a < b and not a:", "7:compare:< -> <=", "17:not:not -> (removed)")
    gone = "7:boolop:or -> and"
    matched = match_equivalents(mutants, [replace(entry, at=(*entry.at, gone))])
    assert sorted(matched.by_mutant) == ["m:5:17:not:not -> (removed)", "m:5:7:compare:< -> <="]
    # The boolop mutant of the same line is not covered: only what the entry names.
    assert "m:5:7:boolop:and -> or" not in matched.by_mutant
    assert [e.at for e in matched.stale] == [(gone,)]


def test_the_loader_refuses_an_entry_covering_a_whole_line(tmp_path: Path) -> None:
    with pytest.raises(EquivalentError, match="lacks at"):
        _load(
            tmp_path,
            """
            equivalent:
              - module: m
                source: "if a < b and not a:"
                kind: equivalent
                reason: a whole line
            """,
        )
    with pytest.raises(EquivalentError, match="lacks source, at"):
        _load(tmp_path, "equivalent:\n  - {module: m, kind: conforming, reason: r}\n")


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ('{id: "m:1:0:raise:raise -> pass", kind: nonsense, reason: r}', "unknown kind"),
        ('{id: "m:1:0:raise:raise -> pass", kind: equivalent, reason: " "}', "no reason"),
        ('{id: "m:1:0:raise:raise -> pass", module: m, kind: equivalent, reason: r}', "names"),
        ('{id: "m:1:0:raise:raise -> pass", line: 3, kind: equivalent, reason: r}', "unknown key"),
        ('{module: m, source: x, at: "compare:< -> <=", kind: equivalent, reason: r}', "is not"),
        ('{module: m, source: x, at: "7:compare:<=", kind: equivalent, reason: r}', "is not"),
        ("{module: m, source: x, at: [7], kind: equivalent, reason: r}", "list of strings"),
        ('{id: "m:1:0:raise:raise -> pass", kind: equivalent, reason: r, reviewed: "no"}', "true"),
        (
            '{module: m, source: x, at: ["7:not:not -> (removed)", "7:not:not -> (removed)"], '
            "kind: equivalent, reason: r}",
            "twice",
        ),
    ],
)
def test_the_loader_refuses_malformed_entries(tmp_path: Path, entry: str, problem: str) -> None:
    with pytest.raises(EquivalentError, match=problem):
        _load(tmp_path, f"equivalent:\n  - {entry}\n")


def test_the_loader_reads_both_forms(tmp_path: Path) -> None:
    entries = _load(
        tmp_path,
        """
        equivalent:
          - id: "m:2:8:number:10 -> 11"
            kind: conforming
            reason: a limit
          - module: m
            source: "if a < b and not a:"
            at: "7:compare:< -> <="
            kind: equivalent
            reason: equality impossible
          - module: m
            source: "return b[1:a]"
            reviewed: false
            at:
              - "13:number:1 -> 2"
              - "15:slice:[upper] a -> a + 1"
            kind: equivalent
            reason: two of a line
        """,
    )
    assert entries[0] == Equivalent("a limit", "conforming", id="m:2:8:number:10 -> 11")
    assert entries[1] == Equivalent(
        "equality impossible",
        "equivalent",
        module="m",
        source="if a < b and not a:",
        at=("7:compare:< -> <=",),
    )
    assert entries[2].at == ("13:number:1 -> 2", "15:slice:[upper] a -> a + 1")
    assert [e.reviewed for e in entries] == [True, True, False]
    matched = match_equivalents(_mutants(_STABLE), entries)
    assert sorted(matched.by_mutant) == [
        "m:2:8:number:10 -> 11",
        "m:5:7:compare:< -> <=",
        "m:7:13:number:1 -> 2",
        "m:7:15:slice:[upper] a -> a + 1",
    ]
    assert not matched.stale


def test_the_shipped_equivalent_file_loads() -> None:
    # Every entry names one mutant (no entry covers a whole line) and gives its reason.
    from mutation.mutator.equivalents import EQUIVALENT_FILE

    entries = load_equivalents(EQUIVALENT_FILE)
    assert entries
    assert all(e.id or e.at for e in entries)
    assert load_library_only(EQUIVALENT_FILE)


# --------------------------------------------------------------------------------------------
# A whole run over a fixture package
# --------------------------------------------------------------------------------------------

_FIXTURE = {
    "__init__.py": "",
    "limits.py": "LIMIT = 10\n",
    "calc.py": textwrap.dedent(
        """
        from fixpkg.limits import LIMIT


        def clamp(x):
            if x > LIMIT:
                return LIMIT
            return x


        def count_up(n):
            i = 0
            while i < n:
                i += 1
            return i


        def never_called(x):
            return x * 2 + 1
        """
    ),
}


class _TinyHarness:
    """Cases as (function name, arguments, expected value), run on the fixture package."""

    cases = (("clamp", (50,), 10), ("clamp", (3,), 3), ("count_up", (4,), 4))

    def __init__(self) -> None:
        self.names = [f"{f}{args}" for f, args, _ in self.cases]

    def execute(self, index: int) -> Any:
        name, args, _ = self.cases[index]
        module = importlib.import_module("fixpkg.calc")
        try:
            return getattr(module, name)(*args)
        except Exception as exc:
            return exc

    def passes(self, index: int, reply: Any) -> bool:
        return bool(reply == self.cases[index][2])


@pytest.fixture
def fixture_target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Target:
    package = tmp_path / "fixpkg"
    package.mkdir()
    for name, text in _FIXTURE.items():
        (package / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [n for n in sys.modules if n == "fixpkg" or n.startswith("fixpkg.")]:
        monkeypatch.delitem(sys.modules, name)
    importlib.import_module("fixpkg.calc")
    yield Target("fixpkg", package, ("calc", "limits"), entry=("calc",))
    for name in [n for n in sys.modules if n == "fixpkg" or n.startswith("fixpkg.")]:
        del sys.modules[name]


def test_end_to_end_on_a_fixture_package(fixture_target: Target) -> None:
    target = fixture_target
    harness = _TinyHarness()
    files = {str(target.path(m)): m for m in target.modules}
    baseline = record_coverage(harness, files)
    assert baseline.passing == [True, True, True]
    assert 6 in baseline.lines[0]["calc"]  # clamp's `return LIMIT`
    assert "calc" not in baseline.lines[2] or 6 not in baseline.lines[2]["calc"]
    baseline = Baseline(baseline.passing, baseline.seconds, baseline.lines, module_users(target))
    assert baseline.users["limits"] == {"limits", "calc"}

    mutants = [
        m
        for module in target.modules
        for m in enumerate_mutants(module, target.path(module).read_text())
    ]
    by_id = {m.id: m for m in mutants}
    run = MutationRun(target, harness, baseline, jobs=2, budget_base=1.0, budget_factor=10.0)
    results = {r.mutant.id: r for r in run_mutants(run, mutants)}
    status = {key: r.status for key, r in results.items()}

    # Planted and killable: the clamp bound off by one, reached through `from ... import`.
    assert status["limits:1:8:number:10 -> 11"] == "killed"
    assert results["limits:1:8:number:10 -> 11"].killers == (0,)
    # The raise-free comparison flip that the tiny suite does catch.
    assert status["calc:6:7:compare:> -> >="] == "survived"  # equivalent: x == LIMIT returns x
    # Unreachable: no case calls never_called.
    never = [key for key in by_id if key.startswith("calc:19:")]
    assert never
    for key in never:
        assert status[key] == "survived"
        assert results[key].note == "no case executes it"
    # The loop that never ends is stopped by its budget and counts as killed.
    assert status["calc:14:8:arith:+= -> -="] == "timeout"
    assert results["calc:14:8:arith:+= -> -="].killed

    equivalent = Equivalent(
        "x == LIMIT returns x either way",
        "equivalent",
        module="calc",
        source="if x > LIMIT:",
        at=("7:compare:> -> >=",),
    )
    # Wrongly listed: some case kills it; and an entry whose line no longer exists.
    wrong = Equivalent("wrong", "conforming", id="limits:1:8:number:10 -> 11")
    gone = Equivalent("gone", "equivalent", id="calc:99:0:raise:raise -> pass")
    matched = match_equivalents(mutants, [equivalent, wrong, gone])
    assert matched.stale == [gone]
    table = score(list(results.values()), matched.by_mutant)
    calc = table["calc"]
    assert calc.equivalent == 1
    survivors = sum(1 for k, s in status.items() if k.startswith("calc:") and s == "survived")
    assert calc.survived == survivors - 1
    assert calc.score == calc.killed / (calc.mutants - 1)
    # The killed mutant counts as killed, not as listed.
    assert table["limits"].equivalent == 0
    assert table["limits"].killed >= 1

    text, ok = report(run, list(results.values()), matched, 0.0)
    assert not ok  # the wrong and the stale entry fail the run whatever the scores
    assert "  equivalent  [calc:6:7:compare:> -> >=]  survived" in text
    assert (
        "Listed in equivalent.yaml but killed: [limits:1:8:number:10 -> 11] "
        "KILLED (clamp(50,))" in text
    )
    assert "Stale equivalent entry (no such mutant): calc:99:0:raise:raise -> pass" in text
    text, ok = report(run, list(results.values()), match_equivalents(mutants, [equivalent]), 0.0)
    assert ok
    assert "Listed in equivalent.yaml (1 mutants of the modules run)" in text
    assert "not yet re-read" not in text
    # An entry split out of an old whole-line entry and not yet re-read is counted apart.
    pending = match_equivalents(mutants, [replace(equivalent, reviewed=False)])
    text, ok = report(run, list(results.values()), pending, 0.0)
    assert "not yet re-read against their own mutant (reviewed: false): 1 in calc" in text
    # The parent's modules are untouched by the children.
    assert importlib.import_module("fixpkg.limits").LIMIT == 10


_ENTRY_SOURCE = """
def helper(x):
    return x < 3

class Box:
    def first(self, x):
        return x > 0

def _op_decode(value, *, edition):
    if not isinstance(value, str):
        raise TypeError(value)
    return helper(value)

def factory(func):
    def op(value, *, edition):
        if type(value) is not dict:
            raise TypeError(value)
        return func(value)
    return op

OPERATIONS = {"a.decode": _op_decode, "a.b": factory(helper)}
"""


def test_mutants_know_their_function_and_the_entry_point_type_guards() -> None:
    mutants = _mutants(_ENTRY_SOURCE)
    functions = {m.id.split(":")[1]: m.function for m in mutants}
    assert functions["3"] == "helper"
    assert functions["7"] == "Box.first"
    guards = sorted({(m.function, m.line) for m in mutants if m.guard})
    # The guards of _op_decode and of the factory's inner function; helper's compare is not.
    assert guards == [
        ("_op_decode", 10),
        ("_op_decode", 11),
        ("factory.op", 16),
        ("factory.op", 17),
    ]


def test_unexecuted_survivors_in_library_functions_and_guards_are_unreachable() -> None:
    from mutation.mutator import UNREACHED, LibraryOnly, Result, classify_unreachable

    mutants = {m.id: m for m in _mutants(_ENTRY_SOURCE)}
    in_box = next(m for m in mutants.values() if m.function == "Box.first")
    in_guard = next(m for m in mutants.values() if m.guard)
    in_helper = next(m for m in mutants.values() if m.function == "helper")
    results = [
        Result(in_box, "survived", note=UNREACHED),
        Result(in_guard, "survived", note=UNREACHED),
        Result(in_helper, "survived", note=UNREACHED),
        # An executed line of a library function stays a survivor: it is scored.
        Result(in_box, "survived", note="no case fails"),
    ]
    library = [LibraryOnly("m", "Box.first", "API"), LibraryOnly("m", "gone", "removed")]
    out, stale = classify_unreachable(results, library)
    assert [r.status for r in out] == ["unreachable", "unreachable", "survived", "survived"]
    assert stale == [library[1]]
    table = score(out, {})
    assert table["m"].unreachable == 2
    assert table["m"].score == 0.0
