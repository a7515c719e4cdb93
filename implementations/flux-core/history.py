"""flux-core's releases side by side: the flux-core column of the suite, once per release.

    python implementations/flux-core/history.py [--builds DIR] [--work DIR] [RELEASE ...]

For each release (by default every flux-python wheel for Python 3.11 from 0.82.0 to 0.88.0)
this makes a virtual environment of its own, installs the suite and ``flux-python==RELEASE``
into it the way a user does (``pip install``), and runs ``flux-conformance run --impl
flux-core`` there, held to the expectations file the suite ships for flux-core:

* **the wheel alone**: without a flux-core build, only its pure-Python parsers answer;
* **a source build**, for each release with a folder ``DIR/RELEASE`` (a PREFIX given to
  ``implementations/flux-core/build.sh``): the same environment with ``FLUX_CORE_PREFIX`` set,
  so the whole of flux-core's Python bindings answer.

Each run's JSON Lines report is kept in ``--work`` (a run already there is not repeated), and
from them it writes ``docs/history.json`` (what the site of ``compare --site ... --history``
shows) and ``docs/history.md``.  ``--render`` only writes the Markdown again from the JSON.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from flux_conformance import runner
from flux_conformance.runner.atomic import write_atomic
from flux_conformance.runner.cases import load_suite
from flux_conformance.runner.report.site.history import (
    Run,
    gather,
    history_markdown,
    load_history,
    read_report,
)

ROOT = Path(__file__).resolve().parents[2]
RELEASES = ("0.82.0", "0.83.0", "0.84.0", "0.85.0", "0.86.0", "0.87.0", "0.88.0")
#: Cases left out of every run, and why (each costs minutes and is skipped in the end anyway).
LEFT_OUT = {
    "idset.decode.huge-expansion": "flux-core sets the 276,447,232 ids of its 32-bit wrap of "
    "`0-99999999999999` one at a time (minutes per run), and the adapter then declines to list "
    "them, so the case is skipped whatever the release",
}
PREAMBLE = (
    "Each release ran in a virtual environment of its own, made with `python3.11 -m venv` and "
    "`pip install flux-conformance flux-python==RELEASE ply`, the way a user installs the "
    "wheel; a release with a source build (`implementations/flux-core/build.sh SRC PREFIX` of "
    "its tag) ran once more in the same environment with `FLUX_CORE_PREFIX=PREFIX`. Every run "
    "is held to the expectations file the suite ships for flux-core 0.88.0, so `xfail` is a "
    "departure 0.88.0 also has, `fail` an answer 0.88.0 does not give (a departure it no longer "
    "has, or another wrong answer), and `xpass` a case that release gets right and 0.88.0 does "
    "not. Left out of every run: "
    + "; ".join(f"`{case}` ({why})" for case, why in LEFT_OUT.items())
    + "."
)
SERIES = {
    "build": (
        "Source builds: the whole of flux-core's Python bindings",
        "Releases whose tag was built with `implementations/flux-core/build.sh` "
        "(`FLUX_CORE_PREFIX`).",
    ),
    "wheel": (
        "The flux-python wheel alone",
        "Without a build, `import flux` fails (the wheel does not ship libflux-core), so only "
        "its pure-Python shape and `--requires` parsers answer.",
    ),
}


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _venv(work: Path, release: str, wheel: Path, python: str) -> Path:
    """The environment of one release, made once."""
    venv = work / f"venv-{release}"
    marker = venv / "installed.txt"
    installed = f"{hashlib.sha256(wheel.read_bytes()).hexdigest()} flux-python=={release}\n"
    if marker.is_file() and marker.read_text() == installed:
        return venv
    _say(f"{release}: making {venv.name}")
    subprocess.run([python, "-m", "venv", "--clear", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, str(wheel), f"flux-python=={release}", "ply>=3.11"], check=True)
    marker.write_text(installed)
    return venv


def _digest(work: Path, release: str, kind: str) -> str | None:
    """The cases digest a finished report of ``work`` was run with."""
    report = work / f"{release}-{kind}.jsonl"
    if not report.is_file():
        return None
    with report.open(encoding="utf-8") as stream:
        header = json.loads(stream.readline() or "{}").get("header", {})
    return str(header.get("suite", {}).get("digest", "")) or None


def _done(report: Path, digest: str) -> bool:
    """Whether ``report`` holds a finished run of the cases whose digest is ``digest``."""
    if not report.is_file():
        return False
    with report.open(encoding="utf-8") as stream:
        header = json.loads(stream.readline() or "{}").get("header", {})
    finished = '"footer"' in report.read_text(encoding="utf-8")[-20000:]
    return finished and header.get("suite", {}).get("digest") == digest


def _run(venv: Path, report: Path, prefix: Path | None, digest: str) -> None:
    """One run of the flux-core column into ``report`` (JSON Lines), unless it is there."""
    if _done(report, digest):
        return
    env = {k: v for k, v in os.environ.items() if k != "FLUX_CORE_PREFIX"}
    if prefix is not None:
        env["FLUX_CORE_PREFIX"] = str(prefix)
    argv = [str(venv / "bin" / "flux-conformance"), "run", "--impl", "flux-core"]
    argv += [f"--exclude-id={case}" for case in LEFT_OUT]
    partial = report.with_suffix(".partial")
    argv += ["--json", str(partial)]
    began = time.monotonic()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    _say(f"  {report.name}: exit {proc.returncode} in {time.monotonic() - began:.0f} s")
    if proc.returncode not in (0, 1):
        message = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        report.with_suffix(".problem").write_text(message + "\n", encoding="utf-8")
        return
    partial.replace(report)
    report.with_suffix(".problem").unlink(missing_ok=True)


def _read(work: Path, release: str, kind: str, digest: str) -> Run | None:
    report = work / f"{release}-{kind}.jsonl"
    problem = report.with_suffix(".problem")
    if _done(report, digest):
        return read_report(report, release)
    if report.is_file():
        _say(f"{report.name}: left out, a run of other cases (run it again)")
        return None
    if problem.is_file():
        return Run(release, release, "", {}, {}, problem=problem.read_text().strip())
    return None


def _run_all(args: argparse.Namespace, work: Path, digest: str) -> None:
    """Make each release's environment and run what is missing."""
    dist = work / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), str(ROOT)],
        check=True,
    )
    wheel = max(dist.glob(f"flux_conformance-{runner.__version__}-*.whl"))
    for release in args.releases:
        venv = _venv(work, release, wheel, args.python)
        _run(venv, work / f"{release}-wheel.jsonl", None, digest)
        prefix = args.builds / release if args.builds else None
        if prefix is not None and prefix.is_dir():
            _run(venv, work / f"{release}-build.jsonl", prefix.resolve(), digest)


