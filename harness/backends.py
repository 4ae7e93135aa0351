"""The backends that run the grid's missing cells: in this process, in child processes (loky), on dask.

:func:`iter_results` yields ``(cell, row)`` as cells finish, in completion order; each row is made
by :func:`harness.grid.execute_cell`, looked up there when a cell runs. :func:`harness.grid.run_cells`
chooses the backend and caches the rows.
"""

from __future__ import annotations

import logging
import os
import warnings

__all__ = ["iter_results", "one_line_warning"]

#: The warning format a worker process starts with.
_DEFAULT_FORMAT = warnings.formatwarning


def one_line_warning(message, category, filename, lineno, line=None) -> str:
    """A warning as the command line shows it: ``warning: <message>`` on one line (the default
    format adds the file, the line number and the source line of the code that warned). When it
    is the format of the process that runs the cells, their worker processes use it too."""
    return f"warning: {message}\n"


def iter_results(todo, n_jobs, backend, scheduler, time_limit):
    """Yield ``(cell, row)`` as the cells of ``todo`` finish, in completion order.

    Parameters
    ----------
    todo : list of Cell
        The cells to run (distinct keys).
    n_jobs : int
        Worker processes (-1: all cores).
    backend : {"loky", "dask", "sequential"}
        See :func:`harness.grid.run_cells`.
    scheduler : str or distributed.Client, optional
        The dask scheduler for ``backend="dask"``.
    time_limit : float, optional
        Seconds per cell.

    Yields
    ------
    tuple of (Cell, dict)
        A cell and its row.
    """
    env = {k: v for k, v in os.environ.items() if k.startswith("S3VM_DATA")}
    one_line = warnings.formatwarning is one_line_warning  # the workers warn as this process does
    if backend == "sequential" or (backend == "loky" and n_jobs == 1 and not time_limit):
        yield from _in_process(todo, time_limit)
    elif backend == "loky" and n_jobs == 1:
        yield from _one_by_one_isolated(todo, time_limit, env)
    elif backend == "loky":
        yield from _loky(todo, n_jobs, time_limit, env, one_line)
    elif backend == "dask":
        yield from _dask(todo, n_jobs, scheduler, time_limit, env, one_line)
    else:
        raise ValueError(f"backend must be 'loky', 'dask' or 'sequential', got {backend!r}")


def _in_process(todo, time_limit):
    """Run the cells one after the other in this process."""
    from threadpoolctl import threadpool_limits

    from . import grid

    # One BLAS thread per cell, as joblib gives each loky worker when n_jobs = cores: the
    # parallelism is across cells, fit times do not depend on the backend, and BLAS threads
    # spinning against other processes for the same cores slow the cells down many times.
    # "sequential" runs the cells in this process (for debugging: no isolation, the time
    # limit is the alarm of execute_cell only).
    for cell in todo:
        with threadpool_limits(limits=1):
            row = grid.execute_cell(cell, time_limit)
        yield cell, row


def _one_by_one_isolated(todo, time_limit, env):
    """Run the cells one at a time, each in a process of its own (:func:`harness.isolate.run_isolated`)."""
    from .isolate import run_isolated

    # The time limit then also stops a solver stuck in compiled code, and a cell that kills its
    # process is recorded as failed while the run goes on.
    for cell in todo:
        yield cell, run_isolated(cell, time_limit, env)


def _loky(todo, n_jobs, time_limit, env, one_line):
    """Run the cells on ``n_jobs`` joblib (loky) workers; after a worker's death, the rest one by one."""
    from joblib import Parallel, delayed

    from joblib.externals.loky.process_executor import TerminatedWorkerError

    par = Parallel(n_jobs=n_jobs, return_as="generator_unordered")
    finished = set()
    try:
        for cell, row in par(delayed(_execute_pair)(c, time_limit, env, one_line) for c in todo):
            finished.add(cell.key())
            yield cell, row
    except TerminatedWorkerError as exc:
        # A worker died (a crash, the out-of-memory killer, or the watchdog of wall_guard on a
        # cell stuck in compiled code): which of its cells did it is not known, so every cell
        # that has not returned runs alone in a process of its own, where a death is that
        # cell's and is recorded as its row.
        rest = [c for c in todo if c.key() not in finished]
        warnings.warn(f"a worker process died ({exc.__class__.__name__}); the {len(rest)} unfinished cell(s) "
                      "run one by one in processes of their own", RuntimeWarning, stacklevel=3)
        yield from _one_by_one_isolated(rest, time_limit, env)


