"""Resumable parallel grid runner: (data set x solver x split x settings) cells with a result cache.

A :class:`Cell` is one run of the common protocol (``harness.protocol.run_split``); its key
(:func:`cell_key`) hashes what determines its result by declaration (:mod:`harness.cell_keys`).
:func:`run_cells`

* returns cached results for the cells already computed (one small JSON file per key, written
  atomically, so an interrupted run resumes and reruns only what is missing:
  :class:`ResultCache`, :mod:`harness.cache`);
* runs the others in parallel with joblib (``backend="loky"``, default all cores) or on a
  dask.distributed cluster (``backend="dask"``, ``scheduler="tcp://..."``; :mod:`harness.backends`);
* records a failure (exception, or the per-cell ``time_limit`` exceeded) with its traceback in
  the returned rows -- failures are never cached, so a rerun retries them;
* shows a progress bar with cells done, failures and ETA (tqdm).

Each cell runs through :func:`execute_cell`, which the backends look up in this module when a
cell runs. Rows are the tidy-table dictionaries of :mod:`harness.results` (``append_rows``
stores them). This module re-exports the names of :mod:`harness.cell_keys` and
:mod:`harness.cache`.
"""

from __future__ import annotations

import signal
import threading
import time
import traceback
from contextlib import contextmanager
from datetime import datetime, timezone

from .backends import iter_results
from .cache import ResultCache, check_row
from .cell_keys import (PROTOCOL_MODULES, PROTOCOL_PARAMS, PROTOCOL_SOLVERS, Cell, cell_key, check_solver_params,
                        code_text, data_digest, declared_versions, solver_source_hash, solver_version, source_closure)

__all__ = ["Cell", "CellTimeout", "run_cells", "cell_key", "solver_version", "declared_versions", "data_digest",
           "code_text", "solver_source_hash", "execute_cell", "store_rows", "ResultCache", "PROTOCOL_MODULES",
           "PROTOCOL_SOLVERS", "PROTOCOL_PARAMS", "check_row", "check_solver_params", "source_closure"]


class CellTimeout(Exception):
    """A cell ran past its time limit."""


@contextmanager
def _alarm(seconds):
    """Raise CellTimeout after ``seconds`` (only in a process's main thread, where signals work).

    Yields whether the alarm is armed: elsewhere (a threaded dask worker) nothing can interrupt
    the solver, and the caller checks the limit once the cell has run.
    """
    armed = bool(seconds) and threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
    if not armed:
        yield False
        return

    def handler(signum, frame):
        raise CellTimeout(f"cell exceeded its time limit of {seconds} s")

    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, float(seconds))
    try:
        yield True
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, old)


def execute_cell(cell: Cell, time_limit: float | None = None) -> dict:
    """Run one cell (in whatever process it lands); always returns a row, never raises.

    The cell's protocol (:func:`harness.protocols.get_protocol`) computes the result fields;
    this function adds the cell's identity and status, enforces ``time_limit`` (a timeout and
    any exception become a ``"timeout"`` / ``"failed"`` row with the error, keeping the fields
    the protocol had already determined) and stamps the row with its provenance (CPU seconds,
    code hash, package versions, commit, time).
    """
    from .protocols import RESULT_FIELDS, get_protocol

    row = {"experiment": cell.experiment, "dataset": cell.dataset, "protocol": cell.protocol,
           "split": cell.split, "solver": cell.solver, "params": dict(cell.params)}
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        with _alarm(time_limit) as armed:
            fields = get_protocol(cell.protocol).run(cell, known=row)
        elapsed = time.perf_counter() - t0
        if time_limit and not armed and elapsed > time_limit:
            # Nothing could interrupt the solver (no alarm outside a main thread): the limit still
            # holds, so a cell that ran past it is a timeout, as it would be anywhere else.
            raise CellTimeout(f"cell ran {elapsed:.1f} s, past its time limit of {time_limit} s (in a thread, "
                              "where the limit cannot interrupt the solver: it was checked at the end)")
    except CellTimeout as exc:
        row |= {"status": "timeout", "error": str(exc), "fit_seconds": time.perf_counter() - t0}
    except Exception as exc:  # recorded with its traceback; the other cells are unaffected
        row |= {"status": "failed", "error": "".join(traceback.format_exception(exc))[-4000:],
                "fit_seconds": time.perf_counter() - t0}
    else:
        # The common fields, the status, then the protocol's own (e.g. ICML 2006's validation error).
        row |= ({k: fields[k] for k in RESULT_FIELDS} | {"status": "done"}
                | {k: v for k, v in fields.items() if k not in RESULT_FIELDS})
    # Stamped where the cell runs, so a row read back from the cache keeps the code it came from.
    from .results import environment_info

    versions, commit = environment_info()
    # CPU seconds of this process for the whole cell (the solver's fits and the protocol's
    # objective): on a shared machine the stable measure of its cost, which --plan estimates from.
    row["cpu_seconds"] = time.process_time() - c0
    try:
        row["code_sha256"] = solver_source_hash(cell.solver)
    except Exception:  # an unknown solver is already a failed row; provenance is then unknown
        row["code_sha256"] = None
    return row | {"versions": versions, "git_commit": commit,
                  "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds")}



