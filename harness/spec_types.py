"""The types of a declarative experiment spec: a table's column (:class:`Config`) and the table
(:class:`TableSpec`); the specs themselves are in :mod:`harness.specs`."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Config", "TableSpec"]


@dataclass(frozen=True)
class Config:
    """One column of a table: a registered solver with its parameters and protocol settings.

    ``settings`` overrides :meth:`harness.protocol.ProtocolSettings.for_dataset`; the extra key
    ``C_star_factor`` sets C* to that multiple of the data set's C, and ``sigma_factor`` /
    ``C_factor`` scale the Table 5 values (JMLR 2008 Table 9's grid). ``dataset_params`` maps a
    data set name to solver parameters that override ``params`` on that data set only (the
    graph of LapSVM in JMLR 2008 Table 15). ``extra`` marks a column added beside the paper's
    (``reproduce --solvers``, :func:`harness.reproduce.extra_column`): the aggregates that compare
    the columns with one another (the mean rank of JMLR 2008 Table 7) compare the paper's columns
    among themselves, so an extra column leaves their values as they are.
    """

    label: str
    solver: str
    params: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)
    dataset_params: dict = field(default_factory=dict)
    extra: bool = False

    def params_for(self, dataset: str) -> dict:
        """The solver's parameters on ``dataset``: ``params`` updated by ``dataset_params[dataset]``."""
        return dict(self.params) | dict(self.dataset_params.get(dataset, {}))


@dataclass(frozen=True)
class TableSpec:
    """One published table and how to regenerate it.

    Parameters
    ----------
    key : str
        ``<paper>-table<N>``, the name of the targets file and of the report.
    title : str
    rows : tuple of (row label, data set)
        Row labels are those of the targets file; data sets are catalog names (or reference-set
        names with ``protocol="reference"``).
    configs : tuple of Config
    metrics : tuple of (suffix, metric)
        ``layout="dataset_rows"``: target column = config label (+ " " + suffix when not empty).
        ``layout="metric_rows"``: target row = suffix, column = config label, one data set.
        ``layout="method_rows"``: target row = config label (+ " " + suffix), column = row label
        (the paper's table is transposed: methods down, data sets across).
        ``layout="method_rows_by_metric"``: target row = config label, column = row label + " " +
        suffix (+ " selected" / " best" for ``model_selection``; ICML 2006 Tables 4-5).
        Metrics: ``unlabeled_error``, ``test_error`` (in %), ``unlabeled_error_rate``,
        ``test_error_rate`` (the same errors as fractions), ``objective``, ``seconds_per_binary``.
    aggregate : {"mean", "rank", "kendall", "relative_improvement", "variance", "success_count", "model_selection"}
        ``mean``: mean and sample std over splits. ``rank``: JMLR 2008 Table 7, the configs ranked
        by objective on every (data set, split), ranks averaged (single row ``average rank``).
        ``relative_improvement`` / ``variance``: JMLR 2008 Tables 9 / 10 over ``grid``.
        ``success_count``: ICML 2006 Table 2, the number of splits whose metric is exactly 0 (no
        unlabeled error), per (data set, config), the maximum over ``grid`` when there is one.
        ``model_selection``: ICML 2006 Tables 4-5, over ``grid`` (protocol ``"icml2006"``, whose
        rows carry a validation error): "selected" = mean over splits of the metric at the setting
        with the lowest validation error of the split (ties: the first in grid order), "best" = the
        minimum over the settings of the mean over splits.
    grid : tuple of dict
        Settings overrides swept for ``relative_improvement``/``variance`` (first = default) and
        ``success_count``. A ``sigma_factor`` / ``C_factor`` that a config's ``settings`` also
        sets is multiplied by it (a column's own scaling of the grid).
    splits : tuple of int, optional
        Split indices to run (default: ``range(n_splits)``).
    split_kwargs : dict
        Extra arguments of the split protocol (``data_registry.make_splits``), e.g. SIGIR 2006's
        ``n_labeled``.
    unavailable : dict
        Data set -> why its row cannot be run here (a set we do not hold, or a protocol value the
        paper does not print); those rows are reported as skipped with the reason.
    dataset_settings : dict, optional
        Data set -> :class:`harness.protocol.ProtocolSettings` fields that replace JMLR 2008
        Table 5's as the base of the cells' settings (the grid's factors scale them).
    stored_optima : dict, optional
        Data set -> name of a :mod:`harness.optima` reference set with the same splits and
        settings. The report then adds a column ``"<stored_optima_of> (stored optima)"``: the
        metrics of the stored branch-and-bound optima of the same splits (read, not recomputed),
        beside the paper's values of column ``stored_optima_of`` (aggregate ``"mean"`` only).
    stored_optima_of : str
        The config label whose paper values the stored-optima column is compared to.
    no_paper_rows : tuple of str
        Row labels the paper does not have (stand-ins on data we hold for sets we do not): reported
        beside the paper's rows, without a paper value, so never judged.
    report : str
        ``"module:function"`` of the table's own report writer, for a table whose protocol runs
        every column in one cell (ICML 2013 Table 2: each method with its own model selection over
        the protocol's grid): ``function(spec, planned, rows, directory)`` writes ``<key>.md`` and
        ``<key>.csv`` and returns the report cells, in place of ``aggregate`` and the common report.
        Its cells carry no settings (the protocol holds its grid) and take no extra columns
        (``reproduce --solvers``). Empty: the common report.
    command : str
        The command named in the report as the one that regenerates it. Empty: ``s3vm-bench
        reproduce <key>`` (with ``--quick`` for a quick run).
    """

    key: str
    title: str
    rows: tuple
    configs: tuple
    metrics: tuple = (("", "unlabeled_error"),)
    layout: str = "dataset_rows"
    protocol: str = "jmlr2008"
    n_splits: int = 10
    quick_splits: int = 2
    splits: tuple | None = None
    aggregate: str = "mean"
    grid: tuple = ()
    notes: tuple = ()
    split_kwargs: dict = field(default_factory=dict)
    unavailable: dict = field(default_factory=dict)
    dataset_settings: dict = field(default_factory=dict)
    stored_optima: dict = field(default_factory=dict)
    stored_optima_of: str = "BB"
    no_paper_rows: tuple = ()
    report: str = ""
    command: str = ""

    @property
    def paper(self) -> str:
        return self.key.split("-")[0]

    def split_indices(self, quick: bool = False) -> list[int]:
        idx = list(self.splits) if self.splits is not None else list(range(self.n_splits))
        return idx[: self.quick_splits] if quick else idx
