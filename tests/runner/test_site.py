"""The results site of ``compare --site``: its files, escaping, stable names, atomic writes,
and the pages driven in a real headless browser (filters, no console error, screenshots).

Set ``FLUX_CONFORMANCE_SCREENSHOTS=DIR`` to keep the screenshots the browser test takes.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from support import MINI, png_pixels

from flux_conformance.runner.adapters.factory import description
from flux_conformance.runner.cases import load_suite
from flux_conformance.runner.cli import main, make_adapter
from flux_conformance.runner.report.site import Site, SiteError, case_file, slug, write_site
from flux_conformance.runner.report.site.history import (
    gather,
    history_markdown,
    load_history,
    read_report,
)
from flux_conformance.runner.tools.clarify import reading_taken
from flux_conformance.runner.tools.compare import run_matrix

BROWSER = (
    shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
)

IMPLS = ["reference", "python:inprocess_fakes:Wrong", "python:inprocess_fakes:Hostile"]

HOSTILE_CASE = """
  - id: mini.odd:id/with<slash
    description: "</p><script>alert('description')</script> & \\u0007 bell"
    input: "</pre><img src=y onerror=alert(4)>"
    error: syntax
    requirements: [mini.ascending]
"""


@pytest.fixture
def hostile_suite(tmp_path):
    root = tmp_path / "cases"
    shutil.copytree(MINI, root)
    path = root / "rfc22" / "idset.decode.yaml"
    path.write_text(path.read_text() + HOSTILE_CASE.replace("<slash", "-slash"))
    return load_suite(root)


def _site(suite) -> Site:
    matrix = run_matrix(
        suite, suite.cases, IMPLS, make_adapter=make_adapter, expectations={}, about="mini"
    )
    return Site(
        matrix,
        suite,
        suite.editions.resolve(None),
        started="2026-01-01T00:00:00+00:00",
        command="flux-conformance compare <mini>",
        suite_size=(1, len(suite.cases)),
        descriptions={spec: description(spec) for spec in IMPLS},
        reading_of=lambda case, reply: reading_taken(case, reply, suite),
    )


@pytest.fixture
def written(hostile_suite, tmp_path) -> Path:
    target = tmp_path / "site"
    write_site(_site(hostile_suite), target)
    return target


def test_the_site_has_a_page_per_implementation_noted_case_and_spec(written):
    impls = sorted(p.name for p in (written / "impl").iterdir())
    assert impls == sorted(f"{slug(i)}.html" for i in IMPLS)
    assert "reference.html" in impls
    # Every case departs somewhere (Wrong answers [] to all), so each has a page.
    cases = {p.name for p in (written / "case").iterdir()}
    assert "mini.range.html" in cases
    assert case_file("mini.odd:id/with-slash") in cases
    assert (written / "spec" / "rfc-22.html").is_file()
    index = (written / "index.html").read_text()
    assert "impl/reference.html" in index
    assert "spec/rfc-22.html" in index
    for name in ("assets/site.css", "assets/site.js", "cases.html", "site.json"):
        assert (written / name).is_file(), name


def test_badges_are_shields_endpoints(written):
    ref = json.loads((written / "badges" / "reference.json").read_text())
    assert ref["schemaVersion"] == 1
    assert ref["message"] == "conforms: 4/4 must, 1/1 ops"
    wrong = json.loads((written / "badges" / f"{slug(IMPLS[1])}" / "rfc-22.json").read_text())
    assert wrong["color"] == "red"
    assert wrong["label"].endswith("RFC 22")


def test_verdicts_are_the_honest_words(written):
    index = (written / "index.html").read_text()
    assert re.search(r"reference 0\.\d+\.\d+</strong></a>: <span class='v v-conforms'>", index)
    # Wrong departs everywhere: never "conforms".
    wrong = (written / "impl" / f"{slug(IMPLS[1])}.html").read_text()
    assert "v-does'>does not conform</span>" in wrong


def test_every_hostile_text_is_escaped(written):
    for page in written.rglob("*.html"):
        text = page.read_text()
        scripts = re.findall(r"<script[^>]*>", text)
        assert all("src='" in s for s in scripts), (page, scripts)  # only the site's own file
        assert "<img" not in text
        assert "<b " not in text
        assert "\x00" not in text
        assert "\x07" not in text
        assert "\x1b" not in text
        assert not re.search(r"(src|href)=['\"]?(https?:)?//", text), page
    case = (written / "case" / case_file("mini.odd:id/with-slash")).read_text()
    assert "&lt;/pre&gt;&lt;img src=y onerror=alert(4)&gt;" in case
    assert "&lt;/p&gt;&lt;script&gt;alert(&#x27;description&#x27;)" in case
    assert "\\x07 bell" in case  # the control character shown as an escape


def test_case_page_shows_readings_requirement_and_every_answer(written):
    page = (written / "case" / "mini.degenerate.html").read_text()
    assert "each of these readings conforms" in page
    assert "reading 2: error <code>syntax</code>" in page  # the reference's reading
    assert "none of the permitted readings" in page  # Wrong's []
    assert "Ids appear in ascending order." in page
    assert "section “Implementation”" in page
    assert page.count("<tr><td><a href='../impl/") == len(IMPLS)  # every one answered


def test_slugs_are_stable_and_distinct():
    assert slug("flux-core") == "flux-core"
    assert slug("exec:./a b") != slug("exec:./a-b")
    assert slug("exec:./a b") == slug("exec:./a b")
    assert case_file("a:b/c") == "a_3ab_2fc.html"
    assert case_file("a_3ab") != case_file("a:b")


def test_an_existing_site_is_replaced_whole_and_a_foreign_folder_is_refused(
    hostile_suite, tmp_path
):
    site = _site(hostile_suite)
    target = tmp_path / "out"
    write_site(site, target)
    (target / "case" / "stale.html").write_text("old")
    write_site(site, target)
    assert not (target / "case" / "stale.html").exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".out")) == []
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    with pytest.raises(SiteError, match="not a site written by flux-conformance"):
        write_site(site, foreign)
    assert (foreign / "notes.txt").read_text() == "keep me"


def test_cli_compare_writes_the_site(tmp_path, capsys):
    target = tmp_path / "site"
    code = main(
        [
            "compare",
            "--cases",
            str(MINI),
            *[f"--impl={i}" for i in IMPLS[:2]],
            "--site",
            str(target),
        ]
    )
    assert code == 1
    assert "wrote the site" in capsys.readouterr().err
    assert (target / "index.html").is_file()
    assert main(["compare", "--cases", str(MINI), "--history", "x.json"]) == 2
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    code = main(["compare", "--cases", str(MINI), "--site", str(target), "--history", str(bad)])
    assert code == 2
    assert "not a history document" in capsys.readouterr().err


# -- history -----------------------------------------------------------------------------------


def _report(path: Path, version: str, outcomes: dict[str, str]) -> Path:
    lines = [{"header": {"implementation": {"name": "x", "version": version, "spec": "x"}}}]
    for case_id, outcome in outcomes.items():
        line = {"id": case_id, "operation": "idset.decode", "outcome": outcome}
        if outcome != "passed":
            line["actual"] = {"output": [1]}
        lines.append({"case": line})
    lines.append({"footer": {"verdict": f"verdict of {version}"}})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_history_records_the_release_where_a_case_changed(tmp_path):
    runs = [
        read_report(
            _report(
                tmp_path / "a", "1.0", {"idset.decode.a": "xfailed", "idset.decode.b": "passed"}
            ),
            "1.0",
        ),
        read_report(
            _report(
                tmp_path / "b", "1.1", {"idset.decode.a": "passed", "idset.decode.b": "passed"}
            ),
            "1.1",
        ),
        read_report(
            _report(
                tmp_path / "c", "1.2", {"idset.decode.a": "passed", "idset.decode.b": "failed"}
            ),
            "1.2",
        ),
    ]
    doc = gather(
        implementation="flux-core",
        about={"command": "history.py", "generated": "2026-01-01"},
        series=[({"kind": "build", "title": "Builds", "how": "built"}, runs)],
    )
    changes = {c["case"]: c["changed_in"] for c in doc["changes"]}
    assert changes == {"idset.decode.a": ["1.1"], "idset.decode.b": ["1.2"]}
    path = tmp_path / "h.json"
    path.write_text(json.dumps(doc))
    text = history_markdown(load_history(path))
    assert "| idset.decode | 1 / 1 / 0 | 2 / 0 / 0 | 1 / 0 / 0 (1 fail) |" in text
    assert "| `idset.decode.b` | pass | pass | fail: `output [1]` | 1.2 |" in text


def _allocation_report(path: Path, version: str, start: float, length: float) -> Path:
    execution = {"R_lite": [], "nodelist": [], "starttime": start, "expiration": start + length}
    line = {
        "id": "sched.allocate.a",
        "operation": "sched.allocate",
        "outcome": "xfailed",
        "actual": {"output": {"version": 1, "execution": execution}},
    }
    header = {"header": {"implementation": {"name": "x", "version": version, "spec": "x"}}}
    rows = [header, {"case": line}, {"footer": {}}]
    path.write_text("".join(json.dumps(x) + "\n" for x in rows))
    return path


def test_history_reads_an_allocation_s_stamps_relative_to_its_clock(tmp_path):
    # Each run stamps its own clock: only a change of the duration between the stamps counts.
    runs = [
        read_report(_allocation_report(tmp_path / "a", "1.0", 1.7e9, 60), "1.0"),
        read_report(_allocation_report(tmp_path / "b", "1.1", 1.8e9, 60), "1.1"),
        read_report(_allocation_report(tmp_path / "c", "1.2", 1.9e9, 61), "1.2"),
    ]
    doc = gather(
        implementation="flux-core",
        about={"command": "history.py", "generated": "2026-01-01"},
        series=[({"kind": "build", "title": "Builds", "how": "built"}, runs)],
    )
    assert [c["changed_in"] for c in doc["changes"]] == [["1.2"]]
    assert '"starttime": "clock", "expiration": "clock + 61"' in doc["changes"][0]["answers"]["1.2"]


def test_docs_history_is_generated_from_its_data():
    root = Path(__file__).resolve().parents[2]
    data = root / "docs" / "history.json"
    history = load_history(data)
    assert (root / "docs" / "history.md").read_text() == history_markdown(history)
    builds = next(s for s in history.series() if s["kind"] == "build")
    assert [r for r in builds["runs"] if not r["problem"]], "no source build was run"
    wheels = next(s for s in history.series() if s["kind"] == "wheel")
    assert [r for r in wheels["runs"] if not r["problem"]], "no wheel was run"


# -- in a real browser ---------------------------------------------------------------------------

#: Injected first: every error and failed load the page causes, as the browser saw it.
CATCHER = """<script>
window.__errors = [];
window.addEventListener("error", function (ev) {
  window.__errors.push(ev.message || ("failed to load " + (ev.target && (ev.target.src || ev.target.href))));
}, true);
const __err = console.error;
console.error = function () { window.__errors.push(Array.from(arguments).join(" ")); __err.apply(console, arguments); };
</script>"""

#: Injected after the site's script: it uses the filters as a person would.
DRIVER = """<script>
(function () {
  const seen = {errors: window.__errors, sheets: document.styleSheets.length};
  const visible = (sel) => Array.from(document.querySelectorAll(sel)).filter(
    (el) => el.offsetParent !== null).length;
  const choose = (id, value) => {
    const s = document.getElementById(id);
    if (!s) return false;
    s.value = value;
    s.dispatchEvent(new Event("change"));
    return true;
  };
  const table = document.querySelector("table[id]");
  const key = table ? table.id : "";
  seen.rows = visible("#" + key + " tbody tr");
  seen.columns = visible("#" + key + " thead th");
  seen.impl = choose("f-" + key + "-impl", FIRST_IMPL);
  seen.columnsOne = visible("#" + key + " thead th");
  choose("f-" + key + "-impl", "");
  seen.outcome = choose("f-" + key + "-outcome", "errored");
  seen.rowsErrored = visible("#" + key + " tbody tr");
  seen.hash = location.hash;
  choose("f-" + key + "-outcome", "");
  seen.level = choose("f-" + key + "-level", "clarification");
  seen.rowsClarification = visible("#" + key + " tbody tr");
  seen.counter = (document.querySelector("form.filters output") || {}).textContent;
  const out = document.createElement("pre");
  out.id = "driver-result";
  out.textContent = JSON.stringify(seen);
  document.body.append(out);
})();
</script>"""


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            BROWSER,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
            f"--user-data-dir={tmp_path / 'profile'}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _drive(page: Path, tmp_path: Path, first_impl: str) -> dict:
    text = page.read_text()
    text = text.replace("<head>", "<head>" + CATCHER, 1)
    text = text.replace("</body>", DRIVER.replace("FIRST_IMPL", json.dumps(first_impl)) + "</body>")
    driven = page.with_name("driven-" + page.name)
    driven.write_text(text)
    proc = _chromium(tmp_path, "--dump-dom", driven.as_uri())
    found = re.search(r'<pre id="driver-result">(.*?)</pre>', proc.stdout, re.S)
    assert found is not None, proc.stderr[-2000:]
    console = [line for line in proc.stderr.splitlines() if "CONSOLE" in line]
    assert console == [], console
    return json.loads(html.unescape(found.group(1)))


def _need_browser() -> None:
    if BROWSER is None:
        if os.environ.get("FLUX_CONFORMANCE_REQUIRE_BROWSER"):
            pytest.fail("no chromium on PATH, and this run requires the browser test")
        pytest.skip("no chromium on PATH (install Debian's chromium to run the browser test)")


def test_pages_in_a_real_browser_filter_without_errors(written, tmp_path):
    _need_browser()
    wrong = slug(IMPLS[1])
    index = _drive(written / "index.html", tmp_path, wrong)
    assert index["errors"] == []
    assert index["sheets"] == 1  # the site's style sheet loaded from the disk
    assert index["rows"] == 1  # one operation
    assert index["columns"] == 2 + len(IMPLS)
    assert index["impl"] is True
    assert index["columnsOne"] == 3  # spec, operation, and the chosen implementation
    assert index["rowsErrored"] == 0  # nobody errors: the row is hidden
    assert index["hash"] == "#outcome=errored"
    cases = _drive(written / "cases.html", tmp_path, wrong)
    assert cases["errors"] == []
    assert cases["rows"] == 6
    assert cases["rowsClarification"] == 1
    assert "1 of 6 rows shown" in cases["counter"]
    impl = _drive(written / "impl" / f"{wrong}.html", tmp_path, wrong)
    assert impl["errors"] == []
    assert impl["rowsClarification"] < impl["rows"]


def test_screenshots_look_like_pages(written, tmp_path):
    _need_browser()
    keep = os.environ.get("FLUX_CONFORMANCE_SCREENSHOTS")
    pages = {
        "index": written / "index.html",
        "implementation": written / "impl" / f"{slug(IMPLS[1])}.html",
        "case": written / "case" / "mini.degenerate.html",
    }
    for name, page in pages.items():
        shot = tmp_path / f"site-{name}.png"
        proc = _chromium(tmp_path, "--window-size=1280,1000", f"--screenshot={shot}", page.as_uri())
        assert shot.is_file(), proc.stderr[-2000:]
        if keep:
            shutil.copy(shot, Path(keep) / shot.name)
    width, channels, rows = png_pixels((tmp_path / "site-index.png").read_bytes())
    # The chart's "passed" colour (#2da44e) fills the reference's bar: a long run of it.
    green = bytes((0x2D, 0xA4, 0x4E))
    longest = 0
    for row in rows:
        run = 0
        for x in range(width):
            run = run + 1 if row[x * channels : x * channels + 3] == green else 0
            longest = max(longest, run)
    assert longest >= 400, f"no rendered bar (longest run of the pass colour: {longest})"
