"""The runner's layering, checked from the modules' own import statements.

Data flows one way (cases -> engine -> adapters -> comparators -> reports), so the runner's
modules import one another without a circle; and the runner reaches the reference only through
the in-process adapter that serves ``--impl reference`` (which the oracle wiring uses too).
"""

from __future__ import annotations

import ast
from pathlib import Path

from support import ROOT

from flux_conformance import reference, runner

RUNNER = ROOT / "runner"
#: The import names of the two packages, whatever the folders are called in the repository.
RUNNER_NAME, REFERENCE_NAME = runner.__name__, reference.__name__

#: The only runner modules that may import the reference: the adapter that serves it, and the
#: one place that wires it in as the comparators' oracle.
MAY_IMPORT_REFERENCE = {f"{RUNNER_NAME}.adapters.inprocess", f"{RUNNER_NAME}.oracle"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(RUNNER).with_suffix("").parts
    return ".".join((RUNNER_NAME, *(parts[:-1] if parts[-1] == "__init__" else parts)))


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in RUNNER.rglob("*.py")}


def _imports(path: Path, known: set[str]) -> set[str]:
    """Every module ``path`` imports, at the top or inside a function, by full name."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(
                f"{node.module}.{alias.name}"
                for alias in node.names
                if f"{node.module}.{alias.name}" in known
            )
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    # A module naming itself (a `python -m` entry reaching the imported copy of its own file)
    # joins no two modules, so it closes no circle.
    return {name: (_imports(path, known) & known) - {name} for name, path in modules.items()}


def test_no_import_circle_among_runner_modules() -> None:
    graph = _graph()
    # The package's own __init__ files import nothing of the runner, so they cannot close a
    # circle; an edge to one is only a side effect of naming a submodule.
    state: dict[str, int] = {}
    circles: list[list[str]] = []

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                circles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert circles == []


def test_only_the_reference_adapter_and_the_oracle_import_the_reference() -> None:
    importers = {
        name
        for name, path in _modules().items()
        if any(
            m == REFERENCE_NAME or m.startswith(f"{REFERENCE_NAME}.") for m in _imports(path, set())
        )
    }
    assert importers <= MAY_IMPORT_REFERENCE
    assert f"{RUNNER_NAME}.adapters.inprocess" in importers


def test_the_layering_check_sees_lazy_imports() -> None:
    # runner.oracle imports the in-process adapter inside a function: that edge must count.
    graph = _graph()
    assert f"{RUNNER_NAME}.adapters.inprocess" in graph[f"{RUNNER_NAME}.oracle"]
    # and sees the package's modules at all: the engine imports the cases loader
    assert f"{RUNNER_NAME}.cases" in graph[f"{RUNNER_NAME}.engine"]


#: Arrows that would run back up the floors: (importing package, imported package).  The
#: reports render what the tools and commands compute, so nothing in report/ may import a
#: tool (the comparison's model lives in report/comparison.py, below both).
FORBIDDEN = (
    (f"{RUNNER_NAME}.report", f"{RUNNER_NAME}.tools"),
    (f"{RUNNER_NAME}.report", f"{RUNNER_NAME}.commands"),
    (f"{RUNNER_NAME}.engine", f"{RUNNER_NAME}.report"),
)


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(f"{package}.")


def test_no_arrow_runs_back_up_the_floors() -> None:
    graph = _graph()
    wrong = sorted(
        (name, target)
        for name, targets in graph.items()
        for target in targets
        for low, high in FORBIDDEN
        if _inside(name, low) and _inside(target, high)
    )
    assert wrong == []


def test_the_forbidden_arrow_check_sees_the_matrix_renderer() -> None:
    # The renderer and its model are both in report/: the edge is seen, and stays inside.
    graph = _graph()
    assert f"{RUNNER_NAME}.report.comparison" in graph[f"{RUNNER_NAME}.report.matrix"]
    assert f"{RUNNER_NAME}.report.comparison" in graph[f"{RUNNER_NAME}.tools.compare"]
