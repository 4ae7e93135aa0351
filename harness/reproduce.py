"""``s3vm-bench reproduce``: regenerate the papers' tables beside the published values.

For each requested :class:`harness.specs.TableSpec`:

1. the spec becomes grid cells (:func:`harness.table_cells.build_cells`; :class:`harness.grid.Cell`:
   data set x configuration x settings x split); cells whose data set is network-only and not
   cached, or whose solver is not registered, are *skipped* with the reason, never reported as
   failures;
2. :func:`harness.grid.run_cells` returns cached cells and runs the missing ones in parallel;
3. the rows go into the tidy results table (one row per cell and experiment);
4. the per-split values are aggregated (:func:`harness.aggregates.aggregate`) and set beside
   the transcribed targets of ``reports/targets``: ``reports/<paper>-table<N>.md`` and ``.csv``
   (:func:`harness.table_report.write_report`);
5. ``reports/README.md`` is rewritten from ``reports/index.json``: one line per table with its
   verdict (:func:`harness.table_report.write_index`).

Verdict of a cell (:attr:`harness.report_cells.ReportCell.verdict`): *within spread* when
``|ours - paper|`` is at most our split-to-split standard deviation, or when the two agree at the
paper's printed precision; otherwise *differs* by the printed difference. Times (unit ``s``) come
from other hardware and are given as the ratio paper / ours, not judged. A table *matches* when
every judged cell is within spread. A cell resting on one split (or an aggregate without a
spread) that does not agree at the printed precision is *not judged*: there is no spread to call
the difference large or small. Success counts (``aggregate="success_count"``, ICML 2006 Table 2)
take as spread the binomial sd ``sqrt(k (n - k) / n)`` of k successes in n trials (0 when k is 0
or n: only equality).

This module is the driver (:func:`reproduce`) and the one place callers import the steps from:
it re-exports the names of :mod:`harness.table_cells`, :mod:`harness.report_cells`,
:mod:`harness.aggregates`, :mod:`harness.grid_aggregates` and :mod:`harness.table_report`.
"""

from __future__ import annotations

import dataclasses
import importlib
import time
from pathlib import Path

from s3vm_bench import import_name
from s3vm_bench.solvers.numerics import check_int

# The steps' public names are re-exported: this module is where the reports are built, for the
# plan and verify commands, the benchmarks and Python callers.
from .aggregates import aggregate  # noqa: F401
from .grid import ResultCache, run_cells, store_rows
from .grid_aggregates import SelectedAndBest, select_and_best  # noqa: F401
from .paths import SHIPPED_RESULTS, work_dir
from .report_cells import NO_SPREAD, REPORTS_DIR, ReportCell, load_targets  # noqa: F401
from .specs import Config, TableSpec, get_spec
from .table_cells import build_cells, select_cells  # noqa: F401
from .table_report import (DIFFERENCES, _update_index, provenance, table_verdict, write_cells_csv,  # noqa: F401
                           write_index, write_report)

__all__ = ["ReportCell", "build_cells", "select_cells", "aggregate", "select_and_best", "SelectedAndBest",
           "reproduce", "write_report", "write_cells_csv", "write_index", "table_verdict", "provenance",
           "load_targets", "open_cache", "split_keys", "extra_column", "report_writer", "NO_SPREAD", "REPORTS_DIR",
           "DIFFERENCES", "check_reproduce_outputs", "takes_extra_columns"]


def extra_column(spec: TableSpec, solvers, params=None) -> TableSpec:
    """``spec`` with one more column per solver of ``solvers`` (labelled by its class name).

    Each solver is resolved first (:func:`s3vm_bench.solvers.get_solver`), so an unknown name, a
    missing file or a class that is not an estimator fails here, before any cell runs; ``params``
    are checked against the class (unknown names fail) and against the protocol's own parameters.
    """
    from s3vm_bench.solvers import REGISTRY, get_solver

    from .grid import check_solver_params

    params = check_solver_params(params)
    configs, notes = list(spec.configs), []
    labels = {c.label for c in configs}
    for name in solvers:
        cls = get_solver(name)
        check_solver_params(params, cls)  # unknown names and refused values fail before any work
        label = name if name in REGISTRY else cls.__name__
        if label in labels:
            label = name
        labels.add(label)
        configs.append(Config(label, name, dict(params), extra=True))
        notes.append(f"{label}: extra column, not in the paper: solver `{name}`"
                     + (f" with {', '.join(f'{k}={v!r}' for k, v in params.items())}" if params else "")
                     + ", under the same protocol, rows, splits and settings as the paper's columns."
                     + (" Its mean rank is the one it takes among the paper's columns and itself; the paper's columns"
                        " are ranked among themselves." if spec.aggregate == "rank" else ""))
    return dataclasses.replace(spec, configs=tuple(configs), notes=tuple(spec.notes) + tuple(notes))


