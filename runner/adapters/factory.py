"""From an ``--impl`` value to an adapter: the one place that knows the spellings.

``reference`` (the bundled reference, in-process), a name of :data:`runner.adapters.KNOWN` (a
shipped third-party adapter: a Python object run in-process, or a subprocess adapter class for
a compiled implementation), ``python:module:object`` (in-process) or ``exec:COMMAND`` (a
subprocess speaking the JSON Lines protocol).
"""

from __future__ import annotations

from collections.abc import Callable

from flux_conformance.runner.adapters.base import Adapter, ImplSpecError

__all__ = ["description", "make_adapter"]


def make_adapter(spec: str, *, timeout: float = 10.0, max_timeouts: int | None = None) -> Adapter:
    """Build the adapter an ``--impl`` value names (``reference``, ``python:``, ``exec:``).

    ``max_timeouts`` (subprocess adapters only) replaces the number of timeouts in a row after
    which the implementation is given up on (0: never).
    """
    from flux_conformance.runner.adapters import KNOWN
    from flux_conformance.runner.adapters.inprocess import (
        InProcessAdapter,
        ReferenceImplementation,
        load_python_object,
    )
    from flux_conformance.runner.adapters.subprocess import SubprocessAdapter

    if spec == "reference":
        return InProcessAdapter(ReferenceImplementation())
    if spec in KNOWN:
        shipped = load_python_object(KNOWN[spec])
        # A shipped adapter for a compiled implementation is a subprocess transport
        # already told which program to start (e.g. slurm-extra).
        if isinstance(shipped, type) and issubclass(shipped, SubprocessAdapter):
            # Its constructor knows the command; only the per-case timeout is passed on.
            opener: Callable[..., Adapter] = shipped
            made = opener(timeout=timeout)
            if max_timeouts is not None:
                made.max_timeouts = max_timeouts  # type: ignore[attr-defined]
            return made
        return InProcessAdapter(shipped, name=spec)
    kind, sep, rest = spec.partition(":")
    if sep and kind == "python":
        return InProcessAdapter(load_python_object(rest))
    if sep and kind == "exec":
        adapter = SubprocessAdapter(rest, timeout=timeout)
        if max_timeouts is not None:
            adapter.max_timeouts = max_timeouts
        return adapter
    from flux_conformance.runner._suggest import did_you_mean

    close = did_you_mean(spec, [*KNOWN, "reference"]).removeprefix("; ")
    raise ImplSpecError(
        f"unknown implementation {spec!r}"
        + (f" ({close})" if close else "")
        + ": use 'reference', 'python:module:object', "
        f"'exec:COMMAND' (e.g. --impl 'exec:flux-conformance serve') or one of: "
        f"{', '.join(sorted(KNOWN)) or 'no shipped adapters'}"
    )


def description(spec: str) -> str:
    """What the implementation an ``--impl`` value names is, and how it gets here, in prose.

    For a shipped adapter, the opening of its module's docstring (its first paragraph, and the
    second unless that one introduces a list); for the others, what the spelling means.
    """
    import importlib
    import re

    from flux_conformance.runner.adapters import KNOWN

    if spec == "reference":
        return (
            "The suite's reference implementation: pure Python, one module per format, run "
            "in-process; it takes the readings docs/readings.md gives where a text is open."
        )
    if spec in KNOWN:
        module = importlib.import_module(KNOWN[spec].partition(":")[0])
        paragraphs = (module.__doc__ or "").strip().split("\n\n")
        kept = paragraphs[:1] + [p for p in paragraphs[1:2] if not p.rstrip().endswith(":")]
        text = " ".join(" ".join(p.split()) for p in kept)
        text = re.sub(r":[a-z]+:`~?([^`]+)`", r"\1", text)
        return text.replace("``", "")
    kind, _, rest = spec.partition(":")
    if kind == "python":
        return f"A Python object run in-process ({rest})."
    if kind == "exec":
        return "A program speaking the suite's JSON Lines protocol, started as a subprocess."
    return ""
