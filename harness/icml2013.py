"""ICML 2013 Table 2 (SVM, S3VM-light, CCCP, S3VM-path; unlabeled and test error), Figure 5
(objective J(f, y^) at C* = C of the three S3VM solvers) and the path-vs-S3VM-light timing.

Protocol (ICML 2013 Sec. 6), with the choices the paper leaves open written here:

* splits: ``data_registry.icml2013_splits`` -- half of the points train, |L| = min(30, 10% of
  the training half), the rest of the half unlabeled; a validation set of |L| points from the
  other half, the rest of that half is the test set; 10 splits;
* features scaled to [-1, 1] per feature over the whole data set (as LIBSVM's svm-scale);
  constant features are dropped;
* multi-class sets made binary: classes with code >= ceil(K/2) (the upper half of the class
  list) against the rest -- DNA {3} vs {1, 2}, vehicle {bus, van} vs {opel, saab}, segment
  {5, 6, 7} vs {1..4}, uspst digits 5-9 vs 0-4 (the paper does not say how it did this);
* Gaussian kernel ``exp(-gamma ||x - z||^2)`` (the paper prints ``||x - z||`` without the square;
  its gamma grid 1/(4d)..4/d is LIBSVM's squared-distance convention), sigma = 1/sqrt(2 gamma);
* model selection by validation error over C in {1, 10, 100, 1000} x gamma in {1/(4d), 1/(2d),
  1/d, 2/d, 4/d} and C*: CCCP C* in {C/8, C/4, C/2, C}; S3VM-light C* among its 10 annealing
  steps {2^-9 C, ..., C}; S3VM-path the C* in [0, C] that exactly minimizes the validation error.
  Ties: the first (C, gamma) in grid order; within one (C, gamma), the largest C*;
* solvers: SVM = scikit-learn ``SVC`` (hinge loss, free bias) on the labeled points;
  S3VM-light = ``s3vm_light`` with ``loss="l1"`` (JMLR 2008 Alg. 1 with the hinge, Joachims'
  TSVM as the paper ran it in SVMlight; balance = fraction of positive labeled points) with
  ``anneal_start = 2^-9, anneal_factor = 2``; the same with the squared hinge (``loss="l2"``,
  the JMLR 2008 S3VM-light) is reported beside it as "S3VM-light l2", with no paper value;
  CCCP = ``cccp`` with ``anneal=False`` and ``r_tilde = r``, the labeled fraction (Collobert et
  al. 2006 as JMLR 2008 Alg. 4: squared hinge; the mean output fixed, b = 2r - 1 as Sec. 2 says
  S3VMs do, one solve, no search; extra method ``cccp_b``); S3VM-path = ``s3vm_path`` (hinge
  loss, b = 2r - 1). The paper's CCCP is a hinge-loss implementation; ours is the JMLR 2008 one.
  ``cccp`` with its dichotomic search on r~, which moves the bias until exactly round(u r)
  unlabeled outputs are positive (a count constraint the paper's CCCP does not have), is stored
  with every split and shown beside it as "CCCP searched", with no paper value;

Figure 5: gamma = 1/d, C = C* in {1, 10, 100, 1000}: the labels y^ each solver ends with at C*
= C are scored by J(f*_y^, y^) of eq. (1) (the conditionally optimal solution for those labels
with b = 2r - 1, ``solvers.s3vm_path.conditional_optimum``). A split's record holds those of the
path, the squared-hinge S3VM-light and the count-searched CCCP (:func:`run_split`); those of the
judged S3VM-light and CCCP (``light_l1``, ``cccp_b``) come from a line of their own
(:func:`run_fig5`, ``"extra": "fig5"``), like the extra methods.

Timing: for every (C, gamma) cell, seconds of the entire path and of S3VM-light (l2) with its 10
annealing steps, measured in the same process one after the other. Each stored line records
``path_code``, the first 12 hex digits of the SHA-256 of the S3VM-path source that ran it
(``solvers/s3vm_path.py`` and the parts of the path it imports, :data:`PATH_MODULES`; lines
without it predate the field), and the report gives the time ratio per code version, so
timings of different implementations are never pooled.

Results go to a JSON-lines file (``reports/icml2013/cells.jsonl``), one line per (data set,
split); lines already there are not recomputed, so an interrupted run resumes. A method added
after a split was stored (``EXTRA_METHODS``: the hinge S3VM-light, the fixed-bias CCCP) is run alone for that split
and stored as a line of its own (``"extra"``), which :func:`load_cells` merges into the split's. The table is one
of ``s3vm-bench reproduce``'s (``s3vm-bench reproduce icml2013-table2 [--quick] [--splits N]
[--datasets dna ...]``): its cells are not grid cells of :mod:`harness.grid` because one cell
runs every method over the whole model-selection grid and times the path against S3VM-light in
the same process. The paper's values come from ``reports/targets/icml2013-table2.csv``.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
import traceback
from functools import lru_cache
from pathlib import Path

import numpy as np

from ._atomic import append_line, atomic_write, read_lines
from .paths import SHIPPED_REPORTS

#: Column labels of the methods in reports/targets/icml2013-table2.csv (the paper's values).
METHOD_LABELS = {"svm": "SVM", "light_l1": "S3VM-light", "light": "S3VM-light l2", "cccp_b": "CCCP",
                 "cccp": "CCCP searched",
                 "path": "S3VM-path"}
KEY = "icml2013-table2"
TITLE = "SVM, S3VM-light, CCCP and S3VM-path: unlabeled and test error (%) with model selection"
CELLS_FILE = SHIPPED_REPORTS / "icml2013" / "cells.jsonl"

#: Paper ID -> (catalog name, paper's name and size, note on the stand-in).
DATASETS = {
    "D1": ("breast-cancer-wdbc", "Breast Cancer 569 x 30", "same size (WDBC, scikit-learn copy)"),
    "D2": ("digit1", "Digit1 1500 x 241", "SSL-book set 1"),
    "D3": ("dna", "DNA 2000 x 180", "LIBSVM dna.scale train part; binary {3} vs {1,2}"),
    "D4": ("fourclass", "Four Class 862 x 2",
           "LIBSVM fourclass_scale; the paper does not say whether it used that file or the unscaled fourclass"),
    "D5": ("ionosphere", "Ionosphere 351 x 33", "same"),
    "D6": ("segment", "Segment 2310 x 19", "binary {5,6,7} vs {1..4}"),
    "D7": ("uspst", "USPS 9298 x 256", "STAND-IN: uspst (2007 x 256, the USPS test part); digits 5-9 vs 0-4"),
    "D8": ("splice", "Splice 1000 x 60", "same (LIBSVM training part)"),
    "D9": ("svmguide1", "SVM Guide 300 x 10",
           "STAND-IN: svmguide1 train (3089 x 4). The paper's 300 x 10 is the size of LIBSVM's svmguide4 training "
           "part (6 classes; 300 training, 312 test points; 10 features), which we do not hold; the paper does not "
           "say how it made it binary"),
    "D10": ("vehicle", "Vehicle 864 x 18", "LIBSVM vehicle 846 x 18; binary {bus, van} vs {opel, saab}"),
}
#: Methods run together by :func:`run_split` (the path and S3VM-light l2 timed in one process).
METHODS = ("svm", "light", "cccp", "path")
#: Methods run apart by :func:`run_extra`, one stored line each, so that adding one does not
#: rerun the stored splits.
EXTRA_METHODS = ("light_l1", "cccp_b")
#: The solver of each extra method: a stored line counts only if it was run by the solver's current
#: declared result version (:func:`harness.grid.solver_version`, as the grid cache keys cells),
#: else it is run again.
EXTRA_MODULES = {"light_l1": "s3vm_light", "cccp_b": "cccp"}
#: Figure 5's objectives of the path and the judged S3VM-light and CCCP (:func:`run_fig5`), one line per split
#: added to the split's Figure 5 rows; current only if every solver's declared version is.
FIG5_EXTRA = "fig5"
FIG5_MODULES = ("s3vm_light", "cccp", "s3vm_path")
#: Report column order.
REPORT_METHODS = ("svm", "light_l1", "light", "cccp_b", "cccp", "path")
C_GRID = (1.0, 10.0, 100.0, 1000.0)
GAMMA_FACTORS = (0.25, 0.5, 1.0, 2.0, 4.0)


def catalog_names() -> list[str]:
    """The catalog names of the table's data sets (what ``reproduce --datasets`` takes)."""
    return [v[0] for v in DATASETS.values()]