def takes_extra_columns(spec: TableSpec) -> bool:
    """Whether ``reproduce --solvers`` adds a column to ``spec``: not to a table with its own report
    (one cell runs every column), nor to JMLR 2008 Table 6, whose one value per data set is Kendall's
    tau across the paper's methods (another method would change it, and it has no column to add)."""
    return not spec.report and spec.aggregate != "kendall"


def split_keys(keys, datasets=None, solvers=None, params=None) -> list:
    """The specs of the tables ``keys``; checks that ``datasets`` are rows of them.

    A solver of ``solvers`` that is not a solver of a table's columns (an outside solver named
    ``"package.module:Class"`` or ``"path/to/file.py:Class"``, an entry point, or a registered
    solver the table does not have) is added to every table as an extra column, with the
    parameters ``params``: same rows, splits, settings and protocol as the paper's columns
    (:func:`extra_column`). ``params`` apply to the extra columns only. A table with its own
    report (``TableSpec.report``: one cell runs every column) takes no extra column, nor does JMLR
    2008 Table 6 (``aggregate="kendall"``: one correlation across the paper's methods per data set,
    :func:`takes_extra_columns`).
    """
    for what, value in (("keys", keys), ("datasets", datasets), ("solvers", solvers)):
        if isinstance(value, str):  # it would be read as a list of one-letter names
            raise TypeError(f"{what} must be a list of names, not the str {value!r}: pass [{value!r}]")
    if params is not None and not isinstance(params, dict):
        raise TypeError(f"params must be a dict of solver parameters, got {type(params).__name__}")
    specs = [get_spec(k) for k in keys]
    if params and not solvers:
        raise ValueError("--param sets the parameters of the extra columns: name their solver with --solvers")
    open_specs = [spec for spec in specs if takes_extra_columns(spec)]
    if solvers is not None and not open_specs:
        known = {c.solver for spec in specs for c in spec.configs}
        extra = [s for s in dict.fromkeys(solvers) if s not in known]
        if extra or params:
            raise ValueError(f"{', '.join(keys)} take(s) no extra column (a report of its own, or Kendall's tau "
                             f"across the paper's methods): --solvers {' '.join(extra) or '...'} "
                             f"{'and --param ' if params else ''}would run nothing; add a table that takes one, "
                             "e.g. jmlr2008-table8")
    if solvers is not None and open_specs:
        known = {c.solver for spec in open_specs for c in spec.configs}
        extra = [s for s in dict.fromkeys(solvers) if s not in known]
        if params and not extra:
            raise ValueError(f"--param sets the parameters of the extra columns, and every solver of --solvers is "
                             f"already a column of {', '.join(spec.key for spec in open_specs)}")
        if extra:
            specs = [extra_column(spec, extra, params) if takes_extra_columns(spec) else spec for spec in specs]
    if datasets is not None:
        known = {d for spec in specs for _, d in spec.rows}
        unknown = sorted(set(datasets) - known)
        if unknown:
            raise ValueError(f"--datasets {' '.join(unknown)}: not a row of {', '.join(keys)}; "
                             f"their data sets are {', '.join(sorted(known))}")
    return specs


def report_writer(spec: TableSpec):
    """The function named by ``spec.report`` (``"module:function"``, a project module name such as
    ``"harness.icml2013_report:write_table"``); ValueError if it does not name one."""
    module, _, attr = spec.report.partition(":")
    try:
        fn = getattr(importlib.import_module(import_name(module)), attr)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ValueError(f"{spec.key}: report writer {spec.report!r} not found ({exc})") from None
    if not callable(fn):
        raise ValueError(f"{spec.key}: report writer {spec.report!r} is not a function")
    return fn


