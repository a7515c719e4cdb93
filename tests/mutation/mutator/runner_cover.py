"""Which runner test executes which runner line: the map ``--runner`` selects tests with.

The runner's tests run once, unmutated, in a forked child with a line tracer on every file of
the runner package: per test (its node id), the lines it executed in each runner module, its
time and whether it passed; per test file, the lines its collection executed.  A mutant then
runs only against the passing tests that executed one of its lines (or, for a change in code
that runs at import time, the tests that executed any line of its module or of a module that
imports it); a mutant no test executes survives with that note.

A value a mutated module keeps for the process (a ``functools.cache``, a module-level dict
filled on first use) would be computed only by the first test that asks for it, and a mutant
of that computation would run against that test alone: before each traced test, such modules
are put back as their import left them (:class:`Fresh`), so every test that needs the value
computes it, and is selected for the mutants of its computation.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import importlib.abc
import importlib.machinery
import json
import sys
import threading
import time
import types
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .operators import Mutant

__all__ = [
    "Coverage",
    "Fresh",
    "Recorder",
    "module_name",
    "runner_files",
    "runner_users",
    "select",
]

PACKAGE = "flux_conformance.runner"


def module_name(runner: Path, path: Path) -> str:
    """``comparators.shape`` for ``runner/comparators/shape.py``; a package is its folder."""
    parts = list(path.relative_to(runner).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def runner_files(runner: Path) -> dict[str, str]:
    """Every source file of the runner package (its path as Python reports it) -> module."""
    return {
        str(path): module_name(runner, path)
        for path in sorted(runner.rglob("*.py"))
        if path.relative_to(runner).parts != ("__init__.py",)
    }


def _imported(runner: Path, path: Path, module: str) -> set[str]:
    """The runner modules ``path`` imports (absolute or relative), and their packages."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".") if package else []
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                stem = ".".join([*base, *([node.module] if node.module else [])])
            elif node.module and (node.module + ".").startswith(PACKAGE + "."):
                stem = node.module.removeprefix(PACKAGE).lstrip(".")
            else:
                continue
            names = [stem] + [f"{stem}.{a.name}".lstrip(".") for a in node.names]
        elif isinstance(node, ast.Import):
            names = [
                a.name.removeprefix(PACKAGE).lstrip(".")
                for a in node.names
                if (a.name + ".").startswith(PACKAGE + ".")
            ]
        for name in names:
            parts = name.split(".") if name else []
            found.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    return found


def runner_users(runner: Path) -> dict[str, frozenset[str]]:
    """For each runner module: itself and every runner module importing it, transitively."""
    modules = {module_name(runner, p): p for p in sorted(runner.rglob("*.py"))}
    modules.pop("", None)
    imports = {m: _imported(runner, p, m) & modules.keys() for m, p in modules.items()}
    users = {m: {m} for m in modules}
    changed = True
    while changed:
        changed = False
        for module, used in imports.items():
            for dependency in used:
                before = len(users[dependency])
                users[dependency] |= users[module]
                changed |= len(users[dependency]) != before
    return {m: frozenset(u) for m, u in users.items()}


