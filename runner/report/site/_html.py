"""The pieces every page of the site is made of: escaping, the page frame, tables, filters.

Everything shown passes through :func:`e`: ids, answers and messages come from case files and
implementations, and may hold ``<``, ``&``, quotes, control characters or lone surrogates.
The style sheet and the filter script are files of this package (``site.css``, ``site.js``),
copied into the site and linked relatively, so a page needs nothing from the network and
works from the disk as from any static host.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from typing import Any

from flux_conformance.runner.bounds import shown
from flux_conformance.runner.report import compact_json

__all__ = ["ASSETS", "e", "filters", "impl_links", "page", "pretty", "ticks"]

#: The package files copied into ``assets/`` of every site.
ASSETS = ("site.css", "site.js")

#: How each cell is named to a reader (the legend), in the order they are shown.
CELL_WORDS = {
    "pass": "passed",
    "xfail": "known departure (xfail)",
    "unchecked": "refused, category not checked",
    "fail": "failed",
    "errored": "errored",
    "xpass": "passed against its expectations (xpass)",
    "unsupported": "unsupported",
    "skipped": "skipped",
}


def e(text: object, limit: int | None = 20_000) -> str:
    """``text`` as HTML text or attribute value: visible escapes, cut at ``limit``."""
    return html.escape(shown(str(text), limit), quote=True)


def impl_links(impls: Iterable[Any]) -> str:
    """Links to the pages of ``impls`` (each with a ``slug`` and a ``label``), comma-separated."""
    return ", ".join(f"<a href='../impl/{i.slug}.html'>{e(i.label)}</a>" for i in impls)


def ticks(text: object, limit: int | None = 20_000) -> str:
    """Like :func:`e`, and a span in backticks (Markdown's code) shown as code."""
    return re.sub(r"`([^`]*)`", r"<code>\1</code>", e(text, limit))


def asset(name: str) -> str:
    """The text of one of the package's asset files."""
    folder = resources.files("flux_conformance.runner").joinpath("report").joinpath("site")
    return folder.joinpath(name).read_text(encoding="utf-8")


def pretty(value: Any, limit: int = 20_000) -> str:
    """A JSON value for a ``<pre>``: indented when short enough, else one cut line."""
    text = compact_json(value, limit)
    if len(text) < 400 or text.endswith("(cut)"):
        return text
    try:
        return shown(json.dumps(value, indent=1, ensure_ascii=False)[:limit])
    except (TypeError, ValueError):
        return text


def page(
    title: str, body: str, *, depth: int, about: str, crumbs: Sequence[tuple[str, str]]
) -> str:
    """A whole page: ``depth`` folders below the site's top (0 for ``index.html``).

    ``crumbs`` are (link, label) pairs leading to this page; ``about`` is the footer line (what
    was compared, when).  ``title`` and the labels are plain text.
    """
    up = "../" * depth
    trail = " &rsaquo; ".join(
        f'<a href="{up}{href}">{e(label, 200)}</a>' if href else e(label, 200)
        for href, label in crumbs
    )
    return (
        "<!doctype html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{e(title, 300)}</title>"
        f"<link rel='stylesheet' href='{up}assets/site.css'></head><body>"
        f"<header><a class='home' href='{up}index.html'>flux-conformance results</a>"
        f"<nav>{trail}</nav></header><main>"
        f"{body}</main><footer>{e(about, 2000)}</footer>"
        f"<script src='{up}assets/site.js'></script></body></html>\n"
    )


def cell(name: str, text: str = "", *, title: str = "") -> str:
    """A coloured outcome mark (``text`` defaults to the cell's name)."""
    tip = f" title='{e(title, 500)}'" if title else ""
    return f"<span class='c c-{e(name)}'{tip}>{e(text or name)}</span>"


def counts_text(counts: Mapping[str, int], order: Iterable[str]) -> str:
    """``32 passed, 10 xfail``: the non-zero counts, in ``order``."""
    return ", ".join(f"{counts[k]:,} {k}" for k in order if counts.get(k))


def filters(table: str, choices: Mapping[str, Sequence[tuple[str, str]]]) -> str:
    """A filter bar for the table with id ``table``: one select per key (value, label).

    Keys: ``spec``, ``op``, ``level`` (rows whose ``data-`` attribute equals the choice),
    ``outcome`` (rows where a shown cell has it) and ``impl`` (the columns shown).  The script
    (``site.js``) keeps the choice in the address's ``#``, so a filtered view can be linked.
    """
    names = {
        "spec": "spec",
        "op": "operation",
        "level": "level",
        "outcome": "outcome",
        "impl": "implementation",
    }
    parts = [f"<form class='filters' data-for='{e(table)}'>"]
    for key, options in choices.items():
        if len(options) < 2 and key != "impl":
            continue
        parts.append(f"<label>{names[key]} <select name='{key}' id='f-{table}-{key}'>")
        parts.append("<option value=''>all</option>")
        parts.extend(f"<option value='{e(v)}'>{e(label, 200)}</option>" for v, label in options)
        parts.append("</select></label>")
    parts.append("<output class='shown'></output></form>")
    return "".join(parts)


def legend(names: Iterable[str]) -> str:
    """The meaning of each cell shown."""
    return (
        "<p class='legend'>"
        + " ".join(
            cell(n, title=CELL_WORDS.get(n, n)) + f" {e(CELL_WORDS.get(n, n))}" for n in names
        )
        + "</p>"
    )
