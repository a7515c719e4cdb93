"""The subprocess transport: an implementation in any language, speaking JSON Lines.

``--impl exec:COMMAND`` starts COMMAND once (split like a shell would, no shell involved)
and exchanges UTF-8 JSON objects, one per line, on its stdin and stdout; its stderr is free
for logs, and the runner keeps the last :data:`STDERR_TAIL` bytes of it.  The messages are
defined in ``runner/schemas/protocol.json`` and documented in ``docs/protocol.md``.

Faults never stop a run: a crash, a reply that is not JSON or breaks the schema, a wrong
``seq`` (or a reply written before its request), an over-long reply, or no reply within the
per-case timeout makes that case *errored* (with the stderr tail), the process and all its
descendants are killed, and the next case starts a new process.  After
:data:`MAX_START_FAILURES` failed starts in a row, or ``max_timeouts`` timeouts in a row
(:data:`MAX_TIMEOUTS` by default), the implementation is given up on, and every remaining case
is errored at once with one message saying why.

Descendants: the implementation runs in a session of its own, under a subreaper on Linux
(``_shepherd.py``), and everything it starts carries a token in its environment
(:data:`TOKEN_VARIABLE`).  Killing it kills every process found under it in ``/proc`` or
carrying its token, then its process group, so a child that left the session with
``setsid()``, double-forked and cleared its environment (a daemon, say) goes too.
"""

from __future__ import annotations

import collections
import contextlib
import fcntl
import json
import os
import queue
import secrets
import select
import shlex
import signal
import subprocess
import sys
import termios
import threading
import time
from typing import Any

from flux_conformance.runner.adapters._processes import TOKEN_VARIABLE, kill_tree, shepherded
from flux_conformance.runner.adapters.base import (
    AdapterError,
    ImplSpecError,
    Reply,
    protocol_validator,
    reply_from_outcome,
)
from flux_conformance.runner.bounds import MAX_INT_DIGITS, MAX_LINE_BYTES, SHOWN_NAME, shown
from flux_conformance.runner.signals import deferred

__all__ = [
    "MAX_LINE_BYTES",
    "MAX_START_FAILURES",
    "MAX_TIMEOUTS",
    "STDERR_TAIL",
    "TOKEN_VARIABLE",
    "SubprocessAdapter",
]

#: How much of the implementation's stderr is kept for reports.
STDERR_TAIL = 4096
#: Consecutive failed starts after which the implementation is given up on.
MAX_START_FAILURES = 3
#: The fault of a request left unanswered.  The commonest cause is a reply written but never
#: flushed (stdout is block-buffered when it is a pipe), so the message says so.
NO_REPLY = (
    "no reply within the timeout (if the implementation wrote one, it may not have flushed its "
    "stdout: flush after each reply, see docs/protocol.md)"
)
#: Consecutive timeouts after which the implementation is given up on (``--max-timeouts``).
MAX_TIMEOUTS = 5

_EOF = object()
_OVERLONG = object()
_STARTED = protocol_validator("started")


class _Fault(Exception):
    """The implementation broke the protocol; the message says how."""

    def __init__(self, message: str, *, timeout: bool = False) -> None:
        super().__init__(message)
        self.timeout = timeout


class _Unsendable(Exception):
    """The request itself cannot be encoded (not the implementation's fault)."""


def _decode(line: bytes) -> Any:
    """One reply line as JSON, strictly: no NaN or Infinity, integers Python can read."""
    try:
        return _DECODER.decode(line.decode("utf-8"))
    except RecursionError:
        raise _Fault("reply nested too deeply to decode") from None
    except _Fault:
        raise
    except (UnicodeDecodeError, ValueError):
        text = shown(line[:200].decode("utf-8", "replace"))
        raise _Fault(f"reply is not a JSON object: {text!r}") from None


def _not_json(name: str) -> Any:
    raise _Fault(f"reply holds {name}, which is not JSON (RFC 8259 has no such number)")


def _bounded_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _Fault(
            f"reply holds an integer of {digits} digits; at most {MAX_INT_DIGITS} are read"
        )
    return int(text)


#: Strict JSON for replies, made once (``json.loads`` with hooks makes a decoder a call).
_DECODER = json.JSONDecoder(parse_constant=_not_json, parse_int=_bounded_int)


def _one_line(text: str) -> str:
    return shown(" ".join(text[: SHOWN_NAME * 2].split()), SHOWN_NAME)


