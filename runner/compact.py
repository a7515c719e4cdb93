"""One-line JSON for people: any value, cut at a length, safe to show anywhere.

Below the engine and the reports alike: the engine keeps a cut answer in this form
(:func:`runner.engine.kept`) and every report renders values with it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from flux_conformance.runner.bounds import WRITTEN_INT_BITS, integer_described, shown

__all__ = ["compact_json"]


def compact_json(value: Any, limit: int = 2000) -> str:
    """A one-line JSON rendering, cut at ``limit`` characters, safe to show anywhere.

    The rendering stops once it passes ``limit``, so a five-million-item answer costs no more
    than a short one; control characters and lone surrogates come out as escapes (see
    :func:`runner.bounds.shown`), an integer too long to convert is described.
    """
    pieces: list[str] = []
    size = 0
    # Open lists and objects, each as an iterator over its (key or None, item) pairs and the
    # text that closes it; items are taken one at a time, so a cut rendering is cheap.
    frames: list[tuple[Iterator[tuple[str | None, Any]], str]] = []
    pending: list[tuple[str | None, Any]] = [(None, value)]
    first = True
    while size <= limit:
        if pending:
            key, item = pending.pop()
        else:
            if not frames:
                break
            iterator, closing = frames[-1]
            entry = next(iterator, None)
            if entry is None:
                frames.pop()
                pieces.append(closing)
                size += len(closing)
                first = False
                continue
            key, item = entry
        text = "" if first else ", "
        if key is not None:
            text += _scalar(key, limit) + ": "
        first = False
        if isinstance(item, dict):
            frames.append((((str(k), v) for k, v in item.items()), "}"))
            text += "{"
            first = True
        elif isinstance(item, list | tuple):
            frames.append((((None, v) for v in item), "]"))
            text += "["
            first = True
        else:
            text += _scalar(item, limit)
        pieces.append(text)
        size += len(text)
    text = "".join(pieces)
    if frames or pending or len(text) > limit:
        text = text[:limit] + "... (cut)"
    return shown(text)


def _scalar(value: Any, limit: int) -> str:
    """One JSON scalar as JSON text (a long string is cut first; NaN is shown as ``NaN``)."""
    if isinstance(value, str):
        return json.dumps(value[: limit + 1], ensure_ascii=False)
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        if value.bit_length() > WRITTEN_INT_BITS:
            return f"({integer_described(value)})"
        return str(value)
    if isinstance(value, float):
        return json.dumps(value)  # NaN and Infinity as Python writes them: this is a display
    return shown(repr(value)[:limit])
