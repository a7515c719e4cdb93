"""Finding and killing every process an implementation started, and the shepherd it runs under.

Used by :mod:`runner.adapters.subprocess`: the tree under the implementation (read from
``/proc``), the processes carrying its environment token, and on Linux the subreaper that
keeps a process hiding by ``setsid()``, a double fork and an empty environment in that tree.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import sys
import time
from pathlib import Path

from flux_conformance.runner.adapters.base import AdapterError

__all__ = ["TOKEN_VARIABLE", "kill_tree", "shepherded"]

#: The environment variable whose value marks every process of one implementation.
TOKEN_VARIABLE = "FLUX_CONFORMANCE_IMPLEMENTATION_TOKEN"


def _processes() -> dict[int, tuple[int, str]] | None:
    """Every live process: pid -> (parent pid, state), from ``/proc`` (None without it)."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return None
    found: dict[int, tuple[int, str]] = {}
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
            # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
            state, ppid = stat[stat.rindex(b")") + 2 :].split()[:2]
        except (OSError, ValueError):
            continue
        found[int(name)] = (int(ppid), state.decode("ascii", "replace"))
    return found


def _carries(pid: int, needle: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            return needle in handle.read().split(b"\0")
    except OSError:
        return False


def kill_tree(root: int, token: str, rounds: int = 10) -> None:
    """Kill ``root``'s descendants and every process whose environment carries ``token``.

    Repeated until two passes in a row, 10 ms apart, find nothing left: a process that forks
    while it is being killed is found on the next pass, and one caught in ``execve`` (whose
    environment reads empty for that instant) on the one after.  A no-op where ``/proc`` does
    not exist.
    """
    needle = f"{TOKEN_VARIABLE}={token}".encode()
    me = os.getpid()
    clear = 0
    for _ in range(rounds):
        table = _processes()
        if table is None:
            return
        children: dict[int, list[int]] = {}
        for pid, (ppid, _state) in table.items():
            children.setdefault(ppid, []).append(pid)
        doomed: set[int] = set()
        stack = [root]
        while stack:
            for child in children.get(stack.pop(), ()):
                if child not in doomed:
                    doomed.add(child)
                    stack.append(child)
        doomed.update(p for p, (_, state) in table.items() if state != "Z" and _carries(p, needle))
        doomed -= {me, root}
        doomed = {p for p in doomed if table.get(p, (0, "Z"))[1] != "Z"}
        if not doomed:
            clear += 1
            if clear == 2:
                return
            time.sleep(0.01)
            continue
        clear = 0
        for pid in doomed:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)


#: The shepherd every implementation runs under on Linux (``_shepherd.py``): a subreaper.
_SHEPHERD = str(Path(__file__).with_name("_shepherd.py"))


def shepherded(argv: list[str], cwd: str | None, env: dict[str, str]) -> list[str]:
    """``argv`` run under the shepherd where there is one (Linux), else ``argv`` itself.

    The shepherd starts the command itself, so a command that cannot be found is found
    missing here first, with the error a direct start would give.
    """
    if sys.platform != "linux" or not os.path.isdir("/proc"):
        return argv
    program = argv[0]
    if os.sep in program:
        found = os.path.join(cwd or "", program)
        usable = os.path.isfile(found) and os.access(found, os.X_OK)
    else:
        usable = shutil.which(program, path=env.get("PATH", os.defpath)) is not None
    if not usable:
        raise AdapterError(f"cannot start {shlex.join(argv)}: no such executable file")
    return [sys.executable, "-I", "-S", _SHEPHERD, *argv]
