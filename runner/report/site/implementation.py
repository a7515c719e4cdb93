"""A page per implementation: ``impl/<name>.html``.

What it is and how it got here (the adapter's own description), its version and verdict, its
counts per operation, then its departures grouped by the rule they break: the requirement as
the suite paraphrases it, cited by spec, section and revision, and under it each case, what
the implementation answered, what the case expects, and the reason its expectations file
gives.  When a release history was given for it, its releases side by side.
"""

from __future__ import annotations

import re
from collections import Counter

from flux_conformance.runner.engine import CaseResult, Outcome
from flux_conformance.runner.report import compact_json
from flux_conformance.runner.report.site._html import (
    cell,
    counts_text,
    e,
    filters,
    legend,
    page,
    ticks,
)
from flux_conformance.runner.report.site._model import NOTED, ORDER, Impl, Site, case_file
from flux_conformance.runner.report.site.history import answered
from flux_conformance.runner.report.site.index import about_line, verdict_mark
from flux_conformance.runner.verdicts import judged

__all__ = ["implementation_page", "known_reason", "scrubbed"]

#: A path to a YAML file: folders (each ending at a slash), then the file's name.
_YAML_PATH = re.compile(
    r"(?<![\w.])(?:[A-Za-z]:)?[/\\](?:[^\s:()'\"/\\]+[/\\])*([^\s:()'\"/\\]+\.ya?ml)"
)
_XFAIL = re.compile(r"^expected failure \((.*?)\): (.*); this run: (.*)$", re.S)


def scrubbed(text: str) -> str:
    """``text`` with every path to a YAML file cut to the file's name (no machine paths)."""
    return _YAML_PATH.sub(r"\1", text) if ".y" in text else text


def known_reason(result: CaseResult) -> tuple[str, str]:
    """(the expectations file's reason, what this run found) of an xfailed result.

    For other outcomes: ("", the result's reason).
    """
    found = _XFAIL.match(result.reason) if result.outcome is Outcome.XFAILED else None
    if found is None:
        return "", scrubbed(result.reason)
    return scrubbed(found.group(2)), scrubbed(found.group(3))


def answer_text(result: CaseResult, limit: int = 600) -> str:
    """What the implementation answered, as one line (``nothing`` when it was not asked)."""
    reply = result.reply
    return compact_json(reply.to_json(), limit) if reply is not None else "nothing (not asked)"


def _rule_head(site: Site, requirement_id: str) -> str:
    req = site.suite.requirements.get(requirement_id)
    if req is None:
        return f"<h3>{e(requirement_id or 'no requirement cited')}</h3>"
    revision = site.revision(req.spec)
    spec_page = f"../spec/{site.spec_slugs.get(req.spec, '')}.html#{e(req.id)}"
    return (
        f"<h3 id='rule-{e(req.id)}'>{e(req.keyword)}: {e(req.text)}</h3>"
        f"<p class='cite'><a href='{spec_page}'>{e(req.spec)}</a>, section "
        f"“{e(req.section)}”"
        + (f", revision {e(revision)}" if revision else "")
        + f" (requirement <code>{e(req.id)}</code>)</p>"
    )


