"""The subprocess transport against small hostile implementations, one behaviour each.

Each fake below speaks the JSON Lines protocol (docs/protocol.md) and breaks it in one way,
chosen by the request's ``seq`` (which goes on across restarts) so that what it does never
depends on timing: what is written before a request is written in the same write as the
previous reply, and every start is counted in a file.
"""

from __future__ import annotations

import os
import shlex
import signal
import sys
import threading
import time
from pathlib import Path

import pytest
from support import ask_each

from flux_conformance.runner.adapters.base import AdapterError, ImplSpecError, Reply
from flux_conformance.runner.adapters.subprocess import SubprocessAdapter

_FAKE = r"""
import fcntl, json, os, sys, termios, time

mode, log = sys.argv[1], sys.argv[2]
with open(log, "a") as handle:
    handle.write("start\n")
starts = sum(1 for _ in open(log))
name = sys.argv[3] if len(sys.argv) > 3 else "hostile"


def out(data):
    os.write(1, data)  # one write: what it holds reaches the runner together


def drained():  # until the runner has read all written: the next write is a read of its own
    while int.from_bytes(fcntl.ioctl(1, termios.FIONREAD, b"\0\0\0\0"), sys.byteorder):
        time.sleep(0.001)


def reply(seq, **outcome):
    return (json.dumps({"seq": seq, **outcome}) + "\n").encode()


flags = mode.split(",")
if "no-hello" in flags or ("one-start" in flags and starts > 1):
    sys.exit(0)
for line in sys.stdin.buffer:
    msg = json.loads(line)
    if msg["cmd"] == "hello":
        if msg != {"cmd": "hello", "protocol": 1}:
            sys.exit(2)
        if "silent-hello" in flags:
            with open(log + ".pid", "w") as handle:
                handle.write(str(os.getpid()))
            time.sleep(3600)
        if "closed-stdin" in flags:
            os.close(0)  # before the hello answer: every request finds it closed
        hello = {"protocol": 1, "implementation": {"name": name, "version": "1"},
                 "operations": ["idset.decode"]}
        out((json.dumps(hello) + "\n").encode())
        if "deaf" in flags or "closed-stdin" in flags:
            time.sleep(3600)  # reads nothing more
        continue
    if msg["cmd"] == "stop":
        with open(log + ".stop", "a") as handle:
            handle.write("stop\n")
    if msg["cmd"] != "run":
        break
    seq = msg["seq"]
    plan = dict(part.split("=") for part in mode.split(",") if "=" in part)
    what = plan.get(str(seq), plan.get("*", "answer"))
    if what == "answer":
        out(reply(seq, output=[seq]))
    elif what == "early-lines":  # the next two replies, before their requests
        out(reply(seq, output=[seq]) + reply(seq + 1, output=[0]) + reply(seq + 2, output=[0]))
    elif what == "early-part":  # the start of the next reply; its end once it is asked
        out(reply(seq, output=[seq]) + b'{"seq": %d, "output"' % (seq + 1))
        sys.stdin.buffer.readline()
        out(b': [0]}\n')
    elif what == "garbage":
        out(b"not json\n")
    elif what == "array":
        out(b"[1]\n")
    elif what == "nan":
        out(b'{"seq": %d, "output": NaN}\n' % seq)
    elif what.startswith("digits"):  # an integer of this many digits (negative: with a sign)
        digits = int(what[len("digits"):])
        sign = b"-" if digits < 0 else b""
        out(b'{"seq": %d, "output": %s%s}\n' % (seq, sign, b"9" * abs(digits)))
    elif what == "deep":
        out(b'{"seq": %d, "output": %s%s}\n' % (seq, b"[" * 100000, b"]" * 100000))
    elif what == "pieces":  # the reply in pieces, each read apart; its newline alone
        text = reply(seq, output=[seq])
        for piece in (text[:1], text[1:9], text[9:-1], text[-1:]):
            out(piece)
            drained()
    elif what.startswith("line"):  # a reply line of this many bytes; its newline read apart
        size = int(what[len("line"):])
        head = b'{"seq": %d, "output": "' % seq
        out(head + b"1" * (size - len(head) - 2) + b'"}')
        drained()
        out(b"\n")
    elif what == "length":
        out(reply(seq, output=len(msg["input"])))
    elif what == "two-kinds":
        out(reply(seq, output=[seq], error={"category": "syntax"}))
    elif what == "exit":
        sys.exit(0)
    elif what.startswith("stderr"):  # write this many bytes of stderr, then answer
        size = int(what[len("stderr"):])
        os.write(2, (b"%d:" % seq + b"0123456789" * (size // 10 + 1))[:size])
        out(reply(seq, output=[seq]))
    # "hang": no answer
"""


