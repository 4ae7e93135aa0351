"""The results store: tidy long tables, one row per (experiment, data set, split, solver) run.

A store is either one CSV file (a path ending in ``.csv``, or ``.csv.gz`` for gzip-compressed
CSV written with a fixed gzip timestamp) or a folder of plain CSV files, one per experiment and
data set (``<folder>/<experiment>/<dataset>.csv``; the shipped ``reports/runs/``). In a folder,
storing the rows of one table rewrites only that table's files, and :func:`replace_rows` writes
rows in a stable order (:data:`ORDER`), so a regenerated table changes only the lines of the cells
whose results changed: the committed store diffs line by line.

Every write goes to a temporary file in the same folder renamed over the old one, so an
interrupted write never leaves a truncated file. Adding rows reads the stored file, merges and
writes it back; two processes doing that at once would each write a file without the other's
rows, so the read-merge-write holds an exclusive advisory lock (``fcntl.flock``) on a sidecar file
``.<name>.lock`` beside the file; a second writer waits for the first. Where ``fcntl`` does not
exist (Windows) the writes are not serialized.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import platform
import subprocess
from datetime import datetime, timezone
from functools import lru_cache
from importlib import metadata
from pathlib import Path

import pandas as pd

from ._atomic import atomic_write
from ._atomic import locked as _locked

__all__ = ["COLUMNS", "ORDER", "append_rows", "replace_rows", "read_results", "read_results_text", "row_from_table",
           "environment_info", "is_folder_store", "store_files"]

#: ``validation_error`` is filled by protocol "icml2006" cells only (ICML 2006 Sec. 4 selects parameters
#: on a validation set, harness.icml2006); the other rows leave it empty. ``details`` is the JSON text
#: (sorted keys) of what a protocol reports beyond one error pair: ICML 2013 Table 2's split record
#: (every method's selected model, the path timing, Figure 5; harness.icml2013.record_fields).
COLUMNS = ["experiment", "dataset", "protocol", "split", "split_seed", "solver", "params", "kernel", "sigma",
           "C", "C_star", "r_mode", "objective", "unlabeled_error", "test_error", "validation_error", "fit_seconds",
           "cpu_seconds", "balance_exact", "status", "error", "n_binary", "cell_key", "code_sha256", "versions",
           "git_commit", "timestamp", "details"]
#: Columns written only into the files where some row fills them (a table of other protocols has
#: none, and its file stays as it was before the column existed).
OPTIONAL_COLUMNS = ("details",)



class UnreadableTable(ValueError):
    """A results table file that cannot be read as one. ``problem`` says what is wrong with it,
    worded to follow the file's path, for a caller that words its own message."""

    def __init__(self, message: str, problem: str):
        super().__init__(message)
        self.problem = problem

def blas_info() -> str:
    """The BLAS libraries loaded in this process: library, version, kernel architecture, threads.

    OpenBLAS picks its kernels by CPU (``DYNAMIC_ARCH``; ``OPENBLAS_CORETYPE`` overrides the
    choice), and some solvers' results depend on the rounding of those kernels (nabla-DA most;
    ``reports/DIFFERENCES.md``, E2). So each row records it ("openblas 0.3.31 SkylakeX x1");
    "unknown" without threadpoolctl.
    """
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "unknown"
    libs = [f"{i.get('internal_api')} {i.get('version')} {i.get('architecture')} x{i.get('num_threads')}"
            for i in threadpool_info() if i.get("user_api") == "blas"]
    return "; ".join(sorted(set(libs))) or "none loaded"


def simd_info() -> str:
    """The SIMD code numpy runs its float64 ``exp`` with on this CPU, e.g. ``"X86_V3"`` (AVX2).

    numpy chooses at import the widest implementation of each function that the CPU supports
    (:func:`numpy.lib.introspect.opt_func_info`). For float64 ``exp`` its AVX-512 code
    (``X86_V4``) is an approximation of its own, while its ``X86_V3`` code gave the C library's
    ``exp`` on every argument tried (``reports/DIFFERENCES.md``, E2). The Gaussian kernel
    (:func:`solvers._kernels.gaussian_kernel`) is made of exponentials, so a cell stored on a CPU
    with AVX-512 may not be reproduced bit for bit on one without, as with the BLAS kernel
    (:func:`blas_info`). So each row records it; "unknown" before numpy 2.0.
    """
    try:
        from numpy.lib.introspect import opt_func_info
    except ImportError:
        return "unknown"
    try:
        targets = opt_func_info(func_name="^exp$", signature="^float64")
        return str(targets["exp"]["dd"]["current"])
    except (KeyError, TypeError, ValueError):
        return "unknown"


