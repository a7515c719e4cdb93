"""The comparison matrix: Markdown, JSON, and the HTML page driven in a real headless browser."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess

import pytest
from support import MINI

from flux_conformance import reference
from flux_conformance.runner.cases import load_suite
from flux_conformance.runner.cli import main, make_adapter
from flux_conformance.runner.report.matrix import (
    chart_svg,
    matrix_html,
    matrix_markdown,
    pass_rates,
)
from flux_conformance.runner.tools.compare import run_matrix


@pytest.fixture
def matrix(mini_suite):
    return run_matrix(
        mini_suite,
        mini_suite.cases,
        ["reference", "python:inprocess_fakes:Wrong", "python:inprocess_fakes:Raising"],
        make_adapter=make_adapter,
        expectations={},
    )


def test_markdown_totals_and_rows(matrix):
    text = matrix_markdown(matrix)
    assert "| RFC 22 | idset.decode | 5/5 | 0/5 (5 fail) | 0/5 (5 errored) |" in text
    assert "| `mini.range` | must | pass | **fail** | **errored** |" in text
    assert text.count("| `mini.") == 5


def test_markdown_hides_rows_that_pass_everywhere(mini_suite):
    m = run_matrix(
        mini_suite,
        mini_suite.cases,
        ["reference", "python:inprocess_fakes:good"],
        make_adapter=make_adapter,
        expectations={},
    )
    assert "| `mini." not in matrix_markdown(m)
    assert matrix_markdown(m, all_rows=True).count("| `mini.") == 5


def test_cli_compare_writes_both(tmp_path, capsys):
    md, page = tmp_path / "m.md", tmp_path / "m.html"
    code = main(
        [
            "compare",
            "--cases",
            str(MINI),
            "--impl",
            "reference",
            "--impl",
            "python:inprocess_fakes:Wrong",
            "--markdown",
            str(md),
            "--html",
            str(page),
        ]
    )
    assert code == 1  # Wrong does not conform
    assert "0/5 (5 fail)" in md.read_text()
    assert "mini.leading-zero" in page.read_text()
    code = main(["compare", "--cases", str(MINI), "--impl", "ruby:nope"])
    assert code == 2


def test_expectations_per_implementation(tmp_path, capsys):
    exp = tmp_path / "e.yaml"
    exp.write_text("expectations:\n  - id: 'mini.*'\n    status: xfail\n    reason: returns []\n")
    code = main(
        [
            "compare",
            "--cases",
            str(MINI),
            "--impl",
            "python:inprocess_fakes:Wrong",
            "--expectations",
            f"python:inprocess_fakes:Wrong={exp}",
        ]
    )
    out, _ = capsys.readouterr()
    assert code == 0
    assert "0/5 (5 xfail)" in out


def test_html_embeds_data_safely(matrix):
    page = matrix_html(matrix)
    data = re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
    assert data is not None
    loaded = json.loads(data.group(1))
    assert loaded["columns"][0]["label"].startswith("flux-conformance reference")
    assert loaded["rows"][0]["cells"][1]["cell"] == "fail"
    assert "</script" not in data.group(1)


BROWSER = (
    shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
)

# Injected after the page's own script: it uses the page as a person would (choose a filter,
# click a cell) and writes what it saw into the DOM, which the browser then dumps.
DRIVER = """
<script>
(function () {
  const seen = {};
  seen.totals = document.querySelector("#totals tbody tr").textContent;
  const rows = () => document.querySelectorAll("#matrix tbody tr[data-id]").length;
  seen.initial = rows();
  const outcome = document.getElementById("f-outcome");
  outcome.value = "errored";
  outcome.dispatchEvent(new Event("change"));
  seen.errored = rows();
  outcome.value = "";
  outcome.dispatchEvent(new Event("change"));
  const level = document.getElementById("f-level");
  level.value = "clarification";
  level.dispatchEvent(new Event("change"));
  seen.clarification = rows();
  const cell = document.querySelector("tr[data-id='mini.degenerate'] td[data-column='1']");
  cell.click();
  seen.detailShown = document.getElementById("detail").style.display;
  seen.actual = document.getElementById("d-actual").textContent;
  seen.expected = document.getElementById("d-expected").textContent;
  seen.input = document.getElementById("d-input").textContent;
  const out = document.createElement("pre");
  out.id = "driver-result";
  out.textContent = JSON.stringify(seen);
  document.body.append(out);
})();
</script>
"""


def test_html_page_in_a_real_browser(matrix, tmp_path):
    if BROWSER is None:
        if os.environ.get("FLUX_CONFORMANCE_REQUIRE_BROWSER"):
            pytest.fail("no chromium on PATH, and this run requires the browser test")
        pytest.skip("no chromium on PATH")
    page = matrix_html(matrix).replace("</body>", DRIVER + "</body>")
    path = tmp_path / "matrix.html"
    path.write_text(page, encoding="utf-8")
    proc = subprocess.run(
        [
            BROWSER,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--dump-dom",
            path.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    found = re.search(r'<pre id="driver-result">(.*?)</pre>', proc.stdout, re.S)
    assert found is not None, proc.stderr[-2000:]
    seen = json.loads(html.unescape(found.group(1)))
    assert seen["totals"] == "idset.decode5/50/5 (5 fail)0/5 (5 errored)"
    assert seen["initial"] == 5
    assert seen["errored"] == 5
    assert seen["clarification"] == 1
    assert seen["detailShown"] == "block"
    assert seen["input"] == '"3-3"'
    assert seen["actual"] == '{"output": []}'
    assert '"one_of"' in seen["expected"]


def test_clarify_report_shows_readings(capsys):
    code = main(["clarify", "--cases", str(MINI), "--impl", "python:inprocess_fakes:Wrong"])
    out, _ = capsys.readouterr()
    assert code == 0
    assert "## RFC 22" in out
    assert '- `mini.degenerate` (idset.decode), input `"3-3"`' in out
    assert "  - permitted reading 1: output `[3]`" in out
    assert "  - permitted reading 2: error `syntax`" in out
    # The reference refuses "3-3"; the fake answers [] which is neither reading.
    assert (
        f"  - flux-conformance reference {reference.__version__}: reading 2: error `syntax`" in out
    )
    assert '  - Wrong: none of the permitted readings: `{"output": []}`' in out
    # Only clarification cases appear.
    assert "mini.range" not in out


def test_clarify_rst(capsys):
    code = main(["clarify", "--cases", str(MINI), "--format", "rst"])
    out, _ = capsys.readouterr()
    assert code == 0
    assert "RFC 22\n======" in out or "RFC 22\n------" in out
    assert "``mini.degenerate``" in out


# -- the chart, and folding what an implementation does not support ----------------------------


def test_chart_shows_pass_rates_per_spec_and_implementation(matrix):
    svg = chart_svg(matrix)
    bars = re.findall(
        r'<rect class="bar" data-spec="([^"]+)" data-impl="(\d)" data-rate="([\d.]+)"', svg
    )
    # The reference passes everything; Wrong and Raising answer (wrongly) and pass nothing.
    assert bars == [("RFC 22", "0", "1.0000"), ("RFC 22", "1", "0.0000"), ("RFC 22", "2", "0.0000")]
    assert "100% (5/5)" in svg
    assert "http" not in svg.replace("http://www.w3.org/2000/svg", "")


def test_unsupported_operations_fold_into_one_cell(mini_suite):
    m = run_matrix(
        mini_suite,
        mini_suite.cases,
        ["reference", "python:inprocess_fakes:Unsupporting"],
        make_adapter=make_adapter,
        expectations={},
    )
    assert pass_rates(m) == [("RFC 22", [(5, 5), (0, 0)])]
    assert "unsupported</text>" in chart_svg(m)
    assert 'class="bar" data-spec="RFC 22" data-impl="1"' not in chart_svg(m)


def _png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and raw RGB(A) rows of an 8-bit, non-interlaced PNG (what Chromium writes)."""
    import struct
    import zlib

    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks += body
        pos += 12 + length
    assert header is not None
    width, height, depth, colour, _, _, interlace = header
    assert (depth, interlace) == (8, 0)
    assert colour in (2, 6)
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(chunks)
    stride = width * channels
    rows: list[bytes] = []
    previous = bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for x in range(stride):
            left = line[x - channels] if x >= channels else 0
            up = previous[x]
            corner = previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + left) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + up) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                guess = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[x] = (line[x] + guess) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, channels, rows


