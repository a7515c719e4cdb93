"""When ``diff`` counts a disagreement as one of a new kind, worth a search round of its own.

Each round of :mod:`runner.tools.diff` fails only on a disagreement that no finding already
known explains.  A disagreement's :class:`Kind` is the pair of outcomes it shows (an output, or
the error category, on each side) and the features of its input:

* a text input (an idset, a hostlist, a query...) is described by its punctuation, the
  characters that are neither letters nor digits: ``,.`` adds nothing to ``,``, but ``[]`` is
  new beside ``""`` (an input without punctuation is explained only by another without);
* a document (a JSON object or array: R, constraints, jobspecs, lists of ids or names) is
  described by what it holds where (:func:`document_features`): the set of keys of each
  object, the type of each value, the kinds of character of each string and the integer ranges
  of each number, each tied to the path of keys it sits under.  Its JSON text would not do: the
  braces, quotes and separators every document has make one minimal finding (``{"version":
  1}``) explain every later one.

A known finding explains a disagreement of the same outcomes when the disagreement's input has
every feature of the finding's (the minimal input holds what makes the disagreement) and, for a
document, nothing *critical* the finding lacks: a number past 2**31, or a whitespace, control
or non-ASCII character in a string, makes a class of its own wherever it appears (a host name
with a space beside a ``"version": 1.0``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Baseline",
    "Kind",
    "baseline",
    "document_features",
    "draw_sample",
    "explained",
    "kind_of",
]

#: Numbers from here on are big: past a signed 32-bit integer, where implementations' types
#: start to differ (which type, 32 or 64 bits, is left to the paths: one class a place).
_BIG = 2**31
_DIGITS = re.compile(r"[0-9]+")
#: How a key's presence, and the absence of a key most documents have, are written.
_HAS, _LACKS = "has ", "lacks "
#: How many inputs of the strategy the baseline (:func:`baseline`) is drawn from.
BASELINE_SAMPLE = 60
#: An object with more distinct keys than this at one place, in that sample, is keyed by data.
MAP_KEYS = 8


@dataclass(frozen=True)
class Kind:
    """The kind of one disagreement: both outcomes, and the features of its input."""

    outcomes: tuple[str, str]
    features: frozenset[str]
    #: Whether the input is a document (judged by :func:`document_features`), not text.
    document: bool


def _critical_class(char: str) -> str:
    """The class of a character text formats rarely allow (whitespace, control, non-ASCII).

    A class, not the character: a host name with a tab is of the kind of one with a space.
    """
    if char.isspace():
        return "whitespace"
    if not char.isascii():
        return "non-ASCII"
    return "" if char.isprintable() else "control"


def _text(text: str, path: str) -> Iterable[str]:
    # Empty or not is no feature: a minimal finding's ``""`` would explain only empty strings.
    yield f"{path}:str"
    for char in {c for c in text if not (c.isascii() and c.isalnum())}:
        critical = _critical_class(char)
        yield f"{path}:!{critical}" if critical else f"{path}:char:{char}"
    if any(len(m.group()) > 10 or int(m.group()) >= _BIG for m in _DIGITS.finditer(text)):
        yield f"{path}:big"


def document_features(value: Any, maps: frozenset[str] = frozenset()) -> frozenset[str]:
    """What a document holds where: value types, characters, numbers past 2**31, and keys.

    Paths name keys from the root, ``[]`` for any item of a list, ``*`` for any key of an
    object at one of ``maps`` (objects keyed by data, such as property names: one finding a
    name would be too many); a feature that makes a class of its own (:func:`explained`)
    carries a ``!`` after the path.
    """
    return frozenset(_walk(value, maps))


def _walk(
    value: Any,
    maps: frozenset[str] = frozenset(),
    parents: dict[str, str] | None = None,
    keys: dict[str, set[str]] | None = None,
) -> set[str]:
    """The features of ``document_features``, the ``has`` features of keys among them.

    ``parents`` gets the place of each key's object, ``keys`` the keys seen at each place.
    """
    found: set[str] = set()
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, dict):
            found.add(f"{path}:dict")
            for key, child in item.items():
                child_path = f"{path}.*" if path in maps else f"{path}.{key}"
                found.add(_HAS + child_path)
                if parents is not None and keys is not None:
                    parents[_HAS + child_path] = f"{path}:dict"
                    keys.setdefault(path, set()).add(str(key))
                # A data key's punctuation is its own (``amd-mi50@gpu``), not a kind of input:
                # only the classes of character that make a class of their own count there.
                text = _text(str(key), f"{path}{{}}")
                found.update(f for f in text if path not in maps or ":!" in f)
                stack.append((child, child_path))
        elif isinstance(item, list):
            found.add(f"{path}:list")
            stack.extend((child, f"{path}[]") for child in item)
        elif isinstance(item, bool) or item is None:
            found.add(f"{path}={item!r}")
        elif isinstance(item, int):
            found.add(f"{path}:int")
            if item < 0:
                found.add(f"{path}:negative")
            if abs(item) >= _BIG:
                found.add(f"{path}:big")
        elif isinstance(item, float):
            found.add(f"{path}:float")
        elif isinstance(item, str):
            found.update(_text(item, path))
    return found


def _punctuation(text: str) -> frozenset[str]:
    return frozenset(c for c in text if not c.isalnum())


@dataclass(frozen=True)
class Baseline:
    """What the documents of a strategy share, as drawn from a sample of them."""

    #: Features at least half of the documents have: left out of every kind.
    common: frozenset[str] = frozenset()
    #: Keys (``has`` features) nine in ten of the objects at their place have (those found in
    #: a quarter of the documents or more): a kind lacking one has a ``lacks`` feature for it.
    required: frozenset[str] = frozenset()
    #: The place of each required key's object (its ``:dict`` feature).
    parents: dict[str, str] = field(default_factory=dict)
    #: The places of objects keyed by data (:func:`document_features`).
    maps: frozenset[str] = frozenset()


def baseline(sample: Iterable[Any]) -> Baseline:
    """The :class:`Baseline` of the documents in ``sample`` (its other inputs are left out)."""
    documents = [v for v in sample if isinstance(v, (dict, list))]
    keys: dict[str, set[str]] = {}
    for document in documents:
        _walk(document, parents={}, keys=keys)
    # An object keyed by data: more distinct keys at one place than a format names there.
    maps = frozenset(path for path, names in keys.items() if len(names) > MAP_KEYS)
    parents: dict[str, str] = {}
    features = [_walk(document, maps, parents, {}) for document in documents]
    counts = Counter(f for found in features for f in found)
    common = frozenset(f for f, n in counts.items() if 2 * n >= len(features))
    # A key is required where nine in ten of its objects have it, among objects found in at
    # least a quarter of the documents (a rare object's keys are too few to tell).
    required = frozenset(
        key
        for key, parent in parents.items()
        if 4 * counts[parent] >= len(features) and 10 * counts[key] >= 9 * counts[parent]
    )
    return Baseline(common, required, {key: parents[key] for key in required}, maps)


def draw_sample(strategy: Any, *, seed: int, count: int = BASELINE_SAMPLE) -> list[Any]:
    """``count`` inputs of ``strategy``, the same for the same seed (no implementation runs)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed

    drawn: list[Any] = []

    def keep(value: Any) -> None:
        drawn.append(value)

    decorate: Any = given(strategy)
    test: Any = hypothesis_seed(seed)(decorate(keep))
    test = settings(
        max_examples=count,
        database=None,
        deadline=None,
        phases=(Phase.generate,),
        suppress_health_check=list(HealthCheck),
    )(test)
    test()
    return drawn