@lru_cache(maxsize=1)
def environment_info() -> tuple[str, str]:
    """(package versions, the BLAS (:func:`blas_info`) and numpy's SIMD code (:func:`simd_info`) as JSON,
    git commit of the working tree or "unknown")."""
    versions = {"python": platform.python_version()}
    for pkg in ("s3vm-bench", "numpy", "scipy", "scikit-learn", "pandas", "pooch", "joblib"):
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            versions[pkg] = "absent"
    import numpy  # noqa: F401  (loads its BLAS, so that blas_info sees it)

    versions["blas"] = blas_info()
    versions["numpy_simd"] = simd_info()
    try:
        here = Path(__file__).resolve().parent
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True,
                                timeout=10).stdout.strip() or "unknown"
        # Only code counts: the reports and figures this run (or an earlier table of it) writes
        # would otherwise mark every report after the first as "+dirty".
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=here, capture_output=True, text=True,
                             timeout=10).stdout.strip() or str(here)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".",
                                ":(exclude)reports", ":(exclude)figures"], cwd=top,
                               capture_output=True, text=True, timeout=10).stdout.strip()
        if commit != "unknown" and dirty:
            commit += "+dirty"
    except (OSError, subprocess.SubprocessError):
        commit = "unknown"
    return json.dumps(versions, sort_keys=True), commit


def _stamp(row: dict) -> dict:
    versions, commit = environment_info()
    full = {c: row.get(c) for c in COLUMNS}
    full["versions"] = full["versions"] or versions
    full["git_commit"] = full["git_commit"] or commit
    full["timestamp"] = full["timestamp"] or datetime.now(timezone.utc).isoformat(timespec="seconds")
    if isinstance(full["params"], dict):
        full["params"] = json.dumps(full["params"], sort_keys=True)
    unknown = set(row) - set(COLUMNS)
    if unknown:
        raise ValueError(f"unknown result columns {sorted(unknown)}; expected a subset of {COLUMNS}")
    return full


#: Columns a stored file is sorted by (``split`` as a number): the order of a regenerated table
#: does not depend on the order its cells finished in.
ORDER = ["experiment", "dataset", "protocol", "solver", "params", "kernel", "sigma", "C", "C_star", "r_mode", "split"]


def is_folder_store(path) -> bool:
    """Whether ``path`` names a folder store (one CSV per experiment) rather than one CSV file."""
    return not str(path).endswith((".csv", ".csv.gz"))


def store_files(path) -> list[Path]:
    """The CSV files of the store ``path``: itself, or a folder's ``*/*.csv`` in name order (those that exist)."""
    path = Path(path)
    if not is_folder_store(path):
        return [path] if path.exists() else []
    return sorted(path.glob("*/*.csv")) if path.is_dir() else []


def _read(path, **kwargs) -> pd.DataFrame:
    """The rows of the store ``path``; ValueError for a file that is not a results table.

    A zero-byte file is an empty table. A file without the columns that say what a row is a
    result of (:data:`_IDENTITY`) and its ``status`` is some other CSV: refused, so that appending
    to it never replaces it.
    """
    files = [f for f in store_files(path) if f.stat().st_size > 0]
    if not files:
        return pd.DataFrame(columns=COLUMNS)
    frames = []
    for f in files:
        try:
            frame = pd.read_csv(f, **kwargs)
        except (ValueError, OSError) as exc:  # pandas' ParserError, EmptyDataError; bad gzip, bad UTF-8
            raise UnreadableTable(f"cannot read the results table {f} ({type(exc).__name__}: {exc}); restore it (in "
                                  "a source checkout: git checkout -- the file), delete it or name another store",
                                  f"cannot be read as a table ({type(exc).__name__}: {exc})") from None
        missing = [c for c in (*_IDENTITY, "status") if c not in frame.columns]
        if missing:
            problem = f"is not a results table of this suite (it has no column {', '.join(missing)})"
            raise UnreadableTable(f"{f} {problem}: name another file", problem)
        frames.append(frame)
    return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)


def read_results(path) -> pd.DataFrame:
    """The stored table (empty, with the right columns, if there is none)."""
    return _read(path)


#: How :func:`row_from_table` reads each column back (the others are text).
_INT_COLUMNS = ("split", "split_seed", "n_binary")
_FLOAT_COLUMNS = ("sigma", "C", "C_star", "objective", "unlabeled_error", "test_error", "validation_error",
                  "fit_seconds", "cpu_seconds")


def read_results_text(path) -> pd.DataFrame:
    """The stored table with every cell as written: text, and ``""`` where empty (see :func:`row_from_table`).

    Type inference would read a column of 64-bit split seeds with empty cells as floats and
    round the seeds.
    """
    return _read(path, dtype=str, keep_default_na=False)


