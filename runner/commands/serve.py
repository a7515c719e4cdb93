"""``flux-conformance serve``: an implementation (default: the reference) over the protocol."""

from __future__ import annotations

import argparse
from typing import IO, Any

from flux_conformance.runner.commands._common import UsageError

__all__ = ["add_parser", "main"]


def main(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """Serve an implementation (default: the reference) over the subprocess protocol."""
    from flux_conformance.runner.adapters.inprocess import (
        ReferenceImplementation,
        as_implementation,
        load_python_object,
    )
    from flux_conformance.runner.tools.serve import serve

    del out, err
    impl: Any
    if args.impl == "reference":
        impl = ReferenceImplementation()
        name, version, ops = impl.name, impl.version, list(impl.operations)
    else:
        kind, _, rest = args.impl.partition(":")
        if kind != "python":
            raise UsageError("serve takes --impl reference or python:module:object")
        impl = as_implementation(load_python_object(rest))
        from flux_conformance.runner.operations import load_registry

        name = str(getattr(impl, "name", rest))
        version = str(getattr(impl, "version", ""))
        ops = list(getattr(impl, "operations", load_registry()))
    return serve(impl, name=name, version=version, operations=ops)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``serve``."""
    p = sub.add_parser(
        "serve",
        help="serve the reference over the subprocess protocol",
        description="Answer the subprocess protocol (docs/protocol.md) on stdin and stdout "
        "with the reference, or with a python:module:object implementation, so that it can "
        "be run as exec:flux-conformance serve.",
    )
    p.add_argument("--impl", default="reference", help="reference or python:module:object")
    p.set_defaults(func=main)
