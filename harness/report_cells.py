"""Report cells of a reproduced table and what every aggregation reads.

A :class:`ReportCell` sets our mean, split-to-split sd and count beside the paper's printed value
(:func:`load_targets`, the transcribed ``reports/targets/<key>.csv``) and judges the difference
(:attr:`ReportCell.verdict`). :class:`_AggregateInput` and the helpers below (a metric of a result
row, where a paper cell sits in its table, sample statistics, means over the data sets) are shared
by the aggregations of :mod:`harness.aggregates` and :mod:`harness.grid_aggregates`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .paths import SHIPPED_REPORTS
from .specs import TableSpec

__all__ = ["NO_SPREAD", "REPORTS_DIR", "ReportCell", "load_targets"]

#: Verdict of a cell with a single split (or no spread) that is not equal at the printed precision.
NO_SPREAD = "one split, not judged"

#: The shipped reports folder (read only: the paper targets of ``targets/``).
REPORTS_DIR = SHIPPED_REPORTS
_PERCENT = {"unlabeled_error", "test_error"}


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


def load_targets(key: str, directory=None) -> dict:
    """``{(row, column): (value, text, unit)}`` of ``reports/targets/<key>.csv`` (empty if absent)."""
    path = Path(directory or REPORTS_DIR / "targets") / f"{key}.csv"
    if not path.exists():
        return {}
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    return {(r.row, r.column): (float(r.value), r.value, r.unit) for r in df.itertuples()}


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
