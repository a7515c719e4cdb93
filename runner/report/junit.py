"""The JUnit XML report: one ``testsuite`` per operation, one ``testcase`` per case.

Every text goes through :func:`~runner.bounds.shown`, so the file is well-formed XML 1.0
whatever an implementation answers (NUL, ESC, U+FFFF and lone surrogates become escapes),
and its size is bounded: names and versions are cut at
:data:`~runner.bounds.SHOWN_NAME` characters, reasons at :data:`_REASON` and bodies at
:data:`_BODY`.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from flux_conformance.runner.bounds import SHOWN_NAME, shown
from flux_conformance.runner.engine import Outcome, Summary
from flux_conformance.runner.report import (
    FileReporter,
    Header,
    compact_json,
    replay_command,
)
from flux_conformance.runner.verdicts import verdict_line

__all__ = ["JUnitReporter"]

#: The longest reason (a ``message`` attribute) and body (a failure's text) written.
_REASON = 2000
_BODY = 20_000


def _properties(header: Header) -> dict[str, str]:
    """What the run was, as JUnit properties (so two reports can be compared later)."""
    import json

    found = {
        "suite.version": header.suite_version,
        "suite.digest": header.suite_digest,
        "implementation.name": header.implementation,
        "implementation.version": header.version,
        "implementation.spec": header.impl_spec,
        "edition": header.edition,
        "cases_dir": header.cases_dir,
        "filters": json.dumps(header.filters, sort_keys=True),
        "expectations": header.expectations,
        "started": header.started,
    }
    return {name: shown(value, SHOWN_NAME * 5) for name, value in found.items()}


class JUnitReporter(FileReporter):
    """Writes the XML file, listing every case, when the run finishes."""

    keep_passed = True

    def render(self, summary: Summary, *, interrupted: bool) -> str:
        """The XML text."""
        name = shown(self.header.implementation, SHOWN_NAME)
        root = ET.Element("testsuites", name=f"flux-conformance: {name}")
        scope = summary.scope()
        described = {
            **_properties(self.header),
            "verdict": verdict_line(summary, interrupted=interrupted),
            "scope.operations": str(scope.operations),
            "scope.cases": str(scope.cases),
            "scope.run_operations": " ".join(scope.run_operations),
            "scope.unsupported_operations": " ".join(scope.unsupported_operations),
            "scope.cases_run": str(scope.cases_run),
            "scope.unchecked": str(scope.unchecked),
        }
        suites: dict[str, ET.Element] = {}
        for result in self._results:
            op = result.case.operation
            if op not in suites:
                suites[op] = ET.SubElement(root, "testsuite", name=op)
                properties = ET.SubElement(suites[op], "properties")
                for name, value in described.items():
                    ET.SubElement(properties, "property", name=name, value=value)
            suite = suites[op]
            case_el = ET.SubElement(
                suite,
                "testcase",
                name=shown(result.case.id),
                classname=op,
                file=shown(str(result.case.file)),
                line=str(result.case.line),
                time=f"{result.seconds:.6f}",
            )
            body = "\n".join(
                [
                    f"input: {compact_json(result.case.input)}",
                    f"expected: {compact_json(result.case.expected_json())}",
                    f"actual: {compact_json(result.reply.to_json()) if result.reply else '-'}",
                    f"replay: {replay_command(self.header, result)}",
                    *(["diff:", result.diff] if result.diff else []),
                ]
            )
            body = shown(body, _BODY)
            reason = shown(result.reason, _REASON)
            if result.outcome in (Outcome.FAILED, Outcome.XPASSED):
                el = ET.SubElement(case_el, "failure", message=reason or result.outcome.value)
                el.text = body
            elif result.outcome is Outcome.ERRORED:
                el = ET.SubElement(case_el, "error", message=reason)
                el.text = body + (
                    f"\nstderr:\n{shown(result.reply.stderr, _BODY)}"
                    if result.reply and result.reply.stderr
                    else ""
                )
            elif result.outcome in (Outcome.SKIPPED, Outcome.XFAILED, Outcome.UNCHECKED):
                ET.SubElement(case_el, "skipped", message=f"{result.outcome.value}: {reason}")
        for op, suite in suites.items():
            counts = summary.by_operation.get(op)
            if counts is None:
                continue
            suite.set("tests", str(sum(counts.values())))
            suite.set("failures", str(counts["failed"] + counts["xpassed"]))
            suite.set("errors", str(counts["errored"]))
            suite.set("skipped", str(counts["skipped"] + counts["xfailed"] + counts["unchecked"]))
        ET.indent(root)
        xml: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
        return xml.decode("utf-8") + "\n"