def load_binary(name):
    """The data set as dense X scaled to [-1, 1] per feature and binary 0/1 labels."""
    from s3vm_bench.data_registry import load_dataset

    ds = load_dataset(name)
    X = ds.X.toarray() if hasattr(ds.X, "toarray") else np.asarray(ds.X, dtype=float)
    lo, hi = X.min(axis=0), X.max(axis=0)
    keep = hi > lo
    X = 2.0 * (X[:, keep] - lo[keep]) / (hi[keep] - lo[keep]) - 1.0
    k = ds.n_classes
    y = ds.y if k == 2 else (ds.y >= math.ceil(k / 2)).astype(np.int64)
    return ds, X, y


def _err(pred_pos, truth01):
    return float(np.mean(pred_pos.astype(int) != truth01))


def _split_data(pid, index):
    """(name, X, y, split, X_train, y_train) of split ``index`` of data set ``pid``: the training
    set is the labeled then the unlabeled points, ``-1`` marking the unlabeled ones."""
    from s3vm_bench.data_registry import icml2013_splits

    name = DATASETS[pid][0]
    ds, X, y = load_binary(name)
    sp = icml2013_splits(ds, index + 1)[index]
    Xtr = np.vstack([X[sp.labeled], X[sp.unlabeled]])
    ytr = np.r_[y[sp.labeled], np.full(sp.unlabeled.size, -1)]
    return name, X, y, sp, Xtr, ytr


