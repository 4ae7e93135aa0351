"""ICML 2013 Table 2 (SVM, S3VM-light, CCCP, S3VM-path; unlabeled and test error), Figure 5
(objective J(f, y^) at C* = C of the three S3VM solvers) and the path-vs-S3VM-light timing.

Protocol (ICML 2013 Sec. 6), with the choices the paper leaves open: :data:`PROTOCOL_CHOICES`
(splits, feature scaling, binary groupings, kernel, model-selection grid and ties, solvers), which
the report prints under "Protocol and choices".

Figure 5: gamma = 1/d, C = C* in {1, 10, 100, 1000}: the labels y^ each solver ends with at C*
= C are scored by J(f*_y^, y^) of eq. (1) (the conditionally optimal solution for those labels
with b = 2r - 1, ``solvers.s3vm_path.conditional_optimum``). A split's record holds those of the
path, the squared-hinge S3VM-light and the count-searched CCCP (:func:`run_split`); those of the
judged S3VM-light and CCCP (``light_l1``, ``cccp_b``) come from :func:`run_fig5`, which
:func:`run_cell` adds to the same rows.

Timing: for every (C, gamma) cell, seconds of the entire path and of S3VM-light (l2) with its 10
annealing steps, measured in the same process one after the other. Each record carries
``path_code``, the first 12 hex digits of the SHA-256 of the S3VM-path source that ran it
(``solvers/s3vm_path.py`` and the parts of the path it imports, :data:`PATH_MODULES`; records
without it predate the field): provenance, not part of the cell's key. The report gives the time
ratio per code version, so timings of different implementations are never pooled.

One (data set, split) is one cell of the grid (:mod:`harness.grid`, protocol
``"icml2013-table2"`` of :mod:`harness.protocols`, spec ``icml2013-table2`` of
:mod:`harness.specs`): :func:`run_cell` runs every method over the whole model-selection grid on
the split, times the path against S3VM-light in the same process, and returns one record; the
protocol stores it in the cell's row (:func:`record_fields`), keyed by the declared result
versions of this module, of the solvers it runs and of the data modules, never by their code.
The report (:mod:`harness.icml2013_report`) reads the records back from the rows
(:func:`parse_details`). The paper's values come from ``reports/targets/icml2013-table2.csv``.

Runs the computation only (data, splits, solvers, model selection): nothing here reads or
writes a store, so this module's closure of imports -- what its declared version stands for --
is the computation's.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from pathlib import Path

import numpy as np

#: Declared result version of ICML 2013 Table 2's cells (:func:`harness.grid.cell_key`): bumped by
#: whoever changes what :func:`run_cell` returns for the same split (the protocol's choices,
#: :data:`PROTOCOL_CHOICES`, the grid, the selection rule), not by a refactor.
RESULT_VERSION = 1

#: Column labels of the methods in reports/targets/icml2013-table2.csv (the paper's values).
METHOD_LABELS = {"svm": "SVM", "light_l1": "S3VM-light", "light": "S3VM-light l2", "cccp_b": "CCCP",
                 "cccp": "CCCP searched",
                 "path": "S3VM-path"}
KEY = "icml2013-table2"

#: ICML 2013 Sec. 6's protocol with the choices the paper leaves open, one sentence each; the spec's
#: notes (:mod:`harness.specs`), printed under "Protocol and choices" in the report.
PROTOCOL_CHOICES = (
    "Splits (data_registry.icml2013_splits): half of the points train, |L| = min(30, 10% of the training "
    "half), the rest of that half unlabeled; a validation set of |L| points from the other half, the rest of "
    "that half is the test set; 10 splits.",
    "Features scaled to [-1, 1] per feature over the whole data set (as LIBSVM's svm-scale); constant features "
    "are dropped.",
    "Multi-class sets made binary: classes with code >= ceil(K/2) (the upper half of the class list) against "
    "the rest -- DNA {3} vs {1, 2}, vehicle {bus, van} vs {opel, saab}, segment {5, 6, 7} vs {1..4}, uspst "
    "digits 5-9 vs 0-4 (the paper does not say how it did this).",
    "Gaussian kernel exp(-gamma ||x - z||^2) (the paper prints ||x - z|| without the square; its gamma grid "
    "1/(4d)..4/d is LIBSVM's squared-distance convention), sigma = 1/sqrt(2 gamma).",
    "Model selection by validation error over C in {1, 10, 100, 1000} x gamma in {1/(4d), 1/(2d), 1/d, 2/d, "
    "4/d} and C*: CCCP C* in {C/8, C/4, C/2, C}; S3VM-light C* among its 10 annealing steps {2^-9 C, ..., C}; "
    "S3VM-path the C* in [0, C] that exactly minimizes the validation error. Ties: the first (C, gamma) in "
    "grid order; within one (C, gamma), the largest C*.",
    "SVM = scikit-learn SVC (hinge loss, free bias) on the labeled points.",
    "S3VM-light = s3vm_light with loss='l1' (JMLR 2008 Alg. 1 with the hinge, standing in for Joachims' TSVM "
    "in SVMlight, which the paper ran; balance = the fraction of positive labeled points), anneal_start = "
    "2^-9, anneal_factor = 2. The same with the squared hinge (loss='l2', the JMLR 2008 S3VM-light) is shown "
    "beside it as 'S3VM-light l2', with no paper value.",
    "CCCP = cccp with anneal=False and r_tilde = r, the labeled fraction (Collobert et al. 2006 as JMLR 2008 "
    "Alg. 4, squared hinge; the mean output fixed, b = 2r - 1 as Sec. 2 says S3VMs do; one solve, no search; "
    "column cccp_b). The paper's CCCP is a hinge-loss implementation; ours is the JMLR 2008 one. cccp with "
    "its dichotomic search on r~, which moves the bias until exactly round(u r) unlabeled outputs are "
    "positive (a count constraint the paper's CCCP does not have), is shown beside it as 'CCCP searched', "
    "with no paper value.",
    "S3VM-path = s3vm_path (hinge loss, b = 2r - 1).",
)
TITLE = "SVM, S3VM-light, CCCP and S3VM-path: unlabeled and test error (%) with model selection"

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
#: Methods run apart by :func:`run_extra` (each alone over the grid) and added to the record by
#: :func:`run_cell`.
EXTRA_METHODS = ("light_l1", "cccp_b")
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
    return {"id": pid, "dataset": name, "split": index, "split_seed": sp.seed, "n_train": int(Xtr.shape[0]),
            "n_lab": int(n_lab), "best": best, "timing": timing, "fig5": fig5, "path_code": code}


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
    K0 = path.kernel_matrix(Xtr)
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
    """Figure 5's objectives of the path and the judged S3VM-light and CCCP on one split; a JSON-able dict.

    The labels S3VM-path, S3VM-light with the hinge (``light_l1``, 10 annealing steps 2^-9 C .. C,
    its last step) and CCCP with the mean output fixed (``cccp_b``, no annealing) end with at C* =
    C, gamma = 1/d, for every C of the grid, scored as in :func:`run_split` (whose Figure 5 rows
    also hold the squared-hinge / count-searched ones). The path is scored again here, as it was
    when these values were a run of their own; :func:`run_cell` adds the judged solvers' values
    to the split's Figure 5 rows of the same C.
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
    return {"id": pid, "dataset": name, "split": index, "fig5": rows, "fit_seconds": time.perf_counter() - t0}


