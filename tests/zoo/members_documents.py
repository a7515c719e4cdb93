"""Wrong readers of documents: R, constraints and jobspecs, with the mistakes real ones make.

Each member is the reference with one departure that ``flux-conformance diff`` found in a real
implementation (docs/diff.md's findings run): ids of an R or a constraint kept in 32 bits, so
2**32 reads as 0 (flux-core's Python bindings and librlist); ids from 2**31 called invalid
(librlist, Fluxion); a host name cut at its first whitespace (flux-core's ``R.decode``); host
names and hostlist values taken as any string (flux-core, librlist, Fluxion); a jobspec count
past 2**31 refused as malformed (Fluxion).  The cases catch each one (tests/zoo/test_zoo.py),
and so does a bounded ``diff`` run (tests/zoo/test_zoo_diff.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from zoo._framework import Outcome, Ref, copy_json, err, member, retry, walk

__all__: list[str] = []

_ID = re.compile(r"[0-9]+")
_WHITESPACE = re.compile(r"\s")


def _wrap_text(text: Any) -> Any:
    """Every id of an idset text taken modulo 2**32 (what a 32-bit reader keeps)."""
    if not isinstance(text, str):
        return text
    return _ID.sub(lambda m: str(int(m.group()) % 2**32) if len(m.group()) < 30 else "0", text)


def _wrap_r(doc: Any) -> Any:
    """An R whose ranks, cores and GPUs are read in 32 bits."""
    if not isinstance(doc, dict) or not isinstance(doc.get("execution"), dict):
        return doc
    entries = doc["execution"].get("R_lite")
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        entry["rank"] = _wrap_text(entry.get("rank"))
        children = entry.get("children")
        if isinstance(children, dict):
            for key in ("core", "gpu"):
                if key in children:
                    children[key] = _wrap_text(children[key])
    return doc


def _changed(value: Any, ref: Ref, change: Callable[[Any], Any]) -> Outcome | None:
    """The reference's answer to ``change(value)``, where that input is another one."""
    changed = change(copy_json(value))
    return None if changed == value else ref(changed)


_R_FORTY_TWO = {
    "version": 1,
    "execution": {
        "R_lite": [{"rank": "4294967296", "children": {"core": "0"}}],
        "nodelist": ["n0"],
    },
}


@member("R.decode", like="flux-core's and librlist's 32-bit idsets", witness=_R_FORTY_TWO)
def r_ids_wrap_at_2_32(value: Any, ref: Ref) -> Outcome | None:
    """Rank, core and GPU ids of the R are read modulo 2**32 (2**32 is rank 0)."""
    return _changed(value, ref, _wrap_r)


def _cut_hosts(doc: Any) -> Any:
    nodelist = doc.get("execution", {}).get("nodelist") if isinstance(doc, dict) else None
    if isinstance(nodelist, list):
        doc["execution"]["nodelist"] = [
            _WHITESPACE.split(entry, maxsplit=1)[0] if isinstance(entry, str) else entry
            for entry in nodelist
        ]
    return doc


_R_SPACED = {
    "version": 1,
    "execution": {"R_lite": [{"rank": "0", "children": {"core": "0"}}], "nodelist": ["h 0"]},
}


@member("R.decode", like="flux-core's R.decode of 'h 0' (host 'h')", witness=_R_SPACED)
def host_cut_at_whitespace(value: Any, ref: Ref) -> Outcome | None:
    """A nodelist entry ends at its first whitespace: "h 0" is host h."""
    return _changed(value, ref, _cut_hosts)


def _plain_hosts(doc: Any) -> Any:
    nodelist = doc.get("execution", {}).get("nodelist") if isinstance(doc, dict) else None
    if isinstance(nodelist, list):
        doc["execution"]["nodelist"] = [
            re.sub(r"[^\x21-\x7e]", "x", entry) if isinstance(entry, str) else entry
            for entry in nodelist
        ]
    return doc


@member("R.validate", like="flux-core and librlist: any string is a host", witness=_R_SPACED)
def host_names_unchecked(value: Any, ref: Ref) -> Outcome | None:
    """A host name with whitespace or non-ASCII letters is accepted."""
    return retry(value, ref, _plain_hosts)


