"""``s3vm-bench run``: one solver on every split of one data set, under the common protocol."""

from __future__ import annotations

import dataclasses
import json
import math
import os
from pathlib import Path

import numpy as np

from s3vm_bench.data_registry import load_dataset, make_splits
from s3vm_bench.data_registry.splits import check_protocol
from s3vm_bench.solvers import get_solver

from .grid import Cell, check_solver_params
from .isolate import run_isolated
from .paths import check_writable_folder
from .protocol import ProtocolSettings
from .results import COLUMNS, UnreadableTable, append_rows, is_folder_store, read_results_text

__all__ = ["run_solver", "parse_params", "check_results_path"]


#: Python's spellings of the JSON constants, read as them in ``--param NAME=VALUE``.
_PYTHON_CONSTANTS = {"True": True, "False": False, "None": None}


def parse_params(items: list[str] | None) -> dict:
    """``["max_iter=50", "kernel=linear", "anneal=False"]`` -> ``{"max_iter": 50, "kernel": "linear",
    "anneal": False}``: a JSON value (``50``, ``1e-3``, ``true``, ``null``, ``[1, 2]``) or Python's
    ``True``/``False``/``None``, else the text as a string."""
    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"solver parameter {item!r} must look like name=value")
        if value in _PYTHON_CONSTANTS:
            out[key] = _PYTHON_CONSTANTS[value]
            continue
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def check_results_path(results, option: str = "--results", remedy: str = "name another file") -> Path:
    """``results`` as a Path after checking, before any work, that rows can be appended there: a
    CSV file name (``.csv`` or ``.csv.gz``), its folder exists or can be created and a file can be
    written in it (nothing is created: :func:`harness.paths.check_writable_folder`), and an
    existing file is a readable results table whose rows are whole. ValueError otherwise, saying
    what is wrong, naming ``option`` (the command-line option or the place that chose the file)
    and ending with ``remedy`` (what the user can do).
    """
    path = Path(results)
    if path.is_dir():
        raise ValueError(f"{option} {path} is a folder, not a CSV file: {remedy}")
    if is_folder_store(path):
        raise ValueError(f"{option} {path}: name a CSV file ending in .csv (or .csv.gz), e.g. {path}.csv")
    check_writable_folder(f"{option} {path} cannot be written: its folder", path.parent, remedy=remedy)
    if path.exists() and not os.access(path, os.W_OK):
        raise ValueError(f"{option} {path} is not writable: {remedy}")
    if path.exists():
        try:
            table = read_results_text(path)
        except UnreadableTable as exc:
            raise ValueError(f"{option} {path} {exc.problem}: {remedy}") from None
        cut = [i + 1 for i, stamp in enumerate(table["timestamp"] if "timestamp" in table else []) if not stamp]
        if cut:
            raise ValueError(f"{option} {path}: row(s) {', '.join(map(str, cut[:5]))} (counting from 1 after the "
                             f"header) were written only in part (no timestamp); repair or delete them, or {remedy}")
    return path


def run_solver(solver: str, dataset: str, *, n_splits: int = 10, protocol: str = "jmlr2008",
               settings: ProtocolSettings | None = None, params: dict | None = None, results=None,
               experiment: str = "run", time_limit: float | None = None, echo=print) -> list[dict]:
    """Run ``solver`` on ``n_splits`` splits of ``dataset``; print a table, append rows to ``results``.

    Each split is a :class:`harness.grid.Cell` run in a process of its own
    (:func:`harness.isolate.run_isolated`): past ``time_limit`` seconds it is killed and recorded
    as ``timeout``, a split that fails or kills its process is recorded as ``failed`` (with the
    traceback, signal or exit code) and the next split runs. Each row is appended to ``results``
    as soon as its split ends, so an interrupted run keeps the splits it finished; the path is
    checked before the first split runs.
    """
    if n_splits < 1:
        raise ValueError(f"n_splits must be >= 1, got {n_splits}")
    if time_limit is not None and not time_limit > 0:
        raise ValueError(f"time_limit must be > 0 seconds, got {time_limit!r}")
    solver_cls = get_solver(solver)
    params = check_solver_params(params, solver_cls)  # unknown names and refused values fail before any work
    check_protocol(protocol)  # before the results' folder is made
    path = None if results is None else check_results_path(results)
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
    env = {k: v for k, v in os.environ.items() if k.startswith("S3VM_DATA")}
    for split in splits:
        cell = Cell(experiment, ds.name, solver, split.index, protocol, n_splits, params,
                    dataclasses.asdict(settings))
        row = run_isolated(cell, time_limit, env) | {"cell_key": cell.key()}
        if row["status"] == "done":
            te = "" if row.get("test_error") is None else f"{100 * row['test_error']:.2f}"
            obj = "" if row.get("objective") is None or math.isnan(row["objective"]) else f"{row['objective']:.4f}"
            echo(f"{split.index:>5} {obj:>12} {100 * row['unlabeled_error']:>9.2f} {te:>9} "
                 f"{row['fit_seconds']:>8.2f}  done")
        else:
            last = (row.get("error") or "").strip().splitlines()
            echo(f"{split.index:>5} {'':>12} {'':>9} {'':>9} {'':>8}  {row['status']}: {last[-1] if last else ''}")
        rows.append(row)
        if path is not None:
            append_rows(path, [{k: v for k, v in row.items() if k in COLUMNS}])
    done = [r for r in rows if r["status"] == "done"]
    if done:
        errs = np.array([r["unlabeled_error"] for r in done]) * 100
        echo(f"mean unlabeled error {errs.mean():.2f}% +- {errs.std(ddof=1) if len(errs) > 1 else 0:.2f} "
             f"over {len(done)} split(s); {len(rows) - len(done)} failed")
    if path is not None:
        echo(f"appended {len(rows)} row(s) to {path}")
    return rows