def row_from_table(record: dict) -> dict:
    """A row of the stored table (a :func:`read_results_text` record) as the grid's cache holds it.

    The inverse of how :func:`replace_rows` writes a row: empty cells become None, ``params``
    is parsed back from its JSON, the integer and float columns are numbers again (floats
    exactly: pandas writes them with ``repr``) and ``balance_exact`` a bool; ``cell_key`` is
    dropped (the cache files a row under its key). A column the file does not have (an
    :data:`OPTIONAL_COLUMNS` one no row of it fills) is not in the row, as it is not in the cached
    rows of those cells; ``details`` stays JSON text (the protocol that wrote it reads it).
    """
    row = {}
    for col in COLUMNS:
        if col == "cell_key" or col not in record:
            continue
        v = record[col]
        if v is None or v == "" or (isinstance(v, float) and math.isnan(v)):
            row[col] = None
        elif col == "params":
            row[col] = json.loads(v) if isinstance(v, str) else dict(v)
        elif col in _INT_COLUMNS:
            try:
                row[col] = int(v)
            except ValueError:
                # Tables written before the seeds were kept exact hold them as rounded floats:
                # such a seed is unknown, not the rounded value.
                f = float(v)
                if not f.is_integer():
                    raise ValueError(f"column {col!r} holds {v!r}, not an integer") from None
                row[col] = int(f) if abs(f) < 2**53 else None
        elif col in _FLOAT_COLUMNS:
            try:
                row[col] = float(v)
            except (TypeError, ValueError):
                raise ValueError(f"column {col!r} holds {v!r}, not a number") from None
        elif col == "balance_exact":
            if str(v) not in ("True", "False"):
                raise ValueError(f"column 'balance_exact' holds {v!r}, not True or False")
            row[col] = str(v) == "True"
        else:
            row[col] = str(v)
    return row


def _frame(rows: list[dict]) -> pd.DataFrame:
    # Python objects, not inferred dtypes: a column of 63-bit split seeds with empty cells would
    # become float64 and be written rounded (the stored rows are merged as text for the same reason).
    return pd.DataFrame([_stamp(r) for r in rows], columns=COLUMNS, dtype=object)


def _file_name(value, default: str, path: Path) -> str:
    name = str(value) if isinstance(value, str) and value else default
    if "/" in name or "\\" in name or name.startswith("."):
        raise ValueError(f"{name!r} cannot name a file of the results folder {path}")
    return name


def _per_experiment(path: Path, new: pd.DataFrame):
    """``(file, rows)`` of a folder store for each (experiment, data set) among the rows ``new``."""
    for (experiment, dataset), group in new.groupby(["experiment", "dataset"], sort=True, dropna=False):
        yield path / _file_name(experiment, "runs", path) / f"{_file_name(dataset, 'unknown', path)}.csv", group


def append_rows(path, rows: list[dict]) -> pd.DataFrame:
    """Append ``rows`` to the store at ``path`` atomically; returns the rows as written."""
    path = Path(path)
    new = _frame(rows)
    if is_folder_store(path):
        for file, group in _per_experiment(path, new):
            with _locked(file):
                old = read_results_text(file)
                _write(file, group if old.empty else pd.concat([old, group], ignore_index=True))
        return new
    with _locked(path):
        old = read_results_text(path)
        _write(path, new if old.empty else pd.concat([old, new], ignore_index=True))
    return new


#: What a row is a result *of*, whatever code version produced it.
_IDENTITY = ["experiment", "dataset", "protocol", "split", "solver", "params", "kernel", "sigma", "C", "C_star",
             "r_mode"]


def _identity(table: pd.DataFrame) -> list[tuple]:
    def norm(v):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return ""
        try:
            return repr(float(v))
        except (TypeError, ValueError):
            return str(v)

    return [tuple(norm(v) for v in row) for row in table[_IDENTITY].itertuples(index=False)]


def replace_rows(path, rows: list[dict]) -> pd.DataFrame:
    """Like :func:`append_rows`, but first drop the stored rows the new ones supersede.

    A stored row is superseded by a new row of the same cell (``cell_key`` and ``experiment``) or
    of the same experiment, data set, split, solver, parameters and settings run by other code
    (an older ``cell_key``): the table keeps the newest result of each cell, with the commit that
    produced it, and earlier code versions' results stay in the git history, not in the table.
    """
    path = Path(path)
    new = _frame(rows)
    if is_folder_store(path):
        for file, group in _per_experiment(path, new):
            _replace(file, group)
        return new
    _replace(path, new)
    return new


def _replace(path: Path, new: pd.DataFrame) -> None:
    with _locked(path):
        old = read_results_text(path)
        if not old.empty and "cell_key" in old:
            done = set(zip(new["cell_key"], new["experiment"]))
            same = set(_identity(new))
            keep = [pair not in done and ident not in same
                    for pair, ident in zip(zip(old["cell_key"], old["experiment"]), _identity(old))]
            old = old[keep]
        _write(path, _sorted(new if old.empty else pd.concat([old, new], ignore_index=True)))


def _sorted(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` in the stable order :data:`ORDER` (the text of each cell; ``split`` as a number)."""
    def key(col):
        text = col.map(lambda v: "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v))
        return pd.to_numeric(text, errors="coerce") if col.name == "split" else text

    return table.sort_values(ORDER, key=key, kind="mergesort", ignore_index=True)


def _filled(v) -> bool:
    return not (v is None or v == "" or (isinstance(v, float) and math.isnan(v)))


def _write(path: Path, table: pd.DataFrame) -> None:
    empty = [c for c in OPTIONAL_COLUMNS if c in table and not table[c].map(_filled).any()]
    text = table.drop(columns=empty).to_csv(index=False, lineterminator="\n")
    if path.suffix == ".gz":
        # No file name and a zero time in the gzip header: the same table, the same bytes.
        buf = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=9, mtime=0) as gz:
            gz.write(text.encode())
        atomic_write(path, buf.getvalue())
    else:
        atomic_write(path, text)
