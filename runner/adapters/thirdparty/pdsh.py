"""Adapter for pdsh's hostlists (Debian ``pdsh`` 2.34, LLNL hostlist code): ``--impl pdsh``.

pdsh has no library interface, so the adapter runs its programs, each with a timeout, in a
session of its own (killed whole on timeout), with a minimal environment (no ``WCOLL``, no
``PDSH_*`` settings):

* ``hostlist.decode`` -- ``pdsh -q -w TEXT`` first, which parses the list and prints its
  options without running anything: a refusal there is pdsh's verdict, reported with the
  category ``unknown`` (pdsh says what went wrong only in its message, so the refusal is
  counted but its category not checked); ``no remote hosts specified`` means the list parsed
  to no hosts at all, so the answer is ``[]``.  Then ``pdsh -R exec -f 1
  -N -w TEXT echo %h``: the exec module runs ``echo`` once per host, one at a time (fan-out
  1, so the output keeps pdsh's order and repeats), and each output line is a host.
* ``hostlist.encode`` -- ``dshbak -c`` fed one ``NAME: x`` line per host; with identical
  output, every host lands under one header, and that header is dshbak's hostlist.  dshbak
  keys its input by host name, so a name given twice would get two lines and a header of its
  own: a list with repeats has no single dshbak form and is ``unsupported``, as is a name its
  ``host: line`` input cannot carry (empty, holding whitespace or ``:``).  Perl's hash order
  decides the order of dshbak's groups, so ``PERL_HASH_SEED=0`` and ``PERL_PERTURB_KEYS=0``
  make it the same on every run.
* ``idset.encode`` -- ``dshbak -c`` of the ids in decimal (``[1-3,9]`` is an RFC 22 idset
  string), each id once (a repeated id is the same member of the set); a negative id is
  ``unsupported``.
* ``idset.decode`` is not offered (``[text]`` read as a hostlist would accept what RFC 22
  refuses).

Guards that belong to the adapter, not to pdsh, each answering ``unsupported`` (the input
cannot be given to pdsh as it is) or an adapter bound, with a message that says so:

* ``-w`` is more than a hostlist: an item starting with ``-`` excludes hosts, ``^`` reads a
  file, ``/`` filters by a regular expression, ``user@`` and ``rcmd:`` pick a user or a
  connection type (``ssh:`` would try the network).  Text holding ``@``, ``:`` or ``^``, or
  ``-`` or ``/`` at the start of an item (the start of the text, or after ``,`` or
  whitespace), is not passed.
* Text longer than :data:`MAX_ARGUMENT` bytes does not fit in one argument, and NUL cannot
  be in one at all.
* The exec module starts one process per host (about 6 ms each), so a list whose bracket
  groups could hold more than :data:`MAX_HOSTS` hosts is not run; the bound is the product
  of each item's bracket spans, read from the text after pdsh has accepted it.  pdsh has
  accepted the list, so this is an adapter bound with ``seen: output``: a case expecting a
  refusal fails on it, any other is skipped.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from collections.abc import Mapping, Sequence
from typing import Any

from flux_conformance.runner.adapters.base import AdapterError
from flux_conformance.runner.adapters.thirdparty._base import (
    ThirdPartyImplementation,
    adapter_bound,
    output,
    refused,
    unsupported,
)

__all__ = ["MAX_ARGUMENT", "MAX_HOSTS", "TIMEOUT", "Pdsh", "pdsh_may_reinterpret"]

#: Debian package that ships ``pdsh`` and ``dshbak``.
PACKAGE = "pdsh"
#: Most hosts a list may hold for the adapter to run ``echo`` on each (about 12 s).
MAX_HOSTS = 2000
#: Longest text passed as the ``-w`` argument (Linux refuses one argument of 128 KiB).
MAX_ARGUMENT = 100_000
#: Seconds one pdsh or dshbak run may take.
TIMEOUT = 60.0
#: Seconds ``pdsh -q`` may take: it only parses and lists (it loops forever on some ids at
#: 2**64 - 1), so a hang is told quickly.
LIST_TIMEOUT = 10.0

#: pdsh's refusal of a range over its own size bound.
#: pdsh's complaint when the list holds no host at all.
_NO_HOSTS = "no remote hosts specified"
#: Characters that give ``-w`` a meaning beyond a hostlist anywhere in the text.
_W_SPECIAL = re.compile(r"[@:^]|(?:^|[,\s])[-/]")
#: Characters a ``NAME: line`` input for dshbak cannot carry in a name.
_TAG_BREAKING = re.compile(r"[\s:\0]")
_ITEM_SEPARATORS = re.compile(r"[,\s]")
_NUMBER = re.compile(r"[0-9]+")
#: Digits beyond which a range bound is taken as huge without converting it.
_DIGITS = 12


def pdsh_may_reinterpret(text: str) -> bool:
    """Whether pdsh's ``-w`` would read ``text`` as more than a hostlist (see the module)."""
    return _W_SPECIAL.search(text) is not None