def _adapter(tmp_path: Path, mode: str, *, name: str | None = None, **options) -> SubprocessAdapter:
    script = tmp_path / "fake.py"
    script.write_text(_FAKE, encoding="utf-8")
    argv = [sys.executable, str(script), mode, str(tmp_path / "starts")]
    if name is not None:
        argv.append(name)
    options.setdefault("timeout", 30.0)
    return SubprocessAdapter(shlex.join(argv), start_timeout=60.0, **options)


def _starts(tmp_path: Path) -> int:
    path = tmp_path / "starts"
    return len(path.read_text().splitlines()) if path.exists() else 0


def _run(adapter: SubprocessAdapter, count: int) -> list[Reply]:
    return ask_each(adapter, *["1"] * count)


# -- a reply sent before its request ---------------------------------------------------------


def test_lines_written_before_their_request_are_a_fault_not_answers(tmp_path: Path) -> None:
    replies = _run(_adapter(tmp_path, "1=early-lines"), 3)
    assert replies[0] == Reply("output", [1])
    assert replies[1].kind == "errored"
    # The fault quotes the first line written early, the would-be answer to request 2.
    assert 'before request 2: \'{"seq": 2, "output": [0]}\'' in replies[1].message
    # A fresh process answers the next request.
    assert replies[2] == Reply("output", [3])
    assert _starts(tmp_path) == 2


def test_the_start_of_a_line_written_before_its_request_is_a_fault(tmp_path: Path) -> None:
    replies = _run(_adapter(tmp_path, "1=early-part"), 3)
    assert replies[0] == Reply("output", [1])
    assert replies[1].kind == "errored"
    assert "before request 2" in replies[1].message
    assert "(the start of a line)" in replies[1].message
    assert replies[2] == Reply("output", [3])


# -- starts and timeouts given up on ---------------------------------------------------------


def test_an_implementation_that_never_starts_is_given_up_on_after_three_starts(
    tmp_path: Path,
) -> None:
    adapter = _adapter(tmp_path, "no-hello")
    with pytest.raises(AdapterError, match="start failed"):
        adapter.start()
    replies = _run(adapter, 4)
    assert _starts(tmp_path) == 3
    assert all(r.kind == "errored" for r in replies)
    assert "gave up after 3 failed starts" in replies[-1].message
    assert "gave up" not in replies[0].message
    # Before a hello answer names it, the implementation is known by its program.
    assert adapter.name == sys.executable


def test_failed_starts_are_counted_from_the_last_good_start(tmp_path: Path) -> None:
    # Start 1 answers hello and exits on its first case; starts 2 to 4 fail; then it is given up.
    replies = _run(_adapter(tmp_path, "one-start,*=exit"), 5)
    assert _starts(tmp_path) == 4
    assert "before replying" in replies[0].message
    assert "gave up after 3 failed starts" in replies[-1].message


def _ask(adapter: SubprocessAdapter, timeouts: list[float]) -> list[Reply]:
    """One request per timeout: a short one where the fake hangs, a long one where it answers
    (so that only a hang times out, however loaded the machine)."""
    replies = []
    try:
        for timeout in timeouts:
            adapter.timeout = timeout
            replies.append(adapter.run("idset.decode", "1", edition=None))
    finally:
        adapter.close()
    return replies


def test_five_timeouts_in_a_row_give_up_on_the_implementation(tmp_path: Path) -> None:
    # An answer first: the count of timeouts in a row starts at 0 after it.
    replies = _ask(_adapter(tmp_path, "1=answer,*=hang"), [60.0] + [0.5] * 7)
    assert replies[0] == Reply("output", [1])
    timed_out = [r for r in replies[1:] if "no reply within the timeout" in r.message]
    assert len(timed_out) == 5
    assert replies[6].message.startswith("gave up on hostile after 5 timeouts in a row")
    assert replies[7].message == replies[6].message
    assert _starts(tmp_path) == 5  # no start after giving up


def test_only_timeouts_in_a_row_count_toward_giving_up(tmp_path: Path) -> None:
    # With --max-timeouts 2: a fault that is not a timeout starts the count again.
    adapter = _adapter(tmp_path, "1=hang,2=garbage,3=hang,4=hang", max_timeouts=2)
    replies = _ask(adapter, [0.5, 60.0, 0.5, 0.5, 0.5])
    assert ["timeout" in r.message for r in replies[:4]] == [True, False, True, True]
    assert "gave up" not in replies[3].message
    assert "after 2 timeouts in a row" in replies[4].message


