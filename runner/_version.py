"""What ``flux-conformance --version`` prints, without loading the suite every time.

Loading and checking every case file takes over a second; reading their bytes takes a few
milliseconds.  So the case count and digest are kept in a small cache file, keyed by a hash of
every byte that could change them: the case files, the requirements index, the operation
schemas and the package version.  A changed byte is a different key, and the suite is loaded
again; a cache that cannot be read or written is simply not used.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path

from flux_conformance import runner

__all__ = ["cache_file", "describe_suite", "inputs_key"]


def cache_file() -> Path:
    """Where the cache lives: ``$XDG_CACHE_HOME/flux-conformance/version.json`` (or ~/.cache)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "flux-conformance" / "version.json"


def inputs_key(root: Path) -> str:
    """A SHA-256 of the bytes the suite's count and digest depend on."""
    from flux_conformance.runner.cases import default_cases_dir

    hasher = hashlib.sha256(runner.__version__.encode())
    schemas = Path(__file__).resolve().parent / "schemas"
    index = root if (root / "requirements").is_dir() else default_cases_dir().resolve()
    folders = [(root, "*.yaml"), (index / "requirements", "*.yaml"), (schemas, "*.json")]
    for folder, pattern in folders:
        for path in sorted(folder.rglob(pattern)):
            hasher.update(str(path.relative_to(folder)).encode() + b"\0")
            hasher.update(path.read_bytes())
    return hasher.hexdigest()


def describe_suite(root: Path | None = None) -> tuple[int, str, Path]:
    """(number of cases, digest, folder) of the suite; raises ``SuiteError`` if it cannot load."""
    from flux_conformance.runner.cases import default_cases_dir, load_suite

    root = (root or default_cases_dir()).resolve()
    key = f"{root}\0{inputs_key(root)}"
    path = cache_file()
    cached: dict[str, list[object]] = {}
    with contextlib.suppress(OSError, ValueError):
        loaded = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(loaded, dict):
            cached = loaded
    hit = cached.get(key)
    if isinstance(hit, list) and len(hit) == 2 and isinstance(hit[0], int):
        return hit[0], str(hit[1]), root
    suite = load_suite(root)
    count, digest = len(suite.cases), suite.digest()
    # One entry per folder: an old key of the same folder is dropped.
    kept = {k: v for k, v in cached.items() if not k.startswith(f"{root}\0")}
    kept[key] = [count, digest]
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        scratch = path.with_suffix(f".{os.getpid()}.tmp")
        scratch.write_text(json.dumps(kept), encoding="utf-8")
        scratch.replace(path)
    return count, digest, root
