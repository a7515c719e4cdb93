"""Adapter for flux-core's C library of R and constraints, librlist: ``--impl flux-core-librlist``.

flux-core has two implementations of RFC 20 R and RFC 31 matching: the pure-Python
``Rv1Set`` behind ``flux.resource.ResourceSet`` (what ``--impl flux-core`` reaches), and
``librlist`` in C, which its C modules use (resource, job-manager, job-exec, sched-simple's
matching, ``flux R``).  librlist is a static library flux-core builds for itself and never
installs; ``implementations/flux-core/build_librlist.sh BUILD PREFIX OUT`` links it from a
built flux-core tree into one shared object, and ``FLUX_CORE_LIBRLIST=OUT`` names it here.

librlist is called through :mod:`ctypes`, always in a worker process of its own (like
``slurm-hostlist``): a crash or an abort of the C code on some input errors that case and
the worker is restarted, instead of ending the run.  :class:`FluxCoreLibrlist` is the
runner's side (a subprocess transport starting ``python -m`` this module);
:class:`LibrlistImplementation` is the worker's, translating each case into calls of
:class:`Librlist`, the thin ctypes layer.

============================  ========================================================
operation                     librlist calls
============================  ========================================================
``R.validate``                ``json_loads`` (jansson, as flux-core reads R from the
                              KVS), then ``rlist_from_json``
``R.decode``                  the same; ``rlist_ranks``; per rank ``rlist_copy_ranks``,
                              whose ``rlist_encode`` gives the cores and gpus,
                              ``rlist_nodelist`` the host, ``rlist_properties_encode``
                              the properties
``R.encode``                  what ``flux R encode`` calls: ``rlist_create``,
                              ``rlist_append_rank_cores`` and ``rlist_rank_add_child``
                              (gpu) per rank, ``rlist_assign_properties``; the
                              starttime and expiration fields set as flux-core's
                              callers set them; ``rlist_encode``
``R.union/diff/intersect``    both documents as ``R.validate``, ``rlist_union`` /
                              ``rlist_diff`` / ``rlist_intersect``, ``rlist_encode``
``constraint.validate``       ``job_constraint_create`` (the parser
                              ``rlist_copy_constraint`` uses), then
                              ``job_constraint_destroy``
``constraint.match``          R as ``R.validate``; ``rlist_copy_constraint``;
                              ``rlist_ranks`` of the copy
============================  ========================================================

Errors: librlist reports a refusal as NULL or -1 (with a message in a ``flux_error_t`` or
``json_error_t`` where the function takes one) and never says which kind of refusal it is, so
every refusal is answered with the category ``unknown`` (counted as a refusal, its category not
checked), with librlist's own message; jansson refusing the JSON text (a number past 64 bits, a
string with NUL) is flux-core refusing to read the document, and answered the same way.  An
input that cannot be handed to the C functions at all (an ``R.encode`` item whose rank is not
an unsigned 32-bit integer, a non-string host, a key no argument takes, a string holding NUL)
is ``unsupported``, saying why.  The worker process is the shared one of ``_worker``: a crash
or an abort of the C code ends it, and that case is errored.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from flux_conformance.runner.adapters.base import AdapterError
from flux_conformance.runner.adapters.thirdparty._base import (
    ThirdPartyImplementation,
    output,
    refused,
    unsupported,
)
from flux_conformance.runner.adapters.thirdparty._worker import WorkerAdapter

__all__ = [
    "ENV",
    "WORKER_MEMORY",
    "FluxCoreLibrlist",
    "Librlist",
    "LibrlistError",
    "LibrlistImplementation",
]

#: The environment variable naming the shared object ``build_librlist.sh`` wrote.
ENV = "FLUX_CORE_LIBRLIST"
#: Address space the worker may use.
WORKER_MEMORY = 4 * 1024 * 1024 * 1024
#: Seconds per case at least: decoding a large R rank by rank takes a while, and librlist
#: reads an R holding a property on rank 2**40 in 44 s on a busy 2-core machine (measured).
MIN_TIMEOUT = 120.0

_HOW = (
    "build it from a built flux-core tree with: implementations/flux-core/build_librlist.sh "
    f"BUILD PREFIX OUT, then set {ENV}=OUT (see implementations/flux-core/README.md)"
)

#: jansson's ``JSON_DECODE_ANY``: accept any JSON value, not only arrays and objects.
_JSON_DECODE_ANY = 0x4
#: libidset's ``IDSET_INVALID_ID`` (``UINT_MAX - 1``), the end of ``idset_first``/``idset_next``.
_IDSET_INVALID_ID = 2**32 - 2
#: libidset's ``IDSET_FLAG_AUTOGROW``.
_IDSET_FLAG_AUTOGROW = 1
_NUL = "a string holding NUL cannot be passed to a C function whole"


class LibrlistError(Exception):
    """librlist (or jansson reading a document for it) refused; the message is its own."""


class _FluxError(ctypes.Structure):
    # flux_error_t (src/common/libflux/types.h): one text buffer.
    _fields_ = [("text", ctypes.c_char * 160)]


class _JsonError(ctypes.Structure):
    # json_error_t (jansson.h, JSON_ERROR_TEXT_LENGTH 160, JSON_ERROR_SOURCE_LENGTH 80).
    _fields_ = [
        ("line", ctypes.c_int),
        ("column", ctypes.c_int),
        ("position", ctypes.c_int),
        ("source", ctypes.c_char * 80),
        ("text", ctypes.c_char * 160),
    ]


class Library(Protocol):
    """What :class:`LibrlistImplementation` asks of librlist (:class:`Librlist`, or a fake)."""

    version: str

    def load_r(self, text: str) -> Any: ...
    def destroy(self, rl: Any) -> None: ...
    def encode(self, rl: Any) -> str: ...
    def ranks(self, rl: Any) -> list[int]: ...
    def copy_rank(self, rl: Any, rank: int) -> Any: ...
    def first_host(self, rl: Any) -> str: ...
    def properties(self, rl: Any) -> str: ...
    def set_op(self, name: str, a: Any, b: Any) -> Any: ...
    def copy_constraint(self, rl: Any, constraint: str) -> Any: ...
    def check_constraint(self, constraint: str) -> None: ...
    def create(self) -> Any: ...
    def append_rank_cores(self, rl: Any, host: str, rank: int, cores: str) -> None: ...
    def add_gpus(self, rl: Any, rank: int, gpus: str) -> None: ...
    def assign_properties(self, rl: Any, properties: str) -> None: ...
    def set_times(self, rl: Any, starttime: float, expiration: float) -> None: ...


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


class Librlist:
    """librlist in the shared object at ``path``, one Python method per C call it needs.

    Every method raises :class:`LibrlistError` when the C function refuses (NULL or -1),
    with the message librlist or jansson wrote, or the function's name where it writes none.
    """

    def __init__(self, path: str) -> None:
        try:
            lib = ctypes.CDLL(path)
        except OSError as exc:
            raise AdapterError(f"{ENV}={path} does not load ({exc}); {_HOW}") from None
        jansson = ctypes.CDLL(ctypes.util.find_library("jansson") or "libjansson.so.4")
        libc = ctypes.CDLL(None)
        p, s, i, u = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_uint
        for name, result, args in (
            ("rlist_create", p, []),
            ("rlist_destroy", None, [p]),
            ("rlist_from_json", p, [p, ctypes.POINTER(_JsonError)]),
            ("rlist_encode", p, [p]),
            ("rlist_ranks", p, [p]),
            ("rlist_copy_ranks", p, [p, p]),
            ("rlist_nodelist", p, [p]),
            ("rlist_properties_encode", p, [p]),
            ("rlist_union", p, [p, p]),
            ("rlist_diff", p, [p, p]),
            ("rlist_intersect", p, [p, p]),
            ("rlist_copy_constraint", p, [p, p, ctypes.POINTER(_FluxError)]),
            ("rlist_append_rank_cores", i, [p, s, u, s]),
            ("rlist_rank_add_child", i, [p, u, s, s]),
            ("rlist_assign_properties", i, [p, p, ctypes.POINTER(_FluxError)]),
            ("job_constraint_create", p, [p, ctypes.POINTER(_FluxError)]),
            ("job_constraint_destroy", None, [p]),
            ("idset_create", p, [ctypes.c_size_t, i]),
            ("idset_set", i, [p, u]),
            ("idset_first", u, [p]),
            ("idset_next", u, [p, u]),
            ("idset_destroy", None, [p]),
            ("hostlist_first", s, [p]),
            ("hostlist_destroy", None, [p]),
            ("fcl_json_decref", None, [p]),
            ("fcl_rlist_set_times", None, [p, ctypes.c_double, ctypes.c_double]),
            ("fcl_flux_core_version", s, []),
        ):
            try:
                func = getattr(lib, name)
            except AttributeError:
                raise AdapterError(
                    f"{path} lacks {name}: it is not a librlist object; {_HOW}"
                ) from None
            func.restype = result
            func.argtypes = args
        jansson.json_loads.restype = p
        jansson.json_loads.argtypes = [s, ctypes.c_size_t, ctypes.POINTER(_JsonError)]
        libc.free.restype = None
        libc.free.argtypes = [p]
        self._lib, self._jansson, self._free = lib, jansson, libc.free
        self.version = _text(lib.fcl_flux_core_version() or b"unknown")

    # -- memory ---------------------------------------------------------------------------

    def _take(self, pointer: int | None, what: str) -> str:
        """The malloc-ed string at ``pointer``, freed; NULL is a refusal of ``what``."""
        if not pointer:
            raise LibrlistError(f"{what} returned NULL")
        try:
            return _text(ctypes.string_at(pointer))
        finally:
            self._free(pointer)

    @contextmanager
    def _json(self, text: str) -> Iterator[int]:
        err = _JsonError()
        value = self._jansson.json_loads(_bytes(text), _JSON_DECODE_ANY, ctypes.byref(err))
        if not value:
            raise LibrlistError(f"jansson: {_text(err.text)}")
        try:
            yield value
        finally:
            self._lib.fcl_json_decref(value)

    # -- R --------------------------------------------------------------------------------

    def load_r(self, text: str) -> Any:
        """``json_loads`` and ``rlist_from_json``, as flux-core's modules read an R."""
        with self._json(text) as value:
            err = _JsonError()
            rl = self._lib.rlist_from_json(value, ctypes.byref(err))
        if not rl:
            raise LibrlistError(f"rlist_from_json: {_text(err.text)}")
        return rl

    def destroy(self, rl: Any) -> None:
        """``rlist_destroy``."""
        if rl:
            self._lib.rlist_destroy(rl)

    def encode(self, rl: Any) -> str:
        """``rlist_encode``."""
        return self._take(self._lib.rlist_encode(rl), "rlist_encode")

    def ranks(self, rl: Any) -> list[int]:
        """The ids of ``rlist_ranks``, ascending."""
        ids = self._lib.rlist_ranks(rl)
        if not ids:
            raise LibrlistError("rlist_ranks returned NULL")
        try:
            found = []
            rank = self._lib.idset_first(ids)
            while rank != _IDSET_INVALID_ID:
                found.append(int(rank))
                rank = self._lib.idset_next(ids, rank)
            return found
        finally:
            self._lib.idset_destroy(ids)

    def copy_rank(self, rl: Any, rank: int) -> Any:
        """``rlist_copy_ranks`` of one rank."""
        ids = self._lib.idset_create(0, _IDSET_FLAG_AUTOGROW)
        if not ids or self._lib.idset_set(ids, rank) < 0:
            self._lib.idset_destroy(ids)
            raise LibrlistError(f"idset_set({rank}) failed")
        try:
            one = self._lib.rlist_copy_ranks(rl, ids)
        finally:
            self._lib.idset_destroy(ids)
        if not one:
            raise LibrlistError("rlist_copy_ranks returned NULL")
        return one

    def first_host(self, rl: Any) -> str:
        """The first name of ``rlist_nodelist``, or "" when the R names no host."""
        hosts = self._lib.rlist_nodelist(rl)
        if not hosts:
            raise LibrlistError("rlist_nodelist returned NULL")
        try:
            first = self._lib.hostlist_first(hosts)
            return _text(first) if first is not None else ""
        finally:
            self._lib.hostlist_destroy(hosts)

    def properties(self, rl: Any) -> str:
        """``rlist_properties_encode``: ``{name: idset}`` as JSON text."""
        return self._take(self._lib.rlist_properties_encode(rl), "rlist_properties_encode")

    def set_op(self, name: str, a: Any, b: Any) -> Any:
        """``rlist_union``, ``rlist_diff`` or ``rlist_intersect``."""
        result = getattr(self._lib, f"rlist_{name}")(a, b)
        if not result:
            raise LibrlistError(f"rlist_{name} returned NULL")
        return result

    # -- RFC 31 ---------------------------------------------------------------------------

    def copy_constraint(self, rl: Any, constraint: str) -> Any:
        """``rlist_copy_constraint`` of the constraint read by jansson."""
        with self._json(constraint) as value:
            err = _FluxError()
            found = self._lib.rlist_copy_constraint(rl, value, ctypes.byref(err))
        if not found:
            raise LibrlistError(f"rlist_copy_constraint: {_text(err.text)}")
        return found

    def check_constraint(self, constraint: str) -> None:
        """``job_constraint_create``, then ``job_constraint_destroy``."""
        with self._json(constraint) as value:
            err = _FluxError()
            made = self._lib.job_constraint_create(value, ctypes.byref(err))
        if not made:
            raise LibrlistError(f"job_constraint_create: {_text(err.text)}")
        self._lib.job_constraint_destroy(made)

    # -- building an R --------------------------------------------------------------------

    def create(self) -> Any:
        """``rlist_create``."""
        rl = self._lib.rlist_create()
        if not rl:
            raise LibrlistError("rlist_create returned NULL")
        return rl

    def append_rank_cores(self, rl: Any, host: str, rank: int, cores: str) -> None:
        """``rlist_append_rank_cores``."""
        if self._lib.rlist_append_rank_cores(rl, _bytes(host), rank, _bytes(cores)) < 0:
            raise LibrlistError(f"rlist_append_rank_cores refused rank {rank}")

    def add_gpus(self, rl: Any, rank: int, gpus: str) -> None:
        """``rlist_rank_add_child(rl, rank, "gpu", gpus)``."""
        if self._lib.rlist_rank_add_child(rl, rank, b"gpu", _bytes(gpus)) < 0:
            raise LibrlistError(f"rlist_rank_add_child refused the gpus of rank {rank}")

    def assign_properties(self, rl: Any, properties: str) -> None:
        """``rlist_assign_properties`` of ``{name: idset}``."""
        with self._json(properties) as value:
            err = _FluxError()
            rc = self._lib.rlist_assign_properties(rl, value, ctypes.byref(err))
        if rc < 0:
            raise LibrlistError(f"rlist_assign_properties: {_text(err.text)}")

    def set_times(self, rl: Any, starttime: float, expiration: float) -> None:
        """The ``starttime`` and ``expiration`` fields of the rlist."""
        self._lib.fcl_rlist_set_times(rl, starttime, expiration)


