"""A page per spec: ``spec/<name>.html``.

The revision the edition follows, each implementation's verdict on the spec's cases and the
chart of them, then every requirement (as the suite paraphrases it, with its section) with the
cases that test it and how each implementation fares on those, and the spec's open points:
the clarification cases, the readings the text permits, and the reading each implementation
takes.
"""

from __future__ import annotations

from flux_conformance.runner.report.site._html import cell, e, impl_links, page, ticks
from flux_conformance.runner.report.site._model import NOTED, Site, case_file
from flux_conformance.runner.report.site.case import describe_expected
from flux_conformance.runner.report.site.chart import stacked_chart
from flux_conformance.runner.report.site.index import about_line, verdict_mark
from flux_conformance.runner.verdicts import judged, verdict_line

__all__ = ["spec_page"]


def _case_link(site: Site, case_id: str) -> str:
    if case_id in site.noted_set:
        return f"<a href='../case/{e(case_file(case_id))}'><code>{e(case_id)}</code></a>"
    return f"<code>{e(case_id)}</code>"


def _requirements(site: Site, spec: str, rows: list[int]) -> str:
    cases = site.matrix.cases
    testing: dict[str, list[int]] = {}
    for row in rows:
        for rid in cases[row].requirements:
            testing.setdefault(rid, []).append(row)
    answering = [
        impl
        for impl in site.impls
        if any(site.cells[r][impl.index] not in ("unsupported", "skipped") for r in rows)
    ]
    out = []
    for req in site.requirements_of(spec):
        tested = testing.get(req.id, [])
        out.append(
            f"<div class='rule' id='{e(req.id)}'><blockquote><strong>{e(req.keyword)}</strong>: "
            f"{e(req.text)}</blockquote><p class='cite'>section “{e(req.section)}” · "
            f"<code>{e(req.id)}</code></p>"
        )
        if req.untestable:
            out.append(f"<p class='reason'>Not tested: {e(req.untestable)}</p></div>")
            continue
        if not tested:
            out.append("<p class='reason'>No case of this comparison tests it.</p></div>")
            continue
        out.append(f"<p>Tested by {len(tested):,} case{'s' if len(tested) != 1 else ''}.</p>")
        out.append("<table class='matrix'><tbody>")
        for impl in answering:
            counts = site.counts(impl, tested)
            if counts.get("unsupported", 0) + counts.get("skipped", 0) == len(tested):
                continue
            unsupported = counts.get("unsupported", 0)
            departs = [cases[r].id for r in tested if site.cells[r][impl.index] in NOTED]
            out.append(
                f"<tr><td><a href='../impl/{impl.slug}.html'>{e(impl.label)}</a></td>"
                f"<td class='n'>{counts.get('pass', 0)}/{len(tested)} pass"
                + (f"<br><small>{unsupported} unsupported</small>" if unsupported else "")
                + "</td><td>"
                + " ".join(
                    f"{cell(site.cells[r][impl.index])} {_case_link(site, cases[r].id)}"
                    for r in tested
                    if cases[r].id in departs
                )
                + "</td></tr>"
            )
        out.append("</tbody></table></div>")
    return "".join(out)


def _open_points(site: Site, rows: list[int]) -> str:
    cases = site.matrix.cases
    points = [r for r in rows if cases[r].level == "clarification"]
    if not points:
        return "<p>No open point: no case of this spec is at level clarification.</p>"
    out = []
    for row in points:
        case = cases[row]
        out.append(
            f"<h3>{_case_link(site, case.id)}</h3><p>{e(case.description)}</p>"
            f"<p>Input <code>{e(_input(case.input))}</code>; the text permits: "
            + "; ".join(
                f"reading {n}: <code>{e(x)}</code>"
                for n, x in enumerate(describe_expected(case), 1)
            )
            + "</p><table class='matrix'><tbody>"
        )
        for impl in site.impls:
            if site.cells[row][impl.index] in ("unsupported", "skipped"):
                continue
            taken = site.reading(impl, row)
            out.append(
                f"<tr><td><a href='../impl/{impl.slug}.html'>{e(impl.label)}</a></td>"
                f"<td>{cell(site.cells[row][impl.index])}</td><td>{ticks(taken, 500)}</td></tr>"
            )
        out.append("</tbody></table>")
    return "".join(out)


def _input(value: object) -> str:
    from flux_conformance.runner.report import compact_json

    return compact_json(value, 300)


def spec_page(site: Site, spec: str) -> str:
    """``spec/<slug>.html``."""
    rows = site.specs[spec]
    revision = site.revision(spec)
    body = [f"<h1>{e(spec)}</h1>"]
    body.append(
        f"<p class='lead'>{len(rows):,} cases of this comparison"
        + (
            f"; the text as of revision {e(revision)} (edition {e(site.edition)})"
            if revision
            else ""
        )
        + ".</p>"
    )
    body.append("<h2>Verdicts on this spec</h2><ul class='verdicts'>")
    from flux_conformance.runner.engine import Summary

    idle = []
    for impl in site.impls:
        cells = site.counts(impl, rows)
        if cells.get("unsupported", 0) + cells.get("skipped", 0) == len(rows):
            idle.append(impl)
            continue
        summary = Summary()
        for r in rows:
            summary.add(site.result(impl, r))
        counts = site.outcome_counts(impl, rows)
        word = str(judged(counts))
        body.append(
            f"<li><a href='../impl/{impl.slug}.html'><strong>{e(impl.label)}</strong></a>: "
            f"{verdict_mark(word)}{e(verdict_line(summary)[len(word) :])} "
            f"<a class='badge' href='../badges/{impl.slug}/{site.spec_slugs[spec]}.json'>badge</a>"
            "</li>"
        )
    body.append("</ul>")
    if idle:
        body.append(
            "<p>Not run on this spec (unsupported, or every case skipped): "
            + impl_links(idle)
            + ".</p>"
        )
    body.append("<div class='chart'>")
    bars = [
        (impl.label, f"impl/{impl.slug}.html", site.counts(impl, rows))
        for impl in site.impls
        if impl not in idle
    ]
    body.append(
        stacked_chart(bars, total=len(rows), what=f"the {len(rows):,} {spec} cases", depth=1)
    )
    body.append("</div><h2>Open points</h2>")
    body.append(_open_points(site, rows))
    body.append("<h2>Requirements, and the cases that test them</h2>")
    body.append(_requirements(site, spec, rows))
    crumbs = [("index.html", "results"), ("", spec)]
    return page(
        f"{spec}: flux-conformance", "".join(body), depth=1, about=about_line(site), crumbs=crumbs
    )
