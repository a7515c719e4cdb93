"""A hostile implementation speaking the subprocess protocol (for the runner's hostile tests).

``python hostile_impl.py KIND``; every ``run`` request gets the hostile reply KIND names, built
as raw JSON text (so that NaN, lone surrogates and 5,000-digit integers reach the runner as
an implementation would send them).  With ``HOSTILE_PIDS=FILE`` in its environment it writes
the pid of every process it starts to FILE, one per line, so that a test can check that none
is left.

Answers (to every case):

* ``huge-list``: a list of 5,000,000 integers (38 MB, under the 64 MiB line bound);
* ``huge-string``: a string of 60 MiB;
* ``wide-power``: the reference's answer to ``shape.parse`` with the first count made
  ``{min: 2, max: 2**64-1, operator: "^", operand: 10**10}``;
* ``many-properties``: a constraint naming 200 properties;
* ``surrogate``: ``["\\ud800"]``, valid JSON that no UTF-8 encoder can write raw;
* ``xml-forbidden``: a string holding U+FFFF, NUL, ESC and an OSC sequence;
* ``nan``: ``[NaN, Infinity]``;
* ``long-integer``: ``[10**5000]``;
* ``early``: the right answer, and in the same write a reply for the next seq, before its
  request;
* ``early-part``: the right answer, and in the same write the start of a line with no end;
* ``seq-true``: the right answer with ``"seq": true``;
* ``stderr-escapes``: writes escape sequences and NUL to stderr, then exits.

Hello (then the right answer to every case):

* ``hello-surrogate``: version ``"\\ud800"``;
* ``hello-huge-name``: a name of 20 MB;
* ``hello-markup``: a name and version holding a newline, a Markdown heading, raw HTML and
  terminal escapes;
* ``bidi``: a name and version holding U+009B (CSI), U+202E (right-to-left override) and
  U+200F, and every case refused with a category and a message holding them too.

Processes: ``setsid-hang`` starts a child that leaves the session with ``setsid()`` and a
grandchild daemon (double fork), then never answers a case; ``hang`` never answers a case
(with ``HOSTILE_HANGING=FILE``, both add a line to FILE for each case they are sent, so that a
test can wait for a case to be under way, or count the cases sent, without a clock);
``ignore-stop`` starts a child, answers every case right, and ignores ``stop`` (and the end
of its input): it creates the file ``HOSTILE_STOPPED`` names when ``stop`` comes, and sleeps.

``clean-escape`` answers every case right, but first starts a daemon that leaves nothing to
find it by: a double fork with ``setsid()`` between, and the grandchild runs with an empty
environment (no token), so no walk of the implementation's descendants or of environments
reaches it.

With ``HOSTILE_ONCE=FILE``, every kind answers the very first request of all its lives right
(the runner's pre-flight check that the implementation can be run at all), and marks it by
creating FILE; every later request gets the hostile answer.
"""

import json
import os
import subprocess
import sys
import time

from flux_conformance.reference.errors import FormatError
from flux_conformance.reference.operations import OPERATIONS, run

KIND = sys.argv[1]
PIDS = os.environ.get("HOSTILE_PIDS")


def note_pid(pid):
    if PIDS:
        with open(PIDS, "a", encoding="utf-8") as handle:
            handle.write(f"{pid}\n")


def write(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def right(msg):
    try:
        return {"output": run(msg["operation"], msg["input"], edition=msg.get("edition"))}
    except FormatError as exc:
        return {"error": {"category": exc.category, "message": str(exc)}}


def raw_output(seq, text):
    write(f'{{"seq": {seq}, "output": {text}}}')


_CACHE = {}


def cached(name, build):
    if name not in _CACHE:
        _CACHE[name] = build()
    return _CACHE[name]


def start_escapees():
    """A child that calls setsid(), and a daemon (double fork); both sleep an hour."""
    escapee = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(3600)"], start_new_session=True
    )
    note_pid(escapee.pid)
    code = (
        "import os, sys, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        open(sys.argv[1], 'a').write(f'{os.getpid()}\\n') if sys.argv[1] else None\n"
        "        time.sleep(3600)\n"
        "    os._exit(0)\n"
        "os.wait()\n"
    )
    subprocess.run([sys.executable, "-c", code, PIDS or ""], check=True)


