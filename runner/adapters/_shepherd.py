"""Run an implementation so that every process it ever starts stays in one tree (Linux).

``python _shepherd.py COMMAND...``: becomes a *child subreaper* (``PR_SET_CHILD_SUBREAPER``,
prctl(2)), then runs COMMAND as its child, with the same stdin, stdout and stderr.  A process
whose parent dies is handed to its nearest subreaper ancestor instead of to init, so whatever
the implementation starts, however it hides (``setsid()``, a double fork, an empty
environment), stays a descendant of this process: the runner finds it by walking the tree
under the shepherd, as it walks the tree under any implementation.

When COMMAND ends, the shepherd kills every process left under it, reaps them, and exits as
COMMAND did (its status, or the same signal); a COMMAND that cannot be started is reported on
stderr with status 127, as a shell does.  Run by file path with nothing but the standard
library, so that it starts in milliseconds.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys

#: prctl(2)'s option number (linux/prctl.h).
PR_SET_CHILD_SUBREAPER = 36


def _children() -> list[int]:
    me = str(os.getpid()).encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        if stat[stat.rindex(b")") + 2 :].split()[1] == me:
            found.append(int(name))
    return found


def _kill_all_left() -> None:
    """Kill every process under the shepherd, reaping each; orphans of those come next."""
    while True:
        for pid in _children():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def main(argv: list[str]) -> int:
    """Run ``argv`` as described above; return the status to exit with."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    child = os.fork()
    if child == 0:
        try:
            os.execvp(argv[0], argv)
        except OSError as exc:
            os.write(2, f"cannot start {argv[0]}: {exc.strerror}\n".encode())
        os._exit(127)
    # The implementation's pipes are its own: a copy held here would keep the runner from
    # seeing its stdout close.
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    while True:
        pid, status = os.waitpid(-1, 0)  # orphans handed to the shepherd are reaped too
        if pid == child:
            break
    _kill_all_left()
    if os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
