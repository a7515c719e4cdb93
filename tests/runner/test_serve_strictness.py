"""``serve`` and the subprocess transport hold to the protocol, whatever arrives.

Lines end with ``\\n`` alone; no request stops ``serve`` (deep nesting with a bad escape, an
integer of 5,000 digits); a ``seq`` is an integer, never ``true``.
"""

from __future__ import annotations

import json
import subprocess
import sys

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
    try:
        first = adapter.run("idset.decode", "1", edition=None)
        second = adapter.run("idset.decode", "1", edition=None)
        third = adapter.run("idset.decode", "1", edition=None)
    finally:
        adapter.close()
    assert first.kind == "errored"
    assert "seq True, expected 1" in first.message
    assert second.kind == "errored"
    assert "seq 2.0, expected 2" in second.message
    assert third.kind == "output"