def open_cache(cache_dir=None, results=None, read_table: bool = True) -> ResultCache:
    """The cell cache of the work folder (or ``cache_dir``), backed by the results tables.

    With ``read_table``, a cell missing from the folder is read from ``results`` (default: the work
    folder's ``reports/runs/``) and then from the shipped store (:data:`harness.paths.SHIPPED_RESULTS`),
    so that a fresh work folder starts from the committed run instead of recomputing it.
    """
    wd = work_dir()
    tables = [Path(results) if results else wd.results_table, SHIPPED_RESULTS] if read_table else None
    return ResultCache(Path(cache_dir or wd.cache), table=tables)


def check_reproduce_outputs(reports: Path, cache: Path, results: Path, computes: bool) -> None:
    """Check, before any cell is read or run, where ``reproduce`` writes: the reports folder always;
    with ``computes``, the cache folder and the results store (a folder, or a CSV file that is a
    results table), which get the computed cells. ValueError naming the option at fault (the
    command line's name: ``--reports`` is ``reports_dir``, ``--cache`` ``cache_dir``)."""
    from .paths import check_writable_folder
    from .results import is_folder_store
    from .run import check_results_path

    check_writable_folder("--reports", reports)
    if not computes:
        return
    check_writable_folder("--cache", cache)
    if is_folder_store(results):
        if results.exists() and not results.is_dir():
            raise ValueError(f"--results {results} is a file but not a CSV file (.csv, .csv.gz): name a CSV file "
                             "or a folder")
        check_writable_folder("--results", results)
        return
    check_results_path(results)  # a CSV file: its folder writable, an existing file a table of whole rows


def reproduce(keys, *, quick: bool = False, n_splits: int | None = None, datasets=None, solvers=None, params=None,
              cache_dir=None,
              results=None, reports_dir=None, n_jobs: int = -1, backend: str = "loky", scheduler=None,
              time_limit: float | None = 3600.0, progress: bool = True, run: bool = True, read_table: bool = True,
              echo=print) -> dict:
    """Run what is missing for the tables ``keys`` and write their reports.

    ``datasets`` (names) restricts what is *run* to those rows, and ``n_splits`` to the first
    ``n_splits`` splits of the table's plan; every other cell of the plan is read from the cache
    when an earlier run computed it (and is "not run" otherwise), so a table can be filled in
    several passes -- e.g. all splits of the small rows and two of the heavy ones -- and each
    report cell says how many splits stand behind it. ``solvers`` (registry names) likewise
    restricts what is run to the columns of those solvers (e.g. after a change to one solver
    re-keyed its cells; ICML 2013 Table 2's cells, which run every method at once, are the
    S3VM-path's, ``s3vm_path``). A solver of ``solvers`` that is not a column
    of a table is added to it as an extra column, with the parameters ``params``
    (:func:`split_keys`), and reported beside the paper's columns. ``run=False`` runs nothing: the reports are
    written from the cache alone (after an interrupted run, or a change to the report writer).
    The reports go to ``reports_dir`` (default: the work folder's ``reports/``, see
    :mod:`harness.paths`), the rows to the results table ``results`` (default
    ``reports_dir/runs/``, one CSV per table and data set). That store and the shipped one are read back too
    (:func:`open_cache`): a cell whose row there carries its current key is copied into the cache
    instead of rerun, so a fresh work folder starts from the committed run
    (``read_table=False``: only the cache folder counts, e.g. to recompute in a new environment
    with an empty ``cache_dir``).
    Returns ``{key: [ReportCell, ...]}``.
    """
    # 0 or a negative count would otherwise slice the split list silently (all, or all but the last).
    n_splits = None if n_splits is None else check_int(n_splits, "n_splits", 1)
    wd = work_dir()
    reports_dir = Path(reports_dir or wd.reports)
    results = Path(results or reports_dir / "runs")
    specs = split_keys(keys, datasets, solvers, params)
    # Where the computed cells go, before any is computed: nothing is lost to a late failure.
    check_reproduce_outputs(reports_dir, Path(cache_dir or wd.cache), results, computes=run)
    cache = open_cache(cache_dir, results, read_table)  # one instance: one read of the tables
    run_kw = {"n_jobs": n_jobs, "backend": backend, "scheduler": scheduler, "time_limit": time_limit,
              "progress": progress}
    out = {}
    for spec in specs:
        t0 = time.perf_counter()
        planned, skipped = build_cells(spec, quick=quick)
        run_now = _cells_to_run(spec, planned, quick, n_splits, datasets, solvers) if run else []
        pairs = f", {len(skipped)} (row, column) pairs skipped" if skipped else ""
        if run:
            echo(f"{spec.key}: {len(run_now)} cells to run or read{pairs}")
        n_planned = len(planned)
        planned, rows = _run_or_read(spec, planned, run_now, cache, run_kw)
        if not run:
            echo(f"{spec.key}: {len(planned)} of the {n_planned} planned cells read from the cache (nothing is "
                 f"run){pairs}")
        if rows:
            store_rows(results, rows)
        cells, verdict = _report_table(spec, planned, rows, skipped, quick, reports_dir)
        echo(f"{spec.key}: {verdict} ({time.perf_counter() - t0:.0f} s) -> {reports_dir / (spec.key + '.md')}")
        out[spec.key] = cells
    write_index(reports_dir)
    return out