def _light_candidates(light, gi, C, gamma, Xu, Xv, Xt, yu, yv, yt):
    """(val_err, grid order, -C*, unl_err, test_err, C, gamma, C*) at each annealing step of a fit."""
    info = light.binary_fits_[0].info
    out = []
    for k, c_k in enumerate(info["anneal_schedule"]):
        coef, b0 = info["stage_coef"][k], info["stage_intercept"][k]

        def f(Z):
            return light.kernel_matrix(Z, light.X_fit_) @ coef + b0

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
    """One of ``EXTRA_METHODS`` over the whole grid on one split; a JSON-able dict.

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
    return {"id": pid, "dataset": name, "split": index, "best": {method: _select(cand)}, "fit_seconds": seconds}


_PATH_CODE = {}

#: The modules of the S3VM-path source that :func:`path_code` hashes: the estimator and the
#: path, its active-set re-solve and its linear algebra.
PATH_MODULES = ("s3vm_path", "_path", "_path_qp", "_path_linalg")


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


def pid_of(dataset: str) -> str:
    """The paper's ID (``D1`` .. ``D10``) of the catalog data set ``dataset``; ValueError for another name."""
    for pid, v in DATASETS.items():
        if v[0] == dataset:
            return pid
    raise ValueError(f"{dataset!r} is not a data set of {KEY}; its data sets are {', '.join(catalog_names())}")


