"""The steps of the GitHub Action (``action.yml``), as a script of the standard library alone.

``action.yml`` runs ``python3 runner/tools/action.py install``, then ``... run``, from the
action's checkout.  Every input arrives in an environment variable (``FC_*``), never in the
text of a shell command, and nothing is run through a shell: the packages are a list, one a
line, and ``args`` is split with :func:`shlex.split`, so ``$(...)``, backticks and ``;`` in an
input are text given to ``flux-conformance``, never commands.

``install`` makes a virtual environment of its own (so the job's Python is left as it was) and
installs into it, in one pip call, the suite (by default from the action's own checkout, so
``uses: OWNER/flux-conformance@REF`` pins the suite by that ref) and the extra packages (a
``python:`` implementation, say).  ``run`` runs the suite with every report, appends the
Markdown report to the job summary, writes the step's outputs (verdict, counts, report
paths) and exits with the run's own exit status.

Never a stale verdict: the reports of an earlier run in the same folder are removed before
the run, so a run that cannot start has no report to be read, and its outputs say so
(``verdict`` ``not run``, no counts) with a line in the summary.  Every output is written in
the ``name<<DELIMITER`` form with a random delimiter that its value does not hold, so no
input (an implementation's name with a newline and ``exit-status=0`` in it, say) can write
an output of its own.  The summary is the Markdown report, which keeps under what a job
summary takes (``MAX_BYTES`` of ``runner/report/markdown.py``); a larger file is cut at a
line, saying so.
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = [
    "install_command",
    "main",
    "output_lines",
    "outputs_of",
    "packages_of",
    "run_command",
    "summary_of",
]

#: The reports ``run`` writes, by output name, and their file names in the reports folder.
REPORTS = {
    "junit": "junit.xml",
    "html": "report.html",
    "markdown": "report.md",
    "json": "results.jsonl",
    "badge": "badge.json",
}
#: The counts given as outputs, in the JSON Lines footer's words.
COUNTS = ("passed", "failed", "errored", "skipped", "xfailed", "xpassed")


def packages_of(text: str) -> list[str]:
    """The requirements in a list input: one a line; blank lines and ``#`` comments skipped."""
    found = []
    for line in text.splitlines():
        item = line.split("#", 1)[0].strip()
        if item:
            found.append(item)
    return found


def _bin(venv: Path, name: str) -> Path:
    folder = "Scripts" if os.name == "nt" else "bin"
    suffix = ".exe" if os.name == "nt" else ""
    return venv / folder / f"{name}{suffix}"


def install_command(env: Mapping[str, str]) -> list[str]:
    """The pip command ``install`` runs: the suite and the extra packages, in one resolve."""
    suite = env.get("FC_SUITE", "").strip() or env["FC_ACTION_PATH"]
    venv = Path(env["FC_VENV"])
    return [
        str(_bin(venv, "python")),
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        suite,
        *packages_of(env.get("FC_PACKAGES", "")),
    ]


def run_command(env: Mapping[str, str]) -> list[str]:
    """The ``flux-conformance run`` command line: every report, then the user's ``args``."""
    reports = Path(env["FC_REPORTS"])
    argv = [
        str(_bin(Path(env["FC_VENV"]), "flux-conformance")),
        "run",
        "--impl",
        env["FC_IMPL"],
    ]
    for name, file in REPORTS.items():
        argv += [f"--{name}", str(reports / file)]
    if env.get("FC_EXPECTATIONS", "").strip():
        argv += ["--expectations", env["FC_EXPECTATIONS"].strip()]
    try:
        argv += shlex.split(env.get("FC_ARGS", ""))
    except ValueError as exc:
        raise SystemExit(f"flux-conformance action: cannot split `args`: {exc}") from None
    return argv


#: What GitHub takes of one step's summary (1 MiB); the action appends no more than this.
SUMMARY_BYTES = 1024 * 1024

#: What a run that wrote no report says, by its exit status.
NOT_RUN = {
    2: "a usage error, or a case, requirements or expectations file that does not load",
    3: "the implementation could not be run",
}


