"""flux-conformance's runner: load the cases, drive an implementation, judge and report.

Data flows one way: case file -> :mod:`runner.cases` -> :mod:`runner.engine` ->
:mod:`runner.adapters` -> comparator (:mod:`runner.comparators`) -> :mod:`runner.report`.
"""

__version__ = "0.8.0"
