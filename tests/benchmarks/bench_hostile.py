"""Benchmark: ``flux-conformance run`` against answers made to stall or swell the judge.

Each figure is one whole ``run`` of one case, as a CI job would start it (a new Python process,
all four reports written), against ``tests/fakes/hostile_impl.py``, which gives the runner's
pre-flight request the right answer and every case a hostile one:

* a list of 5,000,000 integers (38 MB of JSON) for ``idset.decode``;
* a string of 60 MiB, just under the 64 MiB a reply may hold, for ``idset.encode``;
* a ``^`` count with operand 10**10 in a ``shape.parse`` answer;
* a constraint naming 200 properties for ``constraint.parse_query``.

Bounds (docs/limits.md, "an answer the runner judges"): every such run ends within 10 s, and
the runner's own process peaks under 1 GiB (the implementation's memory is its own; the
runner's peak is read in the process that ran it).  A run over the memory
bound is reported as missing its target, whatever its time.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import Bench, main

FAKES = Path(__file__).resolve().parent.parent / "fakes"

#: (hostile kind, the case it answers, what it is).
RUNS = (
    ("huge-list", "idset.decode.empty-string", "5,000,000 integers (38 MB)"),
    ("huge-string", "idset.encode.single", "a 60 MiB string"),
    ("wide-power", "shape.parse.rfc-use-case-1.2", "a ^ count with operand 10**10"),
    ("many-properties", "constraint.parse_query.rfc-foo", "200 properties"),
)

#: The bounds the issue of hostile answers set: seconds for a run, bytes of the runner's peak.
SECONDS = 10.0
PEAK = 1024**3

#: Runs ``flux-conformance run`` in this process, then prints the process's peak RSS (bytes):
#: ``VmHWM`` where ``/proc`` has it (getrusage's figure also counts, on Linux, the memory of
#: the process that started this one, as it was when this one was forked).
_DRIVER = """
import resource, sys
from flux_conformance.runner.cli import main
code = main(sys.argv[1:])
try:
    with open("/proc/self/status") as status:
        peak = next(int(x.split()[1]) for x in status if x.startswith("VmHWM:"))
except (OSError, StopIteration):
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(peak * 1024)
sys.exit(0 if code in (0, 1) else code)
"""


def _run(kind: str, case: str) -> int:
    """One whole run; the runner's peak RSS in bytes."""
    with tempfile.TemporaryDirectory(prefix="bench-hostile-") as tmp:
        work = Path(tmp)
        impl = f"exec:{sys.executable} {FAKES / 'hostile_impl.py'} {kind}"
        argv = ["run", "--impl", impl, "--id", case, "--timeout", "60"]
        for flag, name in (("--junit", "r.xml"), ("--json", "r.jsonl")):
            argv += [flag, str(work / name)]
        argv += ["--markdown", str(work / "r.md"), "--html", str(work / "r.html")]
        env = {**os.environ, "HOSTILE_ONCE": str(work / "once")}
        done = subprocess.run(
            [sys.executable, "-c", _DRIVER, *argv],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0 or not done.stdout.strip():
            raise RuntimeError(f"run against {kind} failed: {done.stderr[-2000:]}")
        return int(done.stdout.strip().splitlines()[-1])


def benches() -> list[Bench]:
    """One figure per hostile answer, with the runner's peak memory under it."""
    out = []
    for kind, case, what in RUNS:
        peak = _run(kind, case)
        within = peak < PEAK
        out.append(
            Bench(
                f"run against a hostile answer: {what}",
                lambda kind=kind, case=case: _run(kind, case),
                # Over the memory bound, the figure misses its target whatever its time.
                SECONDS if within else 0.0,
                repeat=3,
                stats=f"runner peak {peak / 2**20:,.0f} MiB (bound {PEAK / 2**20:,.0f} MiB)",
            )
        )
    return out


if __name__ == "__main__":
    sys.exit(main(benches(), sys.argv[1:]))
