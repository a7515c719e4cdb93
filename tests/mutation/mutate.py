"""Mutation testing of the conformance suite (the package is ``tests/mutation/mutator``).

    python tests/mutation/mutate.py --module shape --jobs 1

See docs/mutation.md, or ``--help``.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    # Run as a script, this file's directory is on sys.path: the package imports from there.
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from mutator import main

    sys.exit(main())