def output_lines(outputs: Mapping[str, str]) -> str:
    """``$GITHUB_OUTPUT`` text: each output as ``name<<DELIMITER``, its value, ``DELIMITER``.

    The delimiter is random and not in the value, so a value holding a newline and
    ``name=...`` (or a line like a delimiter) stays inside its own output.
    """
    text = []
    for name, value in outputs.items():
        delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
        while delimiter in value or delimiter in name:  # pragma: no cover - 128 random bits
            delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
        text.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    return "".join(text)


def summary_of(text: str, limit: int = SUMMARY_BYTES) -> str:
    """``text`` for the job summary: whole when it fits ``limit`` bytes, else cut at a line."""
    if len(text.encode("utf-8")) <= limit:
        return text
    note = (
        "\n\n*This summary is cut here: the Markdown report is larger than a job summary "
        "takes. Every case is in the reports uploaded with the run.*\n"
    )
    room = limit - len(note.encode("utf-8"))
    head = text.encode("utf-8")[:room].decode("utf-8", "ignore")
    return head[: head.rfind("\n") + 1] + note


def outputs_of(reports: Path, status: int) -> dict[str, str]:
    """The step's outputs, read from the run's JSON Lines report and its exit status."""
    out = {"exit-status": str(status), "reports": str(reports)}
    out.update((name, str(reports / file)) for name, file in REPORTS.items())
    footer: dict[str, object] = {}
    try:
        for line in (reports / REPORTS["json"]).read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if "footer" in record:
                footer = record["footer"]
    except (OSError, ValueError):
        footer = {}
    total = footer.get("total")
    if isinstance(total, dict):
        for name in COUNTS:
            out[name] = str(total.get(name, 0))
        out["total"] = str(sum(int(total.get(name, 0)) for name in COUNTS))
    if not footer:
        out["verdict"] = "not run"
    elif footer.get("interrupted"):
        out["verdict"] = "interrupted"
    else:
        # The words of the report itself (runner/verdicts.py): "conforms" only where nothing
        # departs.  A footer without them (a report of an older version) never says it.
        words = footer.get("verdict_words")
        fallback = "matches its baseline" if footer.get("ok") else "does not conform"
        out["verdict"] = str(words) if isinstance(words, str) and words else fallback
    return out


def _append(path: str | None, text: str) -> None:
    if path:
        with Path(path).open("a", encoding="utf-8") as stream:
            stream.write(text)


def _install(env: Mapping[str, str]) -> int:
    venv = Path(env["FC_VENV"])
    python = env.get("FC_PYTHON", "").strip() or sys.executable
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    command = install_command(env)
    print("+ " + shlex.join(command), flush=True)
    return subprocess.run(command, check=False).returncode


def _run(env: Mapping[str, str]) -> int:
    reports = Path(env["FC_REPORTS"])
    reports.mkdir(parents=True, exist_ok=True)
    command = run_command(env)
    for file in REPORTS.values():
        # An earlier run's report must not be read as this run's.
        (reports / file).unlink(missing_ok=True)
    print("+ " + shlex.join(command), flush=True)
    status = subprocess.run(command, check=False).returncode
    outputs = outputs_of(reports, status)
    _append(env.get("GITHUB_OUTPUT"), output_lines(outputs))
    if env.get("FC_SUMMARY", "true").strip().lower() == "true":
        markdown = reports / REPORTS["markdown"]
        if markdown.is_file():
            text = summary_of(markdown.read_text(encoding="utf-8") + "\n")
        else:
            why = NOT_RUN.get(status, "no report was written")
            text = f"**flux-conformance did not run** (exit status {status}: {why}); see the log.\n"
        _append(env.get("GITHUB_STEP_SUMMARY"), text)
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """``install`` or ``run``, reading the inputs from the environment."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["install"]:
        return _install(os.environ)
    if args == ["run"]:
        return _run(os.environ)
    print("usage: action.py install|run (inputs in FC_* environment variables)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
