"""The JUnit XML report: one ``testsuite`` per operation, one ``testcase`` per case."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from flux_conformance.runner.engine import Outcome, Summary
from flux_conformance.runner.report import (
    FileReporter,
    Header,
    compact_json,
    replay_command,
    verdict_line,
)

__all__ = ["JUnitReporter"]


def _properties(header: Header) -> dict[str, str]:
    """What the run was, as JUnit properties (so two reports can be compared later)."""
    import json

    return {
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


class JUnitReporter(FileReporter):
    """Writes the XML file, listing every case, when the run finishes."""

    keep_passed = True

    def write(self, summary: Summary, *, interrupted: bool) -> None:
        """Write the XML file."""
        root = ET.Element("testsuites", name=f"flux-conformance: {self.header.implementation}")
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
                name=result.case.id,
                classname=op,
                file=str(result.case.file),
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
            if result.outcome in (Outcome.FAILED, Outcome.XPASSED):
                el = ET.SubElement(
                    case_el, "failure", message=result.reason or result.outcome.value
                )
                el.text = body
            elif result.outcome is Outcome.ERRORED:
                el = ET.SubElement(case_el, "error", message=result.reason)
                el.text = body + (
                    f"\nstderr:\n{result.reply.stderr}"
                    if result.reply and result.reply.stderr
                    else ""
                )
            elif result.outcome in (Outcome.SKIPPED, Outcome.XFAILED, Outcome.UNCHECKED):
                ET.SubElement(
                    case_el, "skipped", message=f"{result.outcome.value}: {result.reason}"
                )
        for op, suite in suites.items():
            counts = summary.by_operation.get(op)
            if counts is None:
                continue
            suite.set("tests", str(sum(counts.values())))
            suite.set("failures", str(counts["failed"] + counts["xpassed"]))
            suite.set("errors", str(counts["errored"]))
            suite.set("skipped", str(counts["skipped"] + counts["xfailed"] + counts["unchecked"]))
        ET.indent(root)
        ET.ElementTree(root).write(self.path, encoding="utf-8", xml_declaration=True)
