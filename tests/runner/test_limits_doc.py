"""Every number ``docs/limits.md`` gives is the constant the code uses (checked, not typed)."""

from __future__ import annotations

import pytest
from support import ROOT

from flux_conformance.reference import _limits, _rset_read, errors, query
from flux_conformance.runner import _yaml, bounds
from flux_conformance.runner.adapters import subprocess
from flux_conformance.runner.commands import _numbers
from flux_conformance.runner.comparators import constraint
from flux_conformance.runner.report import junit, markdown
from flux_conformance.runner.tools import action, serve

TEXT = (ROOT / "docs" / "limits.md").read_text(encoding="utf-8")


def mib(n: int) -> str:
    assert n % (1024 * 1024) == 0
    return f"{n // (1024 * 1024)} MiB"


@pytest.mark.parametrize(
    "shown",
    [
        f"{_limits.MAX_RANKS:,}",
        mib(_limits.MAX_ANSWER_BYTES),
        f"{_rset_read._RANK_FRAME} bytes a rank",
        f"{query.MAX_QUERY_LENGTH // 1024} KiB ({query.MAX_QUERY_LENGTH:,} characters)",
        f"{errors.MAX_REASON} characters",
        mib(_yaml.MAX_DOCUMENT_BYTES),
        f"{_yaml.MAX_NODES:,} YAML nodes",
        f"{_yaml.MAX_DEPTH} levels of nesting",
        f"{_yaml.MAX_INT_DIGITS:,} digits",
        f"{bounds.JUDGE_MAX_VALUES:,} JSON values",
        mib(bounds.JUDGE_MAX_CHARS) + " of string characters",
        {4: "four times"}.get(bounds.JUDGE_FACTOR, f"{bounds.JUDGE_FACTOR} times"),
        f"{bounds.DIFF_MAX_VALUES:,} JSON values",
        f"{constraint.MAX_PROPERTY_NAMES} property names",
        f"{constraint.MAX_ENUMERATED:,} hosts and ranks",
        f"{constraint.MAX_TARGETS:,} targets",
        f"{bounds.SHOWN_NAME} characters, on one line",
        f"JUnit {junit._REASON:,} ({junit._BODY:,} for a failure's body)",
        f"{bounds.KEPT_TEXT:,} characters of any text",
        f"the Markdown report | {markdown.MAX_BYTES:,} bytes",
        f"no more than {mib(action.SUMMARY_BYTES)} to the summary",
        f"more than {bounds.KEPT_TEXT:,} JSON values or characters as the first "
        f"{bounds.KEPT_TEXT:,} characters",
        f"{subprocess.MAX_TIMEOUTS} in a row (`--max-timeouts N`",
        f"{subprocess.MAX_START_FAILURES} in a row",
        f"{subprocess.MAX_INT_DIGITS:,} digits are faults",
        mib(subprocess.MAX_LINE_BYTES) + ", its newline not counted",
        f"{serve.DECODE_DEPTH:,} levels",
        f"a request line `flux-conformance serve` reads | {mib(serve.MAX_LINE_BYTES)}, its newline",
        f"seconds above 0 and at most {_numbers.SECONDS_MAX:,.0f}",
        f"the counts up to {_numbers.COUNT_MAX:,}",
        f"an integer in a request `serve` decodes | {serve.MAX_INT_DIGITS:,} digits",
    ],
)
def test_the_limits_page_gives_the_constant(shown: str) -> None:
    assert shown in TEXT


PROTOCOL = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "shown",
    [
        f"read up to {subprocess.MAX_INT_DIGITS:,} digits",
        f"nested more than {serve.DECODE_DEPTH:,}",
        f"more than {serve.MAX_INT_DIGITS:,} digits with `limit`",
        {3: "three times in a row"}[subprocess.MAX_START_FAILURES],
        {5: "five times in a row"}[subprocess.MAX_TIMEOUTS],
        f"over {bounds.JUDGE_MAX_VALUES:,} JSON values or {mib(bounds.JUDGE_MAX_CHARS)}",
        subprocess.TOKEN_VARIABLE,
        f"A line is at most {mib(serve.MAX_LINE_BYTES)}, its newline not counted",
    ],
)
def test_the_protocol_page_gives_the_constant(shown: str) -> None:
    assert shown in PROTOCOL