def _group_span(group: str) -> int:
    """Hosts one bracket group can name at most: its comma-separated ranges, summed.

    A part holding two runs of digits is taken as a range between them, whatever stands
    around them (pdsh reads numbers with ``strtoul``, which skips spaces and signs), so the
    bound errs on the large side.
    """
    total = 0
    for part in group.split(","):
        numbers = _NUMBER.findall(part)
        if len(numbers) < 2:
            total += 1
            continue
        # Padding adds digits but no hosts; only the significant digits are converted.
        low, high = (n.lstrip("0") or "0" for n in (numbers[0], numbers[-1]))
        if max(len(low), len(high)) > _DIGITS:
            return MAX_HOSTS + 1
        total += max(int(high) - int(low), 0) + 1
    return total


def _host_bound(text: str) -> int:
    """An upper bound of the hosts pdsh expands ``text`` to, capped just above the limit.

    Items are split at commas outside brackets and at whitespace; each item holds the
    product of its bracket groups (pdsh expands several as a cross product).
    """
    total = 0
    depth = 0
    item: list[str] = []
    items: list[str] = []
    for char in text:
        depth += (char == "[") - (char == "]")
        if depth <= 0 and _ITEM_SEPARATORS.match(char):
            items.append("".join(item))
            item, depth = [], 0
        else:
            item.append(char)
    items.append("".join(item))  # what an unclosed bracket left open
    for one in filter(None, items):
        size = 1
        for group in re.findall(r"\[([^\[\]]*)", one):
            size = min(size * _group_span(group), MAX_HOSTS + 1)
        total = min(total + size, MAX_HOSTS + 1)
    return total


