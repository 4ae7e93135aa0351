"""Mean field annealing for the linear TSVM objective (SIGIR 2006, Sec. 3.2, eqs. 8-18, Tables 5-7).

Sindhwani & Keerthi, *Large Scale Semi-supervised Linear SVMs*, SIGIR 2006. The binary labels
of the unlabeled points are relaxed to probabilities p_j (eq. 8); at temperature T the
objective

    lam/2 ||w~||^2 + 1/(2l) sum_i max(0, 1 - y_i o_i)^2
      + lam'/(2u) sum_j [p_j max(0, 1 - o'_j)^2 + (1 - p_j) max(0, 1 + o'_j)^2]
      + T/(2u) sum_j [p_j log p_j + (1 - p_j) log(1 - p_j)]        s.t. (1/u) sum_j p_j = r  (9)

is minimized by alternating

* the w-step (:func:`optimize_w`, Sec. 3.2.1, Table 7): L2-SVM-MFN on the expected loss for
  fixed p, where each unlabeled row appears once in the CGLS system (eqs. 13-14) instead of
  twice (eq. 11), and
* the p-step (Sec. 3.2.2, Table 6): ``p_j = 1/(1 + exp((g_j - nu)/T))`` (eq. 15) with the
  balance multiplier nu the root of a monotone equation (:func:`solvers._balance.balance_root`),

until the mean KL divergence between successive p falls below epsilon (eq. 16); T is then
divided by R = 1.5 until the mean entropy of p falls below epsilon (eq. 17). The w with the
lowest TSVM objective (eq. 18) along the path is returned (Table 5).

Parameterization: see :mod:`solvers._sigir`.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from ._balance import balance_root, threshold_to_count
from ._base import BinaryFit
from ._primal import (MFN_BIG_EPSILON, MFN_CGITERMAX, MFN_ITERMAX, MFN_RELATIVE_STOP_EPS,
                      MFN_SMALL_CGITERMAX, _cgls, _step_length, mfn_iterations)
from ._sigir import SIGIRLinearBase, resolve_problem, tsvm_objective
from ._validation import Interval

__all__ = ["MFA", "optimize_w", "mfa_system", "WStep"]

# SVMlin defaults (reference implementation of SIGIR 2006; DESIGN.md).
DA_INIT_TEMP = 10.0  # T0 = 10 lam'
DA_ANNEALING_RATE = 1.5  # R
DA_OUTER_ITERMAX = 30
DA_INNER_ITERMAX = 100  # Table 5 itermax (inner loop)
DA_EPSILON = 1e-6  # KL (eq. 16) and entropy (eq. 17) thresholds, per point


def mfa_system(o_l, y_l, o_u, p, c_l, c_u):
    """Targets and costs of the CGLS system with each unlabeled row once (SIGIR 2006 eq. 14).

    With outputs (o_l, o_u) at the current w, the duplicated system of eq. (11)-(12) -- every
    unlabeled x'_j twice, label +1 with cost c_u p_j and label -1 with cost c_u (1 - p_j) --
    restricted to its active rows equals ``[lam I + X^T C~ X] w = X^T C~ Y~`` with

    * labeled i: Y~ = y_i, C~ = c_l if y_i o_i < 1 else 0 (inactive rows get cost 0, which is
      the same system as dropping them);
    * unlabeled j with |o'_j| < 1 (J'_2, both copies active): Y~ = 2 p_j - 1, C~ = c_u
      (``p (y - 1)^2 + (1 - p)(y + 1)^2 = (y - (2p - 1))^2 + const``);
    * unlabeled j with o'_j >= 1 (J'_1, only the -1 copy active): Y~ = -1, C~ = c_u (1 - p_j);
    * unlabeled j with o'_j <= -1: Y~ = +1, C~ = c_u p_j.

    Costs are in :mod:`solvers._primal`'s convention (no 1/2 on the loss): ``c_l = 1/(2l)``,
    ``c_u = lam'/(2u)``.

    Returns
    -------
    y_tilde, c_tilde : ndarray, shape (l + u,)
    active_l : ndarray of bool, shape (l,)
    inside : ndarray of bool, shape (u,)  -- J'_2
    """
    active_l = y_l * o_l < 1.0
    inside = np.abs(o_u) < 1.0
    upper = o_u >= 1.0
    y_t = np.concatenate((y_l, np.where(inside, 2.0 * p - 1.0, np.where(upper, -1.0, 1.0))))
    c_t = np.concatenate((np.where(active_l, c_l, 0.0), c_u * np.where(inside, 1.0, np.where(upper, 1.0 - p, p))))
    return y_t, c_t, active_l, inside


def _expected_objective(w, b, o, y_l, p, lam, lam_b, c_l, c_u):
    """The fixed-p objective of the w-step (eq. 8 without the entropy term), _primal units."""
    l = y_l.size
    o_l, o_u = o[:l], o[l:]
    hl = np.maximum(0.0, 1.0 - y_l * o_l)
    hp = np.maximum(0.0, 1.0 - o_u)
    hm = np.maximum(0.0, 1.0 + o_u)
    return (0.5 * (lam * float(w @ w) + lam_b * b * b) + c_l * float(hl @ hl)
            + c_u * float(p @ (hp * hp) + (1.0 - p) @ (hm * hm)))


class WStep:
    """Outcome of :func:`optimize_w`: w, b, outputs, MFN iterations, CGLS iterations, stop reason."""

    __slots__ = ("w", "b", "o", "n_iter", "n_cg", "stop_reason", "objective")

    def __init__(self, w, b, o, n_iter, n_cg, stop_reason, objective):
        self.w, self.b, self.o = w, b, o
        self.n_iter, self.n_cg, self.stop_reason, self.objective = n_iter, n_cg, stop_reason, objective


def optimize_w(X, y_l, p, lam, lam_b, c_l, c_u, w=None, b=0.0, o=None, *, tol=1e-6, max_iter=MFN_ITERMAX,
               cg_max_iter=MFN_CGITERMAX, rel_tol=MFN_RELATIVE_STOP_EPS):
    """The w-step of MFA: L2-SVM-MFN on the expected loss for fixed p (SIGIR 2006 Table 7).

    Minimizes, over w and b (regularized with weight ``lam_b``: ``lam`` or 0)::

        lam/2 ||w||^2 + lam_b/2 b^2 + c_l sum_i max(0, 1 - y_i o_i)^2
            + c_u sum_j [p_j max(0, 1 - o'_j)^2 + (1 - p_j) max(0, 1 + o'_j)^2]

    where ``X`` holds the l labeled rows first, then the u unlabeled ones. This is L2-SVM-MFN
    (Table 1) on the duplicated data of eq. (11), but each CGLS call (Table 2, reused from
    :mod:`solvers._primal`) runs on the system of eqs. (13)-(14) (:func:`mfa_system`), where
    each unlabeled row appears once; the exact line search (Table 3) runs on the duplicated
    outputs, which costs no product with X. Optimality (Sec. 3.2.1): CGLS converged and the
    new point keeps the pieces the system was built on -- labeled ``y o <= 1 + tol`` on the
    active set and ``>= 1 - tol`` off it, ``|o'| <= 1 + tol`` on J'_2, and ``o' >= 1 - tol``
    (resp. ``<= -1 + tol``) where ``o' >= 1`` (resp. ``<= -1``); the sign is checked too, since
    a point jumping from ``o' > 1`` to ``o' < -1`` changes its piece.

    Cold start (``w`` None or zero): first CGLS with eps = 1e-2, 10 iterations (Table 7).

    Returns
    -------
    WStep
    """
    n = X.shape[0]
    l = y_l.size
    # Line-search view of the duplicated system (eq. 11): labeled, unlabeled as +1, as -1.
    y_dup = np.concatenate((y_l, np.ones(n - l), -np.ones(n - l)))
    c2_dup = 2.0 * np.concatenate((np.full(l, c_l), c_u * p, c_u * (1.0 - p)))
    elig_dup = c2_dup > 0.0

    def dup(v):
        return np.concatenate((v, v[l:]))

    def solve(o, b, seed_w, seed_b, seed_o, eps, cgmax):
        # Table 1 (Table 7), step 1: CGLS on the system of eqs. (13)-(14) at the current pieces.
        y_t, c_t, active_l, inside = mfa_system(o[:l], y_l, o[l:], p, c_l, c_u)
        w_bar, b_bar, opt, k = _cgls(X, y_t, 2.0 * c_t, lam, lam_b, seed_w, seed_b, seed_o, eps, cgmax)
        return w_bar, b_bar, opt, k, lambda o_bar: _keeps_pieces(y_l, o, o_bar, active_l, inside, tol)

    def line_step(w, b, o, w_bar, b_bar, o_bar):
        # Step 2: exact line search (Table 3) on the duplicated outputs, no product with X.
        delta = _step_length(w, b, w_bar, b_bar, dup(o), dup(o_bar), lam, lam_b, y_dup, c2_dup, elig_dup)
        return w + delta * (w_bar - w), b + delta * (b_bar - b), o + delta * (o_bar - o)

    w, b, o, F, n_iter, n_cg, stop_reason = mfn_iterations(
        X, *_w_start(X, w, b, o, tol, cg_max_iter), solve=solve,
        objective=lambda w, b, o: _expected_objective(w, b, o, y_l, p, lam, lam_b, c_l, c_u),
        line_step=line_step, tol=tol, max_iter=max_iter, cg_max_iter=cg_max_iter, rel_tol=rel_tol)
    return WStep(w, float(b), o, n_iter, n_cg, stop_reason, F)


def _w_start(X, w, b, o, tol, cg_max_iter):
    """``(w, b, outputs, eps, cgmax)`` of the first CGLS call of :func:`optimize_w`: from 0 with a
    crude CGLS (eps = 1e-2, 10 iterations; Table 7) on a cold start (``w`` None or zero), else
    from ``(w, b)`` at ``eps = tol`` (outputs computed unless given)."""
    n, d = X.shape
    if w is None or not (np.any(w) or b != 0.0):
        return np.zeros(d), 0.0, np.zeros(n), max(MFN_BIG_EPSILON, tol), MFN_SMALL_CGITERMAX
    if o is None:
        o = np.asarray(X @ w).ravel() + b
    return w, b, o, tol, cg_max_iter


def _keeps_pieces(y_l, o, o_bar, active_l, inside, tol) -> bool:
    """SIGIR 2006 Sec. 3.2.1's optimality test: the new outputs keep the pieces the system of
    :func:`mfa_system` was built on (see :func:`optimize_w`)."""
    l = y_l.size
    m_l = y_l * o_bar[:l]
    ou, obu = o[l:], o_bar[l:]
    return bool(np.all(m_l[active_l] <= 1.0 + tol) and np.all(m_l[~active_l] >= 1.0 - tol)
                and np.all(np.abs(obu[inside]) <= 1.0 + tol)
                and np.all(obu[ou >= 1.0] >= 1.0 - tol) and np.all(obu[ou <= -1.0] <= -1.0 + tol))


def _mean_kl(p, q):
    """Mean KL divergence of Bernoulli(p) from Bernoulli(q) (eq. 16 divided by u)."""
    tiny = np.finfo(float).tiny
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(p > 0, p * np.log(np.maximum(p, tiny) / np.maximum(q, tiny)), 0.0)
        b = np.where(p < 1, (1 - p) * np.log(np.maximum(1 - p, tiny) / np.maximum(1 - q, tiny)), 0.0)
    return float(np.mean(a + b))


def _mean_entropy(p):
    """Mean binary entropy of p (eq. 17 divided by u)."""
    tiny = np.finfo(float).tiny
    h = -(p * np.log(np.maximum(p, tiny)) + (1 - p) * np.log(np.maximum(1 - p, tiny)))
    return float(np.mean(h))


class MFA(SIGIRLinearBase):
    """Mean field annealing with L2-SVM-MFN (SIGIR 2006, Sec. 3.2, Table 5).

    Algorithm (Table 5, with the defaults of the reference implementation SVMlin): p = r;
    w = w-step(p) from w = 0; then for T = T0, T0/R, T0/R^2, ... (at most ``max_outer_iter``
    temperatures, while the mean entropy of p (eq. 17) exceeds ``epsilon``): repeat
    {p = p-step(w, T) (eq. 15 with the nu root of the balance equation); w = w-step(p), seeded}
    until the mean KL divergence of the new p from the old (eq. 16) is below ``epsilon`` or
    ``max_inner_iter`` repeats. The TSVM objective (eq. 18) is evaluated after every w-step and
    the w with the lowest value is returned.

    The final labels of the unlabeled points threshold that w's outputs so exactly round(u r)
    are positive (``balance = "threshold"``: the harness shifts the outputs by the same rule).

    ``stop_reason_``: ``"entropy"`` (eq. 17 met), ``"max_outer_iter"``; with ``T_fixed``:
    ``"kl"`` or ``"max_inner_iter"``.

    Parameters
    ----------
    lam, lam_u, C, C_star, param, bias, kernel, r
        As for :class:`solvers.tsvm_linear.LinearTSVM` (see :mod:`solvers._sigir`).
    T0 : float or None, default=None
        Starting temperature; None is SVMlin's 10 lam' (Table 5 writes T = 10 with lam' = 1), with
        lam' in SIGIR units also under the JMLR parameterization (lam' = u C* / (l C)).
    anneal_rate : float > 1, default=1.5
        R, the factor T is divided by (Table 5).
    T_fixed : float or None, default=None
        No annealing: the alternating optimization runs at this single temperature until the KL
        criterion (SIGIR Fig. 12, "fixed temperature"). Overrides ``T0``.
    epsilon : float, default=1e-6
        KL (eq. 16) and entropy (eq. 17) thresholds, per unlabeled point.
    max_outer_iter : int, default=30
        Temperatures at most (Table 5 itermax1).
    max_inner_iter : int, default=100
        Alternations per temperature at most (Table 5).
    tol : float, default=1e-6
        L2-SVM-MFN epsilon of the w-step (Table 7).
    max_mfn_iter : int, default=50
        MFN iterations per w-step (Table 7 itermax).

    Attributes
    ----------
    coef_, intercept_, transduction_, objective_ (eq. 18 at the returned w), n_mfn_ (w-steps),
    n_iter_ (alternations), stop_reason_, binary_fits_ (``info``: temperatures, final p, ...).

    References
    ----------
    .. [1] V. Sindhwani and S. S. Keerthi. Large scale semi-supervised linear SVMs. In *Proc. SIGIR*, 2006.
    """

    _parameter_constraints: dict = {
        **SIGIRLinearBase._parameter_constraints,
        "T0": [Interval(Real, 0, None, closed="neither"), None],
        "anneal_rate": [Interval(Real, 1, None, closed="neither")],
        "T_fixed": [Interval(Real, 0, None, closed="neither"), None],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "max_outer_iter": [Interval(Integral, 1, None, closed="left")],
        "max_inner_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, lam=0.001, lam_u=1.0, C=None, C_star=None, param="auto", bias=None, kernel="linear",
                 r=None, T0=None, anneal_rate=DA_ANNEALING_RATE, T_fixed=None, epsilon=DA_EPSILON,
                 max_outer_iter=DA_OUTER_ITERMAX, max_inner_iter=DA_INNER_ITERMAX, tol=1e-6,
                 max_mfn_iter=MFN_ITERMAX):
        self.lam = lam
        self.lam_u = lam_u
        self.C = C
        self.C_star = C_star
        self.param = param
        self.bias = bias
        self.kernel = kernel
        self.r = r
        self.T0 = T0
        self.anneal_rate = anneal_rate
        self.T_fixed = T_fixed
        self.epsilon = epsilon
        self.max_outer_iter = max_outer_iter
        self.max_inner_iter = max_inner_iter
        self.tol = tol
        self.max_mfn_iter = max_mfn_iter

    def _fit_binary(self, X, y_pm, labeled, gram):
        prob = resolve_problem(self, y_pm, labeled)
        lab = np.flatnonzero(labeled)
        unl = np.flatnonzero(~labeled)
        Xs = X[np.r_[lab, unl]]  # labeled rows first, then unlabeled
        l, u = prob.l, prob.u
        y_l = y_pm[lab]
        lam, lam_b, lam_u = prob.lam, prob.lam_b, prob.lam_u
        c_l, c_u = prob.c_l, prob.c_u()
        eps = float(self.epsilon)
        w_kw = dict(tol=self.tol, max_iter=self.max_mfn_iter)

        p = np.full(u, prob.r)
        step = optimize_w(Xs, y_l, p, lam, lam_b, c_l, c_u, **w_kw)
        w, b, o = step.w, step.b, step.o
        n_w, n_cg = 1, step.n_cg

        def objective(w, b, o):
            return tsvm_objective(w, b, o[:l], y_l, o[l:], prob)

        best = (objective(w, b, o), w, b, o)
        fixed = self.T_fixed is not None
        T = float(self.T_fixed) if fixed else (DA_INIT_TEMP * lam_u if self.T0 is None else float(self.T0))
        max_outer = 1 if fixed else int(self.max_outer_iter)
        H = _mean_entropy(p)
        n_outer = n_inner_total = 0
        temps = []
        stop_reason = "max_outer_iter"
        while n_outer < max_outer and (fixed or H > eps):
            n_outer += 1
            kl, n_inner = 1.0, 0
            while n_inner < self.max_inner_iter and kl > eps:
                n_inner += 1
                q = p
                o_u = o[l:]
                hp = np.maximum(0.0, 1.0 - o_u)
                hm = np.maximum(0.0, 1.0 + o_u)
                g = lam_u * (hp * hp - hm * hm)  # Table 6
                p = balance_root(g, T, prob.r).p
                kl = _mean_kl(p, q)
                step = optimize_w(Xs, y_l, p, lam, lam_b, c_l, c_u, w, b, o, **w_kw)
                w, b, o = step.w, step.b, step.o
                n_w += 1
                n_cg += step.n_cg
                F = objective(w, b, o)
                if F < best[0]:
                    best = (F, w, b, o)
            n_inner_total += n_inner
            H = _mean_entropy(p)
            temps.append({"T": T, "inner": n_inner, "kl": kl, "entropy": H, "objective": prob.to_user_units(F)})
            if fixed:
                stop_reason = "kl" if kl <= eps else "max_inner_iter"
            else:
                T /= float(self.anneal_rate)
        if not fixed and H <= eps:
            stop_reason = "entropy"
        F_min, w, b, o = best
        y_u = threshold_to_count(o[l:], prob.k)
        info = {"objective": prob.to_user_units(F_min), "n_mfn": n_w, "n_cg": n_cg, "n_outer": n_outer,
                "y_unlabeled": y_u, "p": p, "temperatures": temps, "lam": lam, "lam_u": lam_u,
                "bias": prob.bias, "param": prob.param, "r": prob.r}
        return BinaryFit(np.asarray(w, dtype=float), float(b), n_inner_total, stop_reason, info)