def kind_of(outcomes: tuple[str, str], value: Any, shared: Baseline = Baseline()) -> Kind:
    """The kind of a disagreement with these outcomes on ``value``.

    A document's features are taken against ``shared`` (:func:`baseline`): what most documents
    have is left out, and a key nearly all have is a feature where it is missing.
    """
    if isinstance(value, (dict, list)):
        found = document_features(value, shared.maps)
        # A key is missing only from an object that is there (not from an empty list's items).
        lacks = {
            _LACKS + key[len(_HAS) :]
            for key in shared.required - found
            if shared.parents.get(key) in found
        }
        # A key's presence is no feature of its own: its value's features are at its place.
        own = {f for f in found - shared.common if not f.startswith(_HAS)}
        return Kind(outcomes, frozenset(own | lacks), document=True)
    text = value if isinstance(value, str) else repr(value)
    return Kind(outcomes, _punctuation(text), document=False)


def _critical(features: frozenset[str]) -> frozenset[str]:
    return frozenset(f for f in features if ":!" in f)


def explained(kind: Kind, known: Iterable[Kind]) -> bool:
    """Whether the findings already known explain a disagreement of this kind.

    One of the same outcomes has features all of which the disagreement's input has (one
    without any explains only another without any: it would otherwise explain everything),
    and, for a document, each critical feature of the input is one such finding's too (a
    host name with a space and a NUL is explained by one with a space and one with a NUL).
    """
    alike = [
        other
        for other in known
        if (other.outcomes, other.document) == (kind.outcomes, kind.document)
    ]
    if not any(
        other.features <= kind.features and (other.features or not kind.features) for other in alike
    ):
        return False
    seen = set().union(*(other.features for other in alike))
    return _critical(kind.features) <= seen
