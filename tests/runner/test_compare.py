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

import reference
from runner.cli import main, make_adapter
from runner.report.matrix import matrix_html, matrix_markdown
from runner.tools.compare import run_matrix


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
    assert code == 0
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
    assert f"  - flux-conformance reference {reference.__version__}: reading 2: error `syntax`" in out
    assert '  - Wrong: none of the permitted readings: `{"output": []}`' in out
    # Only clarification cases appear.
    assert "mini.range" not in out


def test_clarify_rst(capsys):
    code = main(["clarify", "--cases", str(MINI), "--format", "rst"])
    out, _ = capsys.readouterr()
    assert code == 0
    assert "RFC 22\n======" in out or "RFC 22\n------" in out
    assert "``mini.degenerate``" in out
