"""Linear transductive SVM on L2-SVM-MFN with multiple switching (SIGIR 2006, Sec. 3.1, Table 4).

Sindhwani & Keerthi, *Large Scale Semi-supervised Linear SVMs*, SIGIR 2006:

* Sec. 3.1.1 / Table 4 -- Joachims' TSVM label-switching scheme with the squared hinge
  (eq. 7), every (re)training done by L2-SVM-MFN (:func:`solvers._primal.l2svm_mfn`, Tables 1-3);
* Sec. 3.1.2 -- multiple switching: up to ``S`` pairs per inner iteration (``S=1`` is Joachims'
  single switch, ``S="max"`` switches every eligible pair at once);
* Sec. 3.1.3 -- seeding: every retraining is warm-started from the previous w.

Parameterization: see :mod:`solvers._sigir` (SIGIR ``lam``, ``lam_u`` with a regularized bias,
or JMLR ``C``, ``C_star`` with a free bias; C = 1/(2 lam l), C* = lam'/(2 lam u)).
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from ._balance import threshold_to_count
from ._base import BinaryFit
from ._primal import MFN_ITERMAX, l2svm_mfn
from ._sigir import SIGIRLinearBase, resolve_problem, tsvm_objective
from ._validation import Interval, Options

__all__ = ["LinearTSVM", "switch_pairs"]

#: SVMlin's TSVM_LAMBDA_SMALL: the first lam' of the annealing (Table 4: "Set lam^' = 1e-5").
LAM_U_START = 1e-5


def switch_pairs(y_u, o_u, S):
    """The label pairs to switch (SIGIR 2006 Sec. 3.1.2, steps 1-3; Table 4, Loop 2).

    A pair (i, j) is eligible when ``y'_i = +1, y'_j = -1, o'_i < 1, -o'_j < 1, o'_i < o'_j``:
    switching it strictly lowers eq. (7) at the current w (Proposition, Sec. 3.1.2). The
    positives in the margin are sorted by increasing output (L+), the negatives by decreasing
    output (L-), and pairs are taken from the top of both lists while ``o'(L+) < o'(L-)``, at
    most ``S`` of them. Because L+ increases and L- decreases, the pairs taken are a prefix.

    Parameters
    ----------
    y_u : ndarray of {-1, +1}
        Current labels of the unlabeled points.
    o_u : ndarray
        Their outputs.
    S : int
        Pairs at most.

    Returns
    -------
    pos, neg : ndarray of int
        Indices (into ``y_u``) of the positives to make negative and the negatives to make
        positive; equal lengths (0 when no pair is eligible).
    """
    pos = np.flatnonzero((y_u > 0) & (o_u < 1.0))
    neg = np.flatnonzero((y_u < 0) & (o_u > -1.0))
    m = min(pos.size, neg.size, S)
    if m == 0:
        return pos[:0], neg[:0]
    pos = pos[np.argsort(o_u[pos], kind="stable")][:m]
    neg = neg[np.argsort(-o_u[neg], kind="stable")][:m]
    ok = o_u[pos] < o_u[neg]
    s = m if ok.all() else int(np.argmin(ok))
    return pos[:s], neg[:s]


class LinearTSVM(SIGIRLinearBase):
    """Transductive L2-SVM-MFN with multiple switching (SIGIR 2006, Table 4).

    Minimizes SIGIR eq. (7) (squared hinge) over w and the labels of the unlabeled points
    under the exact balance constraint "round(u r) unlabeled labels positive":

    1. w0 = L2-SVM-MFN on the labeled points; the unlabeled points get labels by thresholding
       ``X' w0`` so that exactly round(u r) are positive (Table 4, Initialization).
    2. Loop 1 (annealing): lam^' runs 1e-5, R 1e-5, R^2 1e-5, ... and its last value is clamped
       to lam' itself (SVMlin's ``last_round``), so the final stage always optimizes the target
       objective; if lam' <= 1e-5 there is a single stage at lam'. At each stage w is retrained
       (warm start), then
    3. Loop 2 (switching): while some pairs are eligible (:func:`switch_pairs`), switch up to
       ``S`` of them -- labels change in +/- pairs, so the count of positives stays exactly
       round(u r) -- and retrain L2-SVM-MFN seeded with the current w (Sec. 3.1.3).

    Loop 2 ends only when no eligible pair is left at the current w (finite by the
    Proposition of Sec. 3.1.2), so at the end the returned w and labels satisfy it.
    ``stop_reason_`` is ``"no_eligible_pair"``, or ``"max_switch_iter"`` if the safety cap on
    switching rounds per stage was hit (not expected; inexact MFN solves could in principle
    cycle).

    Parameters
    ----------
    lam : float, default=0.001
        SIGIR lambda (SIGIR 2006 Sec. 4 default). Used when the SIGIR parameterization is.
    lam_u : float, default=1.0
        SIGIR lambda' (Sec. 4: 1 for pcmac, 10 for auto-vs-aviation and ccat).
    C, C_star : float or None, default=None
        JMLR parameterization (``C_star=None``: C* = C). See :mod:`solvers._sigir`.
    param : {"auto", "sigir", "jmlr"}, default="auto"
        Which parameterization to use; ``"auto"``: JMLR if ``C`` is not None.
    bias : {None, "regularized", "free"}, default=None
        None: regularized with SIGIR parameters, free with JMLR ones.
    kernel : {"linear"}, default="linear"
        The method is linear; anything else is a ValueError.
    S : int >= 1 or "max", default=1
        Label pairs switched per inner iteration at most (``"max"``: all eligible pairs).
    r : float or None, default=None
        Fraction of positive unlabeled points; None estimates it from the labeled points
        (JMLR 2008 Sec. 5.4.5). The harness sets the true r. With more than two classes
        (one-versus-rest) a given r applies to every binary problem.
    anneal_rate : float > 1, default=2.0
        Factor R by which lam^' grows (Table 4 and Sec. 3.1.1: 2; SVMlin's code uses 1.5).
    lam_u_start : float, default=1e-5
        First lam^' of the annealing (Table 4), in SIGIR lambda' units.
    tol : float, default=1e-6
        L2-SVM-MFN epsilon (CGLS relative residual and margin tolerance, Table 1).
    max_mfn_iter : int, default=50
        L2-SVM-MFN iterations per call (Table 1 itermax).
    max_switch_iter : int or None, default=None
        Safety cap on switching rounds per annealing stage (None: u).

    Attributes
    ----------
    coef_, intercept_ : the linear model ``f(x) = coef_ . x + intercept_``
    transduction_ : labels of the training points; for two classes the unlabeled ones are the
        TSVM's final labels (exactly round(u r) positive)
    objective_ : ndarray, eq. (7) at the solution per binary problem (SIGIR units, or JMLR
        units ``/ lam`` when the JMLR parameterization was used)
    n_mfn_ : ndarray, L2-SVM-MFN calls per binary problem (the labeled-only one included)
    n_switches_ : ndarray, label pairs switched per binary problem
    n_iter_ : ndarray, same as ``n_mfn_``
    stop_reason_ : list of str
    binary_fits_ : list of BinaryFit, with ``info`` (stage history, CGLS iterations, ...)

    References
    ----------
    .. [1] V. Sindhwani and S. S. Keerthi. Large scale semi-supervised linear SVMs. In *Proc. SIGIR*, 2006.
    """

    _parameter_constraints: dict = {
        **SIGIRLinearBase._parameter_constraints,
        "S": [Interval(Integral, 1, None, closed="left"), Options({"max"})],
        "anneal_rate": [Interval(Real, 1, None, closed="neither")],
        "lam_u_start": [Interval(Real, 0, None, closed="neither")],
        "max_switch_iter": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(self, lam=0.001, lam_u=1.0, C=None, C_star=None, param="auto", bias=None, kernel="linear",
                 S=1, r=None, anneal_rate=2.0, lam_u_start=LAM_U_START, tol=1e-6, max_mfn_iter=MFN_ITERMAX,
                 max_switch_iter=None):
        self.lam = lam
        self.lam_u = lam_u
        self.C = C
        self.C_star = C_star
        self.param = param
        self.bias = bias
        self.kernel = kernel
        self.S = S
        self.r = r
        self.anneal_rate = anneal_rate
        self.lam_u_start = lam_u_start
        self.tol = tol
        self.max_mfn_iter = max_mfn_iter
        self.max_switch_iter = max_switch_iter

    def _fit(self, X, y_pm, labeled):
        prob = resolve_problem(self, y_pm, labeled)
        lab = np.flatnonzero(labeled)
        unl = np.flatnonzero(~labeled)
        order = np.r_[lab, unl]
        Xs = X[order]  # labeled rows first, then unlabeled
        l, u = prob.l, prob.u
        y_l = y_pm[lab]
        S = u if self.S == "max" else int(self.S)
        max_switch = u if self.max_switch_iter is None else int(self.max_switch_iter)
        mfn_kw = dict(lam=prob.lam, bias=prob.bias, tol=self.tol, max_iter=self.max_mfn_iter)
        n_mfn = n_cg = 0

        # Initialization (Table 4): supervised w0, labels by thresholding to round(u r) positives.
        res = l2svm_mfn(Xs[:l], y_l, prob.c_l, **mfn_kw)
        n_mfn, n_cg = 1, res.n_inner_iter
        w, b = res.coef, res.intercept
        o_u = np.asarray(Xs[l:] @ w).ravel() + b
        y_u = threshold_to_count(o_u, prob.k)

        cost = np.empty(l + u)
        cost[:l] = prob.c_l
        lam_hat = min(float(self.lam_u_start), prob.lam_u)
        last_round = lam_hat >= prob.lam_u
        n_switches = 0
        stop_reason = "no_eligible_pair"
        history = []
        while True:
            # Re-training 1 (new lam^', seeded).
            cost[l:] = prob.c_u(lam_hat)
            y_all = np.r_[y_l, y_u]
            res = l2svm_mfn(Xs, y_all, cost, w0=w, b0=b, **mfn_kw)
            n_mfn += 1
            n_cg += res.n_inner_iter
            w, b, o = res.coef, res.intercept, res.outputs
            stage_switches = rounds = 0
            while True:  # Loop 2
                pos, neg = switch_pairs(y_u, o[l:], S)
                if pos.size == 0:
                    break
                if rounds >= max_switch:
                    stop_reason = "max_switch_iter"
                    break
                rounds += 1
                y_u[pos] = -1.0
                y_u[neg] = 1.0
                stage_switches += pos.size
                y_all[l + pos] = -1.0
                y_all[l + neg] = 1.0
                # Re-training 2 (seeded with the current w, Sec. 3.1.3).
                res = l2svm_mfn(Xs, y_all, cost, w0=w, b0=b, **mfn_kw)
                n_mfn += 1
                n_cg += res.n_inner_iter
                w, b, o = res.coef, res.intercept, res.outputs
            n_switches += stage_switches
            history.append({"lam_u": lam_hat, "switches": stage_switches, "rounds": rounds,
                            "objective": prob.to_user_units(res.objective)})
            if last_round:
                break
            lam_hat *= float(self.anneal_rate)
            if lam_hat >= prob.lam_u:
                lam_hat, last_round = prob.lam_u, True

        # res.objective is eq. (7) at the final labels and lam' (the _primal cost convention
        # with costs 1/(2l), lam'/(2u) is SIGIR's objective exactly).
        info = {"objective": prob.to_user_units(res.objective), "n_mfn": n_mfn, "n_cg": n_cg,
                "n_switches": n_switches, "y_unlabeled": y_u.copy(), "stages": history,
                "lam": prob.lam, "lam_u": prob.lam_u, "bias": prob.bias, "param": prob.param, "r": prob.r,
                "eq18_objective": prob.to_user_units(tsvm_objective(w, b, o[:l], y_l, o[l:], prob))}
        return BinaryFit(np.asarray(w, dtype=float), float(b), n_mfn, stop_reason, info)

    def _fit_binary(self, X, y_pm, labeled, gram):
        return self._fit(X, y_pm, labeled)

    def fit(self, X, y):
        super().fit(X, y)
        self.n_switches_ = np.array([f.info["n_switches"] for f in self.binary_fits_])
        return self