def _dask(todo, n_jobs, scheduler, time_limit, env, one_line):
    """Run the cells on a dask.distributed cluster (``scheduler``, or a local one of ``n_jobs`` workers).

    A cell whose workers die -- a crash, or the watchdog of :func:`harness.isolate.wall_guard` on a
    cell past its time limit (a dask worker runs the cell in a thread, where the cell's alarm cannot
    stop it) -- ends with dask's ``KilledWorker`` once the scheduler stops retrying it; that cell then
    runs again alone in a child process of the command (:func:`harness.isolate.run_isolated`),
    where its hang is a ``timeout`` row and its death a ``failed`` row naming the signal, as with the
    other backends. The local cluster retries a task whose worker died once (``allowed_failures=1``:
    a cell waiting on a worker that another cell killed runs again elsewhere, and a cell that kills
    its workers is given up after two); a cluster at ``scheduler`` retries as it is configured to.
    """
    try:
        from distributed import Client, KilledWorker, LocalCluster, as_completed
    except ImportError as exc:
        raise ImportError("backend='dask' needs dask.distributed: pip install 's3vm-bench[dask]'") from exc
    from .isolate import death_row, run_isolated

    cluster = None
    if scheduler is None:  # a cluster of this machine: n_jobs worker processes, one thread each
        # silence_logs: the cluster's own warnings (an event loop held by a long compiled solve, a
        # worker killed at shutdown) are not the user's concern; what befalls a cell is its row.
        cluster = LocalCluster(n_workers=n_jobs if n_jobs > 0 else (os.cpu_count() or 1), threads_per_worker=1,
                               processes=True, dashboard_address=None, host="127.0.0.1", silence_logs=logging.ERROR,
                               scheduler_kwargs={"allowed_failures": 1})
    if cluster is not None or isinstance(scheduler, Client):
        client = scheduler if isinstance(scheduler, Client) else Client(cluster)
    else:
        try:
            client = Client(scheduler)
        except (OSError, ValueError, TypeError) as exc:  # a malformed address, or no scheduler there
            raise ValueError(f"--scheduler {scheduler}: no dask scheduler reached ({exc}); give the address of "
                             "a running one, tcp://host:port") from None
    # Workers started elsewhere do not have this process's data location: it goes with each cell.
    try:
        futures = {client.submit(_execute_pair, c, time_limit, env, one_line, pure=False): c for c in todo}
        for fut in as_completed(futures):
            cell = futures[fut]
            try:
                yield fut.result()
            except KilledWorker:
                warnings.warn(f"the dask workers running {cell.solver} on {cell.dataset} split {cell.split} died (a "
                              "crash, or the cell's time limit); the cell runs again alone in a child process of "
                              "this command", RuntimeWarning, stacklevel=3)
                yield cell, run_isolated(cell, time_limit, env)
            except Exception as exc:  # the cluster could not run the cell at all; the run goes on
                yield cell, death_row(cell, "failed", f"dask: {type(exc).__name__}: {exc}", 0.0)
    finally:
        if not isinstance(scheduler, Client):
            client.close()
        if cluster is not None:
            cluster.close()


def _execute_pair(cell, time_limit, env, one_line=False):
    """``(cell, row)``: the cell run in a worker process, its data location ``env`` set first, its
    warnings shown on one line if ``one_line`` (:func:`one_line_warning`)."""
    # Reused loky workers keep the environment they started with: pass the data location.
    os.environ.update(env)
    warnings.formatwarning = one_line_warning if one_line else _DEFAULT_FORMAT
    from . import grid
    from .isolate import wall_guard

    try:  # imports first: a fresh worker's import time is not the cell's
        from s3vm_bench.solvers import get_solver

        from .protocols import get_protocol

        get_protocol(cell.protocol), get_solver(cell.solver)
    except Exception:  # reported by execute_cell, as a failed row
        pass
    with wall_guard(time_limit):  # a cell stuck in compiled code ends its worker (see run_cells)
        return cell, grid.execute_cell(cell, time_limit)
