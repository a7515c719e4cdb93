"""Exit 1 with one line saying how to build flux-core unless FLUX_CORE_PREFIX names a build.

``tox -e flux-core`` runs this first: without it, ``--impl flux-core`` would quietly fall
back to the flux-python wheel's two pure-Python parsers and skip everything else.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HOW = (
    "build flux-core first: implementations/flux-core/build.sh SOURCE PREFIX "
    "(see implementations/flux-core/README.md), then FLUX_CORE_PREFIX=PREFIX tox -e flux-core"
)


def main() -> int:
    """Check the prefix; 0 when it holds flux-core's Python bindings."""
    prefix = os.environ.get("FLUX_CORE_PREFIX", "")
    if not prefix:
        print(f"flux-core: FLUX_CORE_PREFIX is not set; {HOW}", file=sys.stderr)
        return 1
    if not any(Path(prefix).glob("lib*/python3*/site-packages/flux/__init__.py")):
        print(f"flux-core: no flux-core build in {prefix}; {HOW}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