def run_split(pid, index):
    """Every method over the whole grid on one split; returns a JSON-able dict."""
    from sklearn.svm import SVC

    from s3vm_bench.solvers.s3vm_light import S3VMLight
    from s3vm_bench.solvers.s3vm_path import S3VMPath

    code = path_code()
    name, X, y, sp, Xtr, ytr = _split_data(pid, index)
    lab, unl, val, test = sp.labeled, sp.unlabeled, sp.validation, sp.test
    n_lab = lab.size
    Xu, Xv, Xt = X[unl], X[val], X[test]
    yu, yv, yt = y[unl], y[val], y[test]
    d = X.shape[1]
    # candidates: method -> list of (val_err, grid_order, -c_star, unl_err, test_err, C, gamma, c_star)
    cand = {m: [] for m in METHODS}
    timing, fig5 = [], []
    y_pm_lab = np.where(y[lab] == 1, 1.0, -1.0)
    for gi, (C, gf) in enumerate((C, gf) for C in C_GRID for gf in GAMMA_FACTORS):
        gamma = gf / d
        sigma = 1.0 / math.sqrt(2.0 * gamma)
        # SVM on the labeled points only.
        svc = SVC(C=C, gamma=gamma).fit(X[lab], y[lab])
        cand["svm"].append((_err(svc.predict(Xv) == 1, yv), gi, 0.0, _err(svc.predict(Xu) == 1, yu),
                            _err(svc.predict(Xt) == 1, yt), C, gamma, 0.0))
        # S3VM-path: the whole path, C* chosen exactly on [0, C].
        t0 = time.perf_counter()
        path = S3VMPath(sigma=sigma, C=C).fit(Xtr, ytr)
        t_path = time.perf_counter() - t0
        c_sel, v_err = path.select_c_star(Xv, yv)
        cand["path"].append((v_err, gi, -c_sel, _err(path.predict(Xu, C_star=c_sel) == 1, yu),
                             _err(path.predict(Xt, C_star=c_sel) == 1, yt), C, gamma, c_sel))
        # S3VM-light, 10 annealing steps 2^-9 C .. C; C* chosen among the steps.
        t0 = time.perf_counter()
        light = S3VMLight(sigma=sigma, C=C, C_star=C, anneal_start=2.0 ** -9, anneal_factor=2.0).fit(Xtr, ytr)
        t_light = time.perf_counter() - t0
        info = light.binary_fits_[0].info
        sched = info["anneal_schedule"]
        cand["light"] += _light_candidates(light, gi, C, gamma, Xu, Xv, Xt, yu, yv, yt)
        timing.append({"C": C, "gamma": gamma, "path_s": t_path, "light_s": t_light,
                       "path_events": int(path.paths_[0].n_events), "path_jumps": int(path.paths_[0].n_jumps),
                       "light_steps": int(sched.size)})
        # CCCP (no annealing) at C* in {C/8, C/4, C/2, C}, with its dichotomic search on r~.
        rows, est = _cccp_candidates(Xtr, ytr, sigma, C, gi, gamma, Xu, Xv, Xt, yu, yv, yt)
        cand["cccp"] += rows
        if gf == 1.0:
            # Figure 5: J(f*_y^, y^) (eq. 1) at C* = C for the labels each solver ends with.
            fig5.append({"C": C} | _fig5_objectives(path, Xtr, y_pm_lab, C, {
                "path": path.assigned_labels_[0], "light": info["y_unlabeled"],
                "cccp": np.where(est.decision_function(Xu) > 0, 1.0, -1.0)}))
    best = {m: _select(rows) for m, rows in cand.items()}
    return {"id": pid, "dataset": name, "split": index, "n_train": int(Xtr.shape[0]), "n_lab": int(n_lab),
            "best": best, "timing": timing, "fig5": fig5, "path_code": code}