@dataclass
class Coverage:
    """The unmutated runner tests: what each executed, its time, whether it passed."""

    #: Node ids in collection order.
    tests: list[str] = field(default_factory=list)
    passed: dict[str, bool] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    #: node id -> runner module -> lines executed while the test ran (setup and teardown too).
    lines: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    #: test file -> runner module -> lines executed while the file was collected.
    collected: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    #: What the whole map was built from (a digest of the runner's sources and the tests'
    #: shared files), and per test file a digest of the file.
    key: str = ""
    file_keys: dict[str, str] = field(default_factory=dict)

    def without(self, files: set[str]) -> Coverage:
        """The map less the tests of ``files`` (to be traced again)."""
        kept = [t for t in self.tests if self.file_of(t) not in files]
        return Coverage(
            tests=kept,
            passed={t: self.passed[t] for t in kept},
            seconds={t: self.seconds[t] for t in kept},
            lines={t: self.lines[t] for t in kept},
            collected={f: v for f, v in self.collected.items() if f not in files},
            key=self.key,
            file_keys={f: v for f, v in self.file_keys.items() if f not in files},
        )

    def add(self, other: Coverage) -> None:
        """Take in the tests of ``other`` (traced apart), keeping the files in order."""
        order = {
            f: i
            for i, f in enumerate(
                sorted({*map(self.file_of, self.tests), *map(self.file_of, other.tests)})
            )
        }
        self.tests = sorted([*self.tests, *other.tests], key=lambda t: order[self.file_of(t)])
        for name in ("passed", "seconds", "lines", "collected", "file_keys"):
            getattr(self, name).update(getattr(other, name))

    def to_json(self) -> str:
        """The map as JSON (to a cache file, or through a pipe from the child)."""
        return json.dumps(self.__dict__, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Coverage:
        """Read what :meth:`to_json` wrote."""
        return cls(**json.loads(text))

    def file_of(self, test: str) -> str:
        """The test file of a node id."""
        return test.split("::", 1)[0]


def sources_key(paths: Iterable[Path]) -> str:
    """A digest of the files the map depends on: a changed test or module rebuilds it."""
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(str(path).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


_FUNCTION = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _span(node: ast.AST) -> set[int]:
    start = getattr(node, "lineno", 0)
    return set(range(start, (getattr(node, "end_lineno", None) or start) + 1))


def _targets(statement: ast.AST) -> set[str]:
    targets: list[ast.expr] = []
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
        targets = [statement.target]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _named(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _readers(tree: ast.AST, names: set[str]) -> set[int]:
    """Lines that read one of ``names`` when they run: in a function's body, the line; in a
    function's defaults or decorators (evaluated at import), the whole function."""
    found: set[int] = set()

    def visit(node: ast.AST, in_function: bool) -> None:
        if in_function and _named(node) in names:
            found.update(_span(node))
        if isinstance(node, _FUNCTION):
            body = node.body if isinstance(node.body, list) else [node.body]
            for part in ast.iter_child_nodes(node):
                if any(part is b for b in body):
                    visit(part, True)
                elif any(_named(n) in names for n in ast.walk(part)):
                    found.update(_span(node))
            return
        for child in ast.iter_child_nodes(node):
            visit(child, in_function)

    visit(tree, False)
    return found


def import_time_readers(
    trees: Mapping[str, ast.Module], module: str, line: int, users: Mapping[str, frozenset[str]]
) -> dict[str, set[int]] | None:
    """The runner lines through which an import-time change at ``line`` of ``module`` is seen.

    A constant (or a class attribute) is seen where a function reads it, or reads a constant
    computed from it at import; a function's default or decorator, where the function runs;
    a class's header, where its methods run.  None when the change lies elsewhere (the caller
    then takes every test that reaches the module or a module importing it).
    """
    tree = trees[module]
    statement = next((s for s in tree.body if line in _span(s)), None)
    extra: set[int] = set()
    if isinstance(statement, ast.ClassDef):
        inner = next((s for s in statement.body if line in _span(s)), None)
        if inner is None or isinstance(inner, (*_FUNCTION, ast.ClassDef)):
            return {module: _span(inner if inner is not None else statement)}
        names = _targets(inner)
        extra = _span(statement)
    elif isinstance(statement, _FUNCTION):
        return {module: _span(statement)}
    elif statement is not None:
        names = _targets(statement)
    else:
        return None
    if not names:
        return None
    reach = sorted(users.get(module, frozenset({module})) & trees.keys())
    changed = True
    while changed:  # a constant computed at import from a changed one changes too
        changed = False
        for name in reach:
            for other in trees[name].body:
                more = _targets(other) - names
                if more and any(_named(n) in names for n in ast.walk(other)):
                    names |= more
                    changed = True
    found = {name: _readers(trees[name], names) for name in reach}
    found[module] = found.get(module, set()) | extra
    return found


def select(
    mutant: Mutant,
    coverage: Coverage,
    users: Mapping[str, frozenset[str]],
    trees: Mapping[str, ast.Module] | None = None,
) -> list[str]:
    """The passing tests that execute ``mutant``'s lines, in collection order.

    A change in import-time code (a constant, a default, a class body) is selected by the
    tests that executed a line through which it is seen (:func:`import_time_readers`), or
    without ``trees``, any line of its module or of a module importing it; a change in a
    function by the tests that executed one of its lines, and every test of a file whose
    collection executed one (a value computed for ``parametrize``).
    """
    module = mutant.module
    if mutant.runtime:
        wanted = set(mutant.lines)
        files = {
            name
            for name, hit in coverage.collected.items()
            if wanted.intersection(hit.get(module, ()))
        }
        chosen = [
            t
            for t in coverage.tests
            if wanted.intersection(coverage.lines[t].get(module, ()))
            or coverage.file_of(t) in files
        ]
    else:
        readers = None if trees is None else import_time_readers(trees, module, mutant.line, users)
        if readers is None:
            reach = users.get(module, frozenset({module}))
            chosen = [t for t in coverage.tests if reach.intersection(coverage.lines[t])]
        else:
            chosen = [
                t
                for t in coverage.tests
                if any(
                    lines.intersection(coverage.lines[t].get(m, ())) for m, lines in readers.items()
                )
            ]
    return [t for t in chosen if coverage.passed[t]]


#: What :class:`Fresh` puts back: a module-level container.
_Held = dict[Any, Any] | list[Any] | set[Any]


class _Noting(importlib.machinery.SourceFileLoader):
    """Loads a module as usual, then has :class:`Fresh` note its state."""

    def __init__(self, fullname: str, path: str, fresh: Fresh) -> None:
        super().__init__(fullname, path)
        self.fresh = fresh

    def exec_module(self, module: types.ModuleType) -> None:
        super().exec_module(module)
        self.fresh.note(module)


class Fresh(importlib.abc.MetaPathFinder):
    """Imports the named modules, noting what each holds as its import leaves it, and puts
    that back on :meth:`reset`: each module-level dict, list and set to its contents then,
    each ``functools`` cache of the module's own functions emptied."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = frozenset(names)
        self.saved: list[tuple[types.ModuleType, str, _Held, Any]] = []
        self.caches: list[Any] = []

    def find_spec(
        self, fullname: str, path: Any = None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.names:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is not None and isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            spec.loader = _Noting(fullname, spec.loader.path, self)
        return spec

    def note(self, module: types.ModuleType) -> None:
        """Keep what ``module`` holds now (just imported)."""
        for name, value in vars(module).items():
            if isinstance(value, dict | list | set) and not name.startswith("__"):
                self.saved.append((module, name, value, copy.copy(value)))
            elif callable(getattr(value, "cache_clear", None)) and (
                getattr(value, "__module__", None) == module.__name__
            ):
                self.caches.append(value)

    def reset(self) -> None:
        """Put every noted module back as its import left it."""
        for module, name, value, initial in self.saved:
            if vars(module).get(name) is not value or value == initial:
                continue  # replaced (a test's monkeypatch, undone after it), or as it was
            if isinstance(value, list):
                value[:] = initial
            else:
                value.clear()
                value.update(initial)
        for cached in self.caches:
            cached.cache_clear()


class Recorder:
    """A pytest plugin: records the runner lines each test (and each file's collection) ran.

    ``fresh`` names the runner modules (short names) put back as their import left them before
    each test (:class:`Fresh`).
    """

    def __init__(self, files: Mapping[str, str], root: Path, fresh: Iterable[str] = ()) -> None:
        self.files = dict(files)
        self.root = root
        self.coverage = Coverage()
        self.fresh = Fresh(f"{PACKAGE}.{name}" for name in fresh)

    def _trace(self, hits: dict[str, set[int]]) -> Any:
        files = self.files

        def local(frame: types.FrameType, event: str, arg: Any) -> Any:
            if event == "line":
                hits[files[frame.f_code.co_filename]].add(frame.f_lineno)
            return local

        def tracer(frame: types.FrameType, event: str, arg: Any) -> Any:
            name = files.get(frame.f_code.co_filename)
            if name is None:
                return None
            hits.setdefault(name, set()).add(frame.f_lineno)
            return local

        return tracer

    def _run_traced(self, hits: dict[str, set[int]]) -> Any:
        tracer = self._trace(hits)
        sys.settrace(tracer)
        threading.settrace(tracer)
        return tracer

    @staticmethod
    def _stop() -> None:
        sys.settrace(None)
        threading.settrace(None)

    @staticmethod
    def _plain(hits: Mapping[str, set[int]]) -> dict[str, list[int]]:
        return {k: sorted(v) for k, v in sorted(hits.items())}

    # pytest hooks (found by name).
    def pytest_collection_finish(self, session: Any) -> None:
        self.coverage.tests = [item.nodeid for item in session.items]

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.failed or (report.when == "call" and not report.passed):
            self.coverage.passed[report.nodeid] = False
        else:
            self.coverage.passed.setdefault(report.nodeid, True)


def _wrap_collect(recorder: Recorder) -> Any:
    import pytest

    class Collect:
        @pytest.hookimpl(hookwrapper=True)
        def pytest_make_collect_report(self, collector: Any) -> Any:
            if not isinstance(collector, pytest.Module):
                yield
                return
            hits: dict[str, set[int]] = {}
            recorder._run_traced(hits)
            try:
                yield
            finally:
                recorder._stop()
            if hits:
                name = str(Path(collector.path).relative_to(recorder.root))
                recorder.coverage.collected[name] = recorder._plain(hits)

        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_protocol(self, item: Any, nextitem: Any) -> Any:
            hits: dict[str, set[int]] = {}
            recorder.fresh.reset()
            recorder._run_traced(hits)
            started = time.perf_counter()
            try:
                yield
            finally:
                recorder._stop()
            recorder.coverage.seconds[item.nodeid] = time.perf_counter() - started
            recorder.coverage.lines[item.nodeid] = recorder._plain(hits)

    return Collect()


def plugins(recorder: Recorder) -> list[Any]:
    """The plugin objects to pass ``pytest.main`` for the coverage run (called before it: the
    modules ``fresh`` names are imported through :class:`Fresh` from then on)."""
    sys.meta_path.insert(0, recorder.fresh)
    return [recorder, _wrap_collect(recorder)]
