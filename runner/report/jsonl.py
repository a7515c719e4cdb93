"""The JSON Lines report: a header line, one line per case, a footer line.

Every line is flushed as it is written, so a report cut short by a crash of the runner
still holds every case judged until then.
"""

from __future__ import annotations

import json
from typing import IO, Any

from flux_conformance.runner.engine import CaseResult, Summary
from flux_conformance.runner.report import Header, verdict_line

__all__ = ["JsonLinesReporter"]


def _encodable(value: Any) -> bool:
    try:
        json.dumps(value, default=repr)
    except (RecursionError, ValueError):
        return False
    return True


class JsonLinesReporter:
    """Writes ``{"header": ...}``, then ``{"case": ...}`` lines, then ``{"footer": ...}``."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream

    def _write(self, obj: dict[str, Any]) -> None:
        try:
            text = json.dumps(obj, ensure_ascii=False, default=repr)
        except (RecursionError, ValueError):
            # A value (an implementation's output, say) too deep or too odd for JSON: the
            # line keeps everything else and says so, rather than being lost.
            inner = dict(obj)
            for key, value in inner.items():
                if isinstance(value, dict):
                    inner[key] = {
                        k: v if _encodable(v) else "(not representable as JSON)"
                        for k, v in value.items()
                    }
            text = json.dumps(inner, ensure_ascii=False, default=repr)
        self.stream.write(text + "\n")
        self.stream.flush()

    def start(self, header: Header) -> None:
        """Write the header line."""
        self._write({"header": header.to_json()})

    def case(self, result: CaseResult) -> None:
        """Write one case line."""
        self._write({"case": result.to_json()})

    def finish(self, summary: Summary, *, interrupted: bool = False) -> None:
        """Write the footer line with the counts."""
        self._write(
            {
                "footer": {
                    **summary.to_json(),
                    "ok": summary.ok,
                    "interrupted": interrupted,
                    "verdict": verdict_line(summary, interrupted=interrupted),
                }
            }
        )
