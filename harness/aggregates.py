"""Aggregation of a table's result rows into its report cells (:func:`aggregate`).

One function per ``TableSpec.aggregate`` (:data:`_AGGREGATES`): the mean and split-to-split sd
of each metric (with the stored optima column of :attr:`harness.specs.TableSpec.stored_optima`),
the mean rank over problems, Kendall's tau-b between errors and objectives (JMLR 2008 Table 6),
success counts (ICML 2006 Table 2), and those over a grid of settings of
:mod:`harness.grid_aggregates` (ICML 2006 Tables 4-5, JMLR 2008 Tables 9-10).
"""

from __future__ import annotations

import math

import numpy as np

from .grid_aggregates import aggregate_model_selection, aggregate_relative_improvement, aggregate_variance
from .report_cells import ReportCell, _AggregateInput, _metric, _sample_stats, _target_cell, _unit_of
from .specs import Config, TableSpec

__all__ = ["aggregate"]


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


def _aggregate_rank(a: _AggregateInput) -> list[ReportCell]:
    """Mean rank of each of the paper's configurations over the (data set, split) problems all of
    them solved (rank 1 = lowest metric; ties share the mean rank, ``scipy.stats.rankdata``).

    An extra column (``Config.extra``) gets the mean rank it takes among the paper's columns and
    itself, on the problems all of them solved, so that adding it changes no value of the paper's
    columns."""
    from scipy.stats import rankdata

    spec = a.spec
    suffix, metric = spec.metrics[0]
    paper = [ci for ci, c in enumerate(spec.configs) if not c.extra]
    by_problem: dict = {}
    for p, r in a.done:
        by_problem.setdefault((p.dataset, p.cell.split), {})[p.config] = _metric(r, metric)
    ranks = {ci: [] for ci in range(len(spec.configs))}
    for ci in range(len(spec.configs)):
        among = paper if ci in paper else paper + [ci]
        for v in by_problem.values():
            if all(c in v for c in among):
                ranked = rankdata([v[c] for c in among])
                ranks[ci].append(float(ranked[among.index(ci)]))
    out = []
    for ci, config in enumerate(spec.configs):
        pv, pt, pu = a.target(suffix, config.label)
        mean, sd, n = _sample_stats(ranks[ci])
        out.append(ReportCell(suffix, config.label, pu or "rank", pv, pt, mean, sd, n, 0,
                              "" if n else "no (data set, split) with every method done"))
    return out


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


#: ``TableSpec.aggregate`` -> function of a :class:`harness.report_cells._AggregateInput` returning
#: the report cells.
_AGGREGATES: dict = {
    "mean": _aggregate_mean,
    "rank": _aggregate_rank,
    "kendall": _aggregate_kendall,
    "success_count": _aggregate_success_count,
    "model_selection": aggregate_model_selection,
    "relative_improvement": aggregate_relative_improvement,
    "variance": aggregate_variance,
}


def aggregate(spec: TableSpec, planned, rows, skipped, targets) -> list[ReportCell]:
    """Per-target-cell values of one spec from its cells' rows (same order as ``planned``).

    Dispatches on ``spec.aggregate`` to the function registered for it (:data:`_AGGREGATES`):
    ``mean`` (mean and split-to-split sd), ``rank`` (mean rank over problems), ``kendall`` (JMLR
    2008 Table 6), ``success_count`` (ICML 2006 Table 2), ``model_selection`` (ICML 2006 Tables
    4-5), ``relative_improvement`` and ``variance`` (JMLR 2008 Tables 9 and 10). Where a paper
    cell sits (row and column labels) follows ``spec.layout``
    (:func:`harness.report_cells._target_cell`).

    Parameters
    ----------
    spec : TableSpec
    planned : list of _Planned
        The spec's cells (:func:`harness.table_cells.build_cells`).
    rows : list of dict
        The result row of each planned cell, in the same order; rows whose ``status`` is not
        ``"done"`` count as failed.
    skipped : dict
        ``{(row label, config index): reason}`` of the cells not run.
    targets : dict
        The paper's values, :func:`harness.report_cells.load_targets`.

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
    """The ``"<stored_optima_of> (stored optima)"`` column (:attr:`harness.specs.TableSpec.stored_optima`).

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
