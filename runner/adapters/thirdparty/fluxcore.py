"""Adapter for flux-core's Python bindings: ``--impl flux-core``.

flux-core reaches this adapter in one of two ways, chosen when it is instantiated:

* **a flux-core build** (``FLUX_CORE_PREFIX=PREFIX``, the prefix given to
  ``implementations/flux-core/build.sh``, or wherever ``import flux`` already works, e.g. under
  ``flux python``): the full bindings, every operation below.  When ``FLUX_CORE_PREFIX`` is
  set, its bindings must import; the adapter never falls back to anything else.
* **the flux-python wheel alone** (``pip install 'flux-conformance[flux-core]'``): its cffi
  modules need ``libflux-core``, which the wheel does not ship, so ``import flux`` fails; its
  pure-Python RFC 46 shape parser (``flux/shape/parser.py``) and RFC 35 query parser
  (``flux/constraint/parser.py``) are then loaded by file path, past ``flux/__init__``, and
  ``shape.parse`` and ``constraint.parse_query`` are answered by them.  The other operations
  answer ``unsupported``, saying they need a build.  The ``--requires`` operator table
  (``MiniConstraintParser``) lives in ``flux/job/_utils.py``, which imports the C bindings;
  its class statement is taken from that file and executed against the loaded
  ``ConstraintParser``, so the table is flux-core's own text, not a copy.

Each operation goes through the public API flux-core itself uses for it; an operation whose
module is missing from the installed flux-core (``flux.shape`` is recent) is left out, like
those it has no API for:

============================  =====================================================
operation                     flux-core API
============================  =====================================================
``idset.decode``              ``flux.idset.decode(text)``, iterated
``idset.encode``              ``str(flux.idset.IDset(ids))`` (ranges, no brackets)
``hostlist.decode``           ``flux.hostlist.decode(text)``, iterated
``hostlist.encode``           ``flux.hostlist.Hostlist(hosts).encode()``
``count.values``              ``flux.resource.ResourceCount.from_count_spec(count)``
                              and its ``valid_counts(limit)``, ascending
``shape.parse``               ``flux.shape.parser.ShapeParser().parse(shape)``, with
                              ``default_slot_label`` set when the case gives one
``jobspec.validate``          ``flux.job.validate_jobspec(text)`` (what job-ingest's
                              ``jobspec`` validator plugin calls), no warnings
``constraint.validate``       the same, on a minimal valid jobspec whose
                              ``attributes.system.constraints`` is the constraint:
                              flux-core checks constraints only there
``constraint.parse_query``    the ``--requires`` parser: ``MiniConstraintParser``
                              (``flux.job._utils``, earlier ``flux.cli.base``)
``constraint.match``          ``ResourceSet(R).copy_constraint(constraint).ranks``
``R.validate``                ``flux.resource.ResourceSet(text)``, no warnings
``R.decode``                  ``ResourceSet``: per rank, ``copy_ranks(rank)`` gives
                              the host (``nodelist``), cores and gpus (``encode``)
                              and properties (``get_properties``)
``R.union/diff/intersect``    ``ResourceSet.union / diff / intersect``, ``encode()``
``sched.allocate``            what flux-core does with a submitted job: job-ingest's
                              validator (``validate_jobspec(jobspec, 1)``); the pool
                              of ``sched-simple`` and ``sched-fifo``,
                              ``flux.resource.ResourcePool(pool)``, told of each
                              running ``allocated`` R (``register_alloc``, the
                              scheduler's ``hello``); ``parse_resource_request``,
                              ``alloc`` and sched-fifo's stamp of the times
============================  =====================================================

Unsupported (no flux-core API): ``range.decode`` (flux-core parses RFC 45 strings only as
counts, applying RFC 14's rules), ``R.encode``, ``jobspec.from_shape`` (the CLI assembles
jobspecs from a shape, no function does), and the Slurm operations.

JSON documents (R, jobspec, constraints) are handed over serialised, as flux-core receives
them from the KVS or a submission, so a wrongly typed document reaches flux-core as it is.

Errors.  flux-core names the kind of a refusal only in its parsers' own exception classes;
everywhere else it raises Python's generic exceptions, so the refusal is reported with the
category ``unknown`` (counted as a refusal, its category not checked), whatever the message or
the input:

* ``shape.parse``: ``ShapeSyntaxError`` -> ``syntax`` (flux-core raises it also for several
  unlabelled slots, which the suite calls ``invalid``: a finding); ``ValueError``/``TypeError``
  -> ``unknown``;
* ``constraint.parse_query``: ``ConstraintSyntaxError`` -> ``syntax``; ``TypeError`` or
  ``ValueError`` (PLY refusing a non-string) -> ``unknown``;
* every other operation: ``ValueError``, ``TypeError``, ``KeyError`` (what ``IDset``,
  ``Hostlist``, ``ResourceCount``, ``ResourceSet`` and ``validate_jobspec`` raise), an
  ``OSError`` with ``EINVAL`` from ``validate_jobspec``, and ``validate_jobspec`` returning
  ``(1, reason)`` instead of raising -> ``unknown``;
* ``sched.allocate``: each step flux-core takes with a submitted job, with its own refusals
  (:mod:`.fluxcore_sched`);
* anything else propagates, and the case is errored (flux-core crashed on that input).

The adapter's one bound of its own: it lists at most :data:`MAX_VALUES` ids, hosts or counts.
A decoded set, or a count's list of values, longer than that is reported as an adapter bound
with ``seen: output`` (flux-core was answering with an output, not refusing): a case that
expects a refusal fails on it, any other is skipped, never answered ``limit``.
"""