def _cells_to_run(spec: TableSpec, planned, quick: bool, n_splits, datasets, solvers) -> list:
    """The planned cells :func:`reproduce` runs (or reads from the cache): those of the selected
    rows and solvers (:func:`select_cells`) among the first ``n_splits`` splits of the plan."""
    run_splits = spec.split_indices(quick)
    run_splits = set(run_splits if n_splits is None else run_splits[:n_splits])
    return [p for p in select_cells(planned, datasets, solvers) if p.cell.split in run_splits]


def _run_or_read(spec: TableSpec, planned, run_now, cache: ResultCache, run_kw: dict) -> tuple[list, list]:
    """Run the cells ``run_now`` (:func:`harness.grid.run_cells` with the options ``run_kw``) and read
    every other planned cell from ``cache``.

    Returns
    -------
    planned : list of _Planned
        The planned cells with a result row (run now, or found in the cache), in plan order.
    rows : list of dict
        Their rows, in the same order; a row read from the cache is marked ``cached``.
    """
    got = run_cells([p.cell for p in run_now], cache, **run_kw) if run_now else []
    by_id = {id(p): r for p, r in zip(run_now, got)}
    hits = {id(p): cache.lookup(p.cell) for p in planned if id(p) not in by_id}
    planned = [p for p in planned if id(p) in by_id or hits[id(p)] is not None]
    rows = [by_id.get(id(p)) or hits[id(p)] | {"cached": True, "cell_key": p.cell.key(), "experiment": spec.key}
            for p in planned]
    return planned, rows


def _table_meta(spec: TableSpec, planned, rows, quick: bool) -> dict:
    """What the report of one table says of its rows: the options, :func:`provenance`, the number of
    splits and of done, failed and cached cells, one line per failed cell, the rows with results."""
    errors = [f"{p.row or p.dataset} / {spec.configs[p.config].label} split {p.cell.split}: {r.get('status')}: "
              f"{(r.get('error') or '').strip().splitlines()[-1] if r.get('error') else ''}"
              for p, r in zip(planned, rows) if r.get("status") != "done"]
    return {"quick": quick, **provenance(rows),
            "splits": len({p.cell.split for p in planned}), "n_done": sum(r.get("status") == "done" for r in rows),
            "n_failed": sum(r.get("status") != "done" for r in rows),
            "n_cached": sum(bool(r.get("cached")) for r in rows), "errors": errors,
            "rows_run": [r for r, _ in spec.rows if any(p.row == r for p in planned)]}


def _report_table(spec: TableSpec, planned, rows, skipped, quick: bool, reports_dir: Path) -> tuple[list, str]:
    """Aggregate one table's rows into its report cells, write its report (the spec's own writer,
    :func:`report_writer`, or :func:`write_report`) and its entry of ``index.json``.

    Returns
    -------
    cells : list of ReportCell
    verdict : str
        The table's verdict (:func:`table_verdict`), with the reasons of the skipped cells.
    """
    meta = _table_meta(spec, planned, rows, quick)
    if spec.report:
        cells = report_writer(spec)(spec, planned, rows, reports_dir)
    else:
        cells = aggregate(spec, planned, rows, skipped, load_targets(spec.key))
        write_report(spec, cells, meta, reports_dir)
    verdict = table_verdict(cells)
    if skipped:
        verdict += f"; skipped: {'; '.join(sorted(set(skipped.values())))}"
    _update_index(reports_dir, spec.key, {"title": spec.title, "splits": meta["splits"], "quick": quick,
                                          "verdict": verdict, "seconds": round(meta["seconds"], 1),
                                          "commit": meta["commit"]})
    return cells, verdict