def _fig5_objectives(path, Xtr, y_lab, C, labelings) -> dict:
    """Figure 5's J(f*_y^, y^) (eq. 1) at C* = C of each labeling of the unlabeled points.

    ``path`` is an :class:`solvers.s3vm_path.S3VMPath` at this C and gamma (fitted or not: only
    its kernel is used); the labeled points come first in ``Xtr``, with the +-1 labels ``y_lab``.
    f*_y^ is the conditionally optimal solution for y^ with the path's centred kernel and b =
    2r - 1 (``solvers.s3vm_path.conditional_optimum``), r the labeled fraction of positives.
    """
    from s3vm_bench.solvers.numerics import KernelCentering
    from s3vm_bench.solvers.s3vm_path import conditional_optimum, hinge_objective

    lab_mask = np.r_[np.ones(y_lab.size, bool), np.zeros(Xtr.shape[0] - y_lab.size, bool)]
    K0 = path._kernel(Xtr)
    K = KernelCentering.fit(K0, np.flatnonzero(~lab_mask)).center_train(K0)  # the path's kernel
    cost = np.full(Xtr.shape[0], C)
    b = 2.0 * float(np.mean(y_lab > 0)) - 1.0
    out = {}
    for name, yhat in labelings.items():
        yfull = np.r_[y_lab, np.asarray(yhat, dtype=float)]
        theta, _, _, _ = conditional_optimum(K, yfull, cost, b, ~lab_mask)
        out[name] = hinge_objective(K, yfull * theta, b, yfull, cost)
    return out


def run_fig5(pid, index):
    """Figure 5's objectives of the path and the judged S3VM-light and CCCP on one split; a JSON-able line.

    The labels S3VM-path, S3VM-light with the hinge (``light_l1``, 10 annealing steps 2^-9 C .. C,
    its last step) and CCCP with the mean output fixed (``cccp_b``, no annealing) end with at C* =
    C, gamma = 1/d, for every C of the grid, scored as in :func:`run_split` (whose Figure 5 rows
    also hold the squared-hinge / count-searched ones). The path is scored again here so that the
    line's values all come from the code its ``code`` names. Stored as an ``"extra": "fig5"``
    line; :func:`load_cells` puts its values into the split's Figure 5 rows.
    """
    from s3vm_bench.solvers.cccp import CCCP
    from s3vm_bench.solvers.s3vm_light import S3VMLight
    from s3vm_bench.solvers.s3vm_path import S3VMPath

    name, X, y, sp, Xtr, ytr = _split_data(pid, index)
    y_lab = np.where(y[sp.labeled] == 1, 1.0, -1.0)
    r = float(np.mean(y_lab > 0))
    sigma = 1.0 / math.sqrt(2.0 / X.shape[1])  # gamma = 1/d
    rows, t0 = [], time.perf_counter()
    for C in C_GRID:
        light = S3VMLight(sigma=sigma, C=C, C_star=C, loss="l1", anneal_start=2.0 ** -9,
                          anneal_factor=2.0).fit(Xtr, ytr)
        cccp = CCCP(sigma=sigma, C=C, C_star=C, anneal=False, r=r, r_tilde=r).fit(Xtr, ytr)
        path = S3VMPath(sigma=sigma, C=C).fit(Xtr, ytr)
        rows.append({"C": C} | _fig5_objectives(path, Xtr, y_lab, C, {
            "path": path.assigned_labels_[0], "light_l1": light.binary_fits_[0].info["y_unlabeled"],
            "cccp_b": np.where(cccp.decision_function(X[sp.unlabeled]) > 0, 1.0, -1.0)}))
    return {"id": pid, "dataset": name, "split": index, "extra": FIG5_EXTRA, "fig5": rows,
            "fit_seconds": time.perf_counter() - t0, "version": {m: _solver_version(m) for m in FIG5_MODULES}}


def _light_candidates(light, gi, C, gamma, Xu, Xv, Xt, yu, yv, yt):
    """(val_err, grid order, -C*, unl_err, test_err, C, gamma, C*) at each annealing step of a fit."""
    info = light.binary_fits_[0].info
    out = []
    for k, c_k in enumerate(info["anneal_schedule"]):
        coef, b0 = info["stage_coef"][k], info["stage_intercept"][k]

        def f(Z):
            return light._kernel(Z, light.X_fit_) @ coef + b0

        out.append((_err(f(Xv) > 0, yv), gi, -c_k, _err(f(Xu) > 0, yu), _err(f(Xt) > 0, yt), C, gamma, float(c_k)))
    return out


