"""Scores per module and the text report of a kill run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .equivalents import Equivalent, Matched
from .kill import MutationRun, Result

__all__ = ["ModuleScore", "render_entries", "render_table", "report", "score"]


@dataclass
class ModuleScore:
    """The counts of one module."""

    module: str
    mutants: int = 0
    killed: int = 0
    survived: int = 0
    equivalent: int = 0
    not_run: int = 0
    unreachable: int = 0

    @property
    def score(self) -> float | None:
        """killed / (mutants - equivalent - unreachable - not run), or None if nothing counts."""
        counted = self.mutants - self.equivalent - self.unreachable - self.not_run
        return self.killed / counted if counted else None


def score(
    results: Sequence[Result], equivalents: Mapping[str, Equivalent]
) -> dict[str, ModuleScore]:
    """Counts per module (``equivalents``: mutant id -> the entry naming it).  A listed
    mutant that some case kills counts as killed (and the report flags its entry)."""
    table: dict[str, ModuleScore] = {}
    for result in results:
        row = table.setdefault(result.mutant.module, ModuleScore(result.mutant.module))
        row.mutants += 1
        if result.killed:
            row.killed += 1
        elif result.status == "not-run":
            row.not_run += 1
        elif result.status == "unreachable":
            row.unreachable += 1
        elif result.mutant.id in equivalents:
            row.equivalent += 1
        else:
            row.survived += 1
    return table


def render_table(table: Mapping[str, ModuleScore]) -> str:
    """The per-module table, as Markdown."""
    lines = [
        "| module | mutants | killed | survived | equivalent | unreachable | not run | score |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    total = ModuleScore("total")
    for row in table.values():
        for name in ("mutants", "killed", "survived", "equivalent", "unreachable", "not_run"):
            setattr(total, name, getattr(total, name) + getattr(row, name))
    for row in [*table.values(), total]:
        value = row.score
        shown = f"{value:.1%}" if value is not None else "-"
        lines.append(
            f"| {row.module} | {row.mutants} | {row.killed} | {row.survived} | "
            f"{row.equivalent} | {row.unreachable} | {row.not_run} | {shown} |"
        )
    return "\n".join(lines)


def _fate(result: Result | None, names: Sequence[str]) -> str:
    if result is None:
        return "not in this run"
    if result.killed:
        killers = ", ".join(names[i] for i in result.killers[:3])
        return f"KILLED ({killers or result.status})"
    return result.status


def render_entries(
    matched: Matched, results: Sequence[Result], names: Sequence[str], modules: Sequence[str]
) -> tuple[list[str], list[str]]:
    """Each entry of the modules run with the mutant it covers and that mutant's fate; and the
    problems: an entry whose mutant some case kills, one matching no mutant (stale), one
    matching several (ambiguous), a mutant named by two entries."""
    by_id = {r.mutant.id: r for r in results}
    listing: list[str] = []
    problems: list[str] = []
    for entry, found in matched.covered:
        if entry.target_module not in modules:
            continue
        if not found:
            problems.append(f"Stale equivalent entry (no such mutant): {entry.label}")
            continue
        if len(found) > 1:
            problems.append(
                f"Ambiguous equivalent entry ({len(found)} mutants; add function:): {entry.label}"
            )
        for mutant in found:
            result = by_id.get(mutant.id)
            fate = _fate(result, names)
            listing.append(f"  {entry.kind:10}  [{mutant.id}]  {fate}")
            if result is not None and result.killed:
                problems.append(f"Listed in equivalent.yaml but killed: [{mutant.id}] {fate}")
    for mutant, entries in matched.duplicates:
        if mutant.module in modules:
            problems.append(f"Named by {len(entries)} equivalent entries: [{mutant.id}]")
    return listing, problems


def report(
    run: MutationRun,
    results: Sequence[Result],
    matched: Matched,
    threshold: float,
) -> tuple[str, bool]:
    """The text report and whether every module reached ``threshold``."""
    equivalents = matched.by_mutant
    table = score(results, equivalents)
    out = [render_table(table), ""]
    survivors = [r for r in results if r.status == "survived" and r.mutant.id not in equivalents]
    if survivors:
        out.append(f"Surviving mutants ({len(survivors)}):")
        for r in survivors:
            m = r.mutant
            out.append(f"  {run.target.package}/{m.module}.py:{m.line}  [{m.id}]  ({r.note})")
            out.append(f"      - {m.source}")
            out.append(f"      + {m.changed}")
        out.append("")
    unreachable = [r for r in results if r.status == "unreachable"]
    if unreachable:
        notes: dict[str, int] = {}
        for r in unreachable:
            key = f"{r.mutant.module}: {r.note}"
            notes[key] = notes.get(key, 0) + 1
        out.append(f"Unreachable from the operations, not scored ({len(unreachable)}):")
        out.extend(f"  {n:3d}  {key}" for key, n in sorted(notes.items()))
        out.append("")
    modules = sorted({r.mutant.module for r in results})
    listing, problems = render_entries(matched, results, run.harness.names, modules)
    if listing:
        out.append(f"Listed in equivalent.yaml ({len(listing)} mutants of the modules run):")
        out.extend(listing)
        out.append("")
    out.extend(problems)
    kinds: dict[str, int] = {}
    for r in results:
        entry = equivalents.get(r.mutant.id)
        if entry is not None and not r.killed:
            kinds[entry.kind] = kinds.get(entry.kind, 0) + 1
    if kinds:
        out.append(
            "Left out of the score (equivalent.yaml): "
            + ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
        )
    pending: dict[str, int] = {}
    for r in results:
        entry = equivalents.get(r.mutant.id)
        if entry is not None and not entry.reviewed and not r.killed:
            pending[r.mutant.module] = pending.get(r.mutant.module, 0) + 1
    if pending:
        # Their reason was written for a whole line: the score of these modules may hide gaps.
        out.append(
            "Of those, not yet re-read against their own mutant (reviewed: false): "
            + ", ".join(f"{n} in {module}" for module, n in sorted(pending.items()))
        )
    not_run = sum(r.status == "not-run" for r in results)
    if not_run:
        out.append(f"{not_run} mutants not run (out of time): scores count only those run.")
    mutated = {r.mutant.module for r in results}
    exercised = {
        i
        for i, ok in enumerate(run.baseline.passing)
        if ok and mutated & run.baseline.lines[i].keys()
    }
    killing = {i for r in results for i in r.killers}
    idle = sorted(exercised - killing)
    out.append(
        f"Cases that kill no mutant ({len(idle)} of {len(exercised)} cases that reach a "
        "mutated module):"
        + (
            " [--first-kill: a case counts only when it was the first to fail]"
            if run.first_kill
            else ""
        )
    )
    out.extend(f"  {run.harness.names[i]}" for i in idle)
    reached = all(row.score is None or row.score >= threshold for row in table.values())
    failing = [m for m, row in table.items() if row.score is not None and row.score < threshold]
    out.append("")
    out.append(
        f"Threshold {threshold:.0%}: "
        + ("every module reaches it." if reached else "under it: " + ", ".join(failing))
    )
    if problems:
        # A wrong or stale entry moves the score as surely as a missing case: it fails the run.
        out.append(f"{len(problems)} equivalent.yaml entries to fix (see above).")
    return "\n".join(out), reached and not problems
