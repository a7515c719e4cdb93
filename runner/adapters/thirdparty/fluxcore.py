"""Adapter for flux-core's Python bindings: ``--impl flux-core``.

flux-core is not on PyPI: this adapter loads only where ``import flux`` works (inside a
flux-core build or installation, e.g. under ``flux python``).  Each operation goes through
the public API flux-core itself uses for it; an operation whose module is missing from the
installed flux-core (``flux.shape`` is recent) is left out, like those it has no API for:

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
============================  =====================================================

Unsupported (no flux-core API): ``range.decode`` (flux-core parses RFC 45 strings only as
counts, applying RFC 14's rules), ``R.encode``, ``jobspec.from_shape`` (the CLI assembles
jobspecs from a shape, no function does), and the Slurm operations.

JSON documents (R, jobspec, constraints) are handed over serialised, as flux-core receives
them from the KVS or a submission, so a wrongly typed document reaches flux-core as it is.

Error mapping:

* decoders (``idset.decode``, ``hostlist.decode``): ``ValueError`` -> ``syntax``;
* ``idset.encode``: ``ValueError`` -> ``invalid`` when an id is negative, else ``limit``;
* ``hostlist.encode``: ``ValueError``/``TypeError`` -> ``invalid``;
* ``count.values``: ``ResourceCount`` raises ``ValueError`` for everything; one whose message
  starts ``RFC 14``/``RFC 45`` (a broken count rule), or any error for a non-string count,
  -> ``invalid``; any other error for a string (it did not parse) -> ``syntax``;
* ``shape.parse``: ``ShapeSyntaxError`` -> ``syntax`` (flux-core raises it also for several
  unlabelled slots, which the suite calls ``invalid``: a finding), ``ValueError``/
  ``TypeError`` -> ``invalid``;
* ``constraint.parse_query``: ``ConstraintSyntaxError`` -> ``syntax``, ``TypeError`` or
  ``ValueError`` (PLY refusing a non-string) -> ``invalid``;
* validators and R operations: ``ValueError``/``TypeError``/``KeyError`` -> ``invalid``
  (the exceptions ``ResourceSet`` and ``validate_jobspec`` document), and an ``OSError``
  with ``EINVAL`` from ``validate_jobspec``;
* anything else propagates, and the case is errored (flux-core crashed on that input).
"""

from __future__ import annotations

import errno
import importlib
import itertools
import json
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from runner.adapters.base import AdapterError
from runner.adapters.thirdparty._base import (
    Handler,
    ThirdPartyImplementation,
    error,
    output,
)

__all__ = ["MAX_VALUES", "FluxCore"]

#: ``count.values`` stops listing here: ``valid_counts`` of an unbounded count is as long
#: as the limit, so the adapter answers ``limit`` past the reference's own bound.
MAX_VALUES = 4_000_000

_INVALID = (ValueError, TypeError, KeyError)

#: The smallest jobspec flux-core accepts; ``constraint.validate`` puts the constraint in it.
_CARRIER: dict[str, Any] = {
    "version": 1,
    "resources": [
        {"type": "slot", "count": 1, "label": "task", "with": [{"type": "core", "count": 1}]}
    ],
    "tasks": [{"command": ["true"], "slot": "task", "count": {"per_slot": 1}}],
    "attributes": {"system": {}},
}