def _has_nul(value: Any) -> bool:
    """Whether a string anywhere in the JSON value holds NUL (jansson refuses those)."""
    if isinstance(value, str):
        return "\0" in value
    if isinstance(value, list):
        return any(_has_nul(v) for v in value)
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    return False


def _dumps(value: Any) -> str:
    # What a producer of the document writes: ASCII, with \uXXXX escapes; NaN and the
    # infinities cannot occur in a case's JSON input.
    return json.dumps(value, ensure_ascii=True, allow_nan=False)


class LibrlistImplementation(ThirdPartyImplementation):
    """librlist's answers to the suite's operations (run in a worker; see the module doc)."""

    name = "flux-core-librlist"

    def __init__(self, library: Library | None = None) -> None:
        if library is None:
            path = os.environ.get(ENV, "")
            if not path:
                raise AdapterError(f"{ENV} is not set; {_HOW}")
            library = Librlist(path)
        self._c = library
        self.version = f"{library.version} (librlist)"
        handlers = {
            "R.validate": self._r_validate,
            "R.decode": self._r_decode,
            "R.encode": self._r_encode,
            "constraint.validate": self._constraint_validate,
            "constraint.match": self._constraint_match,
        }
        for op in ("union", "diff", "intersect"):
            handlers[f"R.{op}"] = self._set_op(op)
        super().__init__(handlers)

    # Every handler runs its calls under _refusals: a LibrlistError is librlist's refusal,
    # of no kind it names.
    @staticmethod
    def _refusals(answer: Callable[[], Any]) -> Mapping[str, Any]:
        try:
            return output(answer())
        except LibrlistError as exc:
            return refused(str(exc))

    @contextmanager
    def _loaded(self, document: Any) -> Iterator[Any]:
        rl = self._c.load_r(_dumps(document))
        try:
            yield rl
        finally:
            self._c.destroy(rl)

    def _r_validate(self, document: Any) -> Mapping[str, Any]:
        def answer() -> Any:
            with self._loaded(document):
                return {"warnings": []}

        return self._refusals(answer)

    def _r_decode(self, document: Any) -> Mapping[str, Any]:
        def answer() -> Any:
            decoded = []
            with self._loaded(document) as rl:
                for rank in self._c.ranks(rl):
                    one = self._c.copy_rank(rl, rank)
                    try:
                        encoded = json.loads(self._c.encode(one))
                        host = self._c.first_host(one)
                        names = sorted(json.loads(self._c.properties(one)))
                    finally:
                        self._c.destroy(one)
                    children: dict[str, str] = {"core": "", "gpu": ""}
                    for entry in encoded.get("execution", {}).get("R_lite", []):
                        children.update({k: str(v) for k, v in entry.get("children", {}).items()})
                    decoded.append(
                        {
                            "rank": rank,
                            "hostname": host,
                            "cores": children["core"],
                            "gpus": children["gpu"],
                            "properties": names,
                        }
                    )
            return decoded

        return self._refusals(answer)

    def _set_op(self, name: str) -> Callable[[Any], Mapping[str, Any]]:
        def handler(value: Any) -> Mapping[str, Any]:
            if not isinstance(value, dict) or not {"a", "b"} <= value.keys():
                return unsupported(f"rlist_{name} takes two R documents; the input is not {{a, b}}")

            def answer() -> Any:
                with self._loaded(value["a"]) as a, self._loaded(value["b"]) as b:
                    result = self._c.set_op(name, a, b)
                    try:
                        return json.loads(self._c.encode(result))
                    finally:
                        self._c.destroy(result)

            return self._refusals(answer)

        return handler

    def _constraint_validate(self, constraint: Any) -> Mapping[str, Any]:
        def answer() -> Any:
            self._c.check_constraint(_dumps(constraint))
            return {"warnings": []}

        return self._refusals(answer)

    def _constraint_match(self, value: Any) -> Mapping[str, Any]:
        if not isinstance(value, dict) or not {"R", "constraint"} <= value.keys():
            return unsupported("rlist_copy_constraint takes an R and a constraint")

        def answer() -> Any:
            with self._loaded(value["R"]) as rl:
                found = self._c.copy_constraint(rl, _dumps(value["constraint"]))
                try:
                    return self._c.ranks(found)
                finally:
                    self._c.destroy(found)

        return self._refusals(answer)

    # -- R.encode -------------------------------------------------------------------------

    def _r_encode(self, value: Any) -> Mapping[str, Any]:
        times: dict[str, Any] = {}
        items = value
        if isinstance(value, dict) and "ranks" in value:
            items = value["ranks"]
            times = {k: value[k] for k in ("starttime", "expiration") if k in value}
            extra = sorted(set(value) - {"ranks", "starttime", "expiration"})
            if extra:
                return unsupported(f"{extra[0]!r} has no argument in librlist's calls")
        plan = _encode_plan(items, times)
        if isinstance(plan, str):
            return unsupported(plan)
        ranks, properties = plan

        def answer() -> Any:
            rl = self._c.create()
            try:
                for rank, host, cores, gpus in ranks:
                    self._c.append_rank_cores(rl, host, rank, cores)
                    if gpus:  # as flux R encode: a child only when there are gpus
                        self._c.add_gpus(rl, rank, gpus)
                if properties:
                    self._c.assign_properties(rl, _dumps(properties))
                if times:
                    self._c.set_times(
                        rl, float(times.get("starttime", 0)), float(times.get("expiration", 0))
                    )
                return json.loads(self._c.encode(rl))
            finally:
                self._c.destroy(rl)

        return self._refusals(answer)


