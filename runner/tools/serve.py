r"""``flux-conformance serve``: expose a Python implementation over the subprocess protocol.

By default it serves the bundled reference, which is how the suite checks its own
subprocess transport and how a third party can drive the reference from any language.
Each request is answered on stdout, one JSON object per line; nothing else is written
there.  Lines end with ``\n`` alone (a bare ``\r`` is part of a line, as the protocol says);
a line of JSON whitespace alone is blank and gets no answer, every other line gets one; a line
over :data:`MAX_LINE_BYTES` gets a ``limit`` error and is dropped as it is read.
A request that is not JSON, or not a protocol message, is answered with an error of category
``protocol`` (and a ``seq`` when one could be read) and the loop goes on; a request nested
more than :data:`DECODE_DEPTH` levels deep, or holding an integer of more than
:data:`MAX_INT_DIGITS` digits, with category ``limit``; an exception escaping the
implementation is answered with category ``internal``.  No request stops the loop but
``stop`` and the end of input.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
import traceback
from collections.abc import Iterator, Mapping
from typing import IO, Any

from flux_conformance.runner.adapters.base import Implementation
from flux_conformance.runner.bounds import MAX_INT_DIGITS, MAX_LINE_BYTES, cut

__all__ = ["serve"]


#: Nesting the decoder follows before giving up on a request (Python's default stops near 1000).
DECODE_DEPTH = 5000


class _TooLong(ValueError):
    """An integer of the request has more digits than :data:`MAX_INT_DIGITS`."""


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _TooLong(f"an integer of {len(text.lstrip('-'))} digits (at most {MAX_INT_DIGITS})")
    return int(text)


#: JSON for requests, its integers bounded, made once (``json.loads`` with a hook makes a
#: decoder a call).
_DECODER = json.JSONDecoder(parse_int=_int)


def _decode(line: str) -> Any:
    """Parse one request; a document nested too deeply raises ``RecursionError``."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, DECODE_DEPTH))
    try:
        return _DECODER.decode(line)
    finally:
        sys.setrecursionlimit(limit)


# The tokens _top_level reads: a string (its end quote may be missing in a broken line), a
# run of opening or closing brackets, a colon or comma, a scalar, or whitespace.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[{\[]+|[}\]]+|[:,]|[^\s"{}\[\]:,]+|\s+', re.S)
# Outside the top-level object only strings and brackets matter, and inside it, between a
# member's value and the next comma, those and the separators: skipped to in one step.
_STRUCTURE = re.compile(r'["{}\[\]]')
_SEPARATOR = re.compile(r'["{}\[\]:,]')
#: Tokens _top_level reads at most before it gives up on a ``seq`` (a request's own members
#: come early; a line of millions of tokens is garbage, answered without one).
SCAN_TOKENS = 100_000


def _top_level(line: str) -> dict[str, Any]:
    """The scalar members of a request's top-level object, found without recursion.

    Used only when the request cannot be decoded, so that the answer can still carry the
    request's ``seq``: nested values are skipped, strings are followed with escapes.  Read
    token by token with regular expressions (a string, a run of brackets or anything between
    two members is one step), never character by character, for at most
    :data:`SCAN_TOKENS` tokens.
    """
    found: dict[str, Any] = {}
    depth = 0
    key: str | None = None
    expecting_key = False
    at, n = 0, len(line)
    for _ in range(SCAN_TOKENS):
        if at >= n:
            break
        if depth != 1 or (key is None and not expecting_key):
            jump = (_STRUCTURE if depth != 1 else _SEPARATOR).search(line, at)
            if jump is None:
                break
            at = jump.start()
        token = _TOKEN.match(line, at)
        assert token is not None  # every character starts some token
        text, at = token.group(), token.end()
        first = text[0]
        if first == '"':
            if depth == 1:
                try:
                    value = json.loads(text)
                except ValueError:  # a bad escape or no end quote: this member cannot be read
                    value = None
                if expecting_key:
                    key = value if isinstance(value, str) else None
                elif key is not None:
                    found[key] = value
                    key = None
        elif first in "{[":
            depth += len(text)
            expecting_key = depth == 1 and text[-1] == "{"
            key = None if depth > 1 else key
        elif first in "}]":
            if depth - len(text) <= 0:
                break  # the end of the request's object: anything after it is not its own
            depth -= len(text)
        elif first == ":":
            expecting_key = False
        elif first == ",":
            expecting_key, key = True, None
        elif key is not None and not first.isspace():
            with contextlib.suppress(ValueError):
                found[key] = _DECODER.decode(text)
            key = None
    return found


def _answer(out: IO[str], message: Mapping[str, Any]) -> None:
    try:
        # ASCII with escapes: an input's lone surrogates (legal in JSON strings) may reach an
        # error message, and no encoding can carry them raw.
        text = json.dumps(message, allow_nan=False)
    except ValueError as exc:  # an output that JSON cannot carry (NaN, infinity)
        seq = message.get("seq")
        text = json.dumps({"seq": seq, "error": {"category": "internal", "message": str(exc)}})
    out.write(text + "\n")
    out.flush()


