r"""How much of an answer the runner judges, and how much of any text it shows.

An implementation under test may answer anything the protocol carries: a list of five million
ids, a string of a lone surrogate, a name with terminal escape sequences in it.  None of that
may stall the run, exhaust its memory or break a report, so the runner bounds its own work:

* an answer is judged only when it is not far larger than what the case expects
  (:func:`too_large_to_judge`): at most :data:`JUDGE_MAX_VALUES` JSON values and
  :data:`JUDGE_MAX_CHARS` characters of strings, or four times the size of the largest
  expected output, whichever is more.  A larger answer fails, with that reason, at once;
* a difference is shown by DeepDiff only for answers of at most :data:`DIFF_MAX_VALUES`
  values; a larger one gets the path of its first difference (:func:`first_difference`);
* every text a report shows passes through :func:`shown`: cut to a length, and with each
  character a terminal, an XML 1.0 parser or a UTF-8 encoder cannot take written as an
  escape (``\\x1b``, ``\\ud800``, ``\\uffff``).

``docs/limits.md`` lists these bounds.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

__all__ = [
    "DIFF_MAX_VALUES",
    "JUDGE_MAX_CHARS",
    "JUDGE_MAX_VALUES",
    "KEPT_TEXT",
    "MAX_LINE_BYTES",
    "SHOWN_NAME",
    "first_difference",
    "json_size",
    "needs_escape",
    "shown",
    "shown_json",
    "too_large_to_judge",
]

#: An answer of at most this many JSON values (each scalar, list and object counts one) is
#: always judged, whatever the case expects.
JUDGE_MAX_VALUES = 100_000
#: ... and of at most this many characters in its strings (keys included).
JUDGE_MAX_CHARS = 1024 * 1024
#: A larger answer is still judged when it is within this factor of an expected output.
JUDGE_FACTOR = 4
#: DeepDiff shows differences only between values of at most this many JSON values.
DIFF_MAX_VALUES = 2_000
#: The longest implementation name or version a report shows.
SHOWN_NAME = 200
#: The longest text a judged result keeps of an answer (an error's category and message, a
#: reason, a diff), and of the JSON text of an output too large to judge: results keep no more,
#: so the runner's memory does not grow with the number of huge answers.
KEPT_TEXT = 10_000


#: The longest line of the subprocess protocol, in bytes, its newline not counted: a reply
#: the runner reads, and a request ``serve`` reads.  Memory stays bounded.
MAX_LINE_BYTES = 64 * 1024 * 1024

#: The longest integer read or written as decimal text: Python's own conversion bound
#: (``sys.get_int_max_str_digits``).  Case files, replies and ``serve``'s requests hold none
#: longer.
MAX_INT_DIGITS = 4300
#: Integers of more bits than this are described, not written (4,300 digits is about 14,284
#: bits).
WRITTEN_INT_BITS = 14_000


def integer_described(value: int) -> str:
    """``an integer of about N digits``: how a report shows an integer too long to write."""
    return f"an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits"


def json_size(value: Any, cap: int = JUDGE_MAX_VALUES * 1000) -> tuple[int, int]:
    """The number of JSON values in ``value`` and of characters in its strings.

    Counting stops once either passes ``cap`` (the numbers returned are then above it, not
    exact), so a five-million-item answer costs no more than a cap's worth of steps.
    """
    values = chars = 0
    stack = [value]
    while stack:
        item = stack.pop()
        values += 1
        if type(item) is str:
            chars += len(item)
        elif type(item) is list:
            stack.extend(item)
        elif type(item) is dict:
            chars += sum(len(k) for k in item if type(k) is str)
            stack.extend(item.values())
        if values > cap or chars > cap:
            break
    return values, chars


def past_judging_bounds(value: Any) -> bool:
    """Whether ``value`` passes judging's fixed bounds, whatever it would be compared with.

    That is more than :data:`JUDGE_MAX_VALUES` JSON values or :data:`JUDGE_MAX_CHARS`
    characters of strings.
    """
    values, chars = json_size(value, cap=max(JUDGE_MAX_VALUES, JUDGE_MAX_CHARS))
    return values > JUDGE_MAX_VALUES or chars > JUDGE_MAX_CHARS


def too_large_to_judge(expected: list[Any], actual: Any) -> str | None:
    """Why ``actual`` is too large to be judged against the ``expected`` outputs, or None."""
    max_values, max_chars = JUDGE_MAX_VALUES, JUDGE_MAX_CHARS
    for value in expected:
        values, chars = json_size(value)
        max_values = max(max_values, JUDGE_FACTOR * values)
        max_chars = max(max_chars, JUDGE_FACTOR * chars)
    values, chars = json_size(actual, cap=max(max_values, max_chars))
    if values > max_values:
        return (
            f"answer too large to judge: more than {max_values} JSON values (the bound is "
            f"{JUDGE_MAX_VALUES}, or {JUDGE_FACTOR} times the size of the expected output)"
        )
    if chars > max_chars:
        return (
            f"answer too large to judge: more than {max_chars} characters of strings (the "
            f"bound is {JUDGE_MAX_CHARS}, or {JUDGE_FACTOR} times the expected output's)"
        )
    return None


_KINDS: dict[type, str] = {
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    list: "array",
    dict: "object",
    type(None): "null",
}


def _kind(value: Any) -> str:
    return _KINDS.get(type(value), type(value).__name__)


def _brief(value: Any) -> str:
    if isinstance(value, list | dict):
        return f"an {_kind(value)} of {len(value)} items"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return integer_described(value)
    return shown(repr(value), 100)


def _items(path: str, pairs: Iterator[tuple[Any, tuple[Any, Any]]]) -> Iterator[Any]:
    for key, (want, got) in pairs:
        yield f"{path}[{key}]", want, got


def _entries(path: str, want: dict[Any, Any], got: dict[Any, Any]) -> Iterator[Any]:
    # A function, not a generator expression: the names are bound now, not when iterated.
    for key, value in want.items():
        yield f"{path}[{key!r}]", value, got[key]


def first_difference(expected: Any, actual: Any, *, budget: int = 10_000_000) -> str:
    """The path of the first place where ``actual`` differs from ``expected`` (JSON equality).

    A walk in document order that stops at the first difference, or after ``budget`` steps;
    containers are walked item by item, never copied.
    """
    frames: list[Iterator[tuple[str, Any, Any]]] = [iter([("value", expected, actual)])]
    steps = 0
    while frames and steps < budget:
        entry = next(frames[-1], None)
        if entry is None:
            frames.pop()
            continue
        steps += 1
        path, want, got = entry
        if _kind(want) != _kind(got):
            return f"{path}: expected {_brief(want)}, got {_brief(got)}"
        if isinstance(want, list):
            if len(want) != len(got):
                return f"{path}: expected {len(want)} items, got {len(got)}"
            frames.append(_items(path, enumerate(zip(want, got, strict=True))))
        elif isinstance(want, dict):
            if want.keys() != got.keys():
                missing = sorted(map(str, want.keys() - got.keys()))[:5]
                extra = sorted(map(str, got.keys() - want.keys()))[:5]
                return shown(f"{path}: keys differ (missing {missing}, unexpected {extra})", 500)
            frames.append(_entries(path, want, got))
        elif want != got:
            return shown(f"{path}: expected {_brief(want)}, got {_brief(got)}", 500)
    return "no difference found within the walk's budget"


# Characters shown as escapes: C0 controls but tab and newline, DEL, C1 controls (ESC and CSI,
# U+009B, start terminal sequences), the bidirectional controls (U+202E reverses the text
# after it, so that a name reads as another), the line and paragraph separators, surrogates
# (UTF-8 cannot carry them alone) and the characters XML 1.0 excludes (U+FFFE, U+FFFF).
# Carriage return is escaped too: it rewrites a line.
_UNSAFE = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
    "\ud800-\udfff\ufffe\uffff"
)
_UNSHOWABLE = re.compile(f"[{_UNSAFE}]")
#: The same, and tab and newline: what a one-line text (a shell word) must not hold raw.
_UNSHOWABLE_ON_ONE_LINE = re.compile(f"[\t\n{_UNSAFE}]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def cut(text: str, limit: int) -> str:
    """``text``, or its first ``limit`` characters saying how long it was."""
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def needs_escape(text: str) -> bool:
    """Whether ``text`` holds a character :func:`shown` escapes, a tab or a newline."""
    return _UNSHOWABLE_ON_ONE_LINE.search(text) is not None


def shown_json(text: str) -> str:
    r"""JSON text with each character :func:`shown` escapes written as a JSON ``\u`` escape.

    Such characters can stand in JSON text only inside strings, where the escape means the
    same character: the value is unchanged, and no reader of the file meets them raw.
    """
    return _UNSHOWABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def shown(text: str, limit: int | None = None) -> str:
    """``text`` safe to print on a terminal and to write into XML, Markdown or HTML files.

    Control characters, surrogates and U+FFFE/U+FFFF become visible escapes; with ``limit``,
    a longer text is cut and says how long it was.
    """
    return _UNSHOWABLE.sub(_escape, text if limit is None else cut(text, limit))
