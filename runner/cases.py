"""The suite's cases: where each part of loading them lives, and the names to import.

A newcomer finds a rule by its module's name:

* :mod:`runner.case_model` -- the case model: :class:`Case`, :class:`Expected`,
  :class:`Requirement`, :class:`InputClass`, :class:`Suite`, :data:`LEVELS`;
* :mod:`runner.case_loading` -- loading: :func:`load_suite` reads the requirements index, the
  editions and every case file of a folder;
* :mod:`runner.case_folder` -- which files a folder's loading reads (regular files inside it;
  links, FIFOs and devices refused);
* :mod:`runner.case_checks` -- validation: every problem with its file and line
  (:class:`Problem`), all raised at once (:class:`SuiteError`);
* :mod:`runner._yaml` -- the strict YAML reader that keeps the line of every key (line
  numbers in every problem and report come from it).

Every name is importable from here, as before the modules were split.
"""

from __future__ import annotations

from flux_conformance.runner._cases_dir import default_cases_dir
from flux_conformance.runner.case_checks import Problem, SuiteError
from flux_conformance.runner.case_loading import load_suite
from flux_conformance.runner.case_model import (
    LEVELS,
    Case,
    Expected,
    InputClass,
    Requirement,
    Suite,
)

__all__ = [
    "LEVELS",
    "Case",
    "Expected",
    "InputClass",
    "Problem",
    "Requirement",
    "Suite",
    "SuiteError",
    "default_cases_dir",
    "load_suite",
]
