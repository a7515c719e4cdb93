"""Adapter for python-hostlist (``pip install python-hostlist``): ``--impl python-hostlist``.

What it answers, and through which API:

* ``hostlist.decode`` -- ``hostlist.expand_hostlist(text, allow_duplicates=True)``: the
  library drops repeated hosts unless told not to, and RFC 29 keeps them, so duplicates are
  kept; order is the library's own (it keeps the written order).
* ``hostlist.encode`` -- ``hostlist.collect_hostlist(hosts)``.  The library sorts and
  de-duplicates while it compresses; that is its behaviour, reported as found (see the
  expectations file), not corrected here.
* ``idset.encode`` -- ``collect_hostlist`` of the ids written in decimal: a list of bare
  numbers compresses to a bracketed idlist such as ``[1-3,9]``, which is an RFC 22 idset
  string, and sorting and de-duplicating is exactly what a set needs.  A negative id has no
  bracketed-hostlist form, so such an input is ``unsupported``.
* ``idset.decode`` is *not* offered: expanding ``[text]`` as a hostlist would accept strings
  RFC 22 forbids (``3,1``, ``01``) and return ids out of order, which says nothing about
  python-hostlist itself.

Errors: the library raises one class, ``BadHostlist``, for every refusal, its size guard
(``MAX_SIZE``) included, and says what went wrong only in its message.  So a refusal has no
category the library gives: it is reported as ``unknown`` (counted as a refusal, category not
checked), never guessed from the message.  Anything else propagates (the case is errored).
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import metadata
from typing import Any

from flux_conformance.runner.adapters.thirdparty._base import (
    ThirdPartyImplementation,
    import_or_fail,
    output,
    refused,
    unsupported,
)

__all__ = ["PythonHostlist"]


class PythonHostlist(ThirdPartyImplementation):
    """python-hostlist's ``expand_hostlist`` and ``collect_hostlist``."""

    name = "python-hostlist"

    def __init__(self) -> None:
        self._lib = import_or_fail(
            "hostlist",
            what="python-hostlist",
            install="install it with: pip install 'flux-conformance[python-hostlist]'",
        )
        try:
            self.version = metadata.version("python-hostlist")
        except metadata.PackageNotFoundError:
            self.version = str(getattr(self._lib, "__version__", "unknown"))
        super().__init__(
            {
                "hostlist.decode": self._hostlist_decode,
                "hostlist.encode": self._hostlist_encode,
                "idset.encode": self._idset_encode,
            }
        )

    def _hostlist_decode(self, text: Any) -> Mapping[str, Any]:
        try:
            hosts = self._lib.expand_hostlist(text, allow_duplicates=True)
        except self._lib.BadHostlist as exc:
            return refused(exc)
        return output(list(hosts))

    def _hostlist_encode(self, hosts: Any) -> Mapping[str, Any]:
        try:
            return output(self._lib.collect_hostlist(list(hosts)))
        except self._lib.BadHostlist as exc:
            return refused(exc)

    def _idset_encode(self, ids: Any) -> Mapping[str, Any]:
        if any(i < 0 for i in ids):
            return unsupported("a negative id has no form in a bracketed hostlist")
        try:
            return output(self._lib.collect_hostlist([str(i) for i in ids]))
        except self._lib.BadHostlist as exc:  # pragma: no cover - decimal ids are writable
            return refused(exc)
