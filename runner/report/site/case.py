"""A page per noted case: ``case/<id>.html``.

Every case that some implementation departs on or leaves unchecked has one.  It shows the
input; what the spec requires and why (each requirement the case cites, by spec, section and
revision; the case's description; for an open point, the readings the text permits); then
every implementation's answer side by side, with its outcome, the reading it takes, the
difference from the expected outcome and the reason its expectations file gives.  This is the
page a spec author links to when a sentence is ambiguous.  Where a release history was given,
the releases in which an answer changed.
"""

from __future__ import annotations

from flux_conformance.runner.cases import Case
from flux_conformance.runner.report import compact_json
from flux_conformance.runner.report.site._html import cell, e, impl_links, page, pretty, ticks
from flux_conformance.runner.report.site._model import Site
from flux_conformance.runner.report.site.implementation import answer_text, known_reason, scrubbed
from flux_conformance.runner.report.site.index import about_line

__all__ = ["case_page", "describe_expected"]


def describe_expected(case: Case) -> list[str]:
    """Each permitted outcome in words: ``output [3]``, ``error `syntax```."""
    return [
        f"error {x.value}" if x.kind == "error" else f"output {compact_json(x.value, 300)}"
        for x in case.expected
    ]


def _requirements(site: Site, case: Case) -> str:
    out = []
    for rid in case.requirements:
        req = site.suite.requirements.get(rid)
        if req is None:
            out.append(f"<li><code>{e(rid)}</code></li>")
            continue
        revision = site.revision(req.spec)
        out.append(
            f"<li><blockquote><strong>{e(req.keyword)}</strong>: {e(req.text)}</blockquote>"
            f"<span class='cite'><a href='../spec/{site.spec_slugs.get(req.spec, '')}.html#"
            f"{e(req.id)}'>{e(req.spec)}</a>, section “{e(req.section)}”"
            + (f", revision {e(revision)}" if revision else "")
            + f" · <code>{e(req.id)}</code> (paraphrased)</span></li>"
        )
    return "<ul class='rule'>" + "".join(out) + "</ul>" if out else "<p>No requirement cited.</p>"


def _answers(site: Site, row: int) -> str:
    case = site.matrix.cases[row]
    readings = len(case.expected) > 1 and site.reading_of is not None
    out = [
        "<table class='matrix answers'><thead><tr><th>implementation</th><th>outcome</th>"
        + ("<th>reading taken</th>" if readings else "")
        + "<th>answer</th><th>against the expected outcome</th></tr></thead><tbody>"
    ]
    unsupported = []
    for impl in site.impls:
        result = site.result(impl, row)
        name = site.cells[row][impl.index]
        if name == "unsupported":
            unsupported.append(impl)
            continue
        known, found = known_reason(result)
        diff = scrubbed(result.diff) if result.diff else ""
        against = ""
        if known:
            against += f"<p><strong>known:</strong> {e(known, 2000)}</p>"
        if found and name != "pass":
            against += f"<p class='reason'>{e(found, 2000)}</p>"
        if diff:
            against += f"<pre>{e(diff, 5000)}</pre>"
        taken = f"<td>{ticks(site.reading(impl, row), 500)}</td>" if readings else ""
        out.append(
            f"<tr><td><a href='../impl/{impl.slug}.html'>{e(impl.label)}</a></td>"
            f"<td>{cell(name)}</td>{taken}"
            f"<td class='answer'><pre>{e(answer_text(result, 5000))}</pre></td>"
            f"<td>{against}</td></tr>"
        )
    out.append("</tbody></table>")
    if unsupported:
        out.append(
            "<p>Unsupported (the operation is not one the implementation offers): "
            + impl_links(unsupported)
            + ".</p>"
        )
    return "".join(out)


def _history(site: Site, case: Case) -> str:
    out = []
    for impl in site.impls:
        history = site.history_of(impl)
        if history is None:
            continue
        for change in history.changes_of(case.id):
            series = next(
                (s for s in history.series() if s["kind"] == change["series"]), {"title": ""}
            )
            out.append(
                f"<h3>{e(impl.column.spec)}: {ticks(series['title'])}</h3>"
                f"<p>Changed in {e(', '.join(change['changed_in']))}.</p>"
                "<table class='matrix'><thead><tr><th>release</th><th>outcome</th>"
                "<th>answer</th></tr></thead><tbody>"
            )
            for release, outcome in change["outcomes"].items():
                mark = " ◀ changed" if release in change["changed_in"] else ""
                out.append(
                    f"<tr><td>{e(release)}{e(mark)}</td><td>{cell(str(outcome))}</td>"
                    f"<td class='answer'><code>{e(change['answers'].get(release, ''), 600)}"
                    "</code></td></tr>"
                )
            out.append("</tbody></table>")
    if not out:
        return ""
    return "<h2>Across releases</h2>" + "".join(out)


def case_page(site: Site, row: int) -> str:
    """``case/<id>.html``."""
    case = site.matrix.cases[row]
    spec = site.spec_of(case)
    body = [f"<h1><code>{e(case.id)}</code></h1>", f"<p class='lead'>{e(case.description)}</p>"]
    body.append(
        "<dl class='facts'>"
        f"<dt>operation</dt><dd><code>{e(case.operation)}</code> of "
        f"<a href='../spec/{site.spec_slugs[spec]}.html'>{e(spec)}</a></dd>"
        f"<dt>level</dt><dd>{e(case.level)}</dd>"
        f"<dt>edition</dt><dd>{e(case.edition or 'every edition')}</dd>"
        f"<dt>written in</dt><dd><code>{e(site.location(case))}</code></dd>"
        + (f"<dt>tags</dt><dd>{e(', '.join(case.tags))}</dd>" if case.tags else "")
        + "</dl>"
    )
    body.append("<h2>What the spec requires</h2>")
    body.append(_requirements(site, case))
    expected = describe_expected(case)
    if len(expected) > 1:
        body.append(
            "<p>The text leaves room here: each of these readings conforms.</p><ol>"
            + "".join(f"<li><code>{e(x)}</code></li>" for x in expected)
            + "</ol>"
        )
    body.append("<h2>Input</h2>")
    body.append(f"<pre>{e(pretty(case.input))}</pre>")
    body.append("<h2>Expected</h2>")
    body.append(f"<pre>{e(pretty(case.expected_json()))}</pre>")
    body.append("<h2>Every implementation's answer</h2>")
    body.append(_answers(site, row))
    body.append(_history(site, case))
    crumbs = [("index.html", "results"), ("cases.html", "cases"), ("", case.id)]
    return page(
        f"{case.id}: flux-conformance",
        "".join(body),
        depth=1,
        about=about_line(site),
        crumbs=crumbs,
    )