def _departures(site: Site, impl: Impl) -> str:
    results = impl.column.results
    rows = [i for i, r in enumerate(results) if site.cells[i][impl.index] in NOTED]
    if not rows:
        return "<p>It departs from no case and leaves no refusal unchecked.</p>"
    by_rule: dict[str, list[int]] = {}
    for i in rows:
        case = results[i].case
        by_rule.setdefault(case.requirements[0] if case.requirements else "", []).append(i)
    out = [
        f"<p>{len(rows):,} cases, under {len(by_rule):,} rules; the rules that most cases "
        "depart from first.</p>",
        filters(
            f"dep-{impl.slug}",
            {
                "spec": sorted({(site.spec_of(results[i].case),) * 2 for i in rows}),
                "op": sorted({(results[i].case.operation,) * 2 for i in rows}),
                "level": sorted({(results[i].case.level,) * 2 for i in rows}),
                "outcome": [(c, c) for c in ORDER if c in NOTED],
            },
        ),
        legend(c for c in ORDER if c in NOTED),
        f"<table class='matrix' id='dep-{impl.slug}'><thead><tr><th>case</th><th>level</th>"
        "<th>outcome</th><th>answered</th><th>the case expects</th><th>why</th></tr></thead>",
    ]
    for rule, members in sorted(by_rule.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        out.append(
            f"<tbody><tr class='rule-row'><td colspan='6'>{_rule_head(site, rule)}</td></tr>"
        )
        for i in members:
            result = results[i]
            case = result.case
            name = site.cells[i][impl.index]
            known, found = known_reason(result)
            why = (
                f"<strong>known:</strong> {e(known, 1000)}<br><span class='reason'>"
                f"{e(found, 600)}</span>"
                if known
                else f"<span class='reason'>{e(found, 600)}</span>"
            )
            out.append(
                f"<tr data-spec='{e(site.spec_of(case))}' data-op='{e(case.operation)}' "
                f"data-level='{e(case.level)}'><td><a href='../case/{e(case_file(case.id))}'>"
                f"<code>{e(case.id)}</code></a></td><td>{e(case.level)}</td>"
                f"<td data-outcomes='{e(name)}'>{cell(name)}</td>"
                f"<td class='answer'><code>{e(answer_text(result, 160))}</code></td>"
                f"<td class='answer'><code>{e(compact_json(case.expected_json(), 160))}</code></td>"
                f"<td>{why}</td></tr>"
            )
        out.append("</tbody>")
    out.append("</table>")
    return "".join(out)


def _totals(site: Site, impl: Impl) -> str:
    out = [
        "<table class='matrix'><thead><tr><th>spec</th><th>operation</th><th>verdict</th>"
        + "".join(f"<th>{e(c)}</th>" for c in ORDER)
        + "</tr></thead><tbody>"
    ]
    folded = []
    for spec, op, rows in site.matrix.groups():
        counts = site.counts(impl, rows)
        if counts.get("unsupported", 0) + counts.get("skipped", 0) == len(rows):
            folded.append(op)
            continue
        word = verdict_mark(str(judged(site.outcome_counts(impl, rows))))
        out.append(
            f"<tr><td>{e(spec)}</td><td>{e(op)}</td><td>{word}</td>"
            + "".join(
                f"<td class='n'>{cell(c, f'{counts[c]:,}') if counts.get(c) else ''}</td>"
                for c in ORDER
            )
            + "</tr>"
        )
    out.append("</tbody></table>")
    if folded:
        out.append(
            f"<p>Not run ({len(folded)} operations: unsupported, or every case skipped): "
            + ", ".join(f"<code>{e(op)}</code>" for op in folded)
            + ".</p>"
        )
    return "".join(out)


def _releases(site: Site, impl: Impl) -> str:
    history = site.history_of(impl)
    if history is None:
        return ""
    out = [
        "<h2 id='releases'>Releases side by side</h2>",
        "<p class='lead'>The same column run once per release "
        f"(<code>{e(history.data.get('command', ''))}</code>, "
        f"{e(history.data.get('generated', ''))}, edition {e(history.data.get('edition', ''))}); "
        "each cell: passed / xfail / unsupported, then other outcomes.</p>",
    ]
    for series in history.series():
        runs = series["runs"]
        if not runs:
            continue
        out.append(f"<h3>{ticks(series['title'])}</h3><p>{ticks(series['how'])}</p>")
        ops = sorted({op for r in runs for op in r["totals"]})
        out.append(
            "<table class='matrix'><thead><tr><th>operation</th>"
            + "".join(f"<th>{e(r['release'])}</th>" for r in runs)
            + "</tr></thead><tbody>"
        )
        for op in ops:
            per = [Counter(r["totals"].get(op, {})) for r in runs]
            if not any(answered(c) for c in per):
                continue
            out.append(f"<tr><td>{e(op)}</td>")
            for counts in per:
                head = " / ".join(str(counts.get(k, 0)) for k in ("pass", "xfail", "unsupported"))
                rest = counts_text(counts, ("fail", "errored", "xpass", "unchecked", "skipped"))
                out.append(
                    f"<td class='n'>{e(head)}"
                    + (f"<br><small>{e(rest)}</small>" if rest else "")
                    + "</td>"
                )
            out.append("</tr>")
        out.append(
            "<tr><td>verdict</td>"
            + "".join(
                f"<td><small>{e(r['problem'] or r['verdict'], 400)}</small></td>" for r in runs
            )
            + "</tr></tbody></table>"
        )
        changed = [c for c in history.data["changes"] if c["series"] == series["kind"]]
        out.append(
            f"<p>{len(changed):,} cases changed their outcome or answer between these releases"
            + (
                "; each case's page says in which release: "
                + ", ".join(
                    f"<a href='../case/{e(case_file(c['case']))}'><code>{e(c['case'])}</code></a>"
                    f" ({e(', '.join(c['changed_in']))})"
                    for c in changed[:40]
                )
                + (" …" if len(changed) > 40 else "")
                if changed
                else ""
            )
            + ".</p>"
        )
    return "".join(out)


def implementation_page(site: Site, impl: Impl) -> str:
    """``impl/<slug>.html``."""
    column = impl.column
    body = [f"<h1>{e(impl.label)}</h1>"]
    if impl.description:
        body.append(f"<p class='lead'>{e(impl.description, 3000)}</p>")
    body.append(
        "<dl class='facts'>"
        f"<dt>implementation</dt><dd><code>--impl {e(column.spec)}</code></dd>"
        f"<dt>name</dt><dd>{e(column.name)}</dd>"
        f"<dt>version</dt><dd>{e(column.version or '(it gives none)')}</dd>"
        + (f"<dt>run with</dt><dd>{e(scrubbed(column.note), 2000)}</dd>" if column.note else "")
        + f"<dt>verdict</dt><dd>{verdict_mark(impl.word)}{e(impl.verdict[len(impl.word) :])}</dd>"
        f"<dt>badge</dt><dd><a href='../badges/{impl.slug}.json'>badges/{impl.slug}.json</a> "
        "(a shields.io endpoint; one per spec beside it)</dd>"
        "</dl>"
    )
    body.append("<h2>Per operation</h2>")
    body.append(_totals(site, impl))
    body.append(_releases(site, impl))
    body.append("<h2>Departures, by the rule they break</h2>")
    body.append(_departures(site, impl))
    crumbs = [("index.html", "results"), ("", impl.label)]
    return page(
        f"{impl.label}: flux-conformance",
        "".join(body),
        depth=1,
        about=about_line(site),
        crumbs=crumbs,
    )