def main(argv: list[str] | None = None) -> int:
    """Run what is missing, then write the JSON and the Markdown."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("releases", nargs="*", default=list(RELEASES), metavar="RELEASE")
    parser.add_argument("--builds", type=Path, help="DIR/RELEASE: a build.sh PREFIX per release")
    parser.add_argument(
        "--work",
        type=Path,
        default=Path(tempfile.gettempdir()) / "flux-core-history",
        help="environments and reports (default: flux-core-history in the temporary folder)",
    )
    parser.add_argument("--python", default="python3.11", help="interpreter of the environments")
    parser.add_argument("--data", type=Path, default=ROOT / "docs" / "history.json")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "history.md")
    parser.add_argument("--render", action="store_true", help="only render --data as --out")
    parser.add_argument(
        "--collect", action="store_true", help="run nothing: write from the reports in --work"
    )
    args = parser.parse_args(argv)
    if args.render:
        write_atomic(args.out, history_markdown(load_history(args.data)))
        return 0
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    suite = load_suite()
    digest = suite.digest()
    if not args.collect:
        _run_all(args, work, digest)
    else:
        # The cases the reports were run with (most of them), which may be older than the
        # checkout's: a history states the suite it ran.
        found = Counter(
            d for r in args.releases for k in SERIES if (d := _digest(work, r, k)) is not None
        )
        digest = found.most_common(1)[0][0] if found else digest
    series = []
    for kind, (title, how) in SERIES.items():
        runs = [run for r in args.releases if (run := _read(work, r, kind, digest)) is not None]
        series.append(({"kind": kind, "title": title, "how": how}, runs))
    shown_argv = ["python", "implementations/flux-core/history.py"]
    shown_argv += ["--builds", "PREFIXES"] if args.builds else []
    shown_argv += [] if args.releases == list(RELEASES) else args.releases
    doc = gather(
        implementation="flux-core",
        about={
            "suite_version": runner.__version__,
            "suite_digest": digest,
            "edition": suite.editions.resolve(None),
            "command": shlex.join(shown_argv),
            "generated": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d"),
            "preamble": PREAMBLE,
            "left_out": LEFT_OUT,
        },
        series=series,
    )
    write_atomic(args.data, json.dumps(doc, indent=1, ensure_ascii=True) + "\n")
    write_atomic(args.out, history_markdown(load_history(args.data)))
    _say(f"wrote {args.data} and {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
