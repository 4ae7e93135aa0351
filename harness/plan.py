"""What a ``reproduce`` run still has to compute, and roughly how long it will take.

``s3vm-bench reproduce --plan TABLE... | --all`` runs nothing: for every row of the named tables
it counts the planned cells, those already in the cache and those missing, and estimates the
compute time of the missing ones from the *measured* cost of cached cells -- a cell's CPU seconds
(``cpu_seconds``, the process time of the whole cell) where its row records them, else its
``fit_seconds`` (wall seconds of the fits, for rows stored before CPU time was) -- as follows:

1. the median cost of the cached cells of the same protocol, data set, solver,
   parameters and settings at other splits (the same job on other data splits);
2. else the median over the cache's files of the same job run by earlier code (cells a change
   of the solver's code re-keyed: the same problem, a measurement of an older version; what
   keeps the heavy settings of a re-keyed solver from being estimated at its ordinary ones),
   times the speed of the current code relative to the earlier one: the median ratio of the
   current to the earlier median over the jobs of that data set and solver measured by both
   (else of that solver on any data set; else 1);
3. else the median over the cached cells of the same protocol, data set and solver (other
   parameters: a rougher guess);
4. else the median over every file in the cache of that data set and solver, whatever the
   table or code version;
5. else no estimate (the cell is counted as "unestimated").

Estimates are core-seconds (one BLAS thread per cell, as the grid runs them), not
wall time: on ``k`` cores a run takes about their sum over ``k`` when the cells are many and
similar, longer when one cell dominates. A cell shared by several tables (the same cell key:
e.g. JMLR 2008 Tables 6, 7 and 8 read the same runs) is counted once in the total, and once
among the measurements the medians are taken over. Fit times recorded under other load or
thread settings make the estimate only as good as the cache.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from dataclasses import dataclass, field

from s3vm_bench.solvers.numerics import check_int

from .grid import ResultCache, check_row
from .reproduce import build_cells, open_cache, select_cells, split_keys

__all__ = ["PlanRow", "plan", "format_plan"]


def _seconds(row: dict) -> float | None:
    """A stored run's cost: its CPU seconds where recorded, else its fit (wall) seconds."""
    value = row.get("cpu_seconds")
    if value is None:
        value = row.get("fit_seconds")
    return None if value is None else float(value)


@dataclass
class PlanRow:
    """Cells of one (table, data set) row of a plan.

    ``done_seconds`` is the measured fit time of its cached cells (as recorded when they ran),
    ``est_seconds`` the estimate for its missing ones: their sum is the compute of the whole row.
    """

    table: str
    dataset: str
    cells: int = 0
    cached: int = 0
    missing: int = 0
    done_seconds: float = 0.0
    est_seconds: float = 0.0
    unestimated: int = 0
    missing_keys: set = field(default_factory=set, repr=False)


def _job(cell) -> tuple:
    return (cell.protocol, cell.dataset, cell.solver, json.dumps(cell.params, sort_keys=True, default=str),
            json.dumps(cell.settings, sort_keys=True, default=str), json.dumps(cell.split_kwargs, sort_keys=True))


def _settings_job(protocol, dataset, solver, params, kernel, sigma, C, C_star, r_mode) -> tuple:
    """What a cache file records of a cell's job (C* None means C* = C, as ProtocolSettings has it)."""
    def num(x):
        return None if x is None else float(f"{float(x):.12g}")

    return (protocol, dataset, solver, json.dumps(params or {}, sort_keys=True, default=str), kernel, num(sigma),
            num(C), num(C if C_star is None else C_star), r_mode)


def _cell_settings_job(cell) -> tuple:
    s = cell.settings
    return _settings_job(cell.protocol, cell.dataset, cell.solver, cell.params, s.get("kernel"), s.get("sigma"),
                         s.get("C"), s.get("C_star"), s.get("r_mode"))


