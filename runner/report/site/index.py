"""The site's front page and its list of noted cases.

``index.html``: what was compared (suite version and digest, edition, when, the command), each
implementation's verdict with its badge, the chart, and the matrix of verdicts per spec and
operation, with filters.  ``cases.html``: every case some implementation departs on or left
unchecked, one row each with every implementation's cell, with filters, each linking to the
case's page.
"""

from __future__ import annotations

from flux_conformance.runner.report.site._html import counts_text as cells_text
from flux_conformance.runner.report.site._html import e, filters, legend, page
from flux_conformance.runner.report.site._model import ORDER, Site, case_file
from flux_conformance.runner.report.site.chart import stacked_chart
from flux_conformance.runner.verdicts import counts_text, judged

__all__ = ["cases_page", "index_page", "verdict_mark"]


def verdict_mark(word: str) -> str:
    """A verdict's opening words, coloured by what they say."""
    return f"<span class='v v-{e(word.split(maxsplit=1)[0])}'>{e(word)}</span>"


def about_line(site: Site) -> str:
    """The footer of every page: what was compared, and when."""
    digest = site.digest[:12]
    return (
        f"flux-conformance {site.suite_version} (cases {digest}), edition {site.edition}, "
        f"{len(site.matrix.cases):,} cases, run {site.started}"
    )


def _facts(site: Site) -> str:
    return (
        "<dl class='facts'>"
        f"<dt>suite</dt><dd>flux-conformance {e(site.suite_version)}, cases digest "
        f"<code>{e(site.digest)}</code></dd>"
        f"<dt>edition</dt><dd>{e(site.edition)} (the revision of each spec the cases follow)</dd>"
        f"<dt>cases</dt><dd>{len(site.matrix.cases):,} of the edition's "
        f"{site.suite_size[1]:,}</dd>"
        f"<dt>run</dt><dd>{e(site.started)}</dd>"
        f"<dt>command</dt><dd><code>{e(site.command)}</code></dd>"
        "</dl>"
    )


def index_page(site: Site) -> str:
    """``index.html``."""
    impls = site.impls
    body = ["<h1>Conformance results</h1>"]
    body.append(
        "<p class='lead'>Every implementation run over the same cases of the Flux RFCs and "
        "Slurm's <code>--extra</code> constraints; each held to the expectations file that "
        "records its known departures.</p>"
    )
    body.append(_facts(site))
    body.append("<h2>Verdicts</h2><ul class='verdicts'>")
    body.extend(
        f"<li><a href='impl/{impl.slug}.html'><strong>{e(impl.label)}</strong></a>: "
        f"{verdict_mark(impl.word)}{e(impl.verdict[len(impl.word) :])} "
        f"<a class='badge' href='badges/{impl.slug}.json'>badge</a></li>"
        for impl in impls
    )
    body.append("</ul>")
    total = len(site.matrix.cases)
    bars = [
        (impl.label, f"impl/{impl.slug}.html", site.counts(impl, range(total))) for impl in impls
    ]
    body.append("<h2>Outcomes</h2><div class='chart'>")
    body.append(stacked_chart(bars, total=total, what=f"the {total:,} cases compared"))
    body.append("</div>")
    body.append(_matrix(site))
    noted = len(site.noted)
    body.append(
        f"<p><a href='cases.html'>The {noted:,} cases</a> that some implementation departs on "
        "or leaves unchecked each have a page with every answer side by side.</p>"
    )
    title = "flux-conformance results"
    return page(title, "".join(body), depth=0, about=about_line(site), crumbs=[("", "results")])


def _matrix(site: Site) -> str:
    impls = site.impls
    groups = site.matrix.groups()
    out = ["<h2>By spec and operation</h2>"]
    out.append(
        filters(
            "by-operation",
            {
                "spec": [(s, s) for s in site.specs],
                "op": [(op, op) for _, op, _ in groups],
                "impl": [(i.slug, i.label) for i in impls],
                "outcome": [(c, c) for c in ORDER],
            },
        )
    )
    out.append(
        "<div class='scroll'><table class='matrix' id='by-operation'><thead><tr><th>spec</th>"
        "<th>operation</th>"
    )
    out.extend(
        f"<th class='impl' data-impl='{i.slug}'><a href='impl/{i.slug}.html'>{e(i.label)}</a></th>"
        for i in impls
    )
    out.append("</tr></thead><tbody>")
    for spec, op, rows in groups:
        out.append(
            f"<tr data-spec='{e(spec)}' data-op='{e(op)}'>"
            f"<td><a href='spec/{site.spec_slugs[spec]}.html'>{e(spec)}</a></td><td>{e(op)}</td>"
        )
        for impl in impls:
            cells = site.counts(impl, rows)
            word = str(judged(site.outcome_counts(impl, rows)))
            present = " ".join(sorted(cells))
            detail = counts_text(site.outcome_counts(impl, rows))
            if cells.get("unsupported", 0) + cells.get("skipped", 0) == len(rows):
                shown = "<span class='c c-unsupported'>unsupported</span>"
            else:
                rest = cells_text(cells, [c for c in ORDER if c != "pass"])
                shown = (
                    f"{verdict_mark(word)}<small>{cells.get('pass', 0)}/{len(rows)} pass"
                    + (f"; {e(rest)}" if rest else "")
                    + "</small>"
                )
            out.append(
                f"<td class='verdict' data-impl='{impl.slug}' data-outcomes='{e(present)}' "
                f"title='{e(detail)}'>{shown}</td>"
            )
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def cases_page(site: Site) -> str:
    """``cases.html``: the noted cases, with filters."""
    impls = site.impls
    cases = site.matrix.cases
    body = [f"<h1>Cases where an implementation departs ({len(site.noted):,})</h1>"]
    body.append(
        "<p class='lead'>Each row is a case that some implementation fails, departs on as its "
        "expectations file records (xfail), or refuses without saying which kind of refusal "
        "(unchecked). Choose an implementation and an outcome to list its departures.</p>"
    )
    ops = sorted({cases[i].operation for i in site.noted})
    levels = sorted({cases[i].level for i in site.noted})
    body.append(
        filters(
            "cases",
            {
                "spec": [(s, s) for s in site.specs],
                "op": [(op, op) for op in ops],
                "level": [(lv, lv) for lv in levels],
                "impl": [(i.slug, i.label) for i in impls],
                "outcome": [(c, c) for c in ORDER if c != "pass"],
            },
        )
    )
    body.append(legend(ORDER))
    body.append(
        "<div class='scroll'><table class='matrix' id='cases'><thead><tr><th>case</th>"
        "<th>level</th>"
    )
    body.extend(f"<th class='impl' data-impl='{i.slug}'>{e(i.label)}</th>" for i in impls)
    body.append("</tr></thead><tbody>")
    for row in site.noted:
        case = cases[row]
        body.append(
            f"<tr data-spec='{e(site.spec_of(case))}' data-op='{e(case.operation)}' "
            f"data-level='{e(case.level)}'><td><a href='case/{e(case_file(case.id))}'>"
            f"<code>{e(case.id)}</code></a></td><td>{e(case.level)}</td>"
        )
        for impl in impls:
            name = site.cells[row][impl.index]
            body.append(
                f"<td data-impl='{impl.slug}' data-outcomes='{e(name)}'>"
                f"<span class='c c-{e(name)}'>{e(name)}</span></td>"
            )
        body.append("</tr>")
    body.append("</tbody></table></div>")
    crumbs = [("index.html", "results"), ("", "cases")]
    return page(
        "Departures: flux-conformance",
        "".join(body),
        depth=0,
        about=about_line(site),
        crumbs=crumbs,
    )
