"""Atomic file writes: the result stores and reports are never left half-written.

Whole files are replaced atomically (:func:`atomic_write`); stores of one record per line are
appended to one whole record at a time (:func:`append_line`) and read back without a record cut
short (:func:`read_lines`).
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
import warnings
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; concurrent writers are then the user's to avoid
    fcntl = None

__all__ = ["append_line", "atomic_write", "locked", "read_lines", "read_records"]


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


@contextlib.contextmanager
def locked(path):
    """Hold an exclusive advisory lock on ``path``'s sidecar file ``.<name>.lock`` for one read-merge-write.

    Two processes updating the same file (a results table, an index) would otherwise each write
    back their own read of it, and one's update would be lost.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if fcntl is None:
        yield
        return
    with open(path.parent / f".{path.name}.lock", "a") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def append_line(path, line: str, *, fsync: bool = False) -> None:
    """Append one record to a line-per-record store (JSON lines, CSV rows) in a single write.

    A record is complete once its newline is written, and ``line`` goes out with its newline in
    one ``write`` on an ``O_APPEND`` descriptor, so a process killed mid-run leaves at most an
    unterminated tail. Such a tail is cut off before the new record is written -- otherwise the
    record would be glued onto it -- and :func:`read_lines` never returns it. An exclusive
    ``flock`` covers the cut and the write, so processes appending to one store at once (parallel
    workers) cannot cut each other's records. ``fsync=True`` also flushes the record to disk.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = (line.rstrip("\n") + "\n").encode("utf-8")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o666)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        keep = _complete_size(fd)
        if keep != os.fstat(fd).st_size:
            os.ftruncate(fd, keep)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)  # releases the lock


def _complete_size(fd, chunk: int = 1 << 16) -> int:
    """Bytes of the open file up to and including its last newline (0 if it has none)."""
    end = os.fstat(fd).st_size
    pos = end
    while pos > 0:
        start = max(0, pos - chunk)
        block = os.pread(fd, pos - start, start)
        cut = block.rfind(b"\n")
        if cut >= 0:
            return start + cut + 1
        pos = start
    return 0


def read_lines(path) -> list[str]:
    """The complete records of a store written by :func:`append_line` (newline-terminated lines).

    An unterminated last line -- a write cut short -- is left out with a warning: its record is
    missing, so whatever produced it runs again. Returns ``[]`` if the file does not exist.
    """
    path = Path(path)
    if not path.is_file():
        return []
    text = path.read_text("utf-8")
    lines = text.split("\n")
    tail = lines.pop()  # "" when the file ends with a newline
    if tail:
        warnings.warn(f"{path}: ignoring an unterminated last line ({len(tail)} characters; a write was cut "
                      "short): its record will be recomputed", RuntimeWarning, stacklevel=2)
    return lines


def read_records(path, bad=None, fields=(), when=None) -> list[dict]:
    """The JSON objects of a store written by :func:`append_line`, one a line (blank lines skipped;
    an unterminated last line left out, as by :func:`read_lines`).

    Parameters
    ----------
    path : path-like
    bad : callable, optional
        ``bad(number, why)`` makes the exception raised for a complete line that is not a JSON
        object (``number`` counts from 1, ``why`` reads after "line N is", e.g. "not valid JSON
        (Expecting value at column 1)"); by default a ValueError naming the file and the line and
        saying to delete that line (its record is then made again) or the file.
    fields : sequence of str, optional
        Keys every record must have (its reader indexes them); a record without one is a bad line
        ("a record without the field 'C'").
    when : callable, optional
        ``when(record)`` says whether ``fields`` apply to that record (default: to all).

    Raises
    ------
    ValueError
        (or what ``bad`` makes) A complete line is not a JSON object, or lacks one of ``fields``.
    """
    records = []
    for number, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            why = f"not valid JSON ({exc.msg} at column {exc.colno})"
        else:
            if not isinstance(rec, dict):
                why = f"a JSON {type(rec).__name__}, not a JSON object"
            else:
                missing = [f for f in fields if f not in rec] if when is None or when(rec) else []
                if not missing:
                    records.append(rec)
                    continue
                why = f"a record without the field{'s' if len(missing) > 1 else ''} {', '.join(map(repr, missing))}"
        if bad is not None:
            raise bad(number, why)
        raise ValueError(f"{path}: line {number} is {why}; delete that line (its record is made again) or the file")
    return records
