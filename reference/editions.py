"""Editions: which revision of each spec text the reference follows.

The Flux RFCs change.  An edition lists the flux-framework/rfc revision of each RFC it follows,
is named by a date, and turns the differences that matter to an implementation into named
rules, which the format modules test instead of comparing edition names.

Two editions are known:

* ``2025-07-31``: RFC 14 at ``f6afff1`` (2025-07-31), where a range dictionary carries
  ``max``, ``operator`` and ``operand`` all three or none; RFC 20 with an ``attributes`` section,
  a ``scheduling`` key holding a JGF graph, no ``nslots``, and no special meaning for a zero
  ``starttime`` or ``expiration`` (``980e179``, read with the ``03f7beb`` clarification that the
  nodelist follows the ranks in ascending order); RFC 31 at ``fa0a759``; RFC 46 at ``1808669``.
* ``2026-08-13`` (flux-framework/rfc ``4b15e2a``), also called ``latest`` and the default:
  RFC 14 ``f04092b`` (``max`` optional; ``operator`` and ``operand`` come as a pair) and
  ``35e24ff`` (``with`` a non-empty list); RFC 20 ``8da980e`` (``nslots``), ``e775b80`` (no
  ``attributes`` section; ``execution`` required; a zero time means unset), ``8dfe0be``
  (``scheduling`` is scheduler-specific, with an optional ``writer``) and ``cfd3836``
  (a leading ``+`` marks an instance-local property).

The other RFCs the suite covers (22, 29, 31, 35, 45, 46) read the same in both editions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from flux_conformance.reference.errors import InvalidError

__all__ = [
    "ALIASES",
    "DEFAULT_EDITION",
    "EDITIONS",
    "LATEST",
    "Edition",
    "edition_named",
    "resolve",
]


@dataclass(frozen=True)
class Edition:
    """One state of the spec texts, and the rules in which it differs from the others."""

    #: The name a user gives ``--edition``: the date of the flux-framework/rfc state.
    name: str
    #: The flux-framework/rfc commit of that state (short hash).
    commit: str
    #: What the edition is, in one sentence.
    summary: str
    #: RFC number -> the commit (and date) of the text this edition follows.
    revisions: Mapping[int, str] = field(default_factory=dict)
    #: RFC 14: ``max`` may be left out of a range dictionary (operator and operand stay a pair).
    range_max_optional: bool = False
    #: RFC 20: ``execution`` is required; ``attributes`` is gone; ``scheduling`` is
    #: scheduler-specific data with an optional string ``writer`` (no JGF graph required).
    r_execution_required: bool = False
    #: RFC 20: ``execution.nslots``, an integer above 0, is defined (a scheduler writes it).
    r_nslots: bool = False
    #: RFC 20: a ``starttime`` or ``expiration`` of 0 means "unset".
    r_zero_time_unset: bool = False
    #: RFC 20: a property whose name starts with ``+`` is instance-local; a scheduler leaves
    #: it out of the R it allocates.
    r_instance_local_properties: bool = False
    #: RFC 20: every R_lite entry's ``core`` names one or more cores, so a scheduler cannot
    #: allocate a rank without a core (the R reader itself still takes an empty set: readings).
    r_core_every_rank: bool = False


EDITIONS: Mapping[str, Edition] = {
    "2025-07-31": Edition(
        name="2025-07-31",
        commit="f6afff1",
        summary="RFC 14 at f6afff1 (range dictionaries carry max, operator and operand all "
        "three or none) and RFC 20 at 980e179 (before nslots)",
        revisions={
            14: "f6afff1 (2025-07-31)",
            20: "980e179 (2023-09-02)",
            22: "78cbf27 (2023-11-30)",
            26: "0d915fe (2025-07-30)",
            29: "78cbf27 (2023-11-30)",
            31: "fa0a759 (2023-07-06)",
            35: "78cbf27 (2023-11-30)",
            45: "0e6ed6e (2025-07-31)",
            46: "1808669 (2025-09-16)",
        },
    ),
    "2026-08-13": Edition(
        name="2026-08-13",
        commit="4b15e2a",
        summary="flux-framework/rfc 4b15e2a: RFC 14 max optional in a range dictionary; "
        "RFC 20 nslots, writer, instance-local (+) properties, no attributes section",
        revisions={
            14: "f04092b (2025-10-10)",
            20: "cfd3836 (2026-08-03)",
            22: "78cbf27 (2023-11-30)",
            26: "0d915fe (2025-07-30)",
            29: "78cbf27 (2023-11-30)",
            31: "78cbf27 (2023-11-30)",
            35: "e429726 (2025-08-09)",
            45: "0e6ed6e (2025-07-31)",
            46: "1808669 (2025-09-16)",
        },
        range_max_optional=True,
        r_execution_required=True,
        r_nslots=True,
        r_zero_time_unset=True,
        r_instance_local_properties=True,
        r_core_every_rank=True,
    ),
}

#: The newest edition the suite covers, which runs when none is named.
LATEST = "2026-08-13"
DEFAULT_EDITION = LATEST

#: Other names an edition answers to.  ``seed`` and ``upstream`` are the names 0.7.0 and
#: earlier used, kept so that old expectations files and protocol clients keep working.
ALIASES: Mapping[str, str] = {
    "latest": LATEST,
    "upstream": LATEST,
    "seed": "2025-07-31",
}


def resolve(name: str | None) -> str:
    """The edition's canonical name for ``name`` (None: the default); InvalidError if unknown."""
    if name is None:
        return DEFAULT_EDITION
    if name in EDITIONS:
        return name
    if isinstance(name, str) and name in ALIASES:
        return ALIASES[name]
    known = ", ".join([*EDITIONS, "latest"])
    raise InvalidError(f"unknown edition {name!r}; expected one of {known}")


def edition_named(name: str | None) -> Edition:
    """The :class:`Edition` called ``name`` (an alias or None allowed)."""
    return EDITIONS[resolve(name)]
