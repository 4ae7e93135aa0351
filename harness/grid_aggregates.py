"""Aggregations over a table's grid of settings.

ICML 2006 Sec. 4, Tables 4-5: the error at the validation-selected setting of each split and the
best setting's mean error (:func:`select_and_best`, :func:`aggregate_model_selection`). JMLR 2008
Table 9: the relative improvement of the best setting over the default one
(:func:`aggregate_relative_improvement`); Table 10: the variance of the errors over the grid, and
the footnote that sets the paper's values beside what its own Tables 1, 8 and 9 imply
(:func:`aggregate_variance`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .report_cells import ReportCell, _AggregateInput, _metric, _over_rows, _target_cell, _unit_of, load_targets

__all__ = ["SelectedAndBest", "select_and_best", "aggregate_model_selection", "aggregate_relative_improvement",
           "aggregate_variance"]


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


def aggregate_model_selection(a: _AggregateInput) -> list[ReportCell]:
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


def aggregate_relative_improvement(a: _AggregateInput) -> list[ReportCell]:
    """JMLR 2008 Table 9: per (data set, method), the relative improvement ``100 (e0 - min e) / e0``
    of the best setting of the grid over its first (default) setting, and its mean over the data
    sets (:func:`harness.report_cells._over_rows`)."""
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


def aggregate_variance(a: _AggregateInput) -> list[ReportCell]:
    """JMLR 2008 Table 10: per method, the variance of the metric over the settings grid, averaged
    over the data sets (:func:`harness.report_cells._over_rows`); then the same spread as an average sd (in %), without
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
