"""flux-core's C libraries on the benchmarks' inputs, where a flux-core build can be found.

Two ways in, both optional and both through ctypes:

* libflux-idset and libflux-hostlist of a build installed under ``$FLUX_CORE_PREFIX``;
* ``librlist``, which flux-core never installs: ``build_rlist_probe.sh`` links it from a built
  source tree into one shared object (``$FLUX_RLIST_PROBE``, by default
  ``$FLUX_CORE_PREFIX/lib/librlist-probe.so``), called here through ctypes.

:func:`available` says what was found and why not; nothing here is a dependency of the suite.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["Ids", "Rlist", "available", "ids", "others", "rlist"]

#: Where the probe is looked for, under the build's prefix, when FLUX_RLIST_PROBE is unset.
PROBE_IN_PREFIX = "lib/librlist-probe.so"

_why: dict[str, str] = {}


class Ids:
    """libflux-idset and libflux-hostlist through ctypes: their decoders, to their own forms.

    Expanding a million ids or hosts into Python objects would time ctypes, not C, so these
    figures stop at the library's set or list (``idset_count`` / ``hostlist_count`` read back
    the size to check the work was done).
    """

    def __init__(self, prefix: Path) -> None:
        p = ctypes.c_void_p
        self.idset = ctypes.CDLL(str(prefix / "lib" / "libflux-idset.so"))
        self.hostlist = ctypes.CDLL(str(prefix / "lib" / "libflux-hostlist.so"))
        for lib, kind in ((self.idset, "idset"), (self.hostlist, "hostlist")):
            getattr(lib, f"{kind}_decode").argtypes = [ctypes.c_char_p]
            getattr(lib, f"{kind}_decode").restype = p
            getattr(lib, f"{kind}_count").argtypes = [p]
            getattr(lib, f"{kind}_count").restype = ctypes.c_size_t
            getattr(lib, f"{kind}_destroy").argtypes = [p]
            getattr(lib, f"{kind}_destroy").restype = None

    def idset_decode(self, text: bytes) -> int:
        """``idset_decode``; the number of ids."""
        ids = self.idset.idset_decode(text)
        count: int = self.idset.idset_count(ids)
        self.idset.idset_destroy(ids)
        return count

    def hostlist_decode(self, text: bytes) -> int:
        """``hostlist_decode``; the number of hosts."""
        hosts = self.hostlist.hostlist_decode(text)
        count: int = self.hostlist.hostlist_count(hosts)
        self.hostlist.hostlist_destroy(hosts)
        return count


def ids() -> Ids | None:
    """libflux-idset and libflux-hostlist of ``$FLUX_CORE_PREFIX``, or None."""
    if not os.environ.get("FLUX_CORE_PREFIX"):
        _why["ids"] = "FLUX_CORE_PREFIX is not set (implementations/flux-core/build.sh)"
        return None
    prefix = Path(os.environ["FLUX_CORE_PREFIX"])
    try:
        return Ids(prefix)
    except OSError as exc:
        _why["ids"] = f"no libflux-idset/libflux-hostlist under {prefix}: {exc}"
        return None


class _Error(ctypes.Structure):
    # flux_error_t: one 160-byte text buffer.
    _fields_ = [("text", ctypes.c_char * 160)]


class Rlist:
    """librlist through ctypes: each method takes and returns JSON text, like the reference."""

    def __init__(self, path: str) -> None:
        lib = ctypes.CDLL(path)
        jansson = ctypes.CDLL(ctypes.util.find_library("jansson") or "libjansson.so.4")
        libc = ctypes.CDLL(None)
        p = ctypes.c_void_p
        for name, args, result in (
            ("rlist_from_R", [ctypes.c_char_p], p),
            ("rlist_encode", [p], p),
            ("rlist_destroy", [p], None),
            ("rlist_union", [p, p], p),
            ("rlist_diff", [p, p], p),
            ("rlist_intersect", [p, p], p),
            ("rlist_copy_constraint", [p, p, ctypes.POINTER(_Error)], p),
            ("rlist_nnodes", [p], ctypes.c_size_t),
        ):
            func = getattr(lib, name)
            func.argtypes = args
            func.restype = result
        jansson.json_loads.argtypes = [ctypes.c_char_p, ctypes.c_size_t, p]
        jansson.json_loads.restype = p
        jansson.json_delete.argtypes = [p]
        libc.free.argtypes = [p]
        self.lib, self.jansson, self.libc = lib, jansson, libc

    def load(self, text: bytes) -> Any:
        """``rlist_from_R``: parse and decode an R (raises on NULL)."""
        rl = self.lib.rlist_from_R(text)
        if not rl:
            raise ValueError("rlist_from_R refused the R")
        return rl

    def free(self, rl: Any) -> None:
        """``rlist_destroy``."""
        self.lib.rlist_destroy(rl)

    def encode(self, rl: Any) -> bytes:
        """``rlist_encode``: the R as JSON text."""
        raw = self.lib.rlist_encode(rl)
        try:
            return ctypes.string_at(raw)
        finally:
            self.libc.free(raw)

    def set_op(self, name: str, a: bytes, b: bytes) -> bytes:
        """Decode both Rs, combine them with ``rlist_<name>``, encode the result."""
        ra, rb = self.load(a), self.load(b)
        try:
            out = getattr(self.lib, f"rlist_{name}")(ra, rb)
            try:
                return self.encode(out)
            finally:
                self.free(out)
        finally:
            self.free(ra)
            self.free(rb)

    def decode(self, text: bytes) -> None:
        """Decode an R into librlist's per-node structures and free it."""
        self.free(self.load(text))

    def match_loaded(self, rl: Any, constraint: bytes) -> int:
        """Parse the constraint, ``rlist_copy_constraint`` of a held R; the node count."""
        obj = self.jansson.json_loads(constraint, 0, None)
        error = _Error()
        try:
            found = self.lib.rlist_copy_constraint(rl, obj, ctypes.byref(error))
            if not found:
                raise ValueError(error.text.decode())
            count: int = self.lib.rlist_nnodes(found)
            self.free(found)
            return count
        finally:
            self.jansson.json_delete(obj)

    def match(self, text: bytes, constraint: bytes) -> int:
        """Decode the R, then match as :meth:`match_loaded`."""
        rl = self.load(text)
        try:
            return self.match_loaded(rl, constraint)
        finally:
            self.free(rl)


def rlist() -> Rlist | None:
    """The librlist probe, or None (see :func:`available`)."""
    prefix = os.environ.get("FLUX_CORE_PREFIX")
    path = os.environ.get("FLUX_RLIST_PROBE") or (f"{prefix}/{PROBE_IN_PREFIX}" if prefix else "")
    if not path or not Path(path).exists():
        _why["rlist"] = (
            f"no librlist probe at {path} (tests/benchmarks/build_rlist_probe.sh builds one "
            "from a built flux-core tree)"
        )
        return None
    try:
        return Rlist(path)
    except OSError as exc:
        _why["rlist"] = f"librlist probe {path} does not load: {exc}"
        return None


def available() -> str:
    """One line: which flux-core pieces were found, and why the others were not."""
    found = []
    if ids() is not None:
        found.append("libflux-idset and libflux-hostlist")
    if rlist() is not None:
        found.append("librlist probe")
    missing = "; ".join(_why.values())
    return f"flux-core: {', '.join(found) or 'not found'}" + (f" ({missing})" if missing else "")


def others(name: str, func: Callable[[], object] | None) -> dict[str, Callable[[], object]]:
    """``{name: func}`` when ``func`` is not None, for :class:`_harness.Bench`."""
    return {name: func} if func is not None else {}
