"""What ``--runner`` reports: the text report, the JSON record of a run, and the table of
scores that ``docs/mutation.md`` shows (generated from a recorded run, and checked against it
by the tests)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["as_json", "markdown_table", "merge", "module_rows", "portable", "text_report"]

#: A mutant no selected test fails; a mutant no test executes is scored as a survivor too.
UNEXECUTED = "no test executes it"

#: The paths of this machine in a test's id (an ``exec:`` implementation's interpreter and
#: script, parametrised in): a recorded run names them ``PYTHON`` and ``SRC``.
_INTERPRETER = re.compile(r"/[^\s\[\]]*/bin/python[0-9.]*")
_CHECKOUT = re.compile(r"/[^\s\[\]]*?/(?=tests/)")


def portable(test_id: str) -> str:
    """``test_id`` without the paths of the machine it ran on."""
    return _CHECKOUT.sub("SRC/", _INTERPRETER.sub("PYTHON", test_id))


def as_json(
    results: Sequence[Any],
    *,
    wall: float,
    cpu: float,
    planned: Mapping[str, int],
    listed: Mapping[str, Any],
) -> dict[str, Any]:
    """A run as JSON: each mutant's fate, the mutants planned per module, the time spent."""
    return {
        "wall_seconds": round(wall, 1),
        "cpu_seconds": round(cpu, 1),
        "planned": dict(sorted(planned.items())),
        "mutants": [
            {
                "id": r.mutant.id,
                "module": r.mutant.module,
                "killed": r.killed,
                "how": r.how,
                "seconds": round(r.seconds, 2),
                "tests": r.tests,
                "by": portable(r.by),
                "source": r.mutant.source,
                "changed": r.mutant.changed,
                "equivalent": "" if r.killed else getattr(listed.get(r.mutant.id), "kind", ""),
            }
            for r in results
        ],
    }


def merge(
    runs: Sequence[dict[str, Any]],
    planned: Mapping[str, int],
    listed: Mapping[str, Any],
    current: Mapping[str, tuple[str, str]] | None = None,
) -> dict[str, Any]:
    """Several recorded runs as one: a later run's fate of a mutant replaces an earlier one's
    (a module run again after its survivors were pinned).  ``planned`` and ``listed`` are the
    mutants per module (every module planned gets a row, its mutants no run measured counted
    as not run) and the equivalents of the code the runs were made on.  ``current``
    (each mutant id of that code with its line before and after) leaves out the fates of
    mutants the code no longer has: a run made before a module changed measured another
    module; their number is under ``stale``."""
    fates: dict[str, dict[str, Any]] = {}
    stale = 0
    for run in runs:
        for entry in run["mutants"]:
            if current is not None and current.get(entry["id"]) != (
                entry["source"],
                entry["changed"],
            ):
                stale += 1
                continue
            fates[entry["id"]] = {**entry, "by": portable(entry["by"])}
    for entry in fates.values():
        kind = getattr(listed.get(entry["id"]), "kind", "")
        entry["equivalent"] = "" if entry["killed"] else kind
    modules = {*planned, *(entry["module"] for entry in fates.values())}
    return {
        "wall_seconds": round(sum(r.get("wall_seconds", 0.0) for r in runs), 1),
        "cpu_seconds": round(sum(r.get("cpu_seconds", 0.0) for r in runs), 1),
        "planned": {m: planned[m] for m in sorted(modules)},
        "stale": stale,
        "mutants": sorted(fates.values(), key=lambda e: (e["module"], _order(e["id"]))),
    }


def _order(mutant_id: str) -> tuple[int, int, str]:
    _, line, col, rest = mutant_id.split(":", 3)
    return int(line), int(col), rest


def module_rows(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per module (then ``total``): mutants, killed, survived, unexecuted, equivalent, not run,
    errors and the score, killed / (mutants - equivalent - not run - errors)."""
    rows = []
    planned: Mapping[str, int] = data["planned"]
    for module in [*sorted(planned), "total"]:
        mine = [e for e in data["mutants"] if module in ("total", e["module"])]
        count = sum(planned.values()) if module == "total" else planned[module]
        killed = sum(e["killed"] for e in mine)
        equivalent = sum(bool(e.get("equivalent")) for e in mine)
        errors = sum(e["how"].startswith("error") for e in mine)
        unexecuted = sum(e["how"] == UNEXECUTED and not e.get("equivalent") for e in mine)
        survived = sum(
            not e["killed"] and not e.get("equivalent") and e["how"] == "survived" for e in mine
        )
        not_run = count - len(mine)
        scored = count - equivalent - not_run - errors
        rows.append(
            {
                "module": module,
                "mutants": count,
                "killed": killed,
                "survived": survived,
                "unexecuted": unexecuted,
                "equivalent": equivalent,
                "not run": not_run,
                "errors": errors,
                "score": f"{100 * killed / scored:.1f}%" if scored else "-",
            }
        )
    return rows


def markdown_table(data: Mapping[str, Any]) -> str:
    """The table of :func:`module_rows` in Markdown, as ``docs/mutation.md`` shows it."""
    rows = module_rows(data)
    keys = list(rows[0])
    head = "| " + " | ".join("runner module" if k == "module" else k for k in keys) + " |"
    rule = "| --- |" + " ---: |" * (len(keys) - 1)
    body = ["| " + " | ".join(str(row[k]) for k in keys) + " |" for row in rows]
    return "\n".join([head, rule, *body])


def text_report(data: Mapping[str, Any]) -> str:
    """The rows as plain text, then every survivor with its line before and after."""
    rows = module_rows(data)
    keys = list(rows[0])

    def line(row: Mapping[str, Any]) -> str:
        return " ".join(f"{row[k]!s:>10}" if k != "module" else f"{row[k]:34}" for k in keys)

    lines = [line({k: k for k in keys}), *(line(row) for row in rows)]
    for entry in data["mutants"]:
        if not entry["killed"]:
            note = entry.get("equivalent") or entry["how"]
            lines += [f"{note}: {entry['id']}", f"    {entry['source']}", f"    {entry['changed']}"]
    return "\n".join(lines)


def read_runs(paths: Sequence[Path]) -> list[dict[str, Any]]:
    """The recorded runs in ``paths``, in order."""
    return [json.loads(path.read_text()) for path in paths]