def _cccp_candidates(Xtr, ytr, sigma, C, gi, gamma, Xu, Xv, Xt, yu, yv, yt, r_tilde=None):
    """Candidate rows of CCCP without annealing at C* in {C/8, C/4, C/2, C}, and its fit at C* = C.

    ``r_tilde=None``: the dichotomic search on r~ (``cccp``); a number fixes the mean output, b =
    2 r_tilde - 1, one solve per fit (``cccp_b``).
    """
    from s3vm_bench.solvers.cccp import CCCP

    rows = []
    for frac in (0.125, 0.25, 0.5, 1.0):
        est = CCCP(sigma=sigma, C=C, C_star=C * frac, anneal=False, r=r_tilde, r_tilde=r_tilde).fit(Xtr, ytr)
        rows.append((_err(est.predict(Xv) == 1, yv), gi, -C * frac, _err(est.predict(Xu) == 1, yu),
                     _err(est.predict(Xt) == 1, yt), C, gamma, C * frac))
    return rows, est


def _select(rows):
    """The model-selection rule: smallest validation error, then grid order, then largest C*."""
    v = min(rows, key=lambda t: (t[0], t[1], t[2]))
    return {"val_err": v[0], "unl_err": v[3], "test_err": v[4], "C": v[5], "gamma": v[6], "c_star": v[7]}


def run_extra(pid, index, method="light_l1"):
    """One of ``EXTRA_METHODS`` over the whole grid on one split; a JSON-able line of its own.

    ``light_l1``: S3VM-light with the hinge loss (``loss="l1"``), C* chosen among its 10 annealing
    steps as for the squared-hinge one in :func:`run_split`.
    ``cccp_b``: CCCP without annealing at C* in {C/8, C/4, C/2, C}, its mean output fixed at the
    labeled fraction r (``r_tilde = r``: b = 2r - 1, one solve per fit, no dichotomic search).
    """
    from s3vm_bench.solvers.s3vm_light import S3VMLight

    if method not in EXTRA_METHODS:
        raise ValueError(f"unknown extra method {method!r}; expected one of {EXTRA_METHODS}")
    name, X, y, sp, Xtr, ytr = _split_data(pid, index)
    lab, unl, val, test = sp.labeled, sp.unlabeled, sp.validation, sp.test
    Xu, Xv, Xt, yu, yv, yt = X[unl], X[val], X[test], y[unl], y[val], y[test]
    r = float(np.mean(y[lab] == 1))
    d = X.shape[1]
    cand, seconds = [], 0.0
    for gi, (C, gf) in enumerate((C, gf) for C in C_GRID for gf in GAMMA_FACTORS):
        gamma = gf / d
        sigma = 1.0 / math.sqrt(2.0 * gamma)
        t0 = time.perf_counter()
        if method == "light_l1":
            light = S3VMLight(sigma=sigma, C=C, C_star=C, loss="l1", anneal_start=2.0 ** -9,
                              anneal_factor=2.0).fit(Xtr, ytr)
            seconds += time.perf_counter() - t0
            cand += _light_candidates(light, gi, C, gamma, Xu, Xv, Xt, yu, yv, yt)
            continue
        cand += _cccp_candidates(Xtr, ytr, sigma, C, gi, gamma, Xu, Xv, Xt, yu, yv, yt, r_tilde=r)[0]
        seconds += time.perf_counter() - t0
    return {"id": pid, "dataset": name, "split": index, "extra": method, "best": {method: _select(cand)},
            "fit_seconds": seconds, "version": _solver_version(EXTRA_MODULES[method])}


_PATH_CODE = {}

#: The modules of the S3VM-path source that :func:`path_code` hashes: the estimator and the
#: path, its active-set re-solve and its linear algebra.
PATH_MODULES = ("s3vm_path", "_path", "_path_qp", "_path_linalg")


@lru_cache(maxsize=None)
def _source_code(module: str) -> str:
    """Short SHA-256 of ``solvers/<module>.py``, stored beside the results it produced.

    Hashed once per process, like :func:`path_code`: the source of the code this process runs.
    """
    import importlib

    mod = importlib.import_module(f"s3vm_bench.solvers.{module}")
    return hashlib.sha256(Path(mod.__file__).read_bytes()).hexdigest()[:12]


@lru_cache(maxsize=None)
def _solver_version(solver: str) -> str:
    """Short SHA-256 of the declared result versions of registered solver ``solver``
    (:func:`harness.grid.solver_version`): what an extra method's stored line is valid for."""
    from .grid import solver_version

    return hashlib.sha256(json.dumps(solver_version(solver), sort_keys=True).encode()).hexdigest()[:12]