from __future__ import annotations

import ast
import errno
import importlib
import importlib.util
import itertools
import json
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from flux_conformance.runner.adapters.base import AdapterError
from flux_conformance.runner.adapters.thirdparty._base import (
    Handler,
    ThirdPartyImplementation,
    adapter_bound,
    constraint_carrier,
    error,
    output,
    refused,
    unsupported,
)
from flux_conformance.runner.adapters.thirdparty.fluxcore_sched import allocate

__all__ = ["MAX_VALUES", "PREFIX_VARIABLE", "FluxCore"]

#: The adapter lists at most this many ids, hosts or counts (the reference's own list bound):
#: flux-core keeps an idset or hostlist compact, but a Python list of 10**8 ids would exhaust
#: the machine, and ``valid_counts`` of an unbounded count is as long as the limit.  Past it,
#: the answer is an adapter bound (``seen: output``), never ``limit``.
MAX_VALUES = 4_000_000

#: The environment variable naming the install prefix of a flux-core build.
PREFIX_VARIABLE = "FLUX_CORE_PREFIX"

_BUILD_HINT = (
    "build flux-core with implementations/flux-core/build.sh SOURCE PREFIX and set "
    f"{PREFIX_VARIABLE}=PREFIX"
)

#: What the wheel alone cannot answer: these go through flux-core's C libraries.
_NEEDS_BUILD = (
    "idset.decode",
    "idset.encode",
    "hostlist.decode",
    "hostlist.encode",
    "count.values",
    "jobspec.validate",
    "constraint.validate",
    "constraint.match",
    "R.validate",
    "R.decode",
    "R.union",
    "R.diff",
    "R.intersect",
    "sched.allocate",
)

#: Private names for the wheel's parser modules, so that they never pass for ``flux.*``.
_WHEEL_PACKAGE = "_flux_conformance_wheel"

_INVALID = (ValueError, TypeError, KeyError)


