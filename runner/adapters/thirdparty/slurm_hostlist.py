"""Adapter for Slurm's hostlist functions in libslurm (Debian ``libslurm38``): ``slurm-hostlist``.

The C library is called through :mod:`ctypes`, always in a worker process of its own:
libslurm answers some inputs with ``fatal()`` (an ``exit``) or ``abort()`` (more than
262,144 ranges in one bracket, memory exhausted), which would end the whole run if it
were loaded in the runner.  :class:`SlurmHostlist` is therefore a subprocess adapter
that starts the shared worker entry (``_worker``) serving :class:`SlurmHostlistLibrary`
over the suite's own protocol, with its address space capped at :data:`WORKER_MEMORY`, so a
crash, an abort or a hang of the library errors one case, the worker is restarted, and the
run goes on.

What it answers, and through which functions (no ``slurm.conf`` is read: the hostlist code
asks only for the cluster's dimensions, which are compiled in; ``SLURM_CONF`` is pointed at
``/dev/null`` all the same):

* ``hostlist.decode`` -- ``slurm_hostlist_create(text)``, then ``slurm_hostlist_shift``
  until it returns NULL (each name ``free``-d), then ``slurm_hostlist_destroy``.  Shifting
  keeps the written order and the repeats.  NULL from ``slurm_hostlist_create`` is Slurm's
  one answer to every refusal (its own size bound included), so it is reported with the
  category ``unknown``: counted as a refusal, its category not checked.
* ``hostlist.encode`` -- ``slurm_hostlist_create(NULL)``, ``slurm_hostlist_push_host`` of
  each name in order, then ``slurm_hostlist_ranged_string_malloc``.  The encoder keeps the
  order; whatever it writes is reported as written (see the expectations file).
* ``idset.encode`` -- the same, with each id written in decimal: bare numbers gather into
  a bracketed list such as ``[1-3,9]``, an RFC 22 idset string.  A negative id has no
  hostlist form and is answered ``unsupported``.
* ``idset.decode`` is not offered: reading ``[text]`` as a hostlist would accept what
  RFC 22 refuses (``3,1``, ``01``), which would say nothing about Slurm itself.

A string holding NUL cannot be handed to a C function whole, so such an input is
``unsupported``.  One guard belongs to the adapter, not to Slurm: a hostlist is held as
ranges and expands only as it is shifted, so after ``slurm_hostlist_create`` the adapter
reads ``slurm_hostlist_count`` and stops shifting past the reference's own bounds (4,000,000
names, 64 MiB of characters).  Slurm accepted such a list, so this is an adapter bound with
``seen: output`` (a case expecting a refusal fails on it, any other is skipped), never a
``limit`` Slurm did not report.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import subprocess
from collections.abc import Mapping
from typing import Any

from flux_conformance.runner.adapters.base import AdapterError
from flux_conformance.runner.adapters.thirdparty._base import (
    ThirdPartyImplementation,
    adapter_bound,
    output,
    refused,
    unsupported,
)
from flux_conformance.runner.adapters.thirdparty._worker import WorkerAdapter

__all__ = [
    "LIBRARY",
    "MAX_EXPANSION",
    "MAX_OUTPUT_LENGTH",
    "WORKER_MEMORY",
    "SlurmHostlist",
    "SlurmHostlistLibrary",
]

#: The shared object of Debian's ``libslurm38`` (Slurm 22.05).
LIBRARY = "libslurm.so.38"
#: Debian package that ships :data:`LIBRARY`.
PACKAGE = "libslurm38"
#: Address space the worker may use: libslurm aborts when malloc fails, and that is a case
#: errored, not a machine out of memory.
WORKER_MEMORY = 4 * 1024 * 1024 * 1024
#: Most names the adapter shifts out of one hostlist (the reference's own list bound; the
#: runner reaches the reference only through its adapter, so the number is repeated here).
MAX_EXPANSION = 4_000_000
#: Most characters those names may hold in all (the reference's bound, likewise).
MAX_OUTPUT_LENGTH = 64 * 1024 * 1024
#: Seconds per case at least: shifting four million names out of a hostlist takes several.
MIN_TIMEOUT = 60.0

_INSTALL = f"install it with: apt-get install {PACKAGE}"


def _package_version() -> str:
    """The Debian version of :data:`PACKAGE`, or "" where dpkg cannot say."""
    try:
        done = subprocess.run(
            ["dpkg-query", "-W", "-f=${Version}", PACKAGE],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def _c_string(text: str) -> bytes | None:
    """``text`` as the bytes a C function receives, or None when a NUL would cut it short."""
    return None if "\0" in text else text.encode("utf-8", "surrogateescape")


def _from_c(raw: bytes) -> str:
    # libslurm cuts and joins names only at ASCII bytes, so what it returns is UTF-8 whenever
    # the input was; surrogateescape keeps any other byte visible instead of raising here.
    return raw.decode("utf-8", "surrogateescape")


_NUL = "a string holding NUL cannot be passed to a C function whole"


class SlurmHostlistLibrary(ThirdPartyImplementation):
    """libslurm's ``slurm_hostlist_*`` functions, called through ctypes (run it in a worker)."""

    name = "slurm-hostlist"

    def __init__(self, library: str = LIBRARY) -> None:
        os.environ.setdefault("SLURM_CONF", "/dev/null")
        try:
            lib = ctypes.CDLL(library)
            libc = ctypes.CDLL(None)
        except OSError as exc:
            raise AdapterError(f"Slurm's {library} cannot be loaded ({exc}); {_INSTALL}") from None
        handle, text = ctypes.c_void_p, ctypes.c_char_p
        for function, restype, argtypes in (
            ("slurm_hostlist_create", handle, [text]),
            ("slurm_hostlist_count", ctypes.c_int, [handle]),
            ("slurm_hostlist_shift", handle, [handle]),
            ("slurm_hostlist_push_host", ctypes.c_int, [handle, text]),
            ("slurm_hostlist_ranged_string_malloc", handle, [handle]),
            ("slurm_hostlist_destroy", None, [handle]),
            ("slurm_api_version", ctypes.c_long, []),
        ):
            getattr(lib, function).restype = restype
            getattr(lib, function).argtypes = argtypes
        libc.free.restype = None
        libc.free.argtypes = [handle]
        self._lib = lib
        self._free = libc.free
        api = int(lib.slurm_api_version())
        api_version = f"{api >> 16 & 0xFF}.{api >> 8 & 0xFF}.{api & 0xFF}"
        package = _package_version()
        self.version = f"{package} (API {api_version})" if package else f"API {api_version}"
        super().__init__(
            {
                "hostlist.decode": self._hostlist_decode,
                "hostlist.encode": self._hostlist_encode,
                "idset.encode": self._idset_encode,
            }
        )

    def _take_string(self, pointer: int | None) -> bytes:
        """The NUL-terminated string at ``pointer``, which libslurm malloc-ed; freed here."""
        try:
            return ctypes.string_at(pointer) if pointer else b""
        finally:
            if pointer:
                self._free(pointer)

    def _hostlist_decode(self, text: Any) -> Mapping[str, Any]:
        raw = _c_string(text)
        if raw is None:
            return unsupported(_NUL)
        lib = self._lib
        hostlist = lib.slurm_hostlist_create(raw)
        if not hostlist:
            return refused("slurm_hostlist_create returned NULL")
        try:
            count = int(lib.slurm_hostlist_count(hostlist))
            # The count is a C int that wraps past 2**31 names, hence the second bound below.
            if not 0 <= count <= MAX_EXPANSION:
                return adapter_bound(
                    f"Slurm holds {count} names; the adapter lists at most {MAX_EXPANSION:,}",
                    seen_output=True,
                )
            hosts: list[str] = []
            size = 0
            while True:
                pointer = lib.slurm_hostlist_shift(hostlist)
                if not pointer:
                    break
                name = self._take_string(pointer)
                size += len(name)
                if len(hosts) >= MAX_EXPANSION or size > MAX_OUTPUT_LENGTH:
                    return adapter_bound(
                        f"the adapter stops shifting past {MAX_EXPANSION:,} names or "
                        f"{MAX_OUTPUT_LENGTH:,} characters",
                        seen_output=True,
                    )
                hosts.append(_from_c(name))
        finally:
            lib.slurm_hostlist_destroy(hostlist)
        return output(hosts)

    def _encode(self, names: list[str]) -> Mapping[str, Any]:
        raws = [_c_string(name) for name in names]
        if any(raw is None for raw in raws):
            return unsupported(_NUL)
        lib = self._lib
        hostlist = lib.slurm_hostlist_create(None)
        if not hostlist:  # pragma: no cover - an empty list is refused only without memory
            return refused("slurm_hostlist_create(NULL) returned NULL")
        try:
            for raw in raws:
                lib.slurm_hostlist_push_host(hostlist, raw)
            text = self._take_string(lib.slurm_hostlist_ranged_string_malloc(hostlist))
        finally:
            lib.slurm_hostlist_destroy(hostlist)
        return output(_from_c(text))

    def _hostlist_encode(self, hosts: Any) -> Mapping[str, Any]:
        return self._encode(list(hosts))

    def _idset_encode(self, ids: Any) -> Mapping[str, Any]:
        if any(i < 0 for i in ids):
            return unsupported("a negative id has no form in a bracketed hostlist")
        return self._encode([str(i) for i in ids])


def _library_present() -> bool:
    """Whether the dynamic linker can find :data:`LIBRARY`, without loading it here."""
    found = ctypes.util.find_library("slurm")
    return found == LIBRARY or any(
        os.path.exists(os.path.join(directory, LIBRARY))
        for directory in ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib")
    )


class SlurmHostlist(WorkerAdapter):
    """The runner's side: starts the worker that holds libslurm, one case at a time."""

    def __init__(self, *, timeout: float = 10.0) -> None:
        if not _library_present():
            raise AdapterError(f"Slurm's {LIBRARY} is not installed; {_INSTALL}")
        super().__init__(
            f"{__name__}:SlurmHostlistLibrary",
            timeout=max(timeout, MIN_TIMEOUT),
            memory=WORKER_MEMORY,
            env=dict(os.environ, SLURM_CONF="/dev/null"),
        )
