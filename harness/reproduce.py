"""``s3vm-bench reproduce``: regenerate the papers' tables beside the published values.

For each requested :class:`harness.specs.TableSpec`:

1. the spec becomes grid cells (:class:`harness.grid.Cell`: data set x configuration x settings
   x split); cells whose data set is network-only and not cached, or whose solver is not
   registered, are *skipped* with the reason, never reported as failures;
2. :func:`harness.grid.run_cells` returns cached cells and runs the missing ones in parallel;
3. the rows go into the tidy results table (one row per cell and experiment);
4. the per-split values are aggregated (:func:`aggregate`) and set beside the transcribed
   targets of ``reports/targets``: ``reports/<paper>-table<N>.md`` and ``.csv``;
5. ``reports/README.md`` is rewritten from ``reports/index.json``: one line per table with its
   verdict.

Verdict of a cell: *within spread* when ``|ours - paper|`` is at most our split-to-split
standard deviation, or when the two agree at the paper's printed precision; otherwise *differs*
by the printed difference. Times (unit ``s``) come from other hardware and are given as the
ratio paper / ours, not judged. A table *matches* when every judged cell is within spread.
A cell resting on one split (or an aggregate without a spread) that does not agree at the
printed precision is *not judged*: there is no spread to call the difference large or small.
Success counts (``aggregate="success_count"``, ICML 2006 Table 2) take as spread the binomial
sd ``sqrt(k (n - k) / n)`` of k successes in n trials (0 when k is 0 or n: only equality).
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from s3vm_bench import import_name
from s3vm_bench.solvers.numerics import check_int

from ._atomic import atomic_write, locked
from .grid import Cell, ResultCache, run_cells, store_rows
from .paths import SHIPPED_REPORTS, SHIPPED_RESULTS, work_dir
from .specs import SPECS, UNSPECIFIED, Config, TableSpec, get_spec

#: Verdict of a cell with a single split (or no spread) that is not equal at the printed precision.
NO_SPREAD = "one split, not judged"

__all__ = ["ReportCell", "build_cells", "aggregate", "select_and_best", "reproduce", "write_report", "write_index",
           "load_targets", "open_cache"]

#: The shipped reports folder (read only here: the paper targets, the committed results table).
REPORTS_DIR = SHIPPED_REPORTS
_PERCENT = {"unlabeled_error", "test_error"}


@dataclass
class _Planned:
    cell: Cell
    row: str
    dataset: str
    config: int
    grid: int


@dataclass
class ReportCell:
    """One cell of a reproduced table."""

    row: str
    column: str
    unit: str
    paper: float | None
    paper_text: str
    mean: float | None
    std: float | None
    n: int
    n_failed: int
    note: str = ""
    #: False for reference values that are not a reproduction run (the stored optima column):
    #: shown with their own mark but left out of the table's verdict.
    in_verdict: bool = True

    @property
    def diff(self) -> float | None:
        if self.paper is None or self.mean is None:
            return None
        return self.mean - self.paper

    @property
    def verdict(self) -> str:
        if self.mean is None:
            return "not run" if not self.note else self.note
        if self.paper is None:
            return "no paper value"
        if self.unit == "s":
            return "time (not judged)"
        d = abs(self.diff)
        decimals = len(self.paper_text.split(".")[1]) if "." in self.paper_text else 0
        if d <= 0.5 * 10.0 ** -decimals + 1e-12 or (self.std is not None and self.n > 1 and d <= self.std):
            return "within spread"
        if self.std is None or self.n < 2:
            return NO_SPREAD  # one split: no spread to judge a difference against
        return "differs"


# ----------------------------------------------------------------------------- targets
def load_targets(key: str, directory=None) -> dict:
    """``{(row, column): (value, text, unit)}`` of ``reports/targets/<key>.csv`` (empty if absent)."""
    path = Path(directory or REPORTS_DIR / "targets") / f"{key}.csv"
    if not path.exists():
        return {}
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    return {(r.row, r.column): (float(r.value), r.value, r.unit) for r in df.itertuples()}


# ----------------------------------------------------------------------------- cells
def _resolve_settings(spec: TableSpec, dataset: str, config: Config, grid: dict) -> dict:
    """The full ProtocolSettings fields of one cell (so the cache key is explicit)."""
    from .protocol import ProtocolSettings

    if spec.protocol == "reference":
        from .reference_sets import get_reference_set

        base = get_reference_set(dataset).settings
    elif dataset in spec.dataset_settings:
        base = ProtocolSettings(**spec.dataset_settings[dataset])
    else:
        from .pairwise import parent_name

        base = ProtocolSettings.for_dataset(parent_name(dataset))  # Uspst2 takes Uspst's sigma and C
    over = {**config.settings, **grid}
    for k in ("sigma_factor", "C_factor"):  # a column's own scaling of the grid (specs.TableSpec.grid)
        if k in config.settings and k in grid:
            over[k] = config.settings[k] * grid[k]
    sigma = base.sigma * over.pop("sigma_factor", 1.0)
    C = base.C * over.pop("C_factor", 1.0)
    factor = over.pop("C_star_factor", None)
    c_star = base.C_star if base.C_star is None else base.C_star * C / base.C
    if factor is not None and not (factor == 1.0 and base.C_star is None):
        # A factor of 1 on a base whose C* is C (None) is the base's own setting: kept as None,
        # the default setting of JMLR 2008 Table 9's grid is the very cell Table 8 runs on that
        # split -- one run and one number in both tables, not a second run under another key.
        c_star = factor * C
    out = {"kernel": base.kernel, "sigma": sigma, "C": C, "C_star": c_star, "r_mode": base.r_mode} | over
    ProtocolSettings(**out)  # validates
    return out


def _skip_reason(spec: TableSpec, dataset: str, config: Config) -> str | None:
    from s3vm_bench.solvers import REGISTRY

    if dataset in spec.unavailable:
        return spec.unavailable[dataset]
    if config.solver not in REGISTRY and ":" not in config.solver:
        return f"solver {config.solver!r} not registered"
    if spec.protocol == "reference":
        return None
    from s3vm_bench.data_registry import get_spec as data_spec

    from .pairwise import parent_name

    ds = data_spec(parent_name(dataset))
    if ds.network_only and not ds.cached():
        return "network-only data set, not fetched (run `s3vm-bench data fetch` on a networked machine)"
    return None


def build_cells(spec: TableSpec, quick: bool = False, n_splits: int | None = None):
    """The cells of a spec and the (row, config) pairs skipped with their reason.

    Returns
    -------
    planned : list of _Planned
    skipped : dict of (row label, config index) -> reason
    """
    splits = spec.split_indices(quick)
    if n_splits is not None:
        splits = splits[:check_int(n_splits, "n_splits", 1)]
    grids = spec.grid or ({},)
    planned, skipped = [], {}
    for row, dataset in spec.rows:
        for ci, config in enumerate(spec.configs):
            why = _skip_reason(spec, dataset, config)
            if why:
                skipped[(row, ci)] = why
                continue
            for gi, g in enumerate(grids):
                # A table with its own report runs a protocol that holds its grid (TableSpec.report).
                settings = {} if spec.report else _resolve_settings(spec, dataset, config, g)
                for s in splits:
                    cell = Cell(spec.key, dataset, config.solver, s, spec.protocol, spec.n_splits,
                                config.params_for(dataset), settings, dict(spec.split_kwargs))
                    planned.append(_Planned(cell, row, dataset, ci, gi))
    return planned, skipped


def select_cells(planned, datasets=None, solvers=None) -> list:
    """The planned cells of the rows ``datasets`` and the columns of the solvers ``solvers``
    (registry names; ``None``: all), as ``--datasets`` and ``--solvers`` select them."""
    return [p for p in planned
            if (datasets is None or p.dataset in datasets) and (solvers is None or p.cell.solver in solvers)]


# ----------------------------------------------------------------------------- aggregation
@dataclass(frozen=True)
class SelectedAndBest:
    """Outcome of :func:`select_and_best` (values in the units of the errors given)."""

    selected: float
    selected_std: float | None
    best: float
    best_std: float | None
    n: int
    chosen: tuple  # grid index selected on each split
    best_setting: int


def select_and_best(errors, validation) -> SelectedAndBest:
    """ICML 2006 Sec. 4's two numbers from an (n splits x n settings) table of errors.

    *Selected*: on each split the setting with the lowest validation error (ties go to the first
    setting in grid order, ``numpy.argmin``), its error averaged over the splits. *Best*: the
    minimum over the settings of the mean error over the splits ("the minimum of the mean error
    rate achieved over the parameter grid"). The spreads are the sample sd (ddof = 1) over the
    splits of the selected errors and of the errors at the best setting (None for one split).

    Parameters
    ----------
    errors, validation : array_like of shape (n_splits, n_settings)
        Finite; at least one split and one setting.

    Returns
    -------
    SelectedAndBest
    """
    E = np.asarray(errors, dtype=float)
    V = np.asarray(validation, dtype=float)
    if E.ndim != 2 or E.shape != V.shape or E.size == 0:
        raise ValueError(f"errors and validation must be non-empty 2-D arrays of one shape (splits x settings), "
                         f"got {E.shape} and {V.shape}")
    if not (np.isfinite(E).all() and np.isfinite(V).all()):
        raise ValueError("errors and validation errors must be finite")
    n = E.shape[0]
    chosen = np.argmin(V, axis=1)  # first minimum: the grid-order tie rule
    sel = E[np.arange(n), chosen]
    means = E.mean(axis=0)
    g = int(np.argmin(means))
    sd = (lambda x: float(np.std(x, ddof=1)) if n > 1 else None)
    return SelectedAndBest(float(sel.mean()), sd(sel), float(means[g]), sd(E[:, g]), n,
                           tuple(int(c) for c in chosen), g)


def _metric(row: dict, metric: str) -> float:
    if metric.endswith("_rate"):  # the error as a fraction (SIGIR 2006 Table 9 prints fractions)
        v = row.get(metric[: -len("_rate")])
        return float("nan") if v is None else float(v)
    if metric == "seconds_per_binary":
        n = row.get("n_binary") or 1
        return float(row["fit_seconds"]) / float(n)
    v = row.get(metric)
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return float("nan")
    return 100.0 * float(v) if metric in _PERCENT else float(v)


def _target_cell(spec, row_label, config, suffix):
    if spec.layout == "metric_rows":
        return suffix, config.label
    if spec.layout == "method_rows":
        return f"{config.label} {suffix}".strip(), row_label
    if spec.layout == "method_rows_by_metric":
        return config.label, f"{row_label} {suffix}".strip()
    return row_label, f"{config.label} {suffix}".strip()


def _over_rows(values, n_rows):
    """(mean, count, note) of a per-data-set quantity averaged over the data sets (JMLR Tables 9-10).

    The paper averages all its data sets: a mean over only some of them would be another quantity,
    so it is given only in the note until every data set is complete.
    """
    if len(values) == n_rows:
        return float(np.mean(values)), len(values), ""
    if not values:
        return None, 0, "no data set complete"
    return None, len(values), (f"{len(values)} of {n_rows} data sets complete (their mean: "
                               f"{float(np.mean(values)):.2f}; the paper's averages all {n_rows})")


@dataclass(frozen=True)
class _AggregateInput:
    """What every aggregation of one spec reads: the spec, its planned cells split by outcome, the
    skip reasons by (row label, config index) and the paper's targets (:func:`load_targets`)."""

    spec: TableSpec
    planned: list
    done: list  # (planned, row) of the cells with status "done"
    failed: list  # (planned, row) of the others
    skipped: dict
    targets: dict

    def target(self, row: str, col: str) -> tuple:
        """(value, text, unit) of the paper at (row, column); (None, "", "") where it prints none."""
        v = self.targets.get((row, col))
        return (v[0], v[1], v[2]) if v else (None, "", "")

    def n_failed(self, row_label: str, ci: int) -> int:
        """Number of failed or timed-out cells of one (row, configuration)."""
        return sum(1 for p, _ in self.failed if p.row == row_label and p.config == ci)


def _unit_of(metric: str, paper_unit: str) -> str:
    """The unit of a cell: the paper's where it has a value, else its metric's own (a stand-in row)."""
    if paper_unit:
        return paper_unit
    if metric.endswith("_rate"):
        return "fraction"
    return {"seconds_per_binary": "s", "objective": "objective"}.get(metric, "%")


def _sample_stats(values) -> tuple:
    """(mean, sample sd with ddof = 1, count) of ``values``; None for an undefined mean or sd."""
    vals = np.asarray(values, dtype=float)
    return (float(vals.mean()) if vals.size else None, float(vals.std(ddof=1)) if vals.size > 1 else None,
            int(vals.size))


#: ``TableSpec.aggregate`` -> function of an :class:`_AggregateInput` returning the report cells.
_AGGREGATES: dict = {}


def _aggregates(name: str):
    """Register the decorated function as the aggregation ``name`` of :func:`aggregate`."""
    def register(fn):
        _AGGREGATES[name] = fn
        return fn
    return register


@_aggregates("mean")
def _aggregate_mean(a: _AggregateInput) -> list[ReportCell]:
    """Mean and split-to-split sd of each metric per (row, configuration), the common case; then the
    stored optima column where the spec has one (:func:`_stored_optima_cells`)."""
    spec, out = a.spec, []
    for row_label, _ in spec.rows:
        for ci, config in enumerate(spec.configs):
            for suffix, metric in spec.metrics:
                r_lab, c_lab = _target_cell(spec, row_label, config, suffix)
                pv, pt, pu = a.target(r_lab, c_lab)
                vals = np.array([_metric(r, metric) for p, r in a.done if p.row == row_label and p.config == ci])
                mean, sd, n = _sample_stats(vals[np.isfinite(vals)])
                out.append(ReportCell(r_lab, c_lab, _unit_of(metric, pu), pv, pt, mean, sd, n,
                                      a.n_failed(row_label, ci), a.skipped.get((row_label, ci), "")))
    return out + _stored_optima_cells(spec, a.planned, a.target, _unit_of)


@_aggregates("rank")
def _aggregate_rank(a: _AggregateInput) -> list[ReportCell]:
    """Mean rank of each configuration over the (data set, split) problems every configuration
    solved (rank 1 = lowest metric; ties share the mean rank, ``scipy.stats.rankdata``)."""
    from scipy.stats import rankdata

    spec = a.spec
    suffix, metric = spec.metrics[0]
    by_problem: dict = {}
    for p, r in a.done:
        by_problem.setdefault((p.dataset, p.cell.split), {})[p.config] = _metric(r, metric)
    ranks = {ci: [] for ci in range(len(spec.configs))}
    for v in (v for v in by_problem.values() if len(v) == len(spec.configs)):
        order = sorted(v)
        for ci, rk in zip(order, rankdata([v[ci] for ci in order])):
            ranks[ci].append(float(rk))
    out = []
    for ci, config in enumerate(spec.configs):
        pv, pt, pu = a.target(suffix, config.label)
        mean, sd, n = _sample_stats(ranks[ci])
        out.append(ReportCell(suffix, config.label, pu or "rank", pv, pt, mean, sd, n, 0,
                              "" if n else "no (data set, split) with every method done"))
    return out


@_aggregates("kendall")
def _aggregate_kendall(a: _AggregateInput) -> list[ReportCell]:
    """JMLR 2008 Table 6: per (data set, split), Kendall's tau-b between the unlabeled errors and
    the objectives of every configuration's solution; mean and sd over the splits."""
    from scipy.stats import kendalltau

    spec = a.spec
    suffix, _ = spec.metrics[0]
    by_problem: dict = {}
    for p, r in a.done:
        by_problem.setdefault((p.row, p.cell.split), {})[p.config] = (_metric(r, "unlabeled_error"),
                                                                      _metric(r, "objective"))
    out = []
    for row_label, _ in spec.rows:
        taus = []
        for (row, _), v in sorted(by_problem.items()):
            if row == row_label and len(v) == len(spec.configs):
                err, obj = zip(*(v[ci] for ci in sorted(v)))
                tau = kendalltau(err, obj).statistic  # tau-b: ties (equal errors) are common
                if np.isfinite(tau):
                    taus.append(float(tau))
        pv, pt, pu = a.target(row_label, suffix)
        n_partial = sum(1 for (row, _), v in by_problem.items() if row == row_label and len(v) < len(spec.configs))
        note = a.skipped.get((row_label, 0), "") or ("" if taus else "no split with every solution done")
        if n_partial:
            note = (note + "; " if note else "") + f"{n_partial} split(s) incomplete, left out"
        mean, sd, n = _sample_stats(taus)
        out.append(ReportCell(row_label, suffix, pu or "correlation", pv, pt, mean, sd, n, 0, note))
    return out


@_aggregates("success_count")
def _aggregate_success_count(a: _AggregateInput) -> list[ReportCell]:
    """ICML 2006 Table 2: per (data set, config) and grid setting, the number of splits whose metric
    is exactly 0 (no unlabeled error); the best setting's count, with the binomial sd
    ``sqrt(k (n - k) / n)`` of k successes in its n splits as spread."""
    spec = a.spec
    suffix, metric = spec.metrics[0]
    n_grid = max(len(spec.grid), 1)
    hits: dict = {}
    for p, r in a.done:
        k = hits.setdefault((p.row, p.config), {}).setdefault(p.grid, [0, 0])
        k[0] += int(_metric(r, metric) == 0.0)
        k[1] += 1
    out = []
    for row_label, _ in spec.rows:
        for ci, config in enumerate(spec.configs):
            r_lab, c_lab = _target_cell(spec, row_label, config, suffix)
            pv, pt, pu = a.target(r_lab, c_lab)
            g = hits.get((row_label, ci), {})
            note = a.skipped.get((row_label, ci), "")
            val = sd = None
            n = 0
            if g:
                best = max(g.values(), key=lambda kn: (kn[0], kn[1]))
                val, n = float(best[0]), best[1]
                sd = math.sqrt(val * (n - val) / n)  # binomial sd of a count of n trials
                full = max(kn[1] for kn in g.values())
                incomplete = sum(1 for kn in g.values() if kn[1] < full) + n_grid - len(g)
                if incomplete:
                    note = f"{n_grid - incomplete} of {n_grid} settings with all {full} splits"
            out.append(ReportCell(r_lab, c_lab, pu or "count", pv, pt, val, sd, n, a.n_failed(row_label, ci), note))
    return out


def _model_selection_results(a: _AggregateInput, per: dict, n_grid: int) -> dict:
    """``{(row label, config, metric): (SelectedAndBest, number of splits left out)}`` over the
    splits of each (row, config) with every grid setting done (``per``: row, config -> split ->
    grid index -> row). ValueError if a cell lacks its validation error (not protocol icml2006)."""
    results: dict = {}
    for (row_label, ci), by_split in per.items():
        complete = sorted(s for s, g in by_split.items() if len(g) == n_grid)
        for _, metric in a.spec.metrics:
            if not complete:
                continue
            grids = [[by_split[s][gi] for gi in range(n_grid)] for s in complete]
            V = np.array([[_metric(r, "validation_error") for r in g] for g in grids])
            if not np.isfinite(V).all():
                raise ValueError(f"{a.spec.key}: aggregate 'model_selection' needs the validation error of every "
                                 f"cell (protocol 'icml2006'); {row_label} / {a.spec.configs[ci].label} lacks it")
            E = np.array([[_metric(r, metric) for r in g] for g in grids])
            results[(row_label, ci, metric)] = (select_and_best(E, V), len(by_split) - len(complete))
    return results


@_aggregates("model_selection")
def _aggregate_model_selection(a: _AggregateInput) -> list[ReportCell]:
    """ICML 2006 Sec. 4, Tables 4-5: per (data set, config), the error at the validation-selected
    grid setting of each split ("selected") and the minimum over the settings of the mean error
    ("best"), :func:`select_and_best`. Only splits with every setting done count, so that both
    numbers rest on the same splits and the same grid."""
    spec = a.spec
    n_grid = max(len(spec.grid), 1)
    per: dict = {}
    for p, r in a.done:
        per.setdefault((p.row, p.config), {}).setdefault(p.cell.split, {})[p.grid] = r
    results = _model_selection_results(a, per, n_grid)
    out = []
    for ci, config in enumerate(spec.configs):
        for kind in ("selected", "best"):
            for row_label, _ in spec.rows:
                for suffix, metric in spec.metrics:
                    r_lab, c_lab = _target_cell(spec, row_label, config, f"{suffix} {kind}")
                    pv, pt, pu = a.target(r_lab, c_lab)
                    nf, note = a.n_failed(row_label, ci), a.skipped.get((row_label, ci), "")
                    got = results.get((row_label, ci, metric))
                    if got is None:
                        n_part = len(per.get((row_label, ci), {}))
                        out.append(ReportCell(r_lab, c_lab, _unit_of(metric, pu), pv, pt, None, None, 0, nf,
                                              note or (f"no split with all {n_grid} settings done" if n_part else "")))
                        continue
                    sb, n_incomplete = got
                    val, sd = (sb.selected, sb.selected_std) if kind == "selected" else (sb.best, sb.best_std)
                    if n_incomplete:
                        note = f"{n_incomplete} split(s) with an incomplete grid left out"
                    out.append(ReportCell(r_lab, c_lab, _unit_of(metric, pu), pv, pt, val, sd, sb.n, nf, note))
    return out


def _per_grid_setting(a: _AggregateInput) -> dict:
    """``{(row label, config): {grid index: metric}}`` of the spec's first metric (one split per setting)."""
    _, metric = a.spec.metrics[0]
    per: dict = {}
    for p, r in a.done:
        per.setdefault((p.row, p.config), {})[p.grid] = _metric(r, metric)
    return per


@_aggregates("relative_improvement")
def _aggregate_relative_improvement(a: _AggregateInput) -> list[ReportCell]:
    """JMLR 2008 Table 9: per (data set, method), the relative improvement ``100 (e0 - min e) / e0``
    of the best setting of the grid over its first (default) setting, and its mean over the data
    sets (:func:`_over_rows`)."""
    spec = a.spec
    n_grid = len(spec.grid)
    per = _per_grid_setting(a)
    means = {ci: [] for ci in range(len(spec.configs))}
    out = []
    for row_label, _ in spec.rows:
        for ci, config in enumerate(spec.configs):
            g = per.get((row_label, ci), {})
            pv, pt, pu = a.target(row_label, config.label)
            val = None
            if 0 in g and len(g) == n_grid:
                e0, best = g[0], min(g.values())
                val = 0.0 if e0 == 0 else 100.0 * (e0 - best) / e0
                means[ci].append(val)
            note = a.skipped.get((row_label, ci), "" if val is not None else f"{len(g)} of {n_grid} settings done")
            out.append(ReportCell(row_label, config.label, pu or "rel%", pv, pt, val, None, len(g), 0, note))
    for ci, config in enumerate(spec.configs):
        pv, pt, pu = a.target("Mean", config.label)
        mean, n, note = _over_rows(means[ci], len(spec.rows))
        out.append(ReportCell("Mean", config.label, pu or "rel%", pv, pt, mean, None, n, 0, note))
    return out


@_aggregates("variance")
def _aggregate_variance(a: _AggregateInput) -> list[ReportCell]:
    """JMLR 2008 Table 10: per method, the variance of the metric over the settings grid, averaged
    over the data sets (:func:`_over_rows`); then the same spread as an average sd (in %), without
    a paper value in its cells (the paper's numbers are on that scale, see the spec's note) but with
    a footnote that sets the paper's values beside it (:func:`_table10_sd_note`)."""
    spec = a.spec
    suffix, _ = spec.metrics[0]
    n_grid = len(spec.grid)
    per = _per_grid_setting(a)
    sd_note = _table10_sd_note(a, suffix)
    out, sds = [], []
    for ci, config in enumerate(spec.configs):
        vs = [float(np.var(list(g.values()))) for (row, c), g in per.items() if c == ci and len(g) == n_grid]
        pv, pt, pu = a.target(suffix, config.label)
        mean, n, note = _over_rows(vs, len(spec.rows))
        out.append(ReportCell(suffix, config.label, pu or "variance", pv, pt, mean, None, n, 0, note))
        mean, n, note = _over_rows(list(np.sqrt(vs)), len(spec.rows))
        sds.append(ReportCell("average sd (%)", config.label, "%", None, "", mean, None, n, 0,
                              note or (sd_note if mean is not None else "")))
    return out + sds


#: Where JMLR 2008 prints the default-setting errors behind Table 9's relative improvements: Table 8
#: for g50c, Text, Uspst, Isolet and Coil20, Table 1 for Coil3 and 2moons (10-split means).
_TABLE10_ERROR_TARGETS = ("jmlr2008-table8", "jmlr2008-table1")


def _table10_implied_variances(columns, rows) -> dict:
    """``{column: (lower bound, uniform spread)}``: the average variance (%^2) over the data sets
    that JMLR 2008's own Tables 1, 8 and 9 imply for each method of Table 10.

    On each data set the 27 errors of Table 9's grid span at least ``R = e * g / 100`` points,
    ``e`` the default-setting error (Tables 8 and 1, a 10-split mean standing in for split 1's)
    and ``g`` Table 9's relative improvement (%). 27 values spanning R have a population variance
    of at least ``R^2 / 54`` (one at each end, the rest in the middle), and ``R^2 (n + 1) /
    (12 (n - 1))`` with n = 27 when evenly spread. Both are averaged over the data sets; a column
    lacking any of its numbers is left out.
    """
    errors: dict = {}
    for key in _TABLE10_ERROR_TARGETS:
        errors.update({k: v[0] for k, v in load_targets(key).items()})
    gains = {k: v[0] for k, v in load_targets("jmlr2008-table9").items()}
    out = {}
    for col in columns:
        spans = [errors[(r, col)] * gains[(r, col)] / 100.0 for r in rows
                 if (r, col) in errors and (r, col) in gains]
        if spans and len(spans) == len(rows):
            sq = np.square(spans)
            out[col] = (float(np.mean(sq / 54.0)), float(np.mean(sq * 28.0 / (12.0 * 26.0))))
    return out


def _table10_sd_note(a: _AggregateInput, suffix: str) -> str:
    """The footnote of Table 10's ``average sd (%)`` row: the paper's values beside it, read as
    standard deviations in %, and the variances the paper's own Tables 1, 8 and 9 imply
    (:func:`_table10_implied_variances`). Empty where the paper's Table 10 values are missing."""
    labels = [c.label for c in a.spec.configs]
    paper = [(lab, a.target(suffix, lab)[1]) for lab in labels]
    if not all(t for _, t in paper):
        return ""
    implied = _table10_implied_variances(labels, [r for r, _ in a.spec.rows])
    text = ("The paper's Table 10 values read as standard deviations in %: "
            + ", ".join(f"{lab} {t}" for lab, t in paper) + ". Against them, read as variances (%^2), the "
            "paper's own Tables 1, 8 and 9 imply on each data set 27 errors spanning at least the default "
            "error x the relative improvement (errors above the default one are not printed)")
    if implied:
        text += (": averaged over the data sets a variance of at least " + ", ".join(
            f"{lab} {implied[lab][0]:.1f}" for lab in labels if lab in implied) + " %^2, and of "
            + ", ".join(f"{lab} {implied[lab][1]:.1f}" for lab in labels if lab in implied)
            + " %^2 if the 27 errors were evenly spread over that span")
    values = {lab: a.target(suffix, lab)[0] for lab in labels}
    above = [lab for lab in implied if implied[lab][0] > values[lab]]
    if above:
        text += ". The lower bound exceeds the printed value for " + ", ".join(above)
    elif implied:
        near = max(implied, key=lambda lab: implied[lab][0] / values[lab])
        wide = [lab for lab in implied if implied[lab][1] > values[lab]]
        text += (f". No lower bound exceeds its printed value (the nearest: {near} {implied[near][0]:.1f} vs "
                 f"{values[near]:g})" + (f"; an even spread exceeds it for {', '.join(wide)}" if wide else "")
                 + ": the reading as standard deviations is suggested, not proven")
    return text + "."


def aggregate(spec: TableSpec, planned, rows, skipped, targets) -> list[ReportCell]:
    """Per-target-cell values of one spec from its cells' rows (same order as ``planned``).

    Dispatches on ``spec.aggregate`` to the function registered for it (:data:`_AGGREGATES`):
    ``mean`` (mean and split-to-split sd), ``rank`` (mean rank over problems), ``kendall`` (JMLR
    2008 Table 6), ``success_count`` (ICML 2006 Table 2), ``model_selection`` (ICML 2006 Tables
    4-5), ``relative_improvement`` and ``variance`` (JMLR 2008 Tables 9 and 10). Where a paper
    cell sits (row and column labels) follows ``spec.layout`` (:func:`_target_cell`).

    Parameters
    ----------
    spec : TableSpec
    planned : list of _Planned
        The spec's cells (:func:`build_cells`).
    rows : list of dict
        The result row of each planned cell, in the same order; rows whose ``status`` is not
        ``"done"`` count as failed.
    skipped : dict
        ``{(row label, config index): reason}`` of the cells not run.
    targets : dict
        The paper's values, :func:`load_targets`.

    Returns
    -------
    list of ReportCell

    Raises
    ------
    ValueError
        For an aggregate no function is registered for.
    """
    fn = _AGGREGATES.get(spec.aggregate)
    if fn is None:
        raise ValueError(f"unknown aggregate {spec.aggregate!r} in spec {spec.key}; known: {sorted(_AGGREGATES)}")
    done = [(p, r) for p, r in zip(planned, rows) if r.get("status") == "done"]
    failed = [(p, r) for p, r in zip(planned, rows) if r.get("status") != "done"]
    return fn(_AggregateInput(spec, planned, done, failed, skipped, targets))


def _stored_optima_cells(spec: TableSpec, planned, target, unit_of) -> list[ReportCell]:
    """The ``"<stored_optima_of> (stored optima)"`` column (:attr:`TableSpec.stored_optima`).

    Per row whose data set has a reference set, the splits of the row's planned cells are looked
    up in the stored optima (digest-checked, :func:`harness.optima.stored_optimum`) and their
    metrics averaged like any column; the note counts the certified binary problems. The cells
    are not a run of the table, so they stay out of its verdict (``in_verdict=False``).
    """
    if not spec.stored_optima:
        return []
    from s3vm_bench.data_registry import DataFetchError

    from . import optima

    out = []
    of, column = Config(spec.stored_optima_of, ""), Config(f"{spec.stored_optima_of} (stored optima)", "")
    for row_label, dataset in spec.rows:
        set_name = spec.stored_optima.get(dataset)
        if set_name is None:
            continue
        splits = sorted({p.cell.split for p in planned if p.row == row_label})
        found, why = [], ""
        try:
            store = optima.load_store(set_name)
            found = [f for f in (optima.stored_optimum(set_name, i, store) for i in splits) if f is not None]
        except (DataFetchError, ValueError) as exc:  # the data set cannot be read here: say so, write the rest
            why = f"stored optima not read: {exc}"
        n_prob = sum(len(f.entries) for f in found)
        n_cert = sum(f.n_certified for f in found)
        if why:
            note = why
        elif not splits:
            note = "no split of this row is planned"
        elif found:
            note = (f"{len(found)} of {len(splits)} splits in the store ({set_name}); {n_cert} of {n_prob} binary "
                    "problems certified optimal" + (", the others at the best labeling known" if n_cert < n_prob
                                                    else ""))
        else:
            note = f"no stored optima of these splits ({set_name}); run `s3vm-bench optima build {set_name}`"
        rows = [{"unlabeled_error": f.unlabeled_error, "test_error": f.test_error, "objective": f.objective}
                for f in found]
        for suffix, metric in spec.metrics:
            r_lab, c_lab = _target_cell(spec, row_label, of, suffix)
            _, c_out = _target_cell(spec, row_label, column, suffix)
            pv, pt, pu = target(r_lab, c_lab)
            vals = np.array([_metric(r, metric) for r in rows])
            vals = vals[np.isfinite(vals)]
            out.append(ReportCell(r_lab, c_out, unit_of(metric, pu), pv, pt, float(vals.mean()) if vals.size else None,
                                  float(vals.std(ddof=1)) if vals.size > 1 else None, int(vals.size), 0, note,
                                  in_verdict=False))
    return out


# ----------------------------------------------------------------------------- reports
def _fmt(x, unit):
    if x is None:
        return "--"
    if abs(x) < 1e-9:
        x = 0.0  # round-off (the sd of equal values), not a value worth printing as 3e-14
    if unit == "count":
        return f"{x:.0f}" if float(x).is_integer() else f"{x:.1f}"
    if unit in ("objective", "s"):
        return f"{x:.3g}" if abs(x) < 10 else f"{x:.1f}"
    if unit == "fraction":
        return f"{x:.4f}"
    return f"{x:.2f}" if unit in ("rank", "correlation") else f"{x:.1f}"


def table_verdict(cells: list[ReportCell]) -> str:
    """One line: matches / differs (how many, the largest difference) / incomplete."""
    cells = [c for c in cells if c.in_verdict]
    judged = [c for c in cells if c.verdict in ("within spread", "differs")]
    # Without a value: not run at all, or an average waiting for some of its parts (n > 0).
    missing = [c for c in cells if c.mean is None and not c.n]
    incomplete = [c for c in cells if c.mean is None and c.n]
    unjudged = [c for c in cells if c.verdict == NO_SPREAD]
    tail = (f"; {len(missing)} cell(s) not run" if missing else "") + \
        (f"; {len(incomplete)} cell(s) incomplete" if incomplete else "")
    if not judged:
        if unjudged:
            return f"{len(unjudged)} cell(s) from one split, not judged" + tail
        if incomplete:
            return tail[2:]  # "k cell(s) not run; j cell(s) incomplete" without the leading "; "
        return "not run" if missing else "nothing to judge (times only)"
    bad = [c for c in judged if c.verdict == "differs"]
    if not bad:
        line = f"matches: {len(judged)} of {len(judged)} compared cells within the split-to-split spread"
    else:
        worst = max(bad, key=lambda c: abs(c.diff))
        line = (f"differs: {len(bad)} of {len(judged)} compared cells outside the spread; largest "
                f"{worst.row} / {worst.column}: {_fmt(worst.mean, worst.unit)} vs {worst.paper_text} "
                f"({worst.diff:+.1f} {worst.unit})")
    if unjudged:
        line += f"; {len(unjudged)} cell(s) from one split, not judged"
    return line + tail


def write_cells_csv(path, cells: list[ReportCell]) -> None:
    """One line per reported cell: row, column, unit, paper, ours mean / sd / n, failures, diff, verdict."""
    df = pd.DataFrame([{"row": c.row, "column": c.column, "unit": c.unit, "paper": c.paper_text or None,
                        "ours_mean": c.mean, "ours_std": c.std, "n": c.n, "n_failed": c.n_failed,
                        "diff": c.diff, "verdict": c.verdict} for c in cells])
    atomic_write(path, df.to_csv(index=False))


def write_report(spec: TableSpec, cells: list[ReportCell], meta: dict, directory=None) -> tuple[Path, Path]:
    """Write ``<key>.md`` and ``<key>.csv`` (one line per target cell) into ``directory`` (default:
    the work folder's ``reports/``, :func:`harness.paths.work_dir`)."""
    directory = Path(directory or work_dir().reports)
    csv_path = directory / f"{spec.key}.csv"
    write_cells_csv(csv_path, cells)
    rows = list(dict.fromkeys(c.row for c in cells))
    cols = list(dict.fromkeys(c.column for c in cells))
    grid = {(c.row, c.column): c for c in cells}
    lines = [f"# {spec.key}: {spec.title}", "",
             f"Regenerated by `s3vm-bench reproduce {spec.key}{' --quick' if meta.get('quick') else ''}`; splits "
             f"with results: {meta.get('splits')} (each cell gives its own count n); cells {meta.get('n_done')} done, "
             f"{meta.get('n_failed')} failed, computed at commit `{meta.get('commit') or 'unknown'}`"
             + (f" and {meta['n_commits'] - 1} earlier one(s)" if meta.get("n_commits", 1) > 1 else "")
             + (f" ({meta['dates']})" if meta.get("dates") else "")
             + f"; compute {meta.get('seconds', 0) / 3600:.2f} CPU-h"
             + (f"; rows with results: {', '.join(meta['rows_run']) or 'none'}" if spec.layout == "dataset_rows" else "")
             + (f"; data sets with results: {', '.join(meta['rows_run']) or 'none'}"
                if spec.layout in ("method_rows", "method_rows_by_metric") else "")
             + ".", "",
             f"**Verdict:** {table_verdict(cells)}", "",
             ("Each cell: our number of successes at the best grid setting ± its binomial sd (trials) [paper]; "
              "`~` within the spread, `≠` differs." if spec.aggregate == "success_count" else
              "Each cell: ours mean ± split-to-split sd (n) [paper]; `~` within the spread, `≠` differs, "
              "`?` one split (no spread: not judged), "
              "times as the ratio paper/ours."), ""]
    lines += ["| | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    # A long reason (a skipped row) is written once under the table, not in each of its cells.
    footnotes: dict[str, int] = {}
    for r in rows:
        out = []
        for col in cols:
            c = grid.get((r, col))
            if c is None:
                out.append("")
            elif c.mean is None:
                note = c.note or "not run"
                if len(note) > 60:
                    note = f"see ({footnotes.setdefault(note, len(footnotes) + 1)})"
                out.append(f"{note} [{c.paper_text or '-'}]")
            else:
                sd = f" ± {_fmt(c.std, c.unit)}" if c.std is not None else ""
                mark = {"within spread": " ~", "differs": " ≠", NO_SPREAD: " ?"}.get(c.verdict, "")
                extra = ""
                if c.unit == "s" and c.paper:
                    extra = f" ({c.paper / c.mean:.0f}x)" if c.mean > 0 else ""
                fail = f", {c.n_failed} failed" if c.n_failed else ""
                # A note on a cell with a value (what stands behind it) is a footnote.
                ref = f", see ({footnotes.setdefault(c.note, len(footnotes) + 1)})" if c.note else ""
                out.append(f"{_fmt(c.mean, c.unit)}{sd} ({c.n}{fail}) [{c.paper_text or '-'}]{mark}{extra}{ref}")
        lines.append(f"| {r} | " + " | ".join(out) + " |")
    if footnotes:
        lines += [""] + [f"({k}) {note}" + ("" if k == len(footnotes) else "  ") for note, k in footnotes.items()]
    lines += ["", "## Protocol and choices", ""] + [f"- {n}" for n in spec.notes]
    errors = meta.get("errors") or []
    if errors:
        lines += ["", "## Failed cells", ""]
        lines += [f"- {e}" for e in errors[:30]]
        if len(errors) > 30:
            lines.append(f"- ... and {len(errors) - 30} more (see the results table)")
    md_path = directory / f"{spec.key}.md"
    atomic_write(md_path, "\n".join(lines) + "\n")
    return md_path, csv_path


#: The hand-written account of the differences, linked from the index when the reports folder has it.
DIFFERENCES = "DIFFERENCES.md"


def write_index(directory=None) -> Path:
    """Rewrite ``README.md`` of the reports folder ``directory`` (default: the work folder's) from
    ``index.json`` (and the unspecified tables)."""
    directory = Path(directory or work_dir().reports)
    idx_path = directory / "index.json"
    index = json.loads(idx_path.read_text()) if idx_path.exists() else {}
    lines = ["# Reports", "",
             "Regenerated paper tables beside the published values (`s3vm-bench reproduce TABLE... | --all`), "
             "and the transcribed targets in `targets/`. The tidy rows of every run behind them are in "
             "`runs/<table>/<data set>.csv` (one CSV per table and data set, rows in a stable order, one row per cell: data set, solver, "
             "parameters, settings, "
             "split and its seed, results, package versions and BLAS, git commit). It keeps the rows of cells that "
             "earlier code or specs computed under their old keys (e.g. the annealed NIPS 2006 CCCP), so select a "
             "table's current cells before averaging them: their keys are `p.cell.key()` for `p` in "
             "`harness.reproduce.build_cells(harness.specs.get_spec(TABLE))[0]` (each table's `.csv` holds its "
             "aggregated cells).", "",
             "Verdict: a cell is *within spread* when our mean is within our split-to-split standard deviation "
             "of the paper's value (or equal at the paper's printed precision); a cell from a single split "
             "that is not equal has no spread and is not judged; times are not judged.", ""]
    if (directory / DIFFERENCES).exists():
        lines += [f"Why tables differ, as far as the project has measured or suspects: [{DIFFERENCES}]({DIFFERENCES}) "
                  "(written by hand; where a number there and a report disagree, the report is current).", ""]
    lines += ["| table | what | splits | verdict |", "|---|---|---|---|"]
    for key in sorted(set(SPECS) | set(UNSPECIFIED) | set(index), key=_table_order):
        if key in index:
            e = index[key]
            q = " (quick)" if e.get("quick") else ""
            lines.append(f"| [{key}]({key}.md) | {e['title']} | {e['splits']}{q} | {e['verdict']} |")
        elif key in SPECS:
            lines.append(f"| {key} | {SPECS[key].title} | -- | not run yet |")
        else:
            lines.append(f"| {key} | -- | -- | no spec: {UNSPECIFIED[key]} |")
    extra = sorted(p.name for p in directory.glob("*.md") if p.name not in ("README.md", DIFFERENCES)
                   and p.stem not in index)
    if extra:
        lines += ["", "Other reports: " + ", ".join(f"[{n}]({n})" for n in extra)]
    path = directory / "README.md"
    atomic_write(path, "\n".join(lines) + "\n")
    return path


def _table_order(key: str):
    paper, _, table = key.partition("-table")
    return (paper, int(table) if table.isdigit() else 0)


def provenance(rows) -> dict:
    """What the report of ``rows`` says of where they come from, from the rows alone (so that
    regenerating a report from the same rows gives the same bytes): ``commit``, the git commit of the
    latest successful row; ``n_commits``, how many commits computed them; ``dates``, the first and
    last day they were computed; ``seconds``, their CPU seconds (fit seconds where a row has none)."""
    done = [r for r in rows if r.get("status") == "done"]
    stamped = sorted((str(r.get("timestamp") or ""), str(r.get("git_commit") or "")) for r in done)
    days = sorted({t[:10] for t, _ in stamped if t})
    seconds = 0.0
    for r in done:
        v = r.get("cpu_seconds") if r.get("cpu_seconds") is not None else r.get("fit_seconds")
        try:
            v = float(v)
        except (TypeError, ValueError):
            continue
        seconds += v if math.isfinite(v) else 0.0
    return {"commit": stamped[-1][1] if stamped else None, "n_commits": len({c for _, c in stamped if c}),
            "dates": (days[0] if len(days) == 1 else f"{days[0]} to {days[-1]}") if days else "",
            "seconds": seconds}


def _update_index(directory: Path, key: str, entry: dict) -> None:
    idx_path = directory / "index.json"
    with locked(idx_path):  # two reproduce runs writing reports into one folder keep each other's entries
        index = json.loads(idx_path.read_text()) if idx_path.exists() else {}
        index[key] = {**index.get(key, {}), **entry}
        atomic_write(idx_path, json.dumps(index, indent=1, sort_keys=True) + "\n")


# ----------------------------------------------------------------------------- driver
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
        cls(**params)  # unknown parameter names fail before any work
        label = name if name in REGISTRY else cls.__name__
        if label in labels:
            label = name
        labels.add(label)
        configs.append(Config(label, name, dict(params)))
        notes.append(f"{label}: extra column, not in the paper: solver `{name}`"
                     + (f" with {', '.join(f'{k}={v!r}' for k, v in params.items())}" if params else "")
                     + ", under the same protocol, rows, splits and settings as the paper's columns.")
    return dataclasses.replace(spec, configs=tuple(configs), notes=tuple(spec.notes) + tuple(notes))


def split_keys(keys, datasets=None, solvers=None, params=None) -> list:
    """The specs of the tables ``keys``; checks that ``datasets`` are rows of them.

    A solver of ``solvers`` that is not a solver of a table's columns (an outside solver named
    ``"package.module:Class"`` or ``"path/to/file.py:Class"``, an entry point, or a registered
    solver the table does not have) is added to every table as an extra column, with the
    parameters ``params``: same rows, splits, settings and protocol as the paper's columns
    (:func:`extra_column`). ``params`` apply to the extra columns only. A table with its own
    report (``TableSpec.report``: one cell runs every column) takes no extra column.
    """
    specs = [get_spec(k) for k in keys]
    if params and not solvers:
        raise ValueError("--param sets the parameters of the extra columns: name their solver with --solvers")
    open_specs = [spec for spec in specs if not spec.report]
    if solvers is not None and open_specs:
        known = {c.solver for spec in open_specs for c in spec.configs}
        extra = [s for s in dict.fromkeys(solvers) if s not in known]
        if params and not extra:
            raise ValueError(f"--param sets the parameters of the extra columns, and every solver of --solvers is "
                             f"already a column of {', '.join(spec.key for spec in open_specs)}")
        if extra:
            specs = [spec if spec.report else extra_column(spec, extra, params) for spec in specs]
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
    cache = open_cache(cache_dir, results, read_table)  # one instance: one read of the tables
    out = {}
    for spec in specs:
        t0 = time.perf_counter()
        planned, skipped = build_cells(spec, quick=quick)
        run_splits = spec.split_indices(quick)
        run_splits = set(run_splits if n_splits is None else run_splits[:n_splits])
        run_now = [p for p in select_cells(planned, datasets, solvers) if run and p.cell.split in run_splits]
        echo(f"{spec.key}: {len(run_now)} cells to run or read"
             + (f", {len(skipped)} (row, column) pairs skipped" if skipped else ""))
        got = run_cells([p.cell for p in run_now], cache, n_jobs=n_jobs, backend=backend, scheduler=scheduler,
                        time_limit=time_limit, progress=progress) if run_now else []
        by_id = {id(p): r for p, r in zip(run_now, got)}
        hits = {id(p): cache.lookup(p.cell) for p in planned if id(p) not in by_id}
        planned = [p for p in planned if id(p) in by_id or hits[id(p)] is not None]
        rows = [by_id.get(id(p)) or hits[id(p)] | {"cached": True, "cell_key": p.cell.key(), "experiment": spec.key}
                for p in planned]
        if rows:
            store_rows(results, rows)
        if spec.report:
            cells = report_writer(spec)(spec, planned, rows, reports_dir)
        else:
            cells = aggregate(spec, planned, rows, skipped, load_targets(spec.key))
        errors = [f"{p.row or p.dataset} / {spec.configs[p.config].label} split {p.cell.split}: {r.get('status')}: "
                  f"{(r.get('error') or '').strip().splitlines()[-1] if r.get('error') else ''}"
                  for p, r in zip(planned, rows) if r.get("status") != "done"]
        meta = {"quick": quick, **provenance(rows),
                "splits": len({p.cell.split for p in planned}), "n_done": sum(r.get("status") == "done" for r in rows),
                "n_failed": sum(r.get("status") != "done" for r in rows),
                "n_cached": sum(bool(r.get("cached")) for r in rows), "errors": errors,
                "rows_run": [r for r, _ in spec.rows if any(p.row == r for p in planned)]}
        if not spec.report:
            write_report(spec, cells, meta, reports_dir)
        verdict = table_verdict(cells)
        if skipped:
            verdict += f"; skipped: {'; '.join(sorted(set(skipped.values())))}"
        _update_index(reports_dir, spec.key, {"title": spec.title, "splits": meta["splits"], "quick": quick,
                                              "verdict": verdict, "seconds": round(meta["seconds"], 1),
                                              "commit": meta["commit"]})
        echo(f"{spec.key}: {verdict} ({time.perf_counter() - t0:.0f} s) -> {reports_dir / (spec.key + '.md')}")
        out[spec.key] = cells
    write_index(reports_dir)
    return out