def _optional(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _version(flux: ModuleType) -> str:
    for source in (flux, _optional("flux.core")):
        found = getattr(source, "__version__", None)
        if found:
            return str(found)
    from importlib import metadata

    try:
        return metadata.version("flux")
    except metadata.PackageNotFoundError:
        return "unknown"


def _validation_error(exc: BaseException) -> Mapping[str, Any] | None:
    if isinstance(exc, _INVALID):
        return error("invalid", exc)
    if isinstance(exc, OSError) and exc.errno == errno.EINVAL:
        return error("invalid", exc)
    return None


class FluxCore(ThirdPartyImplementation):
    """flux-core's Python bindings (see the module docstring for the API of each operation)."""

    name = "flux-core"

    def __init__(self) -> None:
        try:
            flux = importlib.import_module("flux")
        except ImportError as exc:
            raise AdapterError(
                f"flux-core's Python bindings are not importable ({exc}); flux-core is not on "
                "PyPI: run inside a flux-core installation (e.g. `flux python -m runner.cli "
                "run --impl flux-core`) or put its python directory on PYTHONPATH"
            ) from None
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
        shape = _optional("flux.shape.parser")
        if shape is not None:
            self._shape = shape
            self._shape_parser: Any = None
            handlers["shape.parse"] = self._shape_parse
        query_parser = self._query_parser_class()
        if query_parser is not None:
            self._query_parser_cls = query_parser
            self._query_parser: Any = None
            handlers["constraint.parse_query"] = self._parse_query
        super().__init__(handlers)

    # -- RFC 22 / RFC 29 ------------------------------------------------------------------

    def _idset_decode(self, text: Any) -> Mapping[str, Any]:
        try:
            return output([int(i) for i in self._idset.decode(text)])
        except ValueError as exc:
            return error("syntax", exc)

    def _idset_encode(self, ids: Any) -> Mapping[str, Any]:
        try:
            return output(str(self._idset.IDset(list(ids))))
        except ValueError as exc:
            return error("invalid" if any(i < 0 for i in ids) else "limit", exc)

    def _hostlist_decode(self, text: Any) -> Mapping[str, Any]:
        try:
            return output([str(h) for h in self._hostlist.decode(text)])
        except ValueError as exc:
            return error("syntax", exc)

    def _hostlist_encode(self, hosts: Any) -> Mapping[str, Any]:
        try:
            return output(str(self._hostlist.Hostlist(list(hosts)).encode()))
        except (ValueError, TypeError) as exc:
            return error("invalid", exc)

    # -- RFC 14 counts, RFC 46 shapes, jobspec --------------------------------------------

    def _count_values(self, value: Any) -> Mapping[str, Any]:
        count, limit = value["count"], value["limit"]
        try:
            parsed = self._ResourceCount.from_count_spec(count)
            found = list(itertools.islice(parsed.valid_counts(limit), MAX_VALUES + 1))
        except (ValueError, TypeError) as exc:
            rule = str(exc).startswith(("RFC 14", "RFC 45"))
            return error("invalid" if rule or not isinstance(count, str) else "syntax", exc)
        if len(found) > MAX_VALUES:
            return error("limit", f"more than {MAX_VALUES} values (adapter bound)")
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
            return error("invalid", exc)

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
            return error("invalid", f"validate_jobspec returned {result!r}")
        return output({"warnings": []})

    def _jobspec_validate(self, document: Any) -> Mapping[str, Any]:
        return self._validate(document)

    def _constraint_validate(self, constraint: Any) -> Mapping[str, Any]:
        carrier = json.loads(json.dumps(_CARRIER))
        carrier["attributes"]["system"]["constraints"] = constraint
        return self._validate(carrier)

    # -- RFC 35 ---------------------------------------------------------------------------

    @staticmethod
    def _query_parser_class() -> Any:
        for where in ("flux.job._utils", "flux.cli.base"):
            module = _optional(where)
            if module is not None and hasattr(module, "MiniConstraintParser"):
                return module.MiniConstraintParser
        return None

    def _parse_query(self, query: Any) -> Mapping[str, Any]:
        if self._query_parser is None:
            self._query_parser = self._query_parser_cls()
        syntax_error = importlib.import_module("flux.constraint.parser").ConstraintSyntaxError
        try:
            return output(self._query_parser.parse(query))
        except syntax_error as exc:
            return error("syntax", exc)
        except (TypeError, ValueError) as exc:  # PLY's lexer: "Expected a string"
            return error("invalid", exc)

    # -- RFC 20 / RFC 31 ------------------------------------------------------------------

    def _rset(self, document: Any) -> Any:
        return self._ResourceSet(json.dumps(document))

    def _guarded(self, answer: Callable[[], Any]) -> Mapping[str, Any]:
        try:
            return output(answer())
        except _INVALID as exc:
            return error("invalid", exc)

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