def run_cells(cells, cache_dir, *, n_jobs: int = -1, backend: str = "loky", scheduler=None,
              time_limit: float | None = None, progress: bool = True, table=None) -> list[dict]:
    """Run the cells not in the cache; return one row per cell, in the order of ``cells``.

    Parameters
    ----------
    cells : iterable of Cell
    cache_dir : path or ResultCache
        Result cache (created if missing), or an open one (its table already read).
    n_jobs : int
        joblib workers (-1: all cores).
    backend : {"loky", "dask", "sequential"}
        ``"loky"`` with ``n_jobs == 1`` and a ``time_limit`` runs each cell in a child process of
        its own (:func:`harness.isolate.run_isolated`: a hard limit, a death recorded as the
        cell's); ``"sequential"`` runs every cell in this process (no isolation: for debugging).
    scheduler : str or distributed.Client, optional
        The dask scheduler address (or a connected client) for ``backend="dask"``; without one, a
        ``distributed.LocalCluster`` of ``n_jobs`` worker processes is started for the run. The
        data location (the ``S3VM_DATA*`` environment variables) is sent with every cell.
    time_limit : float, optional
        Seconds per cell; a cell past it is stopped and reported with status ``timeout``
        (enforced by an alarm in the main thread of a worker process: loky and sequential; in a
        threaded dask worker nothing can interrupt the solver, so the cell runs to its end and is
        reported as ``timeout`` if it took longer, its error saying so).
    progress : bool
        tqdm progress bar (cells done, failures, ETA).
    table : path, optional
        Results table whose rows count as cached (:class:`ResultCache`; ignored when
        ``cache_dir`` is a ResultCache).

    Returns
    -------
    list of dict
        Rows for :func:`harness.results.append_rows`; ``cached`` is True for rows read from the cache.
    """
    cells = list(cells)
    if not all(isinstance(c, Cell) for c in cells):
        raise TypeError("cells must be harness.grid.Cell instances")
    if time_limit is not None and not time_limit > 0:
        raise ValueError(f"time_limit must be > 0 seconds, got {time_limit!r}")
    cache = cache_dir if isinstance(cache_dir, ResultCache) else ResultCache(cache_dir, table=table)
    keys = [c.key() for c in cells]
    rows: dict[str, dict] = {}
    for cell, key in zip(cells, keys):
        hit = cache.lookup(cell, key)
        if hit is not None:
            rows[key] = hit | {"cached": True}
    todo, seen = [], set()
    for c, key in zip(cells, keys):
        if key not in rows and key not in seen:
            todo.append(c)
            seen.add(key)
    bar = None
    if progress and todo:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(todo), desc="cells", unit="cell")
    failures = 0
    try:
        for cell, row in iter_results(todo, n_jobs, backend, scheduler, time_limit):
            key = cell.key()
            if row.get("status") == "done":
                cache.put(key, row)
            else:
                failures += 1
            rows[key] = row | {"cached": False}
            if bar is not None:
                bar.update(1)
                bar.set_postfix(failed=failures)
    finally:
        if bar is not None:
            bar.close()
    # A cell shared by two experiments (same key) is computed once and reported under each.
    return [dict(rows[k]) | {"cell_key": k, "experiment": c.experiment} for c, k in zip(cells, keys)]


def store_rows(path, rows) -> None:
    """Store the rows in the tidy results table, replacing earlier rows of the same cells and experiments.

    See :func:`harness.results.replace_rows`.
    """
    from .results import COLUMNS, replace_rows

    replace_rows(path, [{k: v for k, v in r.items() if k in COLUMNS} for r in rows])
