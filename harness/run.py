"""``s3vm-bench run``: one solver on every split of one data set, under the common protocol."""

from __future__ import annotations

import json
import math
import traceback

import numpy as np

from s3vm_bench.data_registry import load_dataset, make_splits
from s3vm_bench.solvers import get_solver

from .grid import check_solver_params
from .protocol import ProtocolSettings, run_split
from .results import append_rows

__all__ = ["run_solver", "parse_params"]


def parse_params(items: list[str] | None) -> dict:
    """``["max_iter=50", "kernel=linear"]`` -> ``{"max_iter": 50, "kernel": "linear"}`` (JSON values)."""
    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"solver parameter {item!r} must look like name=value")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def run_solver(solver: str, dataset: str, *, n_splits: int = 10, protocol: str = "jmlr2008",
               settings: ProtocolSettings | None = None, params: dict | None = None, results=None,
               experiment: str = "run", echo=print) -> list[dict]:
    """Run ``solver`` on ``n_splits`` splits of ``dataset``; print a table, append rows to ``results``.

    A failing split is recorded with status ``failed`` and its traceback; the other splits run.
    """
    if n_splits < 1:
        raise ValueError(f"n_splits must be >= 1, got {n_splits}")
    solver_cls = get_solver(solver)
    params = check_solver_params(params)
    solver_cls(**params)  # unknown parameter names fail here, before any work
    ds = load_dataset(dataset)
    settings = settings or ProtocolSettings.for_dataset(ds.name)
    splits = make_splits(ds, protocol, n_splits=n_splits)
    if len(splits) < n_splits:
        raise ValueError(f"{ds.name} has {len(splits)} splits under protocol {protocol!r}, not {n_splits}: "
                         f"use --splits {len(splits)} or fewer")
    rows = []
    echo(f"{solver} on {ds.name} ({ds.n_samples} x {ds.n_features}, {ds.n_classes} classes), protocol "
         f"{protocol}, kernel {settings.kernel} sigma={settings.sigma} C={settings.C} C*={settings.c_star} "
         f"r={settings.r_mode}")
    echo(f"{'split':>5} {'objective':>12} {'unl_err%':>9} {'test_err%':>9} {'seconds':>8}  status")
    for split in splits:
        row = {"experiment": experiment, "dataset": ds.name, "protocol": protocol, "split": split.index,
               "split_seed": split.seed, "solver": solver, "params": params, "kernel": settings.kernel,
               "sigma": settings.sigma, "C": settings.C, "C_star": settings.c_star, "r_mode": settings.r_mode}
        try:
            res = run_split(solver_cls, params, ds, split, settings)
        except Exception as exc:  # recorded, never cached as a result; the next split runs
            row |= {"status": "failed", "error": "".join(traceback.format_exception(exc))[-4000:]}
            echo(f"{split.index:>5} {'':>12} {'':>9} {'':>9} {'':>8}  failed: {type(exc).__name__}: {exc}")
        else:
            row |= {"objective": res.objective, "unlabeled_error": res.unlabeled_error,
                    "test_error": res.test_error, "fit_seconds": res.fit_seconds,
                    "balance_exact": res.balance_exact, "status": "done"}
            te = "" if res.test_error is None else f"{100 * res.test_error:.2f}"
            obj = "" if math.isnan(res.objective) else f"{res.objective:.4f}"
            echo(f"{split.index:>5} {obj:>12} {100 * res.unlabeled_error:>9.2f} {te:>9} {res.fit_seconds:>8.2f}  done")
        rows.append(row)
    done = [r for r in rows if r["status"] == "done"]
    if done:
        errs = np.array([r["unlabeled_error"] for r in done]) * 100
        echo(f"mean unlabeled error {errs.mean():.2f}% +- {errs.std(ddof=1) if len(errs) > 1 else 0:.2f} "
             f"over {len(done)} split(s); {len(rows) - len(done)} failed")
    if results is not None:
        append_rows(results, rows)
        echo(f"appended {len(rows)} row(s) to {results}")
    return rows
