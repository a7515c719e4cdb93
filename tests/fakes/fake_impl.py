"""A deliberately faulty implementation speaking the subprocess protocol (for runner tests).

``python fake_impl.py MODE [ARG]``; it answers correctly (through the reference) except
where MODE says otherwise:

* ``good``: always right.
* ``wrong``: every output replaced by a wrong but well-formed one.
* ``garbage``: prints a line that is not JSON for the case whose input is ARG.
* ``crash``: exits with status 3 on the case whose input is ARG (after writing to stderr).
* ``hang``: never answers the case whose input is ARG.
* ``wrong-seq``: answers every case with a seq one too high.
* ``exit-after``: exits after answering ARG cases.
* ``no-hello``: exits at once without answering hello.
* ``bad-hello``: answers hello with a message that breaks the schema.
* ``slow-hello``: never answers hello.
* ``fork``: starts a child process that sleeps (and would outlive a careless runner).
* ``unsupported``: announces no operation at all.
* ``schema``: answers a reply with both output and error.
* ``flood``: writes 1 MB to stderr before every answer.
* ``big``: answers the case whose input is ARG with a reply longer than the runner allows.
* ``close-stdout``: closes stdout on the case whose input is ARG but keeps running.
* ``split``: writes every reply in three pieces, pausing 0.3 s between them.
* ``unflushed``: greets, then writes every reply without flushing it (a pipe is block-buffered,
  so no reply arrives: the mistake docs/protocol.md warns of).
"""

import json
import os
import subprocess
import sys
import time

from flux_conformance.reference.errors import FormatError
from flux_conformance.reference.operations import OPERATIONS, run

MODE = sys.argv[1]
ARG = sys.argv[2] if len(sys.argv) > 2 else None
UNFLUSHED = open(sys.stdout.fileno(), "w", buffering=1 << 16, closefd=False)  # noqa: SIM115


def answer(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    answered = 0
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["cmd"] == "hello":
            if MODE == "no-hello":
                sys.exit(0)
            if MODE == "slow-hello":
                time.sleep(3600)
            if MODE == "bad-hello":
                answer({"protocol": 1, "operations": "all"})
                continue
            if MODE == "fork":
                subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
            ops = [] if MODE == "unsupported" else list(OPERATIONS)
            answer(
                {
                    "protocol": 1,
                    "implementation": {"name": f"fake-{MODE}", "version": "0"},
                    "operations": ops,
                }
            )
            continue
        if msg["cmd"] == "stop":
            return
        seq, value = msg["seq"], msg["input"]
        hit = ARG is not None and json.dumps(value) == json.dumps(ARG)
        if MODE == "flood":
            sys.stderr.write("x" * (1 << 20))
            sys.stderr.flush()
        if MODE == "garbage" and hit:
            sys.stdout.write("this is not json\n")
            sys.stdout.flush()
            continue
        if MODE == "crash" and hit:
            sys.stderr.write("fake: crashing on purpose\n")
            sys.stderr.flush()
            os._exit(3)
        if MODE == "hang" and hit:
            time.sleep(3600)
        if MODE == "close-stdout" and hit:
            sys.stdout.close()
            os.close(1)
            time.sleep(3600)
        if MODE == "big" and hit:
            sys.stdout.write(f'{{"seq": {seq}, "output": "')
            chunk = "a" * (1 << 20)
            for _ in range(100):
                sys.stdout.write(chunk)
            sys.stdout.write('"}\n')
            sys.stdout.flush()
            continue
        try:
            reply = {"output": run(msg["operation"], value, edition=msg.get("edition"))}
        except FormatError as exc:
            reply = {"error": {"category": exc.category, "message": str(exc)}}
        if MODE == "wrong":
            reply = {"output": [987654321]} if "output" in reply else {"output": [0]}
        if MODE == "schema":
            reply = {"output": 1, "error": {"category": "syntax"}}
        if MODE == "wrong-seq":
            seq += 1
        if MODE == "split":
            text = json.dumps({"seq": seq, **reply}) + "\n"
            third = max(1, len(text) // 3)
            for piece in (text[:third], text[third : 2 * third], text[2 * third :]):
                sys.stdout.write(piece)
                sys.stdout.flush()
                time.sleep(0.3)
        elif MODE == "unflushed":
            # Block-buffered whatever PYTHONUNBUFFERED says, as a C program's stdout on a pipe.
            UNFLUSHED.write(json.dumps({"seq": seq, **reply}) + "\n")
        else:
            answer({"seq": seq, **reply})
        answered += 1
        if MODE == "exit-after" and answered >= int(ARG):
            sys.exit(0)


main()