def path_code() -> str:
    """Short SHA-256 of the S3VM-path source (the files of :data:`PATH_MODULES`), stored with each
    cell's timing.

    Hashed once, when the module is first imported in this process, so that an edit of the files
    during a long run does not relabel cells computed with the code loaded before it.
    """
    if not _PATH_CODE:
        import importlib

        h = hashlib.sha256()
        for module in PATH_MODULES:
            h.update(Path(importlib.import_module(f"s3vm_bench.solvers.{module}").__file__).read_bytes())
        _PATH_CODE["sha"] = h.hexdigest()[:12]
    return _PATH_CODE["sha"]


def _worker(pid, index, extra=None):
    from threadpoolctl import threadpool_limits

    t0 = time.perf_counter()
    try:
        # One BLAS thread per cell: the path and S3VM-light are timed under the same limit, and
        # on a shared 2-core machine two OpenBLAS threads spinning against other processes made
        # a cell 16x slower (D5 split 0: 49.8 s against 3.0 s with one thread, load 5).
        with threadpool_limits(limits=1):
            res = run_split(pid, index) if extra is None else run_fig5(pid, index) if extra == FIG5_EXTRA \
                else run_extra(pid, index, extra)
        res["seconds"] = time.perf_counter() - t0
        return res
    except Exception:  # recorded, never written as a result
        return {"id": pid, "split": index, "error": traceback.format_exc()} | ({"extra": extra} if extra else {})


def load_cells(path):
    """``{(id, split): record}`` of the stored splits, each extra method's line merged into ``best``.

    Failed lines are skipped, and so are extra lines run by another version of their solver's
    source than the current one (``EXTRA_MODULES``, ``FIG5_MODULES``); an extra line whose split
    has no stored record is not a split of its own. A Figure 5 line (``"extra": "fig5"``) adds its
    methods' objectives to the split's Figure 5 rows of the same C.
    """
    cells, extras = {}, []
    for line in read_lines(path):  # a line cut short by a killed run is left out: its split runs again
        if line.strip():
            rec = json.loads(line)
            if "error" in rec:
                continue
            if "extra" in rec:
                if _current(rec):
                    extras.append(rec)
            else:
                cells[(rec["id"], rec["split"])] = rec
    for rec in extras:
        base = cells.get((rec["id"], rec["split"]))
        if base is None:
            continue
        if rec["extra"] == FIG5_EXTRA:
            more = {row["C"]: row for row in rec["fig5"]}
            base["fig5"] = [row | {k: v for k, v in more.get(row["C"], {}).items() if k != "C"}
                            for row in base["fig5"]]
        else:
            base["best"] = base["best"] | rec["best"]
    return cells


def _current(rec) -> bool:
    """Whether an extra line ran the current declared versions of its solvers (a method since removed: no)."""
    if rec["extra"] == FIG5_EXTRA:
        versions = rec.get("version")
        return isinstance(versions, dict) and all(versions.get(m) == _solver_version(m) for m in FIG5_MODULES)
    module = EXTRA_MODULES.get(rec["extra"])
    return module is not None and rec.get("version") == _solver_version(module)


def _has(rec, extra) -> bool:
    """Whether a stored split (merged by :func:`load_cells`) has the results of an extra method.

    A split without Figure 5 rows has none to complete (every :func:`run_split` record has one
    per C of the grid).
    """
    if extra == FIG5_EXTRA:
        return all("light_l1" in row and "cccp_b" in row for row in rec["fig5"])
    return extra in rec["best"]


def missing(stored, pids, splits):
    """(id, split, extra) still to run: whole splits (extra None), then extra methods of stored ones."""
    todo = [(pid, i, None) for i in range(splits) for pid in pids if (pid, i) not in stored]
    todo += [(pid, i, m) for m in EXTRA_METHODS + (FIG5_EXTRA,) for i in range(splits) for pid in pids
             if (pid, i) in stored and not _has(stored[(pid, i)], m)]
    return todo


def _column(m: str, j: int) -> str:
    return f"{METHOD_LABELS[m]} {('unlabeled', 'test')[j]}"