def run_cell(pid, index) -> dict:
    """One cell of ICML 2013 Table 2: every method, the timing and Figure 5 on split ``index``.

    :func:`run_split` (SVM, S3VM-light l2, count-searched CCCP and the path over the grid, the
    path timed against S3VM-light l2, Figure 5's objectives of those three), then each of
    :data:`EXTRA_METHODS` by :func:`run_extra` (its selected errors added to ``best``) and
    :func:`run_fig5` (the judged S3VM-light's and CCCP's Figure 5 objectives added to the rows
    of the same C), all with one BLAS thread: the path and S3VM-light are timed under the same
    limit.

    Returns
    -------
    dict
        ``id``, ``dataset``, ``split``, ``split_seed``, ``n_train``, ``n_lab``, ``best`` (method ->
        the selected ``val_err``, ``unl_err``, ``test_err`` (fractions), ``C``, ``gamma``,
        ``c_star``), ``timing`` (one entry per (C, gamma)), ``fig5`` (one row per C),
        ``path_code`` (:func:`path_code`) and ``seconds`` (wall seconds of the whole cell).
    """
    from threadpoolctl import threadpool_limits

    t0 = time.perf_counter()
    # One BLAS thread: on a machine shared with other processes, OpenBLAS threads that spin
    # waiting for a busy core can make a cell an order of magnitude slower.
    with threadpool_limits(limits=1):
        rec = run_split(pid, index)
        for method in EXTRA_METHODS:
            rec["best"] = rec["best"] | run_extra(pid, index, method)["best"]
        more = {row["C"]: row for row in run_fig5(pid, index)["fig5"]}
    rec["fig5"] = [row | {k: v for k, v in more.get(row["C"], {}).items() if k != "C"} for row in rec["fig5"]]
    rec["seconds"] = time.perf_counter() - t0
    return rec


#: What a record of :func:`run_cell` keeps in its row's ``details`` (the rest are row columns), and
#: ``path_code`` where the record has one (records of runs before the field have none).
DETAIL_FIELDS = ("n_train", "n_lab", "best", "timing", "fig5")


def record_fields(rec: dict) -> dict:
    """The row fields of a :func:`run_cell` record (what the protocol returns).

    The row's errors are the S3VM-path's (the cell's solver) at its selected (C, gamma, C*);
    ``details`` holds :data:`DETAIL_FIELDS` and ``path_code`` as JSON text with sorted keys (floats written by
    ``repr``, so they read back exactly), which :func:`parse_details` reads. There is no
    objective (Table 2 reports errors) and the path fixes its bias, b = 2r - 1, rather than the
    count of positive outputs: ``balance_exact`` is False.
    """
    path = rec["best"]["path"]
    return {"split_seed": rec.get("split_seed"), "kernel": "rbf", "sigma": None, "C": None, "C_star": None,
            "r_mode": None, "objective": None, "unlabeled_error": path["unl_err"], "test_error": path["test_err"],
            "fit_seconds": rec["seconds"], "balance_exact": False, "n_binary": 1,
            "details": json.dumps({k: rec[k] for k in DETAIL_FIELDS + ("path_code",) if k in rec}, sort_keys=True,
                                  separators=(",", ":"))}


def parse_details(text: str) -> dict:
    """The :data:`DETAIL_FIELDS` of a row's ``details`` (:func:`record_fields`).

    Raises
    ------
    ValueError
        If ``text`` is not a JSON object with every field, ``best`` holding the S3VM-path.
    """
    try:
        rec = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"details of an {KEY} row are not JSON ({exc})") from None
    if not isinstance(rec, dict) or any(k not in rec for k in DETAIL_FIELDS) or "path" not in rec["best"]:
        raise ValueError(f"details of an {KEY} row lack some of {DETAIL_FIELDS}")
    return rec