def start_clean_escapee():
    """A double-forked daemon in a session of its own, with an empty environment."""
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            # The daemon notes its own pid once it runs with the empty environment: a pid
            # written before the execve could be read while the old environment is still there.
            code = "import os, sys, time\nopen(sys.argv[1], 'a').write(f'{os.getpid()}\\n')\n"
            code += "time.sleep(3600)\n"
            argv = [sys.executable, "-c", code, PIDS or os.devnull]
            os.execve(sys.executable, argv, {})
        os._exit(0)
    os.waitpid(pid, 0)


def hello():
    name, version = f"hostile-{KIND}", "1"
    if KIND == "hello-surrogate":
        version = "\ud800"
    elif KIND == "hello-huge-name":
        name = "n" * 20_000_000
    elif KIND == "hello-markup":
        name = "evil\n# Injected heading\n<img src=x onerror=alert(1)><details open>"
        version = "1\x1b[2J\x1b]0;owned\x07 | col"
    elif KIND == "bidi":
        name, version = "hostile\u202e\u009b[2Jbidi", "1\u009b\u200f"
    if KIND == "setsid-hang":
        start_escapees()
    if KIND == "clean-escape":
        start_clean_escapee()
    if KIND == "ignore-stop":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        note_pid(child.pid)
    message = {"protocol": 1, "implementation": {"name": name, "version": version}}
    message["operations"] = list(OPERATIONS)
    write(json.dumps(message))  # ASCII: the lone surrogate travels as an escape


def answer(msg):
    seq = msg["seq"]
    once = os.environ.get("HOSTILE_ONCE")
    if once and not os.path.exists(once):
        # The runner's pre-flight request: answered right, so that the run itself begins.
        open(once, "w").close()
        write(json.dumps({"seq": seq, **right(msg)}))
        return
    if KIND == "huge-list":
        raw_output(seq, cached("list", lambda: json.dumps(list(range(5_000_000)))))
    elif KIND == "huge-string":
        raw_output(seq, cached("string", lambda: '"' + "a" * (60 * 1024 * 1024) + '"'))
    elif KIND == "wide-power":
        reply = right(msg)
        if isinstance(reply.get("output"), list) and reply["output"]:
            reply["output"][0]["count"] = {
                "min": 2,
                "max": 2**64 - 1,
                "operator": "^",
                "operand": 10**10,
            }
        write(json.dumps({"seq": seq, **reply}))
    elif KIND == "many-properties":
        raw_output(seq, json.dumps({"or": [{"properties": [f"p{i}"]} for i in range(200)]}))
    elif KIND == "surrogate":
        raw_output(seq, '["\\ud800"]')
    elif KIND == "xml-forbidden":
        raw_output(seq, '["\\uffff\\u0000\\u001b[31mred\\u001b]0;title\\u0007"]')
    elif KIND == "nan":
        raw_output(seq, "[NaN, Infinity]")
    elif KIND == "long-integer":
        raw_output(seq, "[1" + "0" * 5000 + "]")
    elif KIND == "early":
        # One write of both lines (atomic in a pipe): the early line is there before the
        # runner can send the next request, so it must be found, however loaded the machine.
        write(
            json.dumps({"seq": seq, **right(msg)})
            + "\n"
            + json.dumps({"seq": seq + 1, "output": []})
        )
    elif KIND == "early-part":
        # The start of a line, with no end, written with the answer.
        write(json.dumps({"seq": seq, **right(msg)}) + '\n{"seq": ' + str(seq + 1)[:-1])
    elif KIND == "seq-true":
        write(json.dumps({"seq": True, **right(msg)}))
    elif KIND == "stderr-escapes":
        sys.stderr.write("\x1b[2J\x1b]8;;http://example.invalid\x07link\x00\x1b[31mred\n")
        sys.stderr.flush()
        os._exit(3)
    elif KIND == "bidi":
        error = {"category": "evil\u202eyrogetac\u009b", "message": "m\u202e\u009b\u200f"}
        write(json.dumps({"seq": seq, "error": error}))
    elif KIND in ("setsid-hang", "hang"):
        hanging = os.environ.get("HOSTILE_HANGING")
        if hanging:
            with open(hanging, "a", encoding="utf-8") as handle:
                handle.write(f"{seq}\n")
        time.sleep(3600)
    else:
        write(json.dumps({"seq": seq, **right(msg)}))


def main():
    note_pid(os.getpid())
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["cmd"] == "hello":
            hello()
        elif msg["cmd"] == "stop":
            if KIND == "ignore-stop":
                open(os.environ["HOSTILE_STOPPED"], "w").close()
                time.sleep(3600)
            return
        else:
            answer(msg)


main()
