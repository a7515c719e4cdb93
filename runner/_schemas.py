"""The JSON Schemas shipped in ``runner/schemas``, loaded once (no jsonschema import here)."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["schema"]


@cache
def schema(name: str) -> dict[str, Any]:
    """One of the JSON Schemas shipped in ``runner/schemas`` (e.g. ``case-file.json``)."""
    text = (
        resources.files("flux_conformance.runner")
        .joinpath("schemas")
        .joinpath(name)
        .read_text(encoding="utf-8")
    )
    loaded: dict[str, Any] = json.loads(text)
    return loaded