def serve(
    impl: Implementation,
    *,
    name: str,
    version: str,
    operations: list[str],
    stdin: IO[str] | IO[bytes] | None = None,
    stdout: IO[str] | None = None,
) -> int:
    """Answer protocol messages from ``stdin`` until ``stop`` or end of input."""
    # The protocol is UTF-8 whatever the locale says; undecodable bytes survive as escapes and
    # make a JSON error rather than a crash.
    # newline="\n": lines end at "\n" only, and nothing is translated.
    inp: IO[Any] = stdin if stdin is not None else sys.stdin.buffer
    out = stdout or io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", newline="\n")
    for line in _lines(inp):
        if line is None:
            reason = f"request line longer than {MAX_LINE_BYTES} bytes: not read"
            _answer(out, {"seq": None, "error": {"category": "limit", "message": reason}})
            continue
        if not line.strip(_JSON_WHITESPACE):
            continue  # a blank line holds no request
        try:
            if _answer_one(impl, line, out, name=name, version=version, operations=operations):
                return 0
        except Exception as exc:  # never the end of the loop: the request gets an answer
            print(traceback.format_exc(), file=sys.stderr)
            seq = _seq_of(line)
            _answer(
                out,
                {"seq": seq, "error": {"category": "internal", "message": _brief(exc)}},
            )
    return 0


#: What RFC 8259 (section 2) calls insignificant whitespace; a line of nothing else is blank.
#: Python's ``str.strip()`` takes more (``\x0b``, ``\x1c``, ``\x85``, U+2028): such a line
#: is not blank, and is answered as the request that is not JSON it is.
_JSON_WHITESPACE = " \t\r\n"


def _lines(inp: IO[Any]) -> Iterator[str | None]:
    r"""Each line of ``inp`` (ending at ``\n`` alone), or None for one over the bound.

    A line is read up to :data:`MAX_LINE_BYTES` (characters, for a text stream), and no
    further: the rest of a longer one is read in chunks and dropped, so a line of any length
    costs no more memory than the bound and no per-character work.  Bytes are decoded as
    UTF-8, undecodable ones kept as escapes so that they make a JSON error, not a crash.
    """
    while True:
        raw = inp.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        newline = b"\n" if isinstance(raw, bytes) else "\n"
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(newline):
            while raw and not raw.endswith(newline):
                raw = inp.readline(1 << 20)
            yield None
            continue
        yield raw.decode("utf-8", "surrogateescape") if isinstance(raw, bytes) else raw


def _brief(exc: BaseException) -> str:
    return cut(f"{type(exc).__name__}: {exc}", 1000)


def _seq_of(line: str) -> Any:
    """The request's ``seq`` when it can be read without decoding the request (else None)."""
    try:
        seq = _top_level(line).get("seq")
    except (RecursionError, ValueError):
        return None
    return seq if type(seq) is int else None


def _answer_one(
    impl: Implementation,
    line: str,
    out: IO[str],
    *,
    name: str,
    version: str,
    operations: list[str],
) -> bool:
    """Answer one request line; True when it is ``stop``."""
    try:
        message = _decode(line)
    except RecursionError:
        reason = f"request nested more than {DECODE_DEPTH} levels deep"
        _answer(out, {"seq": _seq_of(line), "error": {"category": "limit", "message": reason}})
        return False
    except _TooLong as exc:
        reason = f"the request holds {exc}"
        _answer(out, {"seq": _seq_of(line), "error": {"category": "limit", "message": reason}})
        return False
    except ValueError as exc:
        seq = _seq_of(line)
        error = {"category": "protocol", "message": f"not JSON: {_brief(exc)}"}
        _answer(out, {"error": error} if seq is None else {"seq": seq, "error": error})
        return False
    if not isinstance(message, dict):
        _answer(out, {"error": {"category": "protocol", "message": "not a JSON object"}})
        return False
    cmd = message.get("cmd")
    if cmd == "hello":
        _answer(
            out,
            {
                "protocol": 1,
                "implementation": {"name": name, "version": version},
                "operations": operations,
            },
        )
    elif cmd == "stop":
        return True
    elif cmd == "run":
        seq = message.get("seq")
        operation = message.get("operation")
        # type(), not isinstance(): true is not an integer seq.
        if type(seq) is not int or not isinstance(operation, str) or "input" not in message:
            _answer(
                out,
                {
                    "seq": seq if type(seq) is int else None,
                    "error": {
                        "category": "protocol",
                        "message": "run needs an integer seq, a string operation and an input",
                    },
                },
            )
            return False
        options = {"edition": message["edition"]} if message.get("edition") else {}
        try:
            outcome = dict(impl.run(operation, message["input"], **options))
        except Exception as exc:
            print(traceback.format_exc(), file=sys.stderr)
            outcome = {"error": {"category": "internal", "message": _brief(exc)}}
        _answer(out, {"seq": seq, **outcome})
    else:
        shown = repr(cmd)[:200]
        _answer(out, {"error": {"category": "protocol", "message": f"unknown cmd {shown}"}})
    return False
