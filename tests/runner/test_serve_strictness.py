"""``serve`` and the subprocess transport hold to the protocol, whatever arrives.

Lines end with ``\\n`` alone; no request stops ``serve`` (deep nesting with a bad escape, an
integer of 5,000 digits); a ``seq`` is an integer, never ``true``.
"""

from __future__ import annotations

import json
import subprocess
import sys

from support import ask_each

from flux_conformance.runner.adapters.subprocess import SubprocessAdapter


def serve(lines: list[bytes]) -> list[dict]:
    proc = subprocess.run(
        [sys.executable, "-m", "flux_conformance.runner.cli", "serve"],
        input=b"".join(lines),
        capture_output=True,
        timeout=120,
        check=True,
    )
    return [json.loads(line) for line in proc.stdout.splitlines()]


def run(seq: object, value: object, operation: str = "idset.decode") -> bytes:
    return json.dumps({"cmd": "run", "seq": seq, "operation": operation, "input": value}).encode()


def test_a_bare_carriage_return_does_not_end_a_line() -> None:
    # Python's universal newlines split "a\rb" in two; the protocol's lines end at "\n".
    replies = serve(
        [b'{"cmd": "hello", "protocol": 1}\r' + run(1, "1") + b"\n", run(2, "2") + b"\n"]
    )
    assert replies[0]["error"]["category"] == "protocol"
    assert "seq" not in replies[0]  # the seq after the "\r" belongs to no request of its own
    assert replies[1] == {"seq": 2, "output": [2]}


def test_no_request_stops_serve() -> None:
    deep = b"[" * 6000 + b"1" + b"]" * 6000
    replies = serve(
        [
            b'{"x": ' + deep + b', "seq": "\\q"}\n',  # too deep, and its seq a bad escape
            b'{"seq": "\\q", "x": ' + deep + b"}\n",
            b'{"x": ' + deep + b', "seq": 5}\n',
            b'{"cmd": "run", "seq": 6, "input": [1'
            + b"0" * 5000
            + b'], "operation": "idset.decode"}\n',
            b'{"cmd": "run", "seq": 7, "operation": "idset.decode", "input": 1'
            + b"0" * 5000
            + b"}\n",
            run(True, "1") + b"\n",
            run(8, "3") + b"\n",
        ]
    )
    assert replies[0] == {
        "seq": None,
        "error": {"category": "limit", "message": "request nested more than 5000 levels deep"},
    }
    assert replies[1]["error"]["category"] == "protocol"
    assert replies[2]["seq"] == 5
    assert replies[2]["error"]["category"] == "limit"
    assert replies[3]["seq"] == 6
    assert replies[3]["error"]["category"] == "limit"
    assert replies[4]["seq"] == 7
    assert replies[5] == {
        "seq": None,
        "error": {
            "category": "protocol",
            "message": "run needs an integer seq, a string operation and an input",
        },
    }
    assert replies[6] == {"seq": 8, "output": [3]}


def test_the_transport_refuses_a_seq_that_is_not_the_integer_sent(tmp_path) -> None:
    script = tmp_path / "impl.py"
    script.write_text(
        "import json, sys\n"
        "HELLO = {'protocol': 1, 'implementation': {'name': 'x', 'version': '1'},"
        " 'operations': ['idset.decode']}\n"
        "for line in sys.stdin:\n"
        "    msg = json.loads(line)\n"
        "    if msg['cmd'] == 'hello':\n"
        "        print(json.dumps(HELLO), flush=True)\n"
        "    elif msg['cmd'] == 'run':\n"
        "        seq = {1: True, 2: 2.0}.get(msg['seq'], msg['seq'])\n"
        "        print(json.dumps({'seq': seq, 'output': [1]}), flush=True)\n"
    )
    adapter = SubprocessAdapter(f"{sys.executable} {script}", timeout=30)
    adapter.start()
    first, second, third = ask_each(adapter, "1", "1", "1")
    assert first.kind == "errored"
    assert "seq True, expected 1" in first.message
    assert second.kind == "errored"
    assert "seq 2.0, expected 2" in second.message
    assert third.kind == "output"


# -- blank lines and long lines ------------------------------------------------------------------


def _serve_in_process(stream: object) -> list[dict]:
    import io

    from flux_conformance.runner.adapters.inprocess import ReferenceImplementation
    from flux_conformance.runner.tools.serve import serve as serve_loop

    out = io.StringIO()
    serve_loop(
        ReferenceImplementation(),
        name="reference",
        version="0",
        operations=["idset.decode"],
        stdin=stream,  # type: ignore[arg-type]
        stdout=out,
    )
    return [json.loads(line) for line in out.getvalue().splitlines()]


# Characters str.strip() takes as whitespace though JSON does not (RFC 8259, section 2).
NOT_JSON_WHITESPACE = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\xa0", "\u2028"]


def test_every_line_but_a_blank_one_gets_an_answer() -> None:
    import io

    lines = [c.encode() + b"\n" for c in NOT_JSON_WHITESPACE]
    lines += [b"\n", b" \t\r\n", b"\r\n"]  # blank: JSON whitespace alone, no request
    lines.append(run(9, "1") + b"\n")
    replies = _serve_in_process(io.BytesIO(b"".join(lines)))
    assert len(replies) == len(NOT_JSON_WHITESPACE) + 1
    assert all(r["error"]["category"] == "protocol" for r in replies[:-1])
    assert replies[-1] == {"seq": 9, "output": [1]}
    # The same through a real process, whose stdin is bytes.
    assert serve(lines) == replies


class _Endless:
    """A stream of one line of ``size`` bytes of garbage, made as it is read.

    It takes only bounded reads: reading a line whole, or iterating, is refused.
    """

    def __init__(self, size: int, then: bytes) -> None:
        self.left = size
        self.then = then
        self.biggest = 0

    def readline(self, size: int = -1) -> bytes:
        assert 0 < size <= 64 * 1024 * 1024 + 1, "an unbounded read of a line"
        self.biggest = max(self.biggest, size)
        if self.left:
            piece = min(size, self.left)
            self.left -= piece
            return b"x" * piece if self.left else b"x" * (piece - 1) + b"\n"
        line, _, self.then = self.then.partition(b"\n")
        return line + b"\n" if line else b""

    def __iter__(self) -> object:
        raise AssertionError("a line read whole, however long")


def test_a_line_over_64_mib_is_refused_without_being_read_whole() -> None:
    stream = _Endless(200_000_000, run(3, "2") + b"\n")
    replies = _serve_in_process(stream)
    assert replies[0]["seq"] is None
    assert replies[0]["error"]["category"] == "limit"
    assert "longer than 67108864 bytes" in replies[0]["error"]["message"]
    assert replies[1] == {"seq": 3, "output": [2]}


def test_the_line_bound_is_64_mib_exactly() -> None:
    import io

    at_bound = b'{"seq": 4, "x": "' + b"a" * (64 * 1024 * 1024 - 18) + b'"'
    over = b'{"seq": 5, "x": "' + b"a" * (64 * 1024 * 1024 - 17) + b'"'
    assert (len(at_bound), len(over)) == (64 * 1024 * 1024, 64 * 1024 * 1024 + 1)
    replies = _serve_in_process(io.BytesIO(at_bound + b"\n" + over + b"\n"))
    # At the bound, the line is read: a request that is no protocol message, with its seq.
    assert replies[0]["seq"] == 4
    assert replies[0]["error"]["category"] == "protocol"
    assert replies[1] == {
        "seq": None,
        "error": {
            "category": "limit",
            "message": "request line longer than 67108864 bytes: not read",
        },
    }
