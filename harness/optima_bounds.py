"""Certified lower bounds of the data sets too large for branch and bound, computed and stored.

For the binary problems of JMLR 2008 Table 8's g50c, Text and Uspst splits (:data:`BOUND_SETS`),
:func:`build_bounds` runs the bound optimizer of :mod:`harness.certify` and stores each bound
beside the best objective a registered solver reached (the committed Table 8 runs,
:func:`best_run_objectives`) in ``harness/optima/bounds-<data set>.json``
(:mod:`harness.optima_store`); their relative difference is a certified gap.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from s3vm_bench import is_int
from s3vm_bench.solvers.numerics import check_positive

from .optima_store import (BOUND_RUNS_TABLE, BOUND_SETS, _check_bound_set, _closure_sha, check_only, load_bounds,
                           save_bounds)
from .protocol import _gram
from .reference_sets import BinaryProblem, binary_problems

__all__ = ["CERTIFIED_GAP_TOL", "best_run_objectives", "bound_entry", "bound_gram", "bound_problems",
           "build_bounds", "check_bound_count", "solver_spec", "table8_rows"]


def bound_problems(dataset: str, i: int):
    """``(ds, split, settings, problems)`` of split ``i``: the binary problems that
    :func:`harness.protocol.run_split` solves under JMLR 2008 Table 8's protocol (Table 5
    hyperparameters, exact r), in its order."""
    from s3vm_bench.data_registry import jmlr2008_splits, load_dataset

    from .protocol import ProtocolSettings

    import dataclasses

    _check_bound_set(dataset)
    if not is_int(i) or i < 0:
        raise ValueError(f"the split index must be an integer >= 0, got {i!r}")
    ds = load_dataset(dataset)
    splits = jmlr2008_splits(ds, n_splits=int(i) + 1)
    if not 0 <= int(i) < len(splits):
        raise ValueError(f"{dataset} has {len(splits)} JMLR 2008 splits (0..{len(splits) - 1}), not a split {i}: "
                         f"ask for at most {len(splits)} (--splits / --n)")
    split = splits[int(i)]
    s = ProtocolSettings.for_dataset(dataset)
    # a BinaryProblem holds dense inputs (its digest hashes them); the Gram matrix of a bound is
    # computed from the inputs as the protocol holds them (bound_gram)
    dense = dataclasses.replace(ds, X=ds.X.toarray()) if sp.issparse(ds.X) else ds
    return ds, split, s, binary_problems(dataset, dense, split, s)


def check_bound_count(dataset: str, n: int) -> int:
    """``n`` if ``dataset`` (a bound set) has at least ``n >= 1`` JMLR 2008 splits; ValueError saying
    how many it has otherwise, so that a build or a comparison asking for too many fails before it
    computes anything."""
    from s3vm_bench.data_registry import jmlr2008_splits, load_dataset

    _check_bound_set(dataset)
    if n < 1:
        raise ValueError(f"the number of splits must be >= 1, got {n}")
    available = len(jmlr2008_splits(load_dataset(dataset), n_splits=n))
    if available < n:
        raise ValueError(f"{dataset} has {available} JMLR 2008 splits, not {n}: ask for at most {available} "
                         "(--n / --splits)")
    return n


def bound_gram(ds, split, settings):
    """The Gram matrix of ``[X_lab; X_unl]`` exactly as :func:`harness.protocol.run_split` computes it
    (from the data set's own, possibly sparse, inputs)."""
    return _gram(ds.X[np.r_[split.labeled, split.unlabeled]], settings)


def table8_rows(dataset: str) -> list:
    """The committed JMLR 2008 Table 8 rows of ``dataset`` whose cells are the table's current
    ones (``reports/runs/`` keeps rows of cells computed under older keys; see reports/README.md)."""
    import csv
    import io

    from .paths import SHIPPED_RESULTS
    from .reproduce import build_cells
    from .specs import get_spec

    _check_bound_set(dataset)
    path = SHIPPED_RESULTS / BOUND_RUNS_TABLE / f"{dataset}.csv"
    if not path.is_file():
        return []
    keys = {p.cell.key() for p in build_cells(get_spec(BOUND_RUNS_TABLE))[0] if p.cell.dataset == dataset}
    return [row for row in csv.DictReader(io.StringIO(path.read_text("utf-8"))) if row["cell_key"] in keys]


def solver_spec(row: dict) -> str:
    """``solver`` or ``solver {params}`` of a result row."""
    return row["solver"] + ("" if row["params"] in ("", "{}") else " " + row["params"])


def best_run_objectives(dataset: str, rows=None) -> dict:
    """``{split: (objective, solver spec)}``: the lowest objective of a binary problem among the
    current committed Table 8 rows (:func:`table8_rows`) that met the balance constraint
    (``balance_exact``; the bound holds only over balanced labelings).  Empty for a
    one-versus-rest data set, whose rows hold the mean over the binary problems only."""
    best = {}
    for row in table8_rows(dataset) if rows is None else rows:
        if row["status"] != "done" or row["balance_exact"] != "True" or row["n_binary"] != "1" or not row["objective"]:
            continue
        value, split = float(row["objective"]), int(row["split"])
        if np.isfinite(value) and (split not in best or value < best[split][0]):
            best[split] = (value, solver_spec(row))
    return best


def bound_entry(problem: BinaryProblem, result, best_objective, best_solver, init_solver, graph_neighbors=None) -> dict:
    """The stored form of a bound (:class:`harness.certify.BoundResult`) of one binary problem
    (``graph_neighbors``: the search's option, :func:`harness.certify.optimize_bound`)."""
    c = result.certificate
    # a relative gap needs a positive bound; a bound <= 0 certifies nothing useful (gap None)
    gap = None if best_objective is None or result.bound <= 0 else (best_objective - result.bound) / result.bound
    return {"digest": problem.digest(), "split": problem.split, "label": problem.label,
            "u": int(problem.y.size - problem.n_lab), "k": problem.k, "lower_bound": result.bound,
            "best_objective": best_objective, "best_solver": best_solver, "gap": gap,
            "certified_optimal": gap is not None and gap <= CERTIFIED_GAP_TOL,
            "seconds": round(result.seconds, 2), "cpu_seconds": round(result.cpu_seconds, 2),
            "iterations": result.n_iter, "method": "graph-cut dual + SDP (harness.certify)",
            "init_labels": init_solver, "t": float(result.point.t),
            "graph": "every unlabeled pair" if graph_neighbors is None else f"{int(graph_neighbors)} nearest neighbours",
            "graph_row_sum": 0.0 if result.point.G is None else float(np.mean(np.sum(result.point.G, axis=1))),
            "certificate": {"value": c.value, "lambda_max": c.lambda_max, "bias_residual": c.bias_residual,
                            "bias_bound": c.bias_bound, "margin": c.margin},
            "stages": [{k: v for k, v in st.items()} for st in result.stages],
            "certify_sha256": _closure_sha("harness.certify")}


#: A relative gap at or below this counts as "certified optimal" (the harness's Newton solves
#: stop at a relative decrement of 1e-9; the bound's safety margin is 1e-9 relative).
CERTIFIED_GAP_TOL = 1e-6


def build_bounds(dataset: str, n: int | None = None, *, only=None, time_limit=240.0, init_solver="newton",
                 directory=None, force=False, graph_neighbors=None, max_iter=250, echo=print) -> dict:
    """Compute and store the certified lower bounds of the first ``n`` splits of ``dataset``.

    For every binary problem the optimizer of :mod:`harness.certify` starts from the labeling that
    ``init_solver`` reaches under the common protocol (only a starting point: the bound does not
    depend on it for its validity) and runs for at most ``time_limit`` seconds; the best objective
    of the committed Table 8 runs (:func:`best_run_objectives`) is stored beside the bound, or,
    where those rows do not give it per binary problem, the objective ``init_solver`` reached
    (``best_solver`` says which) -- or the best objective already stored for the same problem, if
    lower (``compare --record-best`` records other solvers' objectives).  Entries already stored for the same problem (same digest) are
    kept unless ``force``; with ``force`` a stored entry is replaced only by a bound at least as high (both
    are certificates; the higher one is kept).  ``only`` restricts the build to these entry keys.
    The store is re-read and saved after each problem, so builds of other keys of the same set
    running at the same time keep each other's entries. ``graph_neighbors`` and ``max_iter``
    (iterations per smoothing stage): see :func:`harness.certify.optimize_bound` (None: graph
    weights on every unlabeled pair).

    Raises
    ------
    ValueError
        Before any bound is computed: ``dataset`` is not one of :data:`BOUND_SETS`, ``n < 1`` or more
        than its splits, ``time_limit`` not a positive number, a key of ``only`` is not a problem of
        the first ``n`` splits, or the store cannot be read.
    """
    from s3vm_bench.data_registry import get_spec
    from s3vm_bench.solvers import get_solver

    from .certify import optimize_bound
    from .protocol import fit_binary_problems

    _check_bound_set(dataset)
    n = check_bound_count(dataset, BOUND_SETS[dataset] if n is None else int(n))
    time_limit = check_positive(time_limit, "time_limit")  # a bound is stored whatever its budget
    n_classes = get_spec(dataset).expected_shape[2]
    # the classes of the binary problems, as binary_problems orders them: class 1 of a two-class set
    check_only(dataset, only, n, range(1, 2) if n_classes == 2 else range(n_classes), show="optima show --bounds")
    store = load_bounds(dataset, directory)
    best = best_run_objectives(dataset)
    only = None if only is None else set(only)
    asked = bounded = 0
    for i in range(n):
        ds, split, s, problems = bound_problems(dataset, i)
        asked += sum(only is None or p.key in only for p in problems)
        todo = [p for p in problems if (only is None or p.key in only)
                and (force or store["entries"].get(p.key, {}).get("digest") != p.digest())]
        bounded += len(todo)
        if not todo:
            continue
        # init_solver's labelings of the problems to bound only (the others are not fitted)
        fitted, _ = fit_binary_problems(get_solver(init_solver), {}, ds, split, s, classes=[p.label for p in todo])
        fitted = {b.label: b for b in fitted}
        K = bound_gram(ds, split, s)
        for prob in todo:
            b = fitted[prob.label]
            labels = np.where(b.unlabeled_outputs > 0, 1.0, -1.0)
            if int(np.sum(labels > 0)) != prob.k:
                raise ValueError(f"{init_solver} did not meet the balance constraint on {dataset} {prob.key}")
            if len(problems) == 1 and i in best and best[i][0] <= b.objective:
                value, who = best[i]
            else:
                value, who = b.objective, init_solver
            kept_best = store["entries"].get(prob.key)
            if (kept_best is not None and kept_best.get("digest") == prob.digest()
                    and kept_best.get("best_objective") is not None and kept_best["best_objective"] < value):
                value, who = kept_best["best_objective"], kept_best["best_solver"]
            out = optimize_bound(K, prob.y[:prob.n_lab], prob.k, s.C, s.c_star, labels, upper=value,
                                 time_limit=time_limit, graph_neighbors=graph_neighbors, max_iter=max_iter)
            entry = bound_entry(prob, out, value, who, init_solver, graph_neighbors)
            # Re-read the file: another build of this set (other --only keys) may have stored
            # entries since this one started, and saving the store read at the start would drop them.
            store = load_bounds(dataset, directory)
            stored = store["entries"].get(prob.key)
            kept = (stored is not None and stored.get("digest") == entry["digest"]
                    and stored.get("best_objective") == value and stored["lower_bound"] > entry["lower_bound"])
            if not kept:
                store["entries"][prob.key] = entry
                save_bounds(store, directory)
            gap = "--" if entry["gap"] is None else f"{100 * entry['gap']:.1f}%"
            echo(f"{dataset} {prob.key}: lower bound {entry['lower_bound']:.4f}, best objective {value:.4f} ({who}), "
                 f"gap {gap} ({entry['seconds']:.1f} s, {entry['cpu_seconds']:.1f} s CPU)"
                 + (f"; the stored bound {stored['lower_bound']:.4f} is higher and is kept" if kept else ""))
    if not bounded:
        echo(f"{dataset}: nothing to compute: the bounds of the {asked} problem(s) asked for are stored (--force "
             "computes them again)")
    return store