def _json_type(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


def _unread(stream: Any) -> int:
    """How many bytes wait in the pipe behind ``stream`` (0 where that cannot be asked)."""
    try:
        answer = fcntl.ioctl(stream.fileno(), termios.FIONREAD, b"\0\0\0\0")
    except (OSError, ValueError, AttributeError):
        return 0
    return int.from_bytes(answer, sys.byteorder)


class _Process:
    """One running implementation process, with reader threads for stdout and stderr.

    On Linux the process is the shepherd (``_shepherd.py``), a subreaper running the
    implementation: every process the implementation starts stays under it, however it
    leaves its session or clears its environment, so killing the tree under the shepherd
    kills them all.
    """

    def __init__(self, argv: list[str], cwd: str | None, env: dict[str, str] | None) -> None:
        self.token = secrets.token_hex(16)
        environment = dict(os.environ if env is None else env)
        environment[TOKEN_VARIABLE] = self.token
        try:
            self.proc = subprocess.Popen(
                shepherded(argv, cwd, environment),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=environment,
                start_new_session=True,  # its own process group, so we can kill all of it
                bufsize=0,
            )
        except OSError as exc:
            raise AdapterError(f"cannot start {shlex.join(argv)}: {exc.strerror or exc}") from None
        assert self.proc.stdin
        assert self.proc.stdout
        assert self.proc.stderr
        #: Batches of lines, one a read of stdout (a list of bytes, _EOF or _OVERLONG).
        self.lines: queue.Queue[list[object]] = queue.Queue()
        self._ready: collections.deque[object] = collections.deque()
        self._io = threading.Lock()
        self._unfinished = 0
        self._stderr: collections.deque[bytes] = collections.deque()
        self._stderr_size = 0
        self._lock = threading.Lock()
        os.set_blocking(self.proc.stdin.fileno(), False)
        self._threads = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _read_stdout(self) -> None:
        """Read stdout into lines; each read's lines are queued together, under ``_io``.

        Holding ``_io`` from the read to the queueing means that, under the same lock, a
        byte the implementation has written is either still in the pipe or already queued:
        :meth:`unsolicited` sees it either way.
        """
        assert self.proc.stdout
        fd = self.proc.stdout.fileno()
        pending = bytearray()
        while True:
            with contextlib.suppress(OSError):
                select.select([fd], [], [])  # wait outside the lock: the read will not block
            with self._io:
                try:
                    chunk = os.read(fd, 1 << 16)
                except OSError:
                    chunk = b""
                batch = self._split(chunk, pending)
                self._unfinished = len(pending)
                self.lines.put(batch)
            if batch and batch[-1] in (_EOF, _OVERLONG):
                return

    @staticmethod
    def _split(chunk: bytes, pending: bytearray) -> list[object]:
        """The lines ``chunk`` finishes (``pending`` holds the unfinished one), or the end."""
        if not chunk:
            return [_EOF]
        batch: list[object] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                pending += chunk[start:]
                break
            pending += chunk[start:end]
            if len(pending) > MAX_LINE_BYTES:  # a finished line is bounded too
                break
            batch.append(bytes(pending))
            pending.clear()
            start = end + 1
        if len(pending) > MAX_LINE_BYTES:
            batch.append(_OVERLONG)
        return batch

    def _read_stderr(self) -> None:
        assert self.proc.stderr
        fd = self.proc.stderr.fileno()
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                return
            if not chunk:
                return
            with self._lock:
                self._stderr.append(chunk)
                self._stderr_size += len(chunk)
                while self._stderr_size - len(self._stderr[0]) >= STDERR_TAIL:
                    self._stderr_size -= len(self._stderr.popleft())

    def stderr_tail(self) -> str:
        """The last :data:`STDERR_TAIL` bytes the process wrote to stderr."""
        with self._lock:
            data = b"".join(self._stderr)[-STDERR_TAIL:]
        return data.decode("utf-8", "replace")

    def send(self, message: dict[str, Any], deadline: float) -> None:
        """Write one message, giving up at ``deadline`` (a process that stops reading)."""
        assert self.proc.stdin
        try:
            text = json.dumps(message, allow_nan=False)  # ASCII: lone surrogates stay escaped
        except (RecursionError, ValueError, TypeError) as exc:
            raise _Unsendable(f"the request cannot be written as JSON: {exc}") from None
        data = memoryview((text + "\n").encode("utf-8"))
        fd = self.proc.stdin.fileno()
        while data:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Fault("timed out writing the request (the implementation stopped reading)")
            _, writable, _ = select.select([], [fd], [], remaining)
            if not writable:
                continue
            try:
                written = os.write(fd, data)
            except BlockingIOError:
                continue
            except (BrokenPipeError, OSError):
                raise _Fault("the implementation closed its stdin") from None
            data = data[written:]

    def _next(self, timeout: float) -> object:
        while not self._ready:
            self._ready.extend(self.lines.get(timeout=timeout))
        return self._ready.popleft()

    def receive(self, deadline: float) -> Any:
        """Read one JSON message, giving up at ``deadline``."""
        remaining = deadline - time.monotonic()
        try:
            line = self._next(max(0.0, remaining))
        except queue.Empty:
            raise _Fault(NO_REPLY, timeout=True) from None
        if line is _EOF:
            code = self.proc.poll()
            if code is None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    code = self.proc.wait(timeout=0.2)
            how = f"exited with status {code}" if code is not None else "closed its stdout"
            raise _Fault(f"the implementation {how} before replying")
        if line is _OVERLONG:
            raise _Fault(f"reply longer than {MAX_LINE_BYTES} bytes")
        assert isinstance(line, bytes)
        return _decode(line)

    def unsolicited(self) -> bytes | None:
        """What the implementation has written that no request asked for yet (None if nothing).

        Called just before a request is sent: a whole line read from stdout, part of one, or
        bytes still in the pipe were all written before the request, so each is a fault.
        (A line written after the request was sent, however early, cannot be told from the
        answer: the protocol promises no more than this.)
        """
        with self._io:
            while True:
                try:
                    self._ready.extend(self.lines.get_nowait())
                except queue.Empty:
                    break
            first = self._ready[0] if self._ready else None
            if isinstance(first, bytes):
                return first
            if first is not None:
                return None  # the end of output (or an over-long line): receive() says so
            if self._unfinished or _unread(self.proc.stdout):
                return b"(the start of a line)"
        return None

    def kill(self) -> None:
        """Kill every descendant and the process group, then reap the process.

        Descendants first: while the shepherd lives, a process whose parent is killed is
        handed to it, and the next pass finds it there.
        """
        kill_tree(self.proc.pid, self.token)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        kill_tree(self.proc.pid, self.token)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        self._close_pipes()

    def stop(self, grace: float) -> None:
        """Ask the process to stop, wait ``grace`` seconds, then kill what is left.

        The kill runs whatever stops the wait (a signal: it is raised once all is killed).
        """
        try:
            with contextlib.suppress(_Fault):
                self.send({"cmd": "stop"}, time.monotonic() + grace)
            with contextlib.suppress(OSError):
                assert self.proc.stdin
                self.proc.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=grace)
        finally:
            with deferred():
                self.kill()  # children it left behind go too

    def _close_pipes(self) -> None:
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            with contextlib.suppress(OSError):
                if pipe:
                    pipe.close()