def _optional(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _version(flux: ModuleType) -> str:
    inner = _optional("flux.core.inner")
    raw = getattr(inner, "raw", None)
    if raw is not None and hasattr(raw, "flux_core_version_string"):
        found = raw.flux_core_version_string()
        return found.decode() if isinstance(found, bytes) else str(found)
    for source in (flux, _optional("flux.core")):
        found = getattr(source, "__version__", None)
        if found:
            return str(found)
    return _distribution_version()


def _distribution_version() -> str:
    from importlib import metadata

    for distribution in ("flux-python", "flux"):
        try:
            return metadata.version(distribution)
        except metadata.PackageNotFoundError:
            continue
    return "unknown"


def _too_many(count: int | str, what: str, decoded: Any) -> dict[str, Any]:
    """What the adapter says of an output flux-core gave but that is too long to list.

    Not ``limit``: flux-core did not refuse the input (and may have decoded something else:
    ``0-99999999999999`` becomes ``0-276447231``).  An adapter bound with ``seen: output``: a
    case that expects a refusal fails on it, since flux-core answered with an output.
    """
    return adapter_bound(
        f"flux-core answered with {count} {what} ({str(decoded)[:80]}), more than the adapter "
        f"lists ({MAX_VALUES:,}, the reference's bound)",
        seen_output=True,
    )


def _validation_error(exc: BaseException) -> Mapping[str, Any] | None:
    if isinstance(exc, _INVALID):
        return refused(exc)
    if isinstance(exc, OSError) and exc.errno == errno.EINVAL:
        return refused(exc)
    return None


def _import_build(prefix: str) -> ModuleType:
    """Import the ``flux`` package installed under ``prefix``, or say why it cannot be."""
    root = Path(prefix)
    sites = [
        site
        for site in sorted(root.glob("lib*/python3*/site-packages"))
        if (site / "flux" / "__init__.py").is_file()
    ]
    if not sites:
        raise AdapterError(
            f"{PREFIX_VARIABLE}={prefix} holds no flux-core build (no "
            f"lib/python3.X/site-packages/flux): {_BUILD_HINT}"
        )
    site = sites[0].resolve()
    if str(site) not in sys.path:
        sys.path.insert(0, str(site))
    try:
        flux = importlib.import_module("flux")
    except ImportError as exc:
        raise AdapterError(
            f"flux-core's bindings in {site} do not import ({exc}); {_BUILD_HINT}"
        ) from None
    where = Path(getattr(flux, "__file__", "") or "").resolve()
    if not where.is_relative_to(site):
        raise AdapterError(
            f"{PREFIX_VARIABLE}={prefix}, but `flux` was already imported from {where}"
        )
    return flux


def _wheel_directory() -> Path | None:
    """The installed ``flux`` package's directory, found without running its ``__init__``."""
    try:
        spec = importlib.util.find_spec("flux")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        if (Path(location) / "shape" / "parser.py").is_file():
            return Path(location)
    return None


def _load_file(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"{_WHEEL_PACKAGE}.{name}", path)
    if spec is None or spec.loader is None:
        raise AdapterError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    except ImportError as exc:  # PLY or PyYAML missing
        del sys.modules[spec.name]
        raise AdapterError(
            f"{path} needs {exc.name or exc}: pip install 'flux-conformance[flux-core]'"
        ) from None
    return module


def _class_from_source(path: Path, name: str, namespace: Mapping[str, Any]) -> Any:
    """Run the ``class name(...)`` statement of ``path`` alone, given ``namespace``.

    The rest of the file is not executed (its imports need the C bindings); the class is
    built from flux-core's own text in a stand-in module carrying the file's name, which
    PLY looks up through the class's ``__module__`` and tracebacks point at.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            module = ModuleType(f"{_WHEEL_PACKAGE}.{path.parent.name}.{path.stem}")
            module.__file__ = str(path)
            module.__dict__.update(namespace)
            sys.modules[module.__name__] = module
            code = compile(ast.Module(body=[node], type_ignores=[]), str(path), "exec")
            exec(code, module.__dict__)
            return module.__dict__[name]
    return None


class FluxCore(ThirdPartyImplementation):
    """flux-core's Python bindings (see the module docstring for the API of each operation)."""

    name = "flux-core"

    def __init__(self) -> None:
        prefix = os.environ.get(PREFIX_VARIABLE)
        if prefix:
            flux = _import_build(prefix)
        else:
            try:
                flux = importlib.import_module("flux")
            except ImportError as exc:
                self._init_wheel(exc)
                return
        self.mode = "bindings"
        self.version = _version(flux)
        handlers: dict[str, Handler] = {}
        idset = _optional("flux.idset")
        if idset is not None:
            self._idset = idset
            handlers["idset.decode"] = self._idset_decode
            handlers["idset.encode"] = self._idset_encode
        hostlist = _optional("flux.hostlist")
        if hostlist is not None:
            self._hostlist = hostlist
            handlers["hostlist.decode"] = self._hostlist_decode
            handlers["hostlist.encode"] = self._hostlist_encode
        resource = _optional("flux.resource")
        if resource is not None and hasattr(resource, "ResourceSet"):
            self._ResourceSet = resource.ResourceSet
            handlers["R.validate"] = self._r_validate
            handlers["R.decode"] = self._r_decode
            for op in ("union", "diff", "intersect"):
                handlers[f"R.{op}"] = self._r_setop(op)
            handlers["constraint.match"] = self._constraint_match
        if resource is not None and hasattr(resource, "ResourceCount"):
            self._ResourceCount = resource.ResourceCount
            handlers["count.values"] = self._count_values
        job = _optional("flux.job")
        if job is not None and hasattr(job, "validate_jobspec"):
            self._validate_jobspec = job.validate_jobspec
            handlers["jobspec.validate"] = self._jobspec_validate
            handlers["constraint.validate"] = self._constraint_validate
            if resource is not None and hasattr(resource, "ResourcePool"):
                self._ResourcePool = resource.ResourcePool
                handlers["sched.allocate"] = self._sched_allocate
        shape = _optional("flux.shape.parser")
        if shape is not None:
            self._shape = shape
            self._shape_parser: Any = None
            handlers["shape.parse"] = self._shape_parse
        query_parser = self._query_parser_class()
        if query_parser is not None:
            self._query_parser_cls = query_parser
            self._query_syntax_error = importlib.import_module(
                "flux.constraint.parser"
            ).ConstraintSyntaxError
            handlers["constraint.parse_query"] = self._parse_query
        super().__init__(handlers)

    def _init_wheel(self, why: ImportError) -> None:
        """Answer what the wheel's pure-Python parsers can; the rest needs a build."""
        directory = _wheel_directory()
        if directory is None:
            raise AdapterError(
                f"flux-core's Python bindings are not importable ({why}): pip install "
                "'flux-conformance[flux-core]' (the flux-python wheel; shape and query parsers "
                f"only), or {_BUILD_HINT} (every operation)"
            ) from None
        self.mode = "wheel"
        self.version = f"{_distribution_version()} (flux-python wheel, pure-Python parsers)"
        self._shape = _load_file(directory / "shape" / "parser.py", "shape.parser")
        self._shape_parser = None
        constraint = _load_file(directory / "constraint" / "parser.py", "constraint.parser")
        self._query_syntax_error = constraint.ConstraintSyntaxError
        self._query_parser_cls = None
        for where in ("job/_utils.py", "cli/base.py"):
            if (directory / where).is_file():
                namespace = {"ConstraintParser": constraint.ConstraintParser}
                found = _class_from_source(directory / where, "MiniConstraintParser", namespace)
                if found is not None:
                    self._query_parser_cls = found
                    break
        reason = (
            f"{{op}} goes through flux-core's C libraries, which the flux-python wheel does "
            f"not ship (import flux: {why}): {_BUILD_HINT}"
        )
        handlers: dict[str, Handler] = {
            op: self._needs_build(reason.format(op=op)) for op in _NEEDS_BUILD
        }
        handlers["shape.parse"] = self._shape_parse
        if self._query_parser_cls is not None:
            handlers["constraint.parse_query"] = self._parse_query
        super().__init__(handlers)

    @staticmethod
    def _needs_build(reason: str) -> Handler:
        def handler(value: Any) -> Mapping[str, Any]:
            del value
            return unsupported(reason)

        return handler

    # -- RFC 22 / RFC 29 ------------------------------------------------------------------

    def _idset_decode(self, text: Any) -> Mapping[str, Any]:
        try:
            decoded = self._idset.decode(text)
        except ValueError as exc:
            return refused(exc)
        if len(decoded) > MAX_VALUES:
            return _too_many(len(decoded), "ids", decoded)
        return output([int(i) for i in decoded])

    def _idset_encode(self, ids: Any) -> Mapping[str, Any]:
        try:
            return output(str(self._idset.IDset(list(ids))))
        except ValueError as exc:
            return refused(exc)

    def _hostlist_decode(self, text: Any) -> Mapping[str, Any]:
        try:
            decoded = self._hostlist.decode(text)
        except ValueError as exc:
            return refused(exc)
        if len(decoded) > MAX_VALUES:
            return _too_many(len(decoded), "hosts", decoded)
        return output([str(h) for h in decoded])

    def _hostlist_encode(self, hosts: Any) -> Mapping[str, Any]:
        try:
            return output(str(self._hostlist.Hostlist(list(hosts)).encode()))
        except (ValueError, TypeError) as exc:
            return refused(exc)

    # -- RFC 14 counts, RFC 46 shapes, jobspec --------------------------------------------

    def _count_values(self, value: Any) -> Mapping[str, Any]:
        count, limit = value["count"], value["limit"]
        try:
            parsed = self._ResourceCount.from_count_spec(count)
            found = list(itertools.islice(parsed.valid_counts(limit), MAX_VALUES + 1))
        except (ValueError, TypeError) as exc:
            return refused(exc)
        if len(found) > MAX_VALUES:
            return _too_many(f"more than {MAX_VALUES:,}", "values", found[:8])
        return output(sorted(int(v) for v in found))

    def _shape_parse(self, value: Any) -> Mapping[str, Any]:
        if self._shape_parser is None:
            # Building the PLY tables is the slow part; the parser is reused.
            self._shape_parser = self._shape.ShapeParser()
            self._shape_default = self._shape_parser.default_slot_label
        parser = self._shape_parser
        parser.default_slot_label = value.get("default_label", self._shape_default)
        try:
            return output(parser.parse(value["shape"]))
        except self._shape.ShapeSyntaxError as exc:
            return error("syntax", exc)
        except (ValueError, TypeError) as exc:
            return refused(exc)

    def _validate(self, document: Any) -> Mapping[str, Any]:
        try:
            result = self._validate_jobspec(json.dumps(document))
        except Exception as exc:
            mapped = _validation_error(exc)
            if mapped is None:
                raise
            return mapped
        if not isinstance(result, tuple) or result[0] is not True:
            # validate_jobspec returns (1, reason) instead of raising for JSON null.
            return refused(f"validate_jobspec returned {result!r}")
        return output({"warnings": []})

    def _jobspec_validate(self, document: Any) -> Mapping[str, Any]:
        return self._validate(document)

    def _constraint_validate(self, constraint: Any) -> Mapping[str, Any]:
        return self._validate(constraint_carrier(constraint))

    # -- RFC 35 ---------------------------------------------------------------------------

    @staticmethod
    def _query_parser_class() -> Any:
        for where in ("flux.job._utils", "flux.cli.base"):
            module = _optional(where)
            if module is not None and hasattr(module, "MiniConstraintParser"):
                return module.MiniConstraintParser
        return None

    def _parse_query(self, query: Any) -> Mapping[str, Any]:
        # A fresh parser per query (about 25 ms): flux-core's ConstraintLexer keeps a pending
        # "op:" token after a "Missing argument" error and prefixes it to the next query the
        # same parser reads ("ss:" then "gu" gives {"ss": ["gu"]}), so a reused parser would
        # answer each case according to the one before it.
        parser = self._query_parser_cls()
        try:
            return output(parser.parse(query))
        except self._query_syntax_error as exc:
            return error("syntax", exc)
        except (TypeError, ValueError) as exc:  # PLY's lexer: "Expected a string"
            return refused(exc)

    # -- RFC 20 / RFC 31 ------------------------------------------------------------------

    def _rset(self, document: Any) -> Any:
        return self._ResourceSet(json.dumps(document))

    def _guarded(self, answer: Callable[[], Any]) -> Mapping[str, Any]:
        try:
            return output(answer())
        except _INVALID as exc:
            return refused(exc)

    def _r_validate(self, document: Any) -> Mapping[str, Any]:
        def answer() -> Any:
            self._rset(document)
            return {"warnings": []}

        return self._guarded(answer)

    def _r_decode(self, document: Any) -> Mapping[str, Any]:
        def answer() -> Any:
            rset = self._rset(document)
            ranks = []
            for rank in rset.ranks:
                one = rset.copy_ranks(rank)
                children: dict[str, str] = {"core": "", "gpu": ""}
                for entry in json.loads(one.encode())["execution"]["R_lite"]:
                    children.update({k: str(v) for k, v in entry.get("children", {}).items()})
                hosts = [str(h) for h in one.nodelist]
                ranks.append(
                    {
                        "rank": int(rank),
                        "hostname": hosts[0] if hosts else "",
                        "cores": children["core"],
                        "gpus": children["gpu"],
                        "properties": sorted(json.loads(one.get_properties())),
                    }
                )
            return ranks

        return self._guarded(answer)

    def _r_setop(self, method: str) -> Handler:
        def handler(value: Any) -> Mapping[str, Any]:
            def answer() -> Any:
                a, b = self._rset(value["a"]), self._rset(value["b"])
                return json.loads(getattr(a, method)(b).encode())

            return self._guarded(answer)

        return handler

    def _constraint_match(self, value: Any) -> Mapping[str, Any]:
        def answer() -> Any:
            rset = self._rset(value["R"])
            matched = rset.copy_constraint(json.dumps(value["constraint"]))
            return sorted(int(r) for r in matched.ranks)

        return self._guarded(answer)

    # -- scheduling ---------------------------------------------------------------------

    def _sched_allocate(self, value: Any) -> Mapping[str, Any]:
        return allocate(value, self._validate_jobspec, self._ResourcePool)
