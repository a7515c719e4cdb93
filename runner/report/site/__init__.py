"""The results site of ``compare --site DIR``: static pages that work from the disk.

Layout (every name stable from one release to the next: it comes from an ``--impl`` name, a
spec or a case id, never from a version or a position)::

    index.html                 verdicts, chart, the matrix per spec and operation
    cases.html                 every noted case (some implementation departs or is unchecked)
    impl/<impl>.html           one per implementation (see .implementation)
    case/<case id>.html        one per noted case (see .case)
    spec/<spec>.html           one per spec (see .spec)
    badges/<impl>.json         shields.io endpoint badges, and badges/<impl>/<spec>.json
    assets/site.css, site.js   the style sheet and the filters; nothing comes from the network
    site.json                  what was compared, and the mark that DIR holds such a site

The site is written into a new folder beside DIR, then put in DIR's place; an existing DIR is
replaced only when it holds a site written here before (its ``site.json``), never a folder of
something else.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from flux_conformance.runner.errors import ConformanceError
from flux_conformance.runner.report.badge import badge
from flux_conformance.runner.report.site._html import ASSETS, asset
from flux_conformance.runner.report.site._model import Site, case_file, slug
from flux_conformance.runner.report.site.case import case_page
from flux_conformance.runner.report.site.implementation import implementation_page
from flux_conformance.runner.report.site.index import cases_page, index_page
from flux_conformance.runner.report.site.spec import spec_page

__all__ = ["MARK", "Site", "SiteError", "case_file", "slug", "write_site"]

#: The file that marks a folder as a site written by ``compare --site``.
MARK = "site.json"


class SiteError(ConformanceError):
    """DIR cannot take the site (it holds something else, or cannot be written): exit 2."""

    exit_status = 2


def check_target(directory: Path) -> None:
    """Refuse, before anything runs, a DIR that is not ours to replace."""
    if directory.exists() and not directory.is_dir():
        raise SiteError(f"--site {directory}: exists and is not a folder")
    if directory.is_dir() and any(directory.iterdir()) and not (directory / MARK).is_file():
        raise SiteError(
            f"--site {directory}: the folder holds files that are not a site written by "
            f"flux-conformance (no {MARK}); name a new or empty folder"
        )
    parent = directory.resolve().parent
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise SiteError(f"--site {directory}: cannot write in {parent}")


def _pages(site: Site) -> dict[str, str]:
    """Every file of the site: relative path -> text."""
    files: dict[str, str] = {"index.html": index_page(site), "cases.html": cases_page(site)}
    for impl in site.impls:
        files[f"impl/{impl.slug}.html"] = implementation_page(site, impl)
    for row in site.noted:
        files[f"case/{case_file(site.matrix.cases[row].id)}"] = case_page(site, row)
    for spec in site.specs:
        files[f"spec/{site.spec_slugs[spec]}.html"] = spec_page(site, spec)
    files.update(_badges(site))
    for name in ASSETS:
        files[f"assets/{name}"] = asset(name)
    files[MARK] = json.dumps(
        {
            "generator": f"flux-conformance {site.suite_version}",
            "suite_digest": site.digest,
            "edition": site.edition,
            "started": site.started,
            "command": site.command,
            "implementations": {
                impl.slug: {"impl": impl.column.spec, "label": impl.label, "verdict": impl.verdict}
                for impl in site.impls
            },
        },
        indent=1,
        ensure_ascii=True,
    )
    return files


def _badges(site: Site) -> dict[str, str]:
    from flux_conformance.runner.engine import Summary

    out = {}
    for impl in site.impls:
        results = list(impl.column.results)
        doc = badge(results, impl.summary.scope(), label=impl.column.spec)
        out[f"badges/{impl.slug}.json"] = json.dumps(doc, ensure_ascii=True)
        for spec, rows in site.specs.items():
            summary = Summary(
                suite_operations=len({site.matrix.cases[r].operation for r in rows}),
                suite_cases=len(rows),
            )
            for r in rows:
                summary.add(results[r])
            doc = badge(
                [results[r] for r in rows], summary.scope(), label=f"{impl.column.spec} {spec}"
            )
            out[f"badges/{impl.slug}/{site.spec_slugs[spec]}.json"] = json.dumps(
                doc, ensure_ascii=True
            )
    return out


def write_site(site: Site, directory: Path) -> int:
    """Write the site into ``directory`` (replacing a site there); the number of files."""
    check_target(directory)
    files = _pages(site)
    parent = directory.resolve().parent
    fresh = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=parent))
    try:
        for name, text in files.items():
            path = fresh / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        fresh.chmod(0o755)
        old = None
        if directory.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{directory.name}.old.", dir=parent))
            directory.replace(old / "site")
        try:
            fresh.replace(directory)
        except OSError:
            if old is not None:  # put the previous site back
                (old / "site").replace(directory)
            raise
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except OSError as exc:
        shutil.rmtree(fresh, ignore_errors=True)
        raise SiteError(f"--site {directory}: {exc}") from None
    return len(files)
