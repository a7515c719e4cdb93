"""Writing the disagreements :mod:`runner.tools.diff` found as case YAML for review.

Each case takes its expected outcome from the trusted implementation (``--against``), cites the
requirement the operation's cases cite most (a reviewer confirms it), and leaves the level for
the reviewer to choose.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import shlex
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from flux_conformance.runner.adapters.base import Reply
from flux_conformance.runner.bounds import shown
from flux_conformance.runner.tools.diff import DiffResult

__all__ = ["REQUIREMENT_PLACEHOLDER", "general_requirement", "render_cases"]

#: Placeholder written when no requirement id can be proposed; the suite refuses to load it.
REQUIREMENT_PLACEHOLDER = "REVIEWER-MUST-FILL-IN-A-REQUIREMENT-ID"


class _CaseDumper(yaml.SafeDumper):
    """Double-quotes every string, so no YAML 1.1 reading ("no", "1e3", "0755") can bite."""


def _quoted(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')


_CaseDumper.add_representer(str, _quoted)


def _flow(value: Any) -> str:
    """``value`` as one line of flow-style YAML, every string double-quoted."""
    text = yaml.dump(
        value,
        Dumper=_CaseDumper,
        default_flow_style=True,
        allow_unicode=True,
        width=2**31,
        explicit_end=False,
    )
    return text.removesuffix("\n...\n").strip()


# What YAML takes as the end of a line (YAML 1.1, which PyYAML reads): a name holding one
# would end its comment and start a key of its own.
_LINE_BREAKS = str.maketrans({"\n": "\\n", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def _in_comment(text: str) -> str:
    """``text`` safe inside a ``#`` comment: on one line, no control character raw."""
    return shown(text).translate(_LINE_BREAKS)  # shown() already escapes \r and \x85


def general_requirement(operation: str, cases_dir: Path | None) -> str | None:
    """The requirement the operation's existing cases cite most (None if none can be read).

    Only the case files of ``operation`` are loaded (a top-level ``operation:`` line names it):
    the whole suite takes several seconds, and this runs within what is left of ``--seconds``.
    """
    from flux_conformance.runner._cases_dir import default_cases_dir
    from flux_conformance.runner.case_checks import Problem
    from flux_conformance.runner.case_folder import yaml_files
    from flux_conformance.runner.cases import SuiteError, load_suite

    root = cases_dir or default_cases_dir()
    named = re.compile(rf"^operation:[ \t]*([\"']?){re.escape(operation)}\1[ \t]*(#.*)?$", re.M)
    files: list[Path] = []
    problems: list[Problem] = []
    try:
        for path in yaml_files(root, root, problems, recursive=True):
            with contextlib.suppress(OSError, UnicodeDecodeError):
                if named.search(path.read_text(encoding="utf-8")):
                    files.append(path)
        if problems:  # a folder that cannot be read whole (a link out of it): propose nothing
            return None
        suite = load_suite(cases_dir, files=files)
    except (SuiteError, OSError):
        return None
    cited = Counter(
        req for case in suite.cases if case.operation == operation for req in case.requirements
    )
    return cited.most_common(1)[0][0] if cited else None


def _case_id(operation: str, value: Any) -> str:
    digest = hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:10]
    return f"{operation}.diff-{digest}"


def _compact(reply: Reply) -> str:
    from flux_conformance.runner.report import compact_json

    if reply.kind == "output":
        return "output " + compact_json(reply.value, 110)
    if reply.kind == "error":
        return f"error {shown(str(reply.value), 100)}"
    return reply.kind


def _shown_input(value: Any) -> str:
    from flux_conformance.runner.report import compact_json

    return " ".join(compact_json(value, 2000).splitlines())


def render_cases(
    result: DiffResult,
    *,
    impl_name: str,
    against_name: str,
    requirement: str | None,
) -> str:
    """The disagreements of ``result`` as a case file, with the reviewer's work marked."""
    requirement_note = (
        f"# requirements: {requirement!r} is the requirement the existing {result.operation}\n"
        "#   cases cite most, proposed as the most general one: replace it with the precise\n"
        "#   requirement(s) each case exercises.\n"
        if requirement
        else f"# requirements: {REQUIREMENT_PLACEHOLDER} is a placeholder: the suite will not\n"
        "#   load this file until each case cites requirement ids that exist.\n"
    )
    # The names come from the command line, as typed: every comment shows them on one line.
    impl_name, against_name = _in_comment(impl_name), _in_comment(against_name)
    lines = [
        f"# Found by: flux-conformance diff --impl {shlex.quote(impl_name)} --against "
        f"{shlex.quote(against_name)} "
        f"--operation {result.operation} --seed {result.seed}"
        + (f" --edition {shlex.quote(_in_comment(result.edition))}" if result.edition else ""),
        "# Ready to review, not to commit as is.  For each case:",
        f"# - the expected outcome is what {against_name} answered: check it against the spec;",
        "# - choose the `level` (must, should, may; clarification with one_of when the text",
        "#   leaves room); left out, it means must;",
        requirement_note.rstrip("\n"),
        *(
            [
                f"# - `edition: {_in_comment(result.edition)}` says where it was found: drop "
                "it if the case holds in every edition."
            ]
            if result.edition
            else []
        ),
        f"operation: {json.dumps(result.operation)}",
        "cases:",
    ]
    written = 0
    for found in result.disagreements:
        if found.expected.kind not in ("output", "error"):
            lines.append(
                f"  # not written: {against_name} answered {_compact(found.expected)} for "
                f"input {_shown_input(found.input)}"
            )
            continue
        fields = {
            "id": _case_id(result.operation, found.input),
            "description": (
                f"Found by flux-conformance diff (seed {result.seed}): {impl_name} answers "
                f"{_compact(found.actual)}, {against_name} answers {_compact(found.expected)}. "
                "Reviewer: say why the spec demands the expected outcome."
            ),
            "input": found.input,
            found.expected.kind: found.expected.value,
            "requirements": [requirement or REQUIREMENT_PLACEHOLDER],
        }
        if result.edition:
            fields["edition"] = result.edition
        lines.append("  # level: reviewer to choose (must | should | may | clarification)")
        for index, (key, value) in enumerate(fields.items()):
            lines.append(f"{'  - ' if index == 0 else '    '}{key}: {_flow(value)}")
        written += 1
    if not written:
        lines[-1] = "cases: []"
    return "\n".join(lines) + "\n"
