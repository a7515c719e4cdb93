"""Benchmark: the whole suite against the reference, in-process and through a subprocess.

Targets: in-process under 2 s on the project's 2-core machine (loading and checking
every case file included), and the subprocess transport under twice the in-process time.
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import Bench, main

from flux_conformance.runner.cases import load_suite
from flux_conformance.runner.cli import make_adapter
from flux_conformance.runner.engine import Outcome, run_cases
from flux_conformance.runner.operations import load_registry
from flux_conformance.runner.oracle import reference_oracle


def _whole_run(impl: str) -> float:
    load_registry.cache_clear()
    start = time.perf_counter()
    suite = load_suite()
    adapter = make_adapter(impl)
    adapter.start()
    try:
        results = list(run_cases(suite.cases, adapter, suite.operations, oracle=reference_oracle))
    finally:
        adapter.close()
    bad = [r.case.id for r in results if r.outcome is not Outcome.PASSED]
    if bad:
        raise SystemExit(f"{impl}: {len(bad)} cases did not pass, e.g. {bad[:3]}")
    return time.perf_counter() - start


def _serve_command() -> str:
    """``flux-conformance serve``: the script beside this Python (its venv) if there is one,
    so that the figure does not depend on PATH; else the one on PATH."""
    beside = Path(sys.executable).with_name("flux-conformance")
    if beside.is_file():
        return f"exec:{beside} serve"
    if shutil.which("flux-conformance") is None:
        raise SystemExit(
            "bench_suite: flux-conformance is not installed beside this Python or on PATH"
        )
    return "exec:flux-conformance serve"


def benches() -> list[Bench]:
    """The suite figures; the subprocess target is twice the measured in-process time."""
    inproc = min(_whole_run("reference") for _ in range(3))
    serve = _serve_command()
    n = len(load_suite().cases)
    return [
        Bench(
            f"whole suite in-process ({n} cases, load included)",
            lambda: _whole_run("reference"),
            target=2.0,
            repeat=3,
        ),
        Bench(
            f"whole suite via exec:flux-conformance serve (target 2 x {inproc * 1000:.0f} ms)",
            lambda: _whole_run(serve),
            target=2 * inproc,
            repeat=3,
        ),
    ]


if __name__ == "__main__":
    sys.exit(main(benches()))
