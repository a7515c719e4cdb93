"""Files the suite writes are replaced whole, never rewritten in place.

Every report and every file a command writes for people to keep (an expectations baseline, a
case file) is written to a temporary file beside its target, flushed and synced to disk, then
renamed over the target (``os.replace``, atomic on one file system).  Whatever stops the
writer -- a signal, a full disk, a crash, a power cut after the rename -- the target is either
the old whole file or the new whole file; a temporary file left by a writer killed outright
(SIGKILL) is named ``.TARGET.XXXXXXXX.tmp`` and never taken for a report.

The new file gets the permissions of the file it replaces, or, for a new file, the ones the
user's umask gives (as ``open`` would).
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import IO

__all__ = ["Replacement", "replacing", "write_atomic"]


def _temporary(path: Path) -> tuple[int, Path]:
    """A new file beside ``path``, open for writing (mode 0666 less the umask)."""
    while True:
        candidate = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        except FileExistsError:
            continue
        return fd, candidate


class Replacement:
    """A UTF-8 text file beside ``path`` that replaces it on :meth:`commit`.

    Creates the folders of ``path``.  :meth:`discard` removes the temporary file and leaves
    ``path`` as it was.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, self.temporary = _temporary(self.path)
        with contextlib.suppress(OSError):
            os.fchmod(fd, self.path.stat().st_mode & 0o7777)
        self.stream: IO[str] = os.fdopen(fd, "w", encoding="utf-8", newline="")

    def commit(self) -> None:
        """Flush, sync and rename the file over ``path``."""
        try:
            self.stream.flush()
            os.fsync(self.stream.fileno())
            self.stream.close()
            os.replace(self.temporary, self.path)
        except BaseException as exc:
            self.discard()
            if isinstance(exc, OSError) and exc.filename is None:
                exc.filename = str(self.path)  # a full disk is told with the report's name
            raise
        _sync_folder(self.path.parent)

    def discard(self) -> None:
        """Remove the temporary file; ``path`` is left as it was."""
        with contextlib.suppress(OSError):
            self.stream.close()
        with contextlib.suppress(OSError):
            os.unlink(self.temporary)


@contextlib.contextmanager
def replacing(path: str | os.PathLike[str]) -> Iterator[IO[str]]:
    """A UTF-8 text stream whose content replaces ``path`` when the block ends without error.

    When the block raises (``KeyboardInterrupt`` included), ``path`` is left as it was.
    """
    replacement = Replacement(path)
    try:
        yield replacement.stream
    except BaseException:
        replacement.discard()
        raise
    replacement.commit()


def write_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8), whole or not at all."""
    with replacing(path) as stream:
        stream.write(text)


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable (a no-op where folders cannot be opened)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
