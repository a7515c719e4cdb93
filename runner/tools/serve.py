r"""``flux-conformance serve``: expose a Python implementation over the subprocess protocol.

By default it serves the bundled reference, which is how the suite checks its own
subprocess transport and how a third party can drive the reference from any language.
Each request is answered on stdout, one JSON object per line; nothing else is written
there.  Lines end with ``\n`` alone (a bare ``\r`` is part of a line, as the protocol says).
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
import sys
import traceback
from collections.abc import Mapping
from typing import IO, Any

from flux_conformance.runner.adapters.base import Implementation
from flux_conformance.runner.bounds import MAX_INT_DIGITS, cut

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


def _top_level(line: str) -> dict[str, Any]:
    """The scalar members of a request's top-level object, found without recursion.

    Used only when the request is too deep to decode, so that the answer can still carry
    the request's ``seq``: nested values are skipped, strings are followed with escapes.
    """
    found: dict[str, Any] = {}
    depth = 0
    i, n = 0, len(line)
    key: str | None = None
    expecting_key = False
    while i < n:
        ch = line[i]
        if ch == '"':
            end = i + 1
            while end < n and line[end] != '"':
                end += 2 if line[end] == "\\" else 1
            if depth == 1:
                text = line[i : end + 1]
                try:
                    value = json.loads(text)
                except ValueError:  # a bad escape: this member cannot be read
                    value = None
                if expecting_key:
                    key = value if isinstance(value, str) else None
                elif key is not None:
                    found[key] = value
                    key = None
            i = end + 1
            continue
        if ch in "{[":
            depth += 1
            expecting_key = depth == 1 and ch == "{"
            key = None if depth > 1 else key
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                break  # the end of the request's object: anything after it is not its own
        elif depth == 1 and ch == ":":
            expecting_key = False
        elif depth == 1 and ch == ",":
            expecting_key, key = True, None
        elif depth == 1 and key is not None and not ch.isspace():
            end = i
            while end < n and line[end] not in ",}":
                end += 1
            with contextlib.suppress(ValueError):
                found[key] = _DECODER.decode(line[i:end])
            key = None
            i = end
            continue
        i += 1
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
    stdin: IO[str] | None = None,
    stdout: IO[str] | None = None,
) -> int:
    """Answer protocol messages from ``stdin`` until ``stop`` or end of input."""
    # The protocol is UTF-8 whatever the locale says; undecodable bytes survive as escapes and
    # make a JSON error rather than a crash.
    # newline="\n": lines end at "\n" only, and nothing is translated.
    inp = stdin or io.TextIOWrapper(
        sys.stdin.buffer, encoding="utf-8", errors="surrogateescape", newline="\n"
    )
    out = stdout or io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", newline="\n")
    for line in inp:
        if not line.strip():
            continue
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