_PAIR = {
    "a": {"version": 1, "execution": {"R_lite": [{"rank": "0", "children": {"core": "0"}}],
                                       "nodelist": ["n0"]}},
    "b": {"version": 1, "execution": {"R_lite": [{"rank": "0", "children": {"core": "4294967296"}}],
                                       "nodelist": ["n0"]}},
}  # fmt: skip


def _wrap_pair(value: Any) -> Any:
    if isinstance(value, dict):
        for side in ("a", "b"):
            value[side] = _wrap_r(value.get(side))
    return value


@member("R.union", like="flux-core's and librlist's 32-bit idsets", witness=_PAIR)
def union_ids_wrap_at_2_32(value: Any, ref: Ref) -> Outcome | None:
    """Both sides' ids are read modulo 2**32 before the union."""
    return _changed(value, ref, _wrap_pair)


def _wrap_ranks(value: Any) -> Any:
    if isinstance(value, dict):
        for node in walk(value.get("constraint")):
            if isinstance(node, dict) and isinstance(node.get("ranks"), list):
                node["ranks"] = [_wrap_text(item) for item in node["ranks"]]
    return value


_MATCH = {
    "constraint": {"ranks": ["4294967297"]},
    "R": {"version": 1, "execution": {"R_lite": [{"rank": "0-1", "children": {"core": "0"}}],
                                       "nodelist": ["n[0-1]"]}},
}  # fmt: skip


@member("constraint.match", like="flux-core's 32-bit idsets", witness=_MATCH)
def ranks_wrap_at_2_32(value: Any, ref: Ref) -> Outcome | None:
    """The ranks of a constraint are read modulo 2**32 (4294967297 matches rank 1)."""
    return _changed(value, ref, _wrap_ranks)


def _plain_hostlists(value: Any) -> Any:
    for node in walk(value):
        if isinstance(node, dict) and isinstance(node.get("hostlist"), list):
            node["hostlist"] = [
                re.sub(r"[^\x21-\x7e]", "x", item) if isinstance(item, str) else item
                for item in node["hostlist"]
            ]
    return value


@member(
    "constraint.validate",
    like="flux-core, librlist and Fluxion: a hostlist value is any string",
    witness={"hostlist": ["h 0"]},
)
def hostlist_values_unchecked(value: Any, ref: Ref) -> Outcome | None:
    """A hostlist value with whitespace or non-ASCII letters is accepted."""
    return retry(value, ref, _plain_hostlists)


def _has_id_past(value: Any, bound: int) -> bool:
    for node in walk(value):
        if isinstance(node, dict) and isinstance(node.get("ranks"), list):
            for item in node["ranks"]:
                if isinstance(item, str) and any(
                    len(m.group()) > 9 and int(m.group()) >= bound for m in _ID.finditer(item)
                ):
                    return True
    return False


@member(
    "constraint.validate",
    like="librlist and Fluxion: idsets of signed 32-bit ids",
    witness={"ranks": ["2147483648"]},
)
def ranks_past_2_31_invalid(value: Any, ref: Ref) -> Outcome | None:
    """A ranks value naming an id of 2**31 or more is called invalid."""
    return err("invalid") if "output" in ref(value) and _has_id_past(value, 2**31) else None


def _big_count(value: Any) -> bool:
    for node in walk(value.get("resources") if isinstance(value, dict) else None):
        if isinstance(node, dict):
            count = node.get("count")
            if type(count) is int and count >= 2**31:
                return True
    return False


_JOBSPEC = {
    "version": 1,
    "resources": [
        {"type": "slot", "count": 1, "label": "task",
         "with": [{"type": "core", "count": 4294967296}]}
    ],
    "tasks": [{"command": ["app"], "slot": "task", "count": {"per_slot": 1}}],
    "attributes": {"system": {}},
}  # fmt: skip


@member("jobspec.validate", like="Fluxion's count conversion", witness=_JOBSPEC)
def count_past_2_31_invalid(value: Any, ref: Ref) -> Outcome | None:
    """An integer count of 2**31 or more makes the jobspec invalid."""
    return err("invalid") if "output" in ref(value) and _big_count(value) else None