def test_chart_renders_in_a_real_browser(matrix, tmp_path):
    if BROWSER is None:
        if os.environ.get("FLUX_CONFORMANCE_REQUIRE_BROWSER"):
            pytest.fail("no chromium on PATH, and this run requires the browser test")
        pytest.skip("no chromium on PATH")
    path = tmp_path / "matrix.html"
    path.write_text(matrix_html(matrix), encoding="utf-8")
    shot = tmp_path / "shot.png"
    proc = subprocess.run(
        [
            BROWSER,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--hide-scrollbars",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--window-size=900,500",
            f"--screenshot={shot}",
            path.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert shot.is_file(), proc.stderr[-2000:]
    width, channels, rows = _png_pixels(shot.read_bytes())
    # The reference's bar is a 420-pixel run of its colour (#1b7837) near the top of the page.
    green = bytes((0x1B, 0x78, 0x37))
    longest = 0
    for row in rows:
        run = 0
        for x in range(width):
            if row[x * channels : x * channels + 3] == green:
                run += 1
                longest = max(longest, run)
            else:
                run = 0
    assert longest >= 400, f"no rendered bar found (longest run of the bar colour: {longest})"


def test_departures_and_findings_name_the_rule_they_break(matrix, mini_suite, capsys):
    text = matrix_markdown(matrix)
    rule = mini_suite.rule(mini_suite.by_id()["mini.range"])
    assert rule.startswith("RFC 22, ")
    assert rule.endswith("(mini.ascending)")
    assert f"  The rule: {rule}" in text
    # The shipped findings name the rule of each case too.
    assert main(["clarify"]) == 0
    report = capsys.readouterr().out
    assert "## Findings recorded for real implementations" in report
    assert "  - the rule: RFC 29, " in report


def test_compare_reports_record_suite_edition_filters_and_date(capsys, tmp_path):
    page = tmp_path / "m.html"
    argv = ["compare", "--cases", str(MINI), "--exclude-tag", "range", "--html", str(page)]
    assert main(argv) == 0
    text = capsys.readouterr().out
    digest = load_suite(MINI).digest()[:12]
    line = next(x for x in text.splitlines() if x.startswith("flux-conformance "))
    assert f"(cases {digest}), edition 2026-08-13, 4 cases; exclude_tags range, run 20" in line
    assert f"(cases {digest})" in page.read_text()


def test_clarify_says_which_edition_an_open_point_belongs_to(capsys):
    code = main(["clarify"])
    out, _ = capsys.readouterr()
    assert code == 0
    assert (
        "- `R.intersect.instance-local-property-may-go` (R.intersect, edition `2026-08-13` only)"
        in out
    )