def test_max_timeouts_zero_is_never_given_up_on_whatever_the_fault(tmp_path: Path) -> None:
    adapter = _adapter(tmp_path, "1=garbage,2=hang,3=hang,4=answer", max_timeouts=0)
    replies = _ask(adapter, [60.0, 0.5, 0.5, 60.0])
    assert [r.kind for r in replies[:3]] == ["errored"] * 3
    assert replies[3] == Reply("output", [4])


# -- what is kept of stderr ------------------------------------------------------------------


def _stderr_read(adapter: SubprocessAdapter, ending: bytes) -> None:
    """Wait until the adapter has read stderr up to ``ending`` (it reads in its own thread)."""
    proc = adapter._proc
    assert proc is not None
    deadline = time.monotonic() + 60
    while not proc.stderr_tail().encode().endswith(ending):
        assert time.monotonic() < deadline, "stderr never read"
        time.sleep(0.01)


# Sizes of separate stderr writes, each read before the next is written; each list catches a
# way of dropping too much of the tail (or of failing to read it).
@pytest.mark.parametrize(
    "sizes",
    [(4000, 100, 100), (1, 4095), (4096, 4096), (3000, 1096, 4096)],
    ids=lambda sizes: "-".join(map(str, sizes)),
)
def test_the_stderr_kept_is_its_last_4096_bytes(tmp_path: Path, sizes: tuple[int, ...]) -> None:
    plan = ",".join(f"{seq}=stderr{size}" for seq, size in enumerate(sizes, 1))
    adapter = _adapter(tmp_path, f"{plan},*=garbage")
    written = b""
    try:
        for seq, size in enumerate(sizes, 1):
            assert adapter.run("idset.decode", "1", edition=None) == Reply("output", [seq])
            written += (b"%d:" % seq + b"0123456789" * (size // 10 + 1))[:size]
            _stderr_read(adapter, written[-size:])
        fault = adapter.run("idset.decode", "1", edition=None)
    finally:
        adapter.close()
    assert fault.message == "reply is not a JSON object: 'not json'"
    assert fault.stderr.encode() == written[-4096:]


def test_a_stderr_flood_is_not_kept_in_memory(tmp_path: Path) -> None:
    size = 16 << 20
    adapter = _adapter(tmp_path, f"1=stderr{size}")
    try:
        assert adapter.run("idset.decode", "1", edition=None) == Reply("output", [1])
        _stderr_read(adapter, (b"1:" + b"0123456789" * (size // 10 + 1))[:size][-100:])
        proc = adapter._proc
        assert proc is not None
        assert sum(len(chunk) for chunk in proc._stderr) < 1 << 20
    finally:
        adapter.close()


# -- the name a report shows -----------------------------------------------------------------


def test_the_name_is_shown_on_one_line_with_its_words_apart(tmp_path: Path) -> None:
    adapter = _adapter(tmp_path, "*=answer", name="my\n impl\tv2")
    try:
        adapter.start()
        assert adapter.name == "my impl v2"
    finally:
        adapter.close()


# -- replies that are not answers ------------------------------------------------------------


def test_a_reply_written_in_pieces_is_one_reply(tmp_path: Path) -> None:
    assert _run(_adapter(tmp_path, "*=pieces"), 2) == [Reply("output", [1]), Reply("output", [2])]


def test_a_reply_of_64_mib_is_read_whole_when_its_newline_comes_later(tmp_path: Path) -> None:
    # Every byte of the line is read before its newline is written: the bound holds for the
    # line, not for what has arrived of it.
    size = 64 * 1024 * 1024
    replies = _run(_adapter(tmp_path, f"1=line{size}"), 2)
    assert replies[0].kind == "output"
    assert len(replies[0].value) == size - len('{"seq": 1, "output": ""}')
    assert replies[1] == Reply("output", [2])


def test_nan_in_a_reply_is_a_fault_not_a_null_output(tmp_path: Path) -> None:
    replies = _run(_adapter(tmp_path, "1=nan"), 2)
    assert replies[0].kind == "errored"
    assert "NaN" in replies[0].message
    assert replies[1] == Reply("output", [2])


def test_an_integer_is_read_up_to_4300_digits_and_a_longer_one_is_a_fault(tmp_path: Path) -> None:
    replies = _run(_adapter(tmp_path, "1=digits-4300,2=digits4300,3=digits4301,4=answer"), 4)
    assert replies[0] == Reply("output", -int("9" * 4300))
    assert replies[1] == Reply("output", int("9" * 4300))
    assert replies[2].kind == "errored"
    assert "4301 digits" in replies[2].message
    assert replies[3] == Reply("output", [4])


def test_a_reply_nested_too_deeply_to_decode_is_a_fault(tmp_path: Path) -> None:
    replies = _run(_adapter(tmp_path, "1=deep"), 2)
    assert replies[0].kind == "errored"
    assert replies[0].message == "reply nested too deeply to decode"
    assert replies[1] == Reply("output", [2])


def test_a_reply_that_is_not_an_object_is_a_fault(tmp_path: Path) -> None:
    replies = _run(_adapter(tmp_path, "1=array"), 2)
    assert replies[0].kind == "errored"
    assert replies[0].message == "reply is not a JSON object but an array"
    assert replies[1] == Reply("output", [2])


def test_a_reply_breaking_the_schema_restarts_the_implementation(tmp_path: Path) -> None:
    replies = _run(_adapter(tmp_path, "1=two-kinds"), 2)
    assert replies[0].kind == "errored"
    assert "breaks the protocol" in replies[0].message
    assert replies[1] == Reply("output", [2])
    assert _starts(tmp_path) == 2


# -- requests ---------------------------------------------------------------------------------


def test_requests_are_numbered_from_1_and_an_unsendable_one_takes_no_number(
    tmp_path: Path,
) -> None:
    unsendable, first, second = ask_each(_adapter(tmp_path, "*=answer"), float("nan"), "1", "1")
    assert unsendable.kind == "errored"
    assert "cannot be written as JSON" in unsendable.message
    assert (first, second) == (Reply("output", [1]), Reply("output", [2]))


def test_a_request_larger_than_a_pipe_arrives_whole(tmp_path: Path) -> None:
    sizes = (1, 1 << 20, 3 * (1 << 20) + 7)
    answers = ask_each(_adapter(tmp_path, "*=length"), *("x" * size for size in sizes))
    assert answers == [Reply("output", 1), Reply("output", 1 << 20), Reply("output", 3 << 20 | 7)]


def test_an_implementation_that_stops_reading_times_out_on_the_write(tmp_path: Path) -> None:
    adapter = _adapter(tmp_path, "deaf", timeout=1.0)
    try:
        reply = adapter.run("idset.decode", "x" * (4 << 20), edition=None)
    finally:
        adapter.close()
    assert reply.kind == "errored"
    assert reply.message == "timed out writing the request (the implementation stopped reading)"


def test_an_implementation_that_closed_its_stdin_is_a_fault_at_once(tmp_path: Path) -> None:
    reply = _run(_adapter(tmp_path, "closed-stdin", timeout=600.0), 1)[0]
    assert reply.kind == "errored"
    assert reply.message == "the implementation closed its stdin"


@pytest.mark.parametrize("command", ["'unclosed", "   "])
def test_a_command_that_cannot_be_split_or_is_empty_is_a_usage_error(command: str) -> None:
    with pytest.raises(ImplSpecError):
        SubprocessAdapter(command)


# -- stopping ---------------------------------------------------------------------------------


def test_close_asks_the_implementation_to_stop(tmp_path: Path) -> None:
    adapter = _adapter(tmp_path, "*=answer")
    adapter.start()
    adapter.close(grace=60.0)
    assert (tmp_path / "starts.stop").read_text() == "stop\n"


class _Interrupted(BaseException):
    pass


def test_an_interrupt_while_starting_propagates_and_leaves_no_process(tmp_path: Path) -> None:
    pid_file = tmp_path / "starts.pid"

    def interrupt_once_started() -> None:
        deadline = time.monotonic() + 60
        while not pid_file.exists() or not pid_file.read_text():
            if time.monotonic() > deadline:
                return
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGUSR1)

    def raise_interrupted(signum, frame):
        raise _Interrupted

    previous = signal.signal(signal.SIGUSR1, raise_interrupted)
    thread = threading.Thread(target=interrupt_once_started)
    try:
        adapter = _adapter(tmp_path, "silent-hello")
        thread.start()
        with pytest.raises(_Interrupted):
            adapter.start()
    finally:
        thread.join()
        signal.signal(signal.SIGUSR1, previous)
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 60
    while _alive(pid):
        assert time.monotonic() < deadline, "the implementation was left running"
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_process_that_cannot_be_started_at_all_is_an_error_at_start(tmp_path: Path) -> None:
    adapter = _adapter(tmp_path, "*=answer", cwd=str(tmp_path / "no-such-folder"))
    with pytest.raises(AdapterError, match=r"^cannot start "):
        adapter.start()
    reply = adapter.run("idset.decode", "1", edition=None)
    assert reply.kind == "errored"
    assert reply.message.startswith("cannot start ")
    assert _starts(tmp_path) == 0