def _fallback_medians(cache: ResultCache, current: set) -> tuple[dict, dict]:
    """Median cost (:func:`_seconds`) over the files of the cache and the rows of its results table
    (:meth:`ResultCache.table_records`): per job (:func:`_settings_job`) over the runs of
    earlier code (files and rows not under a key in ``current``), and per (data set, solver)
    over all runs.

    A run copied to a new key (:meth:`harness.grid.ResultCache.lookup`) or found both in the
    cache and in the table is one measurement, of the current code if either copy is under a
    current key.
    """
    runs = {}

    def add(row, key):
        if check_row(row) is not None or _seconds(row) is None:  # a failed or damaged row measures nothing
            return
        job = _settings_job(row.get("protocol"), row.get("dataset"), row.get("solver"), row.get("params"),
                            row.get("kernel"), row.get("sigma"), row.get("C"), row.get("C_star"), row.get("r_mode"))
        run = (job, row.get("split"), row.get("timestamp"), _seconds(row))
        runs[run] = runs.get(run, False) or key in current

    for p in cache.directory.glob("*/*.json"):
        try:
            add(json.loads(p.read_text()), p.stem)
        except (OSError, json.JSONDecodeError):
            continue
    from .results import row_from_table

    for key, record in cache.table_records().items():
        try:
            add(row_from_table(record), key)
        except ValueError:  # a damaged field: the cell counts as missing (ResultCache.from_table warns)
            continue
    by_job, by_solver = defaultdict(list), defaultdict(list)
    for (job, _, _, seconds), is_current in runs.items():
        if not is_current:
            by_job[job].append(seconds)
        by_solver[(job[1], job[2])].append(seconds)
    return ({k: statistics.median(v) for k, v in by_job.items()},
            {k: statistics.median(v) for k, v in by_solver.items()})


def _speed_ratios(same_job: dict, stale: dict, job_of: dict) -> tuple[dict, dict]:
    """Current over earlier code's median fit time, median over the jobs both measured: per
    (data set, solver) and per solver."""
    per, per_solver = defaultdict(list), defaultdict(list)
    for job, times in same_job.items():
        old = stale.get(job_of.get(job))
        if old:
            ratio = statistics.median(times) / old
            per[(job[1], job[2])].append(ratio)
            per_solver[job[2]].append(ratio)
    return ({k: statistics.median(v) for k, v in per.items()},
            {k: statistics.median(v) for k, v in per_solver.items()})


