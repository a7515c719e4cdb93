"""Mutation testing of the conformance suite: does some case fail each plausible wrong
reference?

A *mutant* is the reference with one small change made by an operator over its syntax tree
(``<`` for ``<=``, ``and`` for ``or``, a constant off by one, a ``raise`` dropped ...).  The
suite *kills* a mutant when at least one case that passes against the reference fails against
the mutant.  A mutant nobody kills is either a missing case, an equivalent mutant (no input can
tell it from the original: listed with a reason in ``equivalent.yaml``), or dead code.

How a run goes:

1. Load the suite, run every case once against the reference in-process, with a line tracer on
   the reference's files: which lines each case executes.  Cases that do not pass are left out.
2. Enumerate the mutants of each module.  A mutant on lines L..M runs only against the cases
   that executed one of those lines; one in code that runs at import time (constants, class
   bodies, default arguments) runs against every case.  A mutant that no case reaches survives
   ("no case executes it").
3. Each mutant runs in a forked child: the child drops the reference's modules, installs the
   mutated source of one module, imports the reference again (so ``from reference.idset import
   IdSet`` elsewhere binds the mutated class), runs the selected cases through the in-process
   adapter and the engine's judge, and reports the failing cases through a pipe.  The oracle that
   comparators consult stays the *original* reference (the parent's functions, which keep their
   own module globals).  A child over its time budget is killed: the mutant counts as killed
   (timeout); memory is capped so a mutant that expands without bound fails instead of swapping.

The package, one module per stage: ``operators`` (the mutants), ``suite`` (the target, the
harness and the coverage baseline), ``forked`` (children and their pool), ``kill`` (the kill
matrix), ``hunt`` (generated inputs for the survivors), ``equivalents`` (``equivalent.yaml``),
``report`` (scores) and ``cli``.  Run it with ``python tests/mutation/mutate.py`` (see
docs/mutation.md).
"""

from __future__ import annotations

from .cli import main, reference_target
from .equivalents import (
    EQUIVALENT_KINDS,
    Equivalent,
    EquivalentError,
    LibraryOnly,
    Matched,
    classify_unreachable,
    load_equivalents,
    load_library_only,
    match_equivalents,
)
from .hunt import Finding, HuntResult, hunt_mutants, render_hunt
from .kill import UNREACHED, MutationRun, Result, run_mutants
from .operators import OPERATORS, Mutant, apply_mutant, enumerate_mutants
from .report import ModuleScore, report, score
from .suite import Baseline, Harness, SuiteHarness, Target, module_users, record_coverage

__all__ = [
    "EQUIVALENT_KINDS",
    "OPERATORS",
    "UNREACHED",
    "Baseline",
    "Equivalent",
    "EquivalentError",
    "Finding",
    "Harness",
    "HuntResult",
    "LibraryOnly",
    "Matched",
    "ModuleScore",
    "Mutant",
    "MutationRun",
    "Result",
    "SuiteHarness",
    "Target",
    "apply_mutant",
    "classify_unreachable",
    "enumerate_mutants",
    "hunt_mutants",
    "load_equivalents",
    "load_library_only",
    "main",
    "match_equivalents",
    "module_users",
    "record_coverage",
    "reference_target",
    "render_hunt",
    "report",
    "run_mutants",
    "score",
]