#: The keys of an ``R.encode`` item that have a C argument.
_ITEM_KEYS = frozenset({"rank", "hostname", "cores", "gpus", "properties"})

_Plan = tuple[list[tuple[int, str, str, str]], dict[str, str]]


def _encode_plan(items: Any, times: Mapping[str, Any]) -> _Plan | str:
    """The C arguments of ``R.encode``'s calls, or the reason the input has none.

    Each item becomes ``(rank, host, cores, gpus)``; the properties become the
    ``{name: "rank,rank,..."}`` object ``rlist_assign_properties`` takes (as ``flux R encode``
    builds it from ``--property``).  Nothing is checked that C could be asked instead: only
    that each argument has a C type.
    """
    if not isinstance(items, list):
        return "R.encode's per-rank form must be a list to be handed to librlist item by item"
    for key, when in times.items():
        if isinstance(when, bool) or not isinstance(when, int | float):
            return f"{key} is not a number, and the rlist field is a C double"
    ranks: list[tuple[int, str, str, str]] = []
    owners: dict[str, list[int]] = {}
    for item in items:
        if not isinstance(item, dict):
            return "an item is not an object, so it has no C arguments"
        extra = sorted(set(item) - _ITEM_KEYS)
        if extra:
            return f"{extra[0]!r} has no argument in librlist's calls"
        rank, host = item.get("rank"), item.get("hostname")
        cores, gpus = item.get("cores"), item.get("gpus", "")
        names = item.get("properties", [])
        if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank < 2**32:
            return f"rank {rank!r} is not a C unsigned int"
        if not (isinstance(host, str) and isinstance(cores, str) and isinstance(gpus, str)):
            return "hostname, cores and gpus must be strings to be C strings"
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            return "properties must be a list of strings"
        if _has_nul([host, cores, gpus, names]):
            return _NUL
        ranks.append((rank, host, cores, gpus))
        for name in names:
            owners.setdefault(name, []).append(rank)
    properties = {n: ",".join(str(r) for r in sorted(set(rs))) for n, rs in owners.items()}
    return ranks, properties


class FluxCoreLibrlist(WorkerAdapter):
    """The runner's side: starts the worker that holds librlist (``_worker``)."""

    def __init__(self, *, timeout: float = 10.0) -> None:
        path = os.environ.get(ENV, "")
        if not path:
            raise AdapterError(f"flux-core-librlist needs librlist as a shared object: {_HOW}")
        if not Path(path).is_file():
            raise AdapterError(f"{ENV}={path} is not a file; {_HOW}")
        super().__init__(
            f"{__name__}:LibrlistImplementation",
            timeout=max(timeout, MIN_TIMEOUT),
            memory=WORKER_MEMORY,
        )