def plan(keys, *, quick: bool = False, n_splits: int | None = None, datasets=None, solvers=None, params=None,
         cache_dir=None, results=None, read_table: bool = True):
    """Plan of the tables ``keys`` (spec keys).

    ``quick``, ``n_splits``, ``datasets`` and ``solvers`` select cells as :func:`harness.reproduce.reproduce`
    does; a cell counts as cached when the cache folder or the results table ``results`` (default
    the shipped ``reports/runs/``; not with ``read_table=False``) holds it under its current
    key. Returns ``(rows, total)``: one :class:`PlanRow` per (table, data set) in table
    order, and a dict with the totals over distinct
    cells (``cells``, ``cached``, ``missing``, ``done_seconds``: the measured fit seconds of the
    cached cells, ``est_seconds``, ``unestimated``, and ``by_solver``: the estimated seconds of the
    missing cells per solver, largest first).
    """
    n_splits = None if n_splits is None else check_int(n_splits, "n_splits", 1)
    cache = open_cache(cache_dir, results, read_table)
    specs = split_keys(keys, datasets, solvers, params)
    rows, missing_cells, done_keys, all_keys = [], {}, set(), set()
    same_job, same_solver, job_of = defaultdict(list), defaultdict(list), {}
    done_seconds = 0.0
    for spec in specs:
        planned, _ = build_cells(spec, quick=quick, n_splits=n_splits)
        by_dataset = {}
        for p in select_cells(planned, datasets, solvers):
            key = p.cell.key()
            row = by_dataset.setdefault(p.dataset, PlanRow(spec.key, p.dataset))
            row.cells += 1
            all_keys.add(key)
            hit = cache.lookup(p.cell, key, migrate=False)  # a plan writes nothing
            if hit is None:
                row.missing += 1
                row.missing_keys.add(key)
                missing_cells[key] = p.cell
            else:
                row.cached += 1
                seconds = _seconds(hit)
                row.done_seconds += 0.0 if seconds is None else seconds
                if key in done_keys:
                    continue  # a cell several tables read is one measurement, not several
                done_keys.add(key)
                if seconds is not None:
                    done_seconds += float(seconds)
                    same_job[_job(p.cell)].append(float(seconds))
                    job_of[_job(p.cell)] = _cell_settings_job(p.cell)
                    same_solver[(p.cell.protocol, p.dataset, p.cell.solver)].append(float(seconds))
        rows.extend(by_dataset.values())
    fallback = None
    estimate = {}
    for key, cell in missing_cells.items():
        got = same_job.get(_job(cell))
        if got:
            estimate[key] = statistics.median(got)
            continue
        if fallback is None:
            fallback = _fallback_medians(cache, done_keys)
            ratios = _speed_ratios(same_job, fallback[0], job_of)
        stale = fallback[0].get(_cell_settings_job(cell))
        if stale is not None:
            ratio = ratios[0].get((cell.dataset, cell.solver), ratios[1].get(cell.solver, 1.0))
            estimate[key] = stale * ratio
            continue
        got = same_solver.get((cell.protocol, cell.dataset, cell.solver))
        estimate[key] = statistics.median(got) if got else fallback[1].get((cell.dataset, cell.solver))
    for row in rows:
        for key in row.missing_keys:
            if estimate.get(key) is None:
                row.unestimated += 1
            else:
                row.est_seconds += estimate[key]
    by_solver = defaultdict(float)  # where a speed-up would pay: the missing compute per solver
    for key, cell in missing_cells.items():
        if estimate.get(key) is not None:
            by_solver[cell.solver] += estimate[key]
    total = {"cells": len(all_keys), "cached": len(done_keys), "missing": len(missing_cells),
             "done_seconds": done_seconds,
             "est_seconds": sum(v for v in estimate.values() if v is not None),
             "unestimated": sum(v is None for v in estimate.values()),
             "by_solver": dict(sorted(by_solver.items(), key=lambda kv: (-kv[1], kv[0])))}
    return rows, total


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 360 else f"{seconds:.0f} s"


def format_plan(rows, total, n_cores: int = 1) -> str:
    """The plan as a plain-text table with a total line (and a wall-time guess on ``n_cores``)."""
    tw = max([18] + [len(r.table) for r in rows])  # columns as wide as their longest name
    dw = max([12] + [len(r.dataset) for r in rows])
    lines = [f"{'table':{tw}} {'data set':{dw}} {'cells':>6} {'cached':>6} {'missing':>7} {'measured':>9} "
             f"{'est. compute':>12}"]
    for r in rows:
        est = _hours(r.est_seconds) + (f" +{r.unestimated}?" if r.unestimated else "")
        lines.append(f"{r.table:{tw}} {r.dataset:{dw}} {r.cells:6d} {r.cached:6d} {r.missing:7d} "
                     f"{_hours(r.done_seconds):>9} {est:>12}")
    lines.append(f"total (distinct cells): {total['cells']} cells, {total['cached']} cached "
                 f"({_hours(total['done_seconds'])} of compute measured), {total['missing']} missing; "
                 f"estimated {_hours(total['est_seconds'])} of compute"
                 + (f" ({total['unestimated']} cells without an estimate)" if total["unestimated"] else "")
                 + (f", about {_hours(total['est_seconds'] / n_cores)} on {n_cores} cores" if n_cores > 1 else ""))
    if total.get("by_solver"):
        lines.append("estimated compute by solver: "
                     + ", ".join(f"{name} {_hours(sec)}" for name, sec in total["by_solver"].items()))
    return "\n".join(lines)
