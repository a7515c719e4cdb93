"""The JSON Lines report: a header line, one line per case, a footer line.

Every line is flushed as it is written, so a report cut short by a crash of the runner
still holds every case judged until then.
"""

from __future__ import annotations

import json
import math
import os
from typing import IO, Any

from flux_conformance.runner.atomic import Replacement
from flux_conformance.runner.bounds import (
    WRITTEN_INT_BITS,
    integer_described,
    shown_json,
)
from flux_conformance.runner.engine import CaseResult, Summary, kept
from flux_conformance.runner.report import Header, verdict_line
from flux_conformance.runner.verdicts import judged

__all__ = ["JsonLinesFileReporter", "JsonLinesReporter"]


def _strict(value: Any) -> Any:
    """``value`` with what strict JSON cannot carry replaced by strings that say what it was.

    NaN and the infinities become ``"NaN"``, ``"Infinity"`` and ``"-Infinity"`` (standard
    JSON has no such numbers, and a strict reader refuses them); an integer too long for
    Python to write becomes a description; other objects their ``repr``.
    """
    if isinstance(value, float) and not math.isfinite(value):
        return json.dumps(value)
    if (
        isinstance(value, int)
        and not isinstance(value, bool)
        and value.bit_length() > WRITTEN_INT_BITS
    ):
        return f"({integer_described(value)})"
    if isinstance(value, dict):
        return {str(k): _strict(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_strict(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return repr(value)


def _dumps(value: Any) -> str:
    """Strict JSON text of ``value``: UTF-8 where it can be, escapes where it cannot."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        text = json.dumps(_strict(value), ensure_ascii=False, allow_nan=False)
    # Control, bidi and lone surrogate characters (a surrogate is valid in JSON text as an
    # escape, not in UTF-8) as JSON escapes: the same values, never raw in the file.
    return shown_json(text)


def _encodable(value: Any) -> bool:
    try:
        _dumps(value)
    except RecursionError:
        return False
    return True


class JsonLinesReporter:
    """Writes ``{"header": ...}``, then ``{"case": ...}`` lines, then ``{"footer": ...}``.

    Every line is strict JSON (RFC 8259): no NaN or Infinity, no raw lone surrogate.
    """

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream

    def _write(self, obj: dict[str, Any]) -> None:
        try:
            text = _dumps(obj)
        except RecursionError:
            # A value (an implementation's output, say) too deep for JSON: the line keeps
            # everything else and says so, rather than being lost.
            inner = dict(obj)
            for key, value in inner.items():
                if isinstance(value, dict):
                    inner[key] = {
                        k: v if _encodable(v) else "(not representable as JSON)"
                        for k, v in value.items()
                    }
            text = _dumps(inner)
        self.stream.write(text + "\n")
        self.stream.flush()

    def start(self, header: Header) -> None:
        """Write the header line."""
        self._write({"header": header.to_json()})

    def case(self, result: CaseResult) -> None:
        """Write one case line.

        The result as :func:`runner.engine.kept` keeps it: an answer too large to judge (see
        :mod:`runner.bounds`) is the start of its JSON text, ``{"output": "<the first 10,000
        characters>", "cut": true}``, and every text (an error's category and message, a
        reason, a diff, stderr) is cut at :data:`~runner.bounds.KEPT_TEXT` characters, so a
        line holds at most that much of any answer.
        """
        self._write({"case": kept(result).to_json()})

    def finish(self, summary: Summary, *, interrupted: bool = False) -> None:
        """Write the footer line with the counts."""
        self._write(
            {
                "footer": {
                    **summary.to_json(),
                    "ok": summary.ok,
                    "interrupted": interrupted,
                    "verdict": verdict_line(summary, interrupted=interrupted),
                    "verdict_words": str(judged(summary.total, interrupted=interrupted)),
                }
            }
        )


class JsonLinesFileReporter(JsonLinesReporter):
    """The JSON Lines report in a file: written line by line beside it, renamed over it at the end.

    Until the footer is written the lines are in ``.FILE.XXXXXXXX.tmp`` beside ``FILE`` (a
    runner killed outright leaves them there); ``FILE`` itself is the previous report until
    then, and the whole new one after (:mod:`runner.atomic`).  A line that cannot be written
    (a full disk) leaves ``FILE`` as it was: the error names it, and the lines written are
    removed, never put in place with one missing.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._replacement = Replacement(path)
        self._failed: OSError | None = None
        super().__init__(self._replacement.stream)

    def _write(self, obj: dict[str, Any]) -> None:
        if self._failed is not None:
            raise self._failed
        try:
            super()._write(obj)
        except OSError as exc:
            if exc.filename is None:
                exc.filename = str(self._replacement.path)  # told with the report's name
            self._failed = exc
            raise

    def finish(self, summary: Summary, *, interrupted: bool = False) -> None:
        """Write the footer line and put the file in place."""
        try:
            super().finish(summary, interrupted=interrupted)
        except BaseException:
            self._replacement.discard()
            raise
        self._replacement.commit()
