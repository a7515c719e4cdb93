"""The README's generated parts: the tour's outputs and the performance table.

    python tests/readme.py --write                       # re-run the tour's commands
    python tests/readme.py --write --perf bench.json     # and the table, from a benchmark run

Every block between ``<!-- tour: NAME -->`` and ``<!-- end tour -->`` is a console session: its
first line is the command (``$ flux-conformance ...``), the rest is what that command prints
now, run from the checkout (``SRC`` stands for the checkout's path, so that no machine's path is
written down).  The block between ``<!-- perf: table -->`` and ``<!-- end perf -->`` is
rendered from the JSON that ``tests/benchmarks/run_all.py --json FILE`` writes, and so is the
table of every figure in docs/performance.md.
``tests/runner/test_readme.py`` checks that the tour is what the commands print.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
TOUR = re.compile(
    r"(<!-- tour: (\S+) -->\n```console\n\$ (.*?)\n)(.*?)(```\n<!-- end tour -->)", re.S
)
PERF = re.compile(r"(<!-- perf: table -->\n)(.*?)(<!-- end perf -->)", re.S)
PERF_DOC = ROOT / "docs" / "performance.md"
CURRENT = re.compile(r"(<!-- current -->\n)(.*?)(<!-- end current -->)", re.S)

#: The README's benchmark rows: (words in run_all's row name, how the README names the work).
PERF_ROWS = (
    ("hostlist.decode node[0-99999]", "`hostlist.decode` of `node[0-99999]`"),
    ("hostlist.encode 100,000 hosts", "`hostlist.encode` of 100,000 hosts"),
    ("idset decode 1,000,000 even ids (to an IdSet)", "idset decode, 1,000,000 even ids, to a set"),
    ("fragmented: R.decode of the full R", "`R.decode`, 16,384 fragmented ranks"),
    ("fragmented: constraint.match, 20 terms (R validated", "`constraint.match`, 20 terms, that R"),
    ("fragmented: R.union of two allocations", "`R.union` of two fragmented allocations"),
    ("fragmented: R.diff full minus an allocation", "`R.diff`, the full R minus one"),
    ("fragmented: R.intersect of two allocations", "`R.intersect` of two allocations"),
    (
        "sched.allocate: load the pool",
        "`sched.allocate`: load 16,384 fragmented nodes, 2 allocations taken",
    ),
    ("sched.allocate: 128 nodes", "then 128 nodes x 16 cores, with properties"),
    ("sched.allocate: 1,000 one-core", "then 1,000 one-core slots"),
    ("sched.allocate: min-only", "then a min-only node count"),
    ("shape.parse mixed 1,000 vertices (", "`shape.parse`, 1,000 vertices"),
    ("slurm.extra.select", "`slurm.extra.select`, 10,000 nodes"),
    ("whole suite in-process", "the whole suite, in-process"),
)
#: Third-party columns: (heading, run_all's names for that implementation).
PERF_COLUMNS = (
    ("flux-core 0.88 (C)", ("flux-core C", "librlist")),
    ("flux-core 0.88 (Python)", ("Rv1Pool",)),
    ("Fluxion", ("Fluxion",)),
    ("python-hostlist", ("python-hostlist",)),
    ("ClusterShell", ("ClusterShell",)),
)


def run_command(command: str) -> str:
    """What ``command`` prints on stdout, run from the checkout, with the checkout as ``SRC``."""
    argv = shlex.split(command)
    assert argv[0] == "flux-conformance", command
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}
    done = subprocess.run(
        [sys.executable, "-m", "flux_conformance.runner.cli", *argv[1:]],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    # An installed copy (tox installs the package) reads its bundled cases, the same files as
    # the checkout's cases/: both are shown as SRC/cases.
    from flux_conformance.runner.cases import default_cases_dir

    text = done.stdout.replace(str(default_cases_dir().resolve()), "SRC/cases")
    text = text.replace(str(ROOT), "SRC")
    if argv[1] == "compare":
        text = _verdicts_and_tables(text, 2)
    return text


def _verdicts_and_tables(markdown: str, count: int) -> str:
    """The verdicts and the first ``count`` tables of compare's Markdown, a blank line between.

    The rest of the page (the date of the run, the departures explained) is left out of the
    README, which says so.
    """
    _, _, verdicts = markdown.partition("## Verdicts\n\n")
    blocks: list[list[str]] = [verdicts.partition("\n\n")[0].splitlines()]
    inside = False
    for line in markdown.splitlines():
        if line.startswith("|"):
            if not inside:
                blocks.append([])
            blocks[-1].append(line)
            inside = True
        else:
            inside = False
    return "\n\n".join("\n".join(t) for t in blocks[: count + 1]) + "\n"


def tour(text: str) -> list[tuple[str, str, str]]:
    """(name, command, output shown) of every tour block."""
    return [(m.group(2), m.group(3), m.group(4)) for m in TOUR.finditer(text)]


def rewrite_tour(text: str) -> str:
    """The README with every tour block's output run again."""
    return TOUR.sub(lambda m: m.group(1) + run_command(m.group(3)) + m.group(5), text)


