"""The grid cells of a paper table: a :class:`harness.specs.TableSpec` becomes one
:class:`harness.grid.Cell` per data set x configuration x grid setting x split.

A (row, configuration) pair whose data set is network-only and not cached, or whose solver is not
registered, is *skipped* with its reason (:func:`build_cells`), never run as a failure. The
protocol settings of each cell (Gaussian kernel width, C, C*, r mode; JMLR 2008 Table 5 and the
sensitivity grid of Table 9) are written out in full, so the cell key states them
(:func:`_resolve_settings`).
"""

from __future__ import annotations

from dataclasses import dataclass

from s3vm_bench.solvers.numerics import check_int

from .grid import Cell
from .specs import Config, TableSpec

__all__ = ["build_cells", "select_cells"]


@dataclass
class _Planned:
    """One planned cell of a table: the grid cell, its row label and data set, and the indices of
    its configuration (``TableSpec.configs``) and grid setting (``TableSpec.grid``)."""

    cell: Cell
    row: str
    dataset: str
    config: int
    grid: int


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
    from s3vm_bench.solvers import REGISTRY, available_solvers

    if dataset in spec.unavailable:
        return spec.unavailable[dataset]
    if ":" not in config.solver and config.solver not in REGISTRY and config.solver not in available_solvers():
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