def _run(
    argv: Sequence[str], stdin: str = "", *, timeout: float | None = None
) -> subprocess.CompletedProcess[str]:
    """Run one program in a session of its own; on timeout the whole session is killed.

    A program killed by a signal (pdsh aborts on a failed assertion) raises
    ``CalledProcessError`` from the standard library: the case is errored, a crash of the
    implementation, never a verdict.
    """
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LC_ALL": "C.UTF-8",
        "PERL_HASH_SEED": "0",
        "PERL_PERTURB_KEYS": "0",
    }
    with subprocess.Popen(
        list(argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
        encoding="utf-8",
        errors="surrogateescape",
        start_new_session=True,
    ) as proc:
        try:
            out, err = proc.communicate(stdin, timeout=TIMEOUT if timeout is None else timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
    done = subprocess.CompletedProcess(list(argv), proc.returncode, out, err)
    if done.returncode < 0:
        done.check_returncode()
    return done


def _lines(text: str) -> list[str]:
    r"""The lines of a program's output, split at newlines only.

    ``str.splitlines`` would also split at characters such as ``\x1c`` or ``\x85``, which a
    host name may hold and a program prints as they are.
    """
    return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n") if text else []


def _package_version() -> str:
    """The Debian version of :data:`PACKAGE`, or pdsh's own ``-V`` line."""
    for argv in (["dpkg-query", "-W", "-f=${Version}", PACKAGE], ["pdsh", "-V"]):
        try:
            done = _run(argv)
        except OSError:
            continue
        text = (done.stdout or done.stderr).strip().splitlines()
        if done.returncode == 0 and text:
            return text[0]
    return "unknown"


class Pdsh(ThirdPartyImplementation):
    """pdsh's ``-w`` host lists (decoding) and ``dshbak -c`` (encoding)."""

    name = "pdsh"

    def __init__(self) -> None:
        pdsh, dshbak = shutil.which("pdsh"), shutil.which("dshbak")
        if pdsh is None or dshbak is None:
            raise AdapterError(f"pdsh is not installed; install it with: apt-get install {PACKAGE}")
        self._pdsh, self._dshbak_path = pdsh, dshbak
        self.version = _package_version()
        super().__init__(
            {
                "hostlist.decode": self._hostlist_decode,
                "hostlist.encode": self._hostlist_encode,
                "idset.encode": self._idset_encode,
            }
        )

    def _hostlist_decode(self, text: Any) -> Mapping[str, Any]:
        if "\0" in text or len(text.encode("utf-8", "surrogateescape")) > MAX_ARGUMENT:
            return unsupported(f"pdsh takes the list as one argument: no NUL, {MAX_ARGUMENT} bytes")
        if pdsh_may_reinterpret(text):
            return unsupported("pdsh's -w would read @, :, ^ or a leading - or / as options")
        listed = _run([self._pdsh, "-q", "-w", text], timeout=LIST_TIMEOUT)
        if listed.returncode != 0:
            if _NO_HOSTS in listed.stderr:
                return output([])
            return refused(listed.stderr.strip() or f"pdsh -q exited {listed.returncode}")
        bound = _host_bound(text)
        if bound > MAX_HOSTS:
            return adapter_bound(
                f"pdsh -q accepted the list; the adapter runs pdsh's one process per host for "
                f"at most {MAX_HOSTS} hosts",
                seen_output=True,
            )
        done = _run([self._pdsh, "-R", "exec", "-f", "1", "-N", "-w", text, "echo", "%h"])
        if done.returncode != 0:
            if _NO_HOSTS in done.stderr:
                return output([])
            return refused(done.stderr.strip() or f"pdsh exited {done.returncode}")
        return output(_lines(done.stdout))

    def _coalesce(self, names: list[str]) -> Mapping[str, Any]:
        if len(set(names)) != len(names):
            return unsupported(
                "dshbak keys its input by host name: a repeated name cannot be given"
            )
        if any(not name or _TAG_BREAKING.search(name) for name in names):
            return unsupported(
                "dshbak's 'host: line' input cannot carry an empty name, ':' or space"
            )
        done = _run([self._dshbak_path, "-c"], "".join(f"{name}: x\n" for name in names))
        if done.returncode != 0:
            return refused(done.stderr.strip() or f"dshbak exited {done.returncode}")
        lines = _lines(done.stdout)
        if not names and not lines:
            return output("")
        # One group: a divider, the hostlist, a divider, then the shared line.
        if len(lines) != 4:
            return unsupported(f"dshbak -c printed {len(lines)} lines, not one group")
        return output(lines[1])

    def _hostlist_encode(self, hosts: Any) -> Mapping[str, Any]:
        return self._coalesce(list(hosts))

    def _idset_encode(self, ids: Any) -> Mapping[str, Any]:
        if any(i < 0 for i in ids):
            return unsupported("a negative id has no form in a bracketed hostlist")
        # A set given with repeats is still a set: each id is one host of dshbak's input.
        return self._coalesce([str(i) for i in dict.fromkeys(ids)])