def _ms(seconds: float | None) -> str:
    if seconds is None:
        return ""
    value = seconds * 1000
    if value < 0.05:
        return "<0.1 ms"
    return f"{value:,.0f} ms" if value >= 100 else f"{value:.1f} ms"


def perf_table(doc: dict[str, Any]) -> str:
    """The README's performance table, from one ``run_all.py --json`` file."""
    rows = doc["benchmarks"]
    machine = doc["machine"]
    head = ["work", "ours", *(name for name, _ in PERF_COLUMNS), "target"]
    lines = ["| " + " | ".join(head) + " |", "| --- |" + " ---: |" * (len(head) - 1)]
    for words, label in PERF_ROWS:
        row = next((r for r in rows if words in r["name"]), None)
        if row is None:
            continue
        cells = [label, _ms(row["ours"])]
        for _, names in PERF_COLUMNS:
            found = [v for k, v in row["others"].items() if any(n in k for n in names)]
            cells.append(_ms(found[0]) if found else "")
        cells.append(_ms(row["target"]))
        lines.append("| " + " | ".join(cells) + " |")
    load = machine.get("load")
    where = (
        f"Medians of one `tests/benchmarks/run_all.py` run, "
        f"{doc['measured'][:16].replace('T', ' ')} UTC, on {machine['cpus']} cores of an {machine['processor']} ({machine['system']}, "
        f"Python {machine['python']}"
        + (f", load average {load:.1f} when it ended" if load is not None else "")
        + "); a blank cell: no such operation there, or not installed."
    )
    return where + "\n\n" + "\n".join(lines) + "\n\n"


def full_table(doc: dict[str, Any]) -> str:
    """Every figure of one ``run_all.py --json`` file, for docs/performance.md."""
    lines = [
        f"## Current figures ({doc['measured'][:10]})",
        "",
        perf_table(doc).split("\n\n", 1)[0],
        "",
        "| benchmark | ours | target | third parties |",
        "| --- | ---: | ---: | --- |",
    ]
    for row in doc["benchmarks"]:
        others = "; ".join(f"{name} {_ms(value)}" for name, value in row["others"].items())
        name = row["name"].strip().replace("|", "/")
        lines.append(f"| {name} | {_ms(row['ours'])} | {_ms(row['target'])} | {others} |")
    return "\n".join(lines) + "\n\n"


def main(argv: list[str] | None = None) -> int:
    """Rewrite the README's generated blocks (``--write``) or say whether they are current."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--write", action="store_true", help="rewrite README.md")
    parser.add_argument("--perf", metavar="JSON", help="render the performance table from this")
    args = parser.parse_args(argv)
    text = README.read_text(encoding="utf-8")
    new = rewrite_tour(text)
    if args.perf:
        doc = json.loads(Path(args.perf).read_text(encoding="utf-8"))
        new = PERF.sub(lambda m: m.group(1) + perf_table(doc) + m.group(3), new)
        if args.write:
            text_doc = PERF_DOC.read_text(encoding="utf-8")
            text_doc = CURRENT.sub(lambda m: m.group(1) + full_table(doc) + m.group(3), text_doc)
            PERF_DOC.write_text(text_doc, encoding="utf-8")
    if args.write:
        README.write_text(new, encoding="utf-8")
        return 0
    if new != text:
        print("README.md is not current: python tests/readme.py --write", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
