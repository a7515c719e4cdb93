"""Run every benchmark script (``bench_*.py``) and print their tables one after another.

Exit status 1 if any figure missed its target.  ``tox -e bench`` runs this.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    """Run each script in its own process, so one's warm caches do not flatter another."""
    failed = []
    for script in sorted(HERE.glob("bench_*.py")):
        print(f"\n== {script.stem}")
        sys.stdout.flush()
        code = subprocess.call([sys.executable, str(script), *argv])
        if code:
            failed.append(script.stem)
    if failed:
        print(f"\ntargets missed in: {', '.join(failed)}")
        return 1
    print("\nevery target met")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
