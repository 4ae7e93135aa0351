"""Atomic file writes: the result stores and reports are never left half-written."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["atomic_write"]


def atomic_write(path, data: bytes | str) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder renamed over it.

    An interrupted write leaves the old file (or none), never a truncated one. The file gets the
    usual permissions (``0o666`` less the umask), not the ``0o600`` of :func:`tempfile.mkstemp`,
    which would make a shipped table or cache entry private to its writer.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