def report_cells(cells) -> list:
    """:class:`harness.reproduce.ReportCell` per (data set, method, unlabeled/test) beside the targets.

    Mean and sample sd (in %) over the stored splits of each data set; the verdict rule is
    :mod:`harness.reproduce`'s (within our split-to-split sd of the paper's value).
    """
    from .reproduce import ReportCell, load_targets

    targets = load_targets(KEY)
    out = []
    for pid in DATASETS:
        recs = [c for (p, _), c in sorted(cells.items()) if p == pid]
        for m in REPORT_METHODS:
            for j, key in enumerate(("unl_err", "test_err")):
                col = _column(m, j)
                pv, pt, pu = targets.get((pid, col), (None, "", "%"))
                v = 100 * np.array([r["best"][m][key] for r in recs if m in r["best"]])
                out.append(ReportCell(pid, col, pu or "%", pv, pt, float(v.mean()) if v.size else None,
                                      float(v.std(ddof=1)) if v.size > 1 else None, int(v.size), 0))
    return out


def report(cells, out=None):
    """Markdown table: reproduced mean (sd) beside the paper's, per data set and method."""
    from .reproduce import load_targets, table_verdict

    targets = load_targets(KEY)
    n = [f"{pid} {k}" for pid in DATASETS if (k := sum(1 for (p, _) in cells if p == pid))]
    lines = ["# icml2013-table2: ICML 2013 Table 2 (regenerated) -- unlabeled / test error %, mean (sd) over splits",
             "", f"Regenerated by `s3vm-bench reproduce {KEY}` (harness/icml2013.py; protocol choices in its "
             f"docstring); splits with results: {', '.join(n) or 'none'}. "
             "Paper values in brackets.", "",
             f"**Verdict:** {table_verdict(report_cells(cells))}", "",
             "| ID | data | splits | " + " | ".join(f"{m} unl | {m} test" for m in REPORT_METHODS) + " |",
             "|---|---|---|" + "---|---|" * len(REPORT_METHODS)]
    ratios, fig = {}, {}
    for pid in DATASETS:
        recs = [c for (p, _), c in sorted(cells.items()) if p == pid]
        if not recs:
            continue
        cols = []
        for m in REPORT_METHODS:
            for j, key in enumerate(("unl_err", "test_err")):
                v = 100 * np.array([r["best"][m][key] for r in recs if m in r["best"]])
                pm = targets.get((pid, _column(m, j)))
                got = (f"{v.mean():.2f} ({v.std(ddof=1) if v.size > 1 else 0:.2f})"
                       + (f" n={v.size}" if v.size != len(recs) else "")) if v.size else "not run"
                cols.append(got + (f" [{pm[0]:.2f}]" if pm else ""))
        lines.append(f"| {pid} | {DATASETS[pid][0]} | {len(recs)} | " + " | ".join(cols) + " |")
        for r in recs:
            per = ratios.setdefault(r.get("path_code", "(before the field)"), {}).setdefault(pid, [])
            per += [t["path_s"] / t["light_s"] for t in r["timing"]]
            for row in r["fig5"]:
                fig.setdefault((pid, row["C"]), []).append(row)
    lines += ["", "Stand-ins: " + "; ".join(f"{k} {v[0]} ({v[2]})" for k, v in DATASETS.items()), ""]
    for code, per in ratios.items():
        allr = [x for v in per.values() for x in v]
        q = np.percentile(allr, [25, 50, 75])
        lines += [f"Time of the entire path / S3VM-light l2 with 10 annealing steps (s3vm_path.py {code}), over "
                  f"{len(allr)} (data set, split, C, gamma) cells measured in one process: median {q[1]:.2f} "
                  f"(quartiles {q[0]:.2f}-{q[2]:.2f}); per data set: "
                  + ", ".join(f"{pid} {np.median(v):.2f}" for pid, v in per.items()) + ".", ""]
    if fig:
        lines += ["## Figure 5: J(f*, y^) at C* = C, gamma = 1/d (mean over splits; lower is better)", "",
                  "S3VM-light and CCCP are Table 2's judged columns (hinge; mean output fixed); 'path best' counts "
                  "the splits where the path's J is the lowest of the three. The squared-hinge S3VM-light and the "
                  "count-searched CCCP are beside them.", "",
                  "| ID | C | S3VM-path | S3VM-light | CCCP | path best | S3VM-light l2 | CCCP searched |",
                  "|---|---|---|---|---|---|---|---|"]
        for (pid, C), rows in fig.items():
            m = {k: f"{np.mean([r[k] for r in rows]):.4g}" if all(k in r for r in rows) else "not run"
                 for k in ("path", "light_l1", "cccp_b", "light", "cccp")}
            wins = f"{sum(r['path'] <= min(r['light_l1'], r['cccp_b']) * (1 + 1e-9) for r in rows)}/{len(rows)}" \
                if all("light_l1" in r and "cccp_b" in r for r in rows) else "not run"
            lines.append(f"| {pid} | {C:g} | {m['path']} | {m['light_l1']} | {m['cccp_b']} | {wins} | "
                         f"{m['light']} | {m['cccp']} |")
    text = "\n".join(lines) + "\n"
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(str(out) + ".tmp")
        tmp.write_text(text)
        os.replace(tmp, out)
    return text


