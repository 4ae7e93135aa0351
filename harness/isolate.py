"""Cells run in a process of their own: a hard wall-clock limit, and a death that is recorded.

A solver can hang inside compiled code (numba, LAPACK), where the alarm of
:func:`harness.grid.execute_cell` cannot interrupt it, or kill its process (a segmentation fault,
the kernel's out-of-memory killer). :func:`run_isolated` runs one cell in a child process, waits
at most the time limit (plus :data:`GRACE` seconds for the alarm to act first) and kills the child
past it; a child that dies or is killed gives a ``timeout`` or ``failed`` row saying how (signal or
exit code), and the caller goes on with the next cell.

:func:`wall_guard` is the safety net of the worker pools, whose workers run many cells: past the
cell's limit (plus the grace) a watchdog ends the worker, so a cell stuck in compiled code does not
hold it forever; the pool then reruns the unfinished cells one by one here
(:func:`harness.grid.run_cells`).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import time
from datetime import datetime, timezone

__all__ = ["run_isolated", "wall_guard", "GRACE", "death_row"]

#: Most seconds a child gets past its time limit before it is killed (the cell's own alarm, which
#: records a clean ``timeout`` row, acts first when the solver is in Python code); short limits get
#: ``1 + limit / 10``.
GRACE = 5.0


def _grace(time_limit: float) -> float:
    return min(GRACE, 1.0 + 0.1 * float(time_limit))


def _describe(exitcode: int | None) -> str:
    if exitcode is None:
        return "still running"
    if exitcode < 0:
        try:
            return f"killed by signal {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exited with status {exitcode}"


def death_row(cell, status: str, error: str, seconds: float) -> dict:
    """The row of a cell whose process ended without giving one (its identity, status and error)."""
    from .results import environment_info

    versions, commit = environment_info()
    return {"experiment": cell.experiment, "dataset": cell.dataset, "protocol": cell.protocol, "split": cell.split,
            "solver": cell.solver, "params": dict(cell.params), "status": status, "error": error,
            "fit_seconds": seconds, "cpu_seconds": None, "code_sha256": None, "versions": versions,
            "git_commit": commit, "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def _child(conn, cell, time_limit, env):
    # Ctrl-C reaches the whole process group: the parent handles it (it kills this child on its way
    # out, run_isolated's ``finally``), so the child does not print a traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ.update(env or {})
    from threadpoolctl import threadpool_limits

    from .grid import execute_cell

    with threadpool_limits(limits=1):  # one BLAS thread per cell, as in the pools
        row = execute_cell(cell, time_limit)
    conn.send(row)
    conn.close()


def _context():
    # fork: the child starts with the parent's imports (no second import of the project per cell).
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def run_isolated(cell, time_limit: float | None = None, env: dict | None = None) -> dict:
    """Run ``cell`` (:class:`harness.grid.Cell`) in a child process and return its row.

    Past ``time_limit`` plus a grace (:data:`GRACE` at most) seconds of wall-clock time the child is killed and the row is a
    ``timeout``; a child that dies without a row (a crash, a signal, ``os._exit``) gives a
    ``failed`` row naming the signal or exit code. Never raises for what the cell does.
    """
    ctx = _context()
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, cell, time_limit, env), daemon=True)
    t0 = time.perf_counter()
    proc.start()
    send.close()
    deadline = None if time_limit is None else t0 + float(time_limit) + _grace(time_limit)
    row = None
    try:
        while row is None:
            wait = 0.5 if deadline is None else max(0.0, min(0.5, deadline - time.perf_counter()))
            if recv.poll(wait):
                try:
                    row = recv.recv()
                except EOFError:  # the child closed the pipe without sending: it died
                    break
            elif not proc.is_alive() and not recv.poll(0):
                break
            elif deadline is not None and time.perf_counter() >= deadline:
                break
    finally:
        recv.close()
        if row is None and proc.is_alive():
            proc.kill()
        proc.join(5.0)
    seconds = time.perf_counter() - t0
    if row is not None:
        return row
    if deadline is not None and seconds >= float(time_limit) + _grace(time_limit):
        return death_row(cell, "timeout", f"cell killed after {seconds:.1f} s: past its time limit of {time_limit} s "
                         "(hard wall-clock limit of its own process; the solver did not return to Python)", seconds)
    return death_row(cell, "failed", f"the cell's process died without a result: {_describe(proc.exitcode)}", seconds)


@contextlib.contextmanager
def wall_guard(time_limit: float | None):
    """End this process if the block runs past ``time_limit`` plus a grace (:data:`GRACE` at most).

    The watchdog is :func:`faulthandler.dump_traceback_later` with ``exit=True``: a thread of the
    interpreter's C runtime that needs no GIL, so it fires even while the solver is stuck inside
    compiled code that holds it (where the cell's alarm cannot run). A pool that loses its worker
    this way reruns the unfinished cells one by one (:func:`run_isolated`), where the cell is
    killed again and recorded as a ``timeout``. No-op without a limit.
    """
    if not time_limit:
        yield
        return
    import faulthandler

    with open(os.devnull, "w") as sink:
        faulthandler.dump_traceback_later(float(time_limit) + _grace(time_limit), repeat=False, file=sink, exit=True)
        try:
            yield
        finally:
            faulthandler.cancel_dump_traceback_later()
