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

Many huge answers in one run: the 5,000,000-integer list for each of 18, then 36 cases
(docs/limits.md, "what a result keeps of an answer").  The runner keeps the cut form of each
answer, not the answer, so its peak must not grow with their number: the run of 36 peaks at
most 10 % (and 32 MiB) above the run of 18, and each takes at most 10 s an answer.
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
#: The numbers of huge answers in one run, and how much more the larger run may peak.
MANY = (18, 36)
GROWTH = 1.10
GROWTH_BYTES = 32 * 2**20

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


def _ids(count: int) -> list[str]:
    """The first ``count`` ``idset.decode`` cases of every edition."""
    from flux_conformance.runner.cases import load_suite

    ids = [c.id for c in load_suite().cases if c.operation == "idset.decode" and not c.edition]
    if len(ids) < count:
        raise RuntimeError(f"the suite has {len(ids)} idset.decode cases, not {count}")
    return ids[:count]


def _run(kind: str, case: str | list[str]) -> int:
    """One whole run (of one case, or of each of a list); the runner's peak RSS in bytes."""
    with tempfile.TemporaryDirectory(prefix="bench-hostile-") as tmp:
        work = Path(tmp)
        impl = f"exec:{sys.executable} {FAKES / 'hostile_impl.py'} {kind}"
        argv = ["run", "--impl", impl, "--timeout", "60"]
        for one in [case] if isinstance(case, str) else case:
            argv += ["--id", one]
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
    peaks = {count: _run("huge-list", _ids(count)) for count in MANY}
    few, many = (peaks[count] for count in MANY)
    flat = many <= max(few * GROWTH, few + GROWTH_BYTES)
    out.append(
        Bench(
            f"run against {MANY[-1]} huge answers (5,000,000 integers each)",
            lambda: _run("huge-list", _ids(MANY[-1])),
            # A peak that grows with the number of answers misses the target whatever its time.
            SECONDS * MANY[-1] if flat and many < PEAK else 0.0,
            repeat=1,
            stats=", ".join(
                f"runner peak (VmHWM) {peaks[count] / 2**20:,.0f} MiB for {count} answers"
                for count in MANY
            ),
        )
    )
    return out


if __name__ == "__main__":
    sys.exit(main(benches(), sys.argv[1:]))
