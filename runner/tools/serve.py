"""``flux-conformance serve``: expose a Python implementation over the subprocess protocol.

By default it serves the bundled reference, which is how the suite checks its own
subprocess transport and how a third party can drive the reference from any language.
Each request is answered on stdout, one JSON object per line; nothing else is written
there.  A request that is not JSON, or not a protocol message, is answered with an error
of category ``protocol`` (and a ``seq`` when one could be read) and the loop goes on; an
exception escaping the implementation is answered with category ``internal``.
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

__all__ = ["serve"]


#: Nesting the decoder follows before giving up on a request (Python's default stops near 1000).
DECODE_DEPTH = 5000


def _decode(line: str) -> Any:
    """Parse one request; a document nested too deeply raises ``RecursionError``."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, DECODE_DEPTH))
    try:
        return json.loads(line)
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
                if expecting_key:
                    key = json.loads(text)
                elif key is not None:
                    found[key] = json.loads(text)
                    key = None
            i = end + 1
            continue
        if ch in "{[":
            depth += 1
            expecting_key = depth == 1 and ch == "{"
            key = None if depth > 1 else key
        elif ch in "}]":
            depth -= 1
        elif depth == 1 and ch == ":":
            expecting_key = False
        elif depth == 1 and ch == ",":
            expecting_key, key = True, None
        elif depth == 1 and key is not None and not ch.isspace():
            end = i
            while end < n and line[end] not in ",}":
                end += 1
            with contextlib.suppress(ValueError):
                found[key] = json.loads(line[i:end])
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
    inp = stdin or io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="surrogateescape")
    out = stdout or io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", newline="\n")
    for line in inp:
        if not line.strip():
            continue
        try:
            message = _decode(line)
        except RecursionError:
            seq = _top_level(line).get("seq")
            _answer(
                out,
                {
                    "seq": seq,
                    "error": {
                        "category": "limit",
                        "message": f"request nested more than {DECODE_DEPTH} levels deep",
                    },
                },
            )
            continue
        except ValueError as exc:
            _answer(out, {"error": {"category": "protocol", "message": f"not JSON: {exc}"}})
            continue
        if not isinstance(message, dict):
            _answer(out, {"error": {"category": "protocol", "message": "not a JSON object"}})
            continue
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
            return 0
        elif cmd == "run":
            seq = message.get("seq")
            operation = message.get("operation")
            if not isinstance(seq, int) or not isinstance(operation, str) or "input" not in message:
                _answer(
                    out,
                    {
                        "seq": seq,
                        "error": {
                            "category": "protocol",
                            "message": "run needs an integer seq, a string operation and an input",
                        },
                    },
                )
                continue
            options = {"edition": message["edition"]} if message.get("edition") else {}
            try:
                outcome = dict(impl.run(operation, message["input"], **options))
            except Exception as exc:
                print(traceback.format_exc(), file=sys.stderr)
                outcome = {
                    "error": {"category": "internal", "message": f"{type(exc).__name__}: {exc}"}
                }
            _answer(out, {"seq": seq, **outcome})
        else:
            _answer(out, {"error": {"category": "protocol", "message": f"unknown cmd {cmd!r}"}})
    return 0
