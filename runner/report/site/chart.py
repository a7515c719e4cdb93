"""The site's chart: one stacked bar per implementation, drawn as inline SVG.

Every bar has the same denominator, the cases of the comparison (or of one spec, on a spec's
page), so bars can be compared by length: a case an implementation does not support is a
grey part of its bar, not a case left out.  The axes are labelled, the shares are written
beside the bars, and each part carries a tooltip with its count.  Drawn here, not by a
script, so the picture needs nothing but the page.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from flux_conformance.runner.report.site._html import CELL_WORDS, e

__all__ = ["stacked_chart"]

#: The parts of a bar, left to right, and their colours (those of the cell marks).
PARTS = (
    ("pass", "#2da44e"),
    ("xfail", "#d4a72c"),
    ("unchecked", "#54aeff"),
    ("fail", "#cf222e"),
    ("errored", "#8250df"),
    ("xpass", "#fa4549"),
    ("unsupported", "#d0d7de"),
    ("skipped", "#eaeef2"),
)


def stacked_chart(
    bars: Sequence[tuple[str, str, Counter[str]]], *, total: int, what: str, depth: int = 0
) -> str:
    """One bar per (label, link, cell counts); ``total`` is every bar's denominator.

    ``what`` names the denominator for the axis label (``the 1,922 cases compared``).
    ``depth`` is the page's depth in the site, for the links on the labels.
    """
    label_width, plot, bar, gap = 260, 560, 20, 8
    top, legend_rows = 30, 2
    height = top + len(bars) * (bar + gap) + 52 + legend_rows * 20
    width = label_width + plot + 90
    up = "../" * depth
    out = [
        f"<svg xmlns='http://www.w3.org/2000/svg' class='stacked' width='{width}' "
        f"height='{height}' viewBox='0 0 {width} {height}' role='img' font-size='12' "
        f"font-family='system-ui, sans-serif' aria-label='{e(f'share of {what} per outcome')}'>"
    ]
    out.append(
        f"<text x='{label_width - 8}' y='{top - 12}' text-anchor='end' font-weight='600'>"
        "implementation</text>"
    )
    for tick in range(0, 101, 25):
        x = label_width + plot * tick / 100
        bottom = top + len(bars) * (bar + gap)
        out.append(
            f"<line x1='{x:.1f}' y1='{top - 4}' x2='{x:.1f}' y2='{bottom}' stroke='#d0d7de' "
            "stroke-dasharray='2 3'/>"
        )
        out.append(
            f"<text x='{x:.1f}' y='{bottom + 14}' text-anchor='middle' "
            f"fill='#59636e'>{tick}%</text>"
        )
    axis_y = top + len(bars) * (bar + gap) + 32
    out.append(
        f"<text x='{label_width + plot / 2}' y='{axis_y}' text-anchor='middle' font-weight='600'>"
        f"share of {e(what)} (100% = {total:,} cases)</text>"
    )
    for row, (label, href, counts) in enumerate(bars):
        y = top + row * (bar + gap)
        name = e(label if len(label) <= 34 else label[:33] + "…", None)
        text = f"<text x='{label_width - 8}' y='{y + bar - 6}' text-anchor='end'>{name}</text>"
        out.append(f"<a href='{up}{e(href)}'>{text}</a>" if href else text)
        x = float(label_width)
        for part, colour in PARTS:
            n = counts.get(part, 0)
            if not n or not total:
                continue
            w = plot * n / total
            out.append(
                f"<rect class='part' data-part='{part}' x='{x:.2f}' y='{y}' width='{w:.2f}' "
                f"height='{bar}' fill='{colour}'><title>{name}: {n:,} "
                f"{e(CELL_WORDS[part])} of {total:,}</title></rect>"
            )
            x += w
        passed = counts.get("pass", 0)
        share = f"{passed / total:.0%}" if total else "-"
        out.append(
            f"<text x='{label_width + plot + 6}' y='{y + bar - 6}' fill='#1a7f37'>"
            f"{share} pass</text>"
        )
    legend_y = axis_y + 22
    x = 0.0
    line = 0
    for part, colour in PARTS:
        words = CELL_WORDS[part]
        step = 28 + 6.6 * len(words)
        if x + step > width:
            x, line = 0.0, line + 1
        y = legend_y + line * 20
        out.append(f"<rect x='{x:.1f}' y='{y - 10}' width='12' height='12' fill='{colour}'/>")
        out.append(f"<text x='{x + 16:.1f}' y='{y}'>{e(words)}</text>")
        x += step
    out.append("</svg>")
    return "".join(out)