class SubprocessAdapter:
    """Drives an implementation that speaks the JSON Lines protocol on stdio."""

    def __init__(
        self,
        command: str,
        *,
        timeout: float = 10.0,
        start_timeout: float = 30.0,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        max_timeouts: int = MAX_TIMEOUTS,
    ) -> None:
        self.command = command
        try:
            self._argv = shlex.split(command)
        except ValueError as exc:
            raise ImplSpecError(f"cannot split command {command!r}: {exc}") from None
        if not self._argv:
            raise ImplSpecError("exec: needs a command, e.g. --impl 'exec:node impl.js'")
        self.timeout = timeout
        self.start_timeout = start_timeout
        self._cwd = cwd
        self._env = env
        self._proc: _Process | None = None
        self._seq = 0
        self._start_failures = 0
        self.max_timeouts = max_timeouts
        self._timeouts = 0
        self._gave_up: str | None = None
        self.name = self._argv[0]
        self.version = ""
        self._operations: frozenset[str] | None = None
        self.restarts = 0

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Start the process and shake hands; raise :class:`AdapterError` if that fails."""
        try:
            self._ensure_started()
        except _Fault as exc:
            raise AdapterError(str(exc)) from None

    def _ensure_started(self) -> _Process:
        if self._proc is not None:
            return self._proc
        if self._gave_up:
            raise _Fault(self._gave_up)
        try:
            proc = _Process(self._argv, self._cwd, self._env)
        except AdapterError as exc:
            self._note_start_failure(str(exc))
            raise _Fault(str(exc)) from None
        deadline = time.monotonic() + self.start_timeout
        try:
            proc.send({"cmd": "hello", "protocol": 1}, deadline)
            answer = proc.receive(deadline)
            problem = next(iter(_STARTED.iter_errors(answer)), None)
            if problem is not None:
                raise _Fault(f"bad answer to hello: {shown(problem.message, 300)}")
        except _Fault as exc:
            tail = proc.stderr_tail()
            proc.kill()
            self._note_start_failure(f"start failed: {exc}")
            raise _Fault(f"start failed: {exc}" + (f"\n{tail}" if tail else "")) from None
        except BaseException:
            proc.kill()  # interrupted (SIGINT, SIGTERM) while starting: leave nothing behind
            raise
        info = answer["implementation"]
        # Shown in every report: on one line, cut, and with no control character or lone
        # surrogate.
        self.name = _one_line(str(info.get("name", self.name)))
        self.version = _one_line(str(info.get("version", "")))
        self._operations = frozenset(answer["operations"])
        self._start_failures = 0
        self._proc = proc
        return proc

    def _note_start_failure(self, why: str) -> None:
        self._start_failures += 1
        if self._start_failures >= MAX_START_FAILURES:
            self._gave_up = f"gave up after {self._start_failures} failed starts; last: {why}"

    @property
    def gave_up(self) -> str | None:
        """Why the implementation was given up on (None while it is still being run)."""
        return self._gave_up

    def close(self, grace: float = 2.0) -> None:
        """Send ``stop``, wait up to ``grace`` seconds, and kill whatever is left of the group."""
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.stop(grace=grace)

    # -- cases -----------------------------------------------------------------------------

    def supports(self, operation: str) -> bool:
        """Whether the implementation announced ``operation`` in its hello answer."""
        return self._operations is None or operation in self._operations

    def run(self, operation: str, input: Any, *, edition: str | None) -> Reply:
        """Send one case and read its reply; every fault becomes an errored reply."""
        try:
            proc = self._ensure_started()
        except _Fault as exc:
            return Reply("errored", message=str(exc))
        if not self.supports(operation):
            return Reply("unsupported", message="operation not announced in the hello answer")
        self._seq += 1
        message: dict[str, Any] = {
            "cmd": "run",
            "seq": self._seq,
            "operation": operation,
            "input": input,
        }
        if edition:
            message["edition"] = edition
        deadline = time.monotonic() + self.timeout
        early = proc.unsolicited()
        if early is not None:
            text = shown(early[:200].decode("utf-8", "replace"))
            return self._fault(
                proc,
                _Fault(f"the implementation wrote a line before request {self._seq}: {text!r}"),
            )
        try:
            proc.send(message, deadline)
        except _Unsendable as exc:
            self._seq -= 1
            return Reply("errored", message=str(exc))
        except _Fault as exc:
            return self._fault(proc, exc)
        try:
            answer = proc.receive(deadline)
            if not isinstance(answer, dict):
                raise _Fault("reply is not a JSON object but " + _json_type(answer))
            seq = answer.get("seq")
            # type(), not isinstance(): true and 7.0 are not the integer 7.
            if type(seq) is not int or seq != self._seq:
                got = (
                    shown(repr(seq), 100) if type(seq) is not int or seq.bit_length() < 64 else "?"
                )
                raise _Fault(f"reply has seq {got}, expected {self._seq}")
            outcome = {k: v for k, v in answer.items() if k != "seq"}
            reply = reply_from_outcome(outcome)
            if reply.kind == "errored":
                raise _Fault(reply.message)
        except _Fault as exc:
            return self._fault(proc, exc)
        self._timeouts = 0
        return reply

    def _fault(self, proc: _Process, exc: _Fault) -> Reply:
        # Give stderr a moment to arrive: a crashing process writes it as it dies.
        time.sleep(0.05)
        tail = proc.stderr_tail()
        proc.kill()
        self._proc = None
        self.restarts += 1
        self._timeouts = self._timeouts + 1 if exc.timeout else 0
        if self.max_timeouts and self._timeouts >= self.max_timeouts:
            self._gave_up = (
                f"gave up on {self.name} after {self._timeouts} timeouts in a row "
                f"({self.timeout:g} s each; --max-timeouts {self.max_timeouts}): every "
                "remaining case is errored without being sent"
            )
        return Reply("errored", message=str(exc), stderr=tail)
