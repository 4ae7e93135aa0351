"""Atomic file writes: the result stores and reports are never left half-written."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

__all__ = ["atomic_write"]


def atomic_write(path, data: bytes | str) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder renamed over it.

    An interrupted write leaves the old file (or none), never a truncated one. The file gets the
    usual permissions (``0o666`` less the umask), not the ``0o600`` of :func:`tempfile.mkstemp`,
    which made the shipped table and the cache entries private to their writer.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex}.tmp"
    # Created with mode 0o666 for the kernel to apply the umask: reading the umask means setting
    # it, which would race with other threads creating files.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