def run_missing(todo, out, jobs=1, echo=print) -> int:
    """Run ``todo`` (from :func:`missing`: (data set ID, split, extra method or None)), appending one
    line each to ``out``; returns the number of failures.

    A failed cell is written with its traceback (``"error"``) and never read back as a result, so
    a rerun retries it.
    """
    if not todo:
        return 0
    from joblib import Parallel, delayed

    Path(out).parent.mkdir(parents=True, exist_ok=True)
    failures = 0
    gen = Parallel(n_jobs=jobs, return_as="generator_unordered")(delayed(_worker)(*c) for c in todo)
    for res in gen:
        append_line(out, json.dumps(res))  # one whole line per cell: a crash loses at most the running cells
        failures += "error" in res
        status = "FAILED" if "error" in res else f"{res['seconds']:.0f} s"
        echo(f"{res['id']} split {res['split']}{' ' + res['extra'] if res.get('extra') else ''}: {status}")
    return failures


def reproduce_table(*, quick=False, n_splits=None, datasets=None, n_jobs=1, reports_dir=None, cells_file=None,
                    run=True, echo=print):
    """``s3vm-bench reproduce icml2013-table2``: run the missing cells, write the report, return its cells.

    Parameters
    ----------
    quick : bool
        2 splits instead of 10.
    n_splits : int, optional
        Run at most the first ``n_splits`` splits (the report reads every stored split).
    datasets : iterable of str, optional
        Catalog names (``dna``, ``segment``, ...) of the rows to run; the others are only read.
    n_jobs : int
        joblib workers (-1: all cores); each cell times the path and S3VM-light one after the other
        in its own process.
    reports_dir, cells_file : path, optional
        Where ``icml2013-table2.md`` / ``.csv`` go (default ``reports/``) and the cell store
        (default ``<reports_dir>/icml2013/cells.jsonl``).
    run : bool
        False: run nothing, write the report from the stored cells.

    Returns
    -------
    cells : list of harness.reproduce.ReportCell
    meta : dict
        ``splits`` (largest number of splits of a data set), ``n_failed``, ``seconds``.
    """
    from .paths import work_dir
    from .reproduce import write_cells_csv

    t0 = time.perf_counter()
    reports_dir = Path(reports_dir or work_dir().reports)
    cells_file = Path(cells_file or reports_dir / "icml2013" / "cells.jsonl")
    # A new store starts from the shipped cells, as the grid tables from the shipped rows: read
    # from there, and copied before the first cell is added.
    shipped = not cells_file.exists() and CELLS_FILE.exists()
    by_name = {v[0]: pid for pid, v in DATASETS.items()}
    if datasets is not None:
        unknown = sorted(set(datasets) - set(by_name))
        if unknown:
            raise ValueError(f"--datasets {' '.join(unknown)}: not a row of {KEY}; its data sets are "
                             f"{', '.join(sorted(by_name))}")
    pids = [by_name[d] for d in datasets] if datasets is not None else list(DATASETS)
    splits = 2 if quick else 10
    if n_splits is not None:
        splits = min(splits, n_splits)
    stored = load_cells(CELLS_FILE if shipped else cells_file)
    todo = missing(stored, pids, splits)
    echo(f"{KEY}: {len(todo)} cells to run ({len(stored)} stored)")
    if run and todo and shipped:
        atomic_write(cells_file, CELLS_FILE.read_bytes())
        shipped = False
    failed = run_missing(todo, cells_file, n_jobs, echo) if run else 0
    stored = load_cells(CELLS_FILE if shipped else cells_file)
    # The extras of the splits just run (not those that failed in this pass: they wait for a rerun).
    if run and (more := [t for t in missing(stored, pids, splits) if t[2] is not None and t not in todo]):
        failed += run_missing(more, cells_file, n_jobs, echo)
        stored = load_cells(cells_file)
    report(stored, reports_dir / f"{KEY}.md")
    cells = report_cells(stored)
    write_cells_csv(reports_dir / f"{KEY}.csv", cells)
    n = max((len([1 for (p, _) in stored if p == pid]) for pid in DATASETS), default=0)
    return cells, {"splits": n, "n_failed": failed, "seconds": time.perf_counter() - t0,
                   "n_run": len(todo) if run else 0}
