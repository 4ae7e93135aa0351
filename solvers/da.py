"""Deterministic annealing S3VM by alternating minimization (``da``).

Sindhwani, Keerthi, Chapelle, *Deterministic Annealing for Semi-supervised Kernel Machines*,
ICML 2006, Sec. 3 (eqs. 4-8, Table 1); Chapelle, Sindhwani, Keerthi, JMLR 2008, Sec. 3.3 item 1
and Algorithm 2.

The unknown labels are relaxed to probabilities ``p_j = P(y_j = +1)`` and, at temperature T, the
solver minimizes (JMLR 2008 eq. 7 minus T times the entropy; ICML 2006 eq. 4)::

    I''(f, p; T) = 1/2 ||f||^2 + C sum_lab V(y_i f_i)
                   + C* sum_unl [p_j V(f_j) + (1 - p_j) V(-f_j)]
                   + T  sum_unl [p_j log p_j + (1 - p_j) log(1 - p_j)]

subject to ``(1/u) sum_j p_j = r`` (ICML eq. 5), with ``f = K beta + b`` (free bias b), by
alternating an exact minimization over f at fixed p (a weighted supervised problem) and over p at
fixed f (eq. 8, :func:`solve_nu`), while T is lowered geometrically (ICML Table 1).

Parameterization (DESIGN.md "Two parameterizations"): C, C* and T of the JMLR form above.
ICML 2006 eq. (4) reads ``lambda/2 ||f||^2 + 1/l sum V_icml + lambda'/u sum E[V_icml] + T_icml/u
sum (p log p + ...)``; dividing by lambda gives the JMLR form with::

    C = 1 / (kappa lambda l),   C* = lambda' / (kappa lambda u),   T = T_icml / (lambda u),

where kappa = 2 for the quadratic losses (ICML's quadratic hinge and squared loss carry a 1/2:
``V_icml = V / 2``) and kappa = 1 for the hinge. Hence ``T / C* = kappa T_icml / lambda'``.

Temperature units. ``T0`` and ``T_fixed`` are given in units of C* by default
(``T_scale="C_star"``: the temperature used is ``T0 * C*``). Then ``T0 = 10`` is exactly JMLR 2008
Alg. 2 (``T = 10 C*``) and the reference implementation of the ICML/SIGIR authors (SVMlin,
``DA_INIT_TEMP 10 /* initial temperature relative to lambda_u */``); the literal ICML Table 1
start T_icml = 10 with lambda' = 1 (their experiments) is ``T0 = 10`` for the hinge and
``T0 = 20`` for the quadratic losses (kappa = 2). ``T_scale="absolute"`` uses ``T0`` as is.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.linalg as sla
from scipy.special import expit

# Re-exported: the p-step, the annealing tests and the losses are shared with grad_da.
from ._annealing import (ANNEALING_CONSTRAINTS, LOSSES, NuRoot, _AnnealingParams, _log_pq, bernoulli_entropy,
                         bernoulli_kl, s3vm_objective, solve_nu)
from ._balance import n_positive, threshold_shift
from ._base import BaseS3VM, BinaryFit
from ._kernels import linear_kernel
from ._primal import CholeskyCache, kernel_newton_terms
from ._validation import Interval, Options

__all__ = ["DA", "NuRoot", "solve_nu", "bernoulli_entropy", "bernoulli_kl", "s3vm_objective", "LOSSES"]

#: Per-copy costs below this fraction of C* are dropped from the weighted f-step: p_j < 1e-14
#: changes the objective by less than 4e-14 C* per point but would put a diagonal of 1/(2c) ~ 1e13
#: into the Newton systems when that copy is its point's only active term (and keep it active
#: forever).
_COST_FLOOR = 1e-14


# ----------------------------------------------------------------------------
# f-steps: the weighted supervised problem at fixed p
# ----------------------------------------------------------------------------
class _SqrStep:
    """RLS f-step, closed form (ICML 2006 eq. 7, with a free bias).

    For the squared loss ``p (1 - f)^2 + (1 - p)(1 + f)^2 = (f - (2p - 1))^2 + const``, so at fixed
    p the problem is RLS with targets ``t = [y_lab, 2p - 1]`` and costs ``c = [C, C*]``. Setting the
    gradient to zero gives ``beta = 2 c (t - f)``, i.e. the bordered system::

        [K + diag(1/(2c))  1] [beta]   [t]
        [1^T               0] [b   ] = [0]

    Its matrix depends neither on p nor on T (ICML: "(G + lambda C)^{-1} is independent of p
    and therefore needs to be computed only once"), so M = K + diag(1/(2c)) is Cholesky-factored
    once per fit and each f-step is two triangular solves; the Schur complement for b uses
    ``M^{-1} 1``, also computed once.
    """

    def __init__(self, K, y_pm, labeled, C, C_star):
        self.K = K
        n = K.shape[0]
        c = np.where(labeled, C, C_star)
        M = K.copy()
        M[np.diag_indices(n)] += 0.5 / c
        self.factor = sla.cho_factor(M, lower=True, overwrite_a=True, check_finite=False)
        self.n_factorizations = 1
        self.v1 = sla.cho_solve(self.factor, np.ones(n), check_finite=False)
        self.y_lab = y_pm[labeled]
        self.labeled = labeled

    def solve(self, p, beta0=None, b0=None):
        t = np.empty(self.K.shape[0])
        t[self.labeled] = self.y_lab
        t[~self.labeled] = 2.0 * p - 1.0
        s = sla.cho_solve(self.factor, t, check_finite=False)
        b = float(s.sum() / self.v1.sum())
        beta = s - b * self.v1
        # f = K beta + b = t - beta / (2c) on the training points; K beta is formed explicitly so
        # the outputs are those decision_function will reproduce.
        return beta, b, self.K @ beta + b, 0


class _DuplicatedStep:
    """Shared set-up of the l2 / l1 f-steps: each unlabeled point carries two loss terms.

    JMLR 2008 Sec. 3.3 item 1: "each unlabeled example contributes two loss terms weighted by
    C* p_i and C* (1 - p_i)" -- copy one with label +1 and cost C* p_j, copy two with label -1
    and cost C* (1 - p_j). The duplicated training set has ``n + u`` rows, ``idx`` maps each to
    its point; the expansion coefficients of the two copies of a point add up.
    """

    def __init__(self, K, y_pm, labeled, C, C_star):
        n = K.shape[0]
        self.n = n
        self.unl = np.flatnonzero(~labeled)
        self.idx = np.concatenate([np.arange(n), self.unl])
        self.K = K
        self.yd = np.concatenate([np.where(labeled, y_pm, 1.0), -np.ones(self.unl.size)])
        self.base_cost = np.where(labeled, C, 0.0)
        self.C_star = C_star
        self.n_factorizations = 0

    def costs(self, p):
        u = self.unl.size
        c = np.concatenate([self.base_cost, np.zeros(u)])
        c[self.unl] = self.C_star * p
        c[self.n:] = self.C_star * (1.0 - p)
        c[c < _COST_FLOOR * self.C_star] = 0.0
        return c

    def collapse(self, beta_d):
        beta = beta_d[: self.n].copy()
        np.add.at(beta, self.unl, beta_d[self.n:])
        return beta


class _L2Step(_DuplicatedStep):
    """Quadratic-hinge f-step: primal finite Newton (ICML 2006 Sec. 3.1, "SVM with quadratic hinge
    loss"; Keerthi & DeCoste 2005; Chapelle 2007), warm-started from the previous solution
    ("seeding", ICML 2006).

    :func:`solvers._primal.kernel_newton_terms` runs it on the points with the two terms
    of an unlabeled point pooled in each Newton system: the iterates of
    :func:`solvers._primal.kernel_newton` on the duplicated set (collapsed), with systems of at
    most n rows instead of n + u.
    """

    def __init__(self, K, y_pm, labeled, C, C_star, tol, max_iter):
        super().__init__(K, y_pm, labeled, C, C_star)
        self.tol, self.max_iter = tol, max_iter
        self.factors = CholeskyCache(self.K)  # kept across the f-steps of the annealing
        self.beta = None
        self.b = None

    def solve(self, p, beta0=None, b0=None):
        res = kernel_newton_terms(self.factors, self.idx, self.yd, self.costs(p), beta0=self.beta, b0=self.b,
                                  tol=self.tol, max_iter=self.max_iter)
        self.beta, self.b = res.coef, float(res.intercept)
        self.n_factorizations += res.n_inner_iter
        # Outputs recomputed from the coefficients (not the solver's running update), as
        # decision_function will compute them.
        return res.coef, self.b, self.K @ res.coef + self.b, res.n_iter


class _L1Step(_DuplicatedStep):
    """Hinge-loss f-step: a dual SVM with per-example costs.

    scikit-learn's ``SVC(kernel="precomputed", C=1)`` with ``sample_weight`` = the costs (libsvm
    multiplies C by the weight of each example), on the duplicated rows whose cost is positive.
    libsvm solves the dual to the KKT tolerance ``svc_tol``; it has no warm start. (An exact
    formulation without duplication is not a standard SVM: the pair's loss is a hinge plus an
    epsilon-insensitive term, ``a h(f) + c h(-f) = 2c + (a - c) h(f) + c max(0, |f| - 1)`` for
    a >= c.) Its
    ``dual_coef_`` are ``y_i alpha_i`` and ``f = K dual_coef + intercept`` (checked at fit).
    """

    def __init__(self, K, y_pm, labeled, C, C_star, svc_tol):
        super().__init__(K, y_pm, labeled, C, C_star)
        self.Kd = K[np.ix_(self.idx, self.idx)]  # the duplicated set's Gram matrix, formed once
        self.svc_tol = svc_tol

    def solve(self, p, beta0=None, b0=None):
        from sklearn.svm import SVC

        c = self.costs(p)
        keep = np.flatnonzero(c > 0.0)
        svc = SVC(C=1.0, kernel="precomputed", tol=self.svc_tol, cache_size=200, max_iter=-1)
        svc.fit(self.Kd[np.ix_(keep, keep)], self.yd[keep], sample_weight=c[keep])
        beta_d = np.zeros(self.idx.size)
        # classes_ are [-1, 1]: the decision function is positive for +1, and equals
        # K[:, support] @ dual_coef_[0] + intercept_[0].
        if svc.classes_[1] != 1.0:  # pragma: no cover - guarded by sklearn's sorted classes_
            raise RuntimeError("unexpected class order in SVC")
        beta_d[keep[svc.support_]] = svc.dual_coef_[0]
        b = float(svc.intercept_[0])
        beta = self.collapse(beta_d)
        return beta, b, self.K @ beta + b, int(np.sum(svc.n_iter_))


# ----------------------------------------------------------------------------
# the estimator
# ----------------------------------------------------------------------------

class DA(_AnnealingParams, BaseS3VM):
    """Deterministic annealing S3VM, alternating minimization (ICML 2006 Table 1; JMLR 2008 Alg. 2).

    Algorithm (ICML 2006 Table 1, with JMLR 2008's C/C* parameterization, see the module
    docstring)::

        p <- (r, ..., r); T <- T0 (x C*)
        repeat                                  # annealing loop
            repeat                              # fixed-T loop, at most max_inner times
                f <- argmin_f I''(f, p; T)      # weighted SVM / RLS, warm-started
                q <- p; p <- eq. (8)            # p_j = 1/(1 + exp((g_j - nu)/T)), nu: solve_nu
            until KL(p || q) < epsilon
            stop if entropy(p) < epsilon        # else T <- T / R (at most max_anneal temperatures)

    Returned model. ICML 2006 Sec. 3: "we monitor the value of the objective function in the
    optimization path and return the solution corresponding to the minimum value achieved".
    The objective monitored here is the S3VM objective (JMLR 2008 eq. 1 with the solver's loss
    V) of the current f with the unlabeled points labeled by thresholding f so that exactly
    round(u r) are positive (:func:`s3vm_objective`), evaluated after every f-step
    (``select="best"``, the default); ``select="last"`` returns the final f instead (JMLR 2008
    Alg. 2 "Return w_T, b_T"). The bias of the returned model is then shifted so that exactly
    round(u r) unlabeled outputs are positive (constraint 3; ``balance = "threshold"``), so that
    ``predict`` meets the balance and the shift recorded in ``info["bias_shift"]``.

    Parameters
    ----------
    kernel : {"rbf", "linear"}, default="rbf"
        For ``"linear"`` the Gram matrix ``X X^T`` is formed here (the base passes none) and the
        returned coefficients are ``w = X^T beta``.
    sigma : float, default=1.0
        Gaussian width, ``exp(-||x - z||^2 / (2 sigma^2))``.
    C : float, default=1.0
        Cost of the labeled losses (JMLR eq. 1).
    C_star : float or None, default=None
        Cost of the unlabeled losses; None means C* = C (JMLR 2008 Sec. 5.2).
    r : float or None, default=None
        Fraction of positive unlabeled points (balance constraint, ICML eq. 5); None estimates it
        from the labeled points (JMLR 2008 Sec. 5.4.5).
    loss : {"l2", "l1", "sqr"}, default="l2"
        ``max(0, 1 - t)^2`` (quadratic hinge: finite Newton, the two terms of a point pooled), ``max(0,
        1 - t)`` (hinge: libsvm dual with per-example weights), ``(1 - t)^2`` (RLS: closed form,
        one Cholesky per fit).
    T0 : float, default=10.0
        Start temperature, in units of C* unless ``T_scale="absolute"`` (ICML Table 1: 10; JMLR
        2008 Alg. 2: 10 C*, i.e. the same with the default scale).
    T_fixed : float or None, default=None
        Fixed-temperature mode (no annealing; ICML 2006 Table 5 uses 0.1, 0.01, 0.001), same
        units as T0: one fixed-T loop from p = r.
    R : float, default=1.5
        Annealing rate, T <- T / R (ICML Table 1).
    epsilon : float, default=1e-6
        Threshold for both the mean entropy of p (annealing loop) and the mean
        KL(p_new || p_old) (fixed-T loop), per point, in bits (ICML Table 1; SVMlin).
    max_inner : int, default=100
        Alternations at one temperature at most (SVMlin ``DA_INNER_ITERMAX``).
    max_anneal : int, default=30
        Temperatures at most (SVMlin ``DA_OUTER_ITERMAX``). The entropy cannot vanish when
        u r is not an integer (one p_j must stay fractional); this bound ends the loop then.
    T_scale : {"C_star", "absolute"}, default="C_star"
        Whether T0 / T_fixed multiply C*.
    select : {"best", "last"}, default="best"
        Return the best solution on the path (ICML 2006) or the last one (JMLR 2008 Alg. 2).
    tol : float, default=1e-9
        Newton-decrement tolerance of the l2 f-step (:func:`solvers._primal.kernel_newton_terms`).
    max_iter : int, default=100
        Newton steps per l2 f-step at most.
    svc_tol : float, default=1e-3
        libsvm KKT tolerance of the l1 f-step (libsvm's own default). The duplicated problem is
        degenerate (two copies of a point with opposite labels): SMO reaches 1e-3 in ~1e4
        iterations but can need ~1e6 for 1e-6 (e.g. sigma = 0.25, C = C* = 100 on 2moons), so
        the descent of I'' is exact only up to this tolerance; pass a smaller value (1e-10,
        say) for a monotone trace.

    Attributes
    ----------
    dual_coef_, coef_, intercept_, n_iter_, stop_reason_, transduction_, binary_fits_
        See :class:`solvers._base.BaseS3VM`. ``binary_fits_[k].info`` holds ``trace`` (one
        dict per half-step: temperature index, T, step "start"/"f"/"p", DA objective I'',
        KL, S3VM objective), ``n_factorizations`` (Cholesky factorizations: exactly 1 for
        ``"sqr"``, one per Newton step for ``"l2"``, 0 for ``"l1"`` whose libsvm dual needs
        none), ``best`` (where the returned solution was found), ``outputs`` (training outputs
        of the returned model), ``bias_shift``, ``r``.

    Notes
    -----
    ``n_iter_`` counts f-steps (alternations). ``stop_reason_``: ``"entropy<epsilon"``,
    ``"max_anneal"``, or for ``T_fixed`` ``"fixed_T:kl<epsilon"`` / ``"fixed_T:max_inner"``.

    References
    ----------
    .. [1] V. Sindhwani, S. S. Keerthi and O. Chapelle. Deterministic annealing for semi-supervised kernel
           machines. In *Proc. ICML*, 2006.
    .. [2] O. Chapelle, V. Sindhwani and S. S. Keerthi. Optimization techniques for semi-supervised support
           vector machines. *Journal of Machine Learning Research*, 9:203-233, 2008.
    """

    _accepts_sparse = True  # only the Gram matrix is used (X X^T for the linear kernel)
    balance = "threshold"
    _parameter_constraints: dict = {
        **BaseS3VM._parameter_constraints,
        **ANNEALING_CONSTRAINTS,
        "loss": [Options({"l1", "l2", "sqr"})],
        "max_inner": [Interval(Integral, 1, None, closed="left")],
        "svc_tol": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, kernel="rbf", sigma=1.0, C=1.0, C_star=None, r=None, loss="l2", T0=10.0, T_fixed=None,
                 R=1.5, epsilon=1e-6, max_inner=100, max_anneal=30, T_scale="C_star", select="best", tol=1e-9,
                 max_iter=100, svc_tol=1e-3):
        self.kernel = kernel
        self.sigma = sigma
        self.C = C
        self.C_star = C_star
        self.r = r
        self.loss = loss
        self.T0 = T0
        self.T_fixed = T_fixed
        self.R = R
        self.epsilon = epsilon
        self.max_inner = max_inner
        self.max_anneal = max_anneal
        self.T_scale = T_scale
        self.select = select
        self.tol = tol
        self.max_iter = max_iter
        self.svc_tol = svc_tol

    # ------------------------------------------------------------------ objective
    def _da_objective(self, beta, b, o, logit, T, y_pm, labeled, C, C_star):
        """I''(f, p; T) (JMLR 2008 eq. 7 minus T H(p); ICML 2006 eq. 4 in C/C* form)."""
        V = LOSSES[self.loss]
        unl = ~labeled
        o_u = o[unl]
        p, q = expit(logit), expit(-logit)
        lp, lq = _log_pq(logit)
        reg = 0.5 * float(beta @ (o - b))
        lab = C * float(np.sum(V(y_pm[labeled] * o[labeled]).value))
        unl_loss = C_star * float(np.sum(p * V(o_u).value + q * V(-o_u).value))
        neg_entropy = float(np.sum(p * lp + q * lq))
        return reg + lab + unl_loss + T * neg_entropy

    def _fit_binary(self, X, y_pm, labeled, gram):
        K = linear_kernel(X) if gram is None else gram
        C = float(self.C)
        C_star, r, T = self._resolve(y_pm, labeled)
        unl = ~labeled
        u = int(unl.sum())
        k_pos = n_positive(u, r)
        V = LOSSES[self.loss]
        if self.loss == "sqr":
            step = _SqrStep(K, y_pm, labeled, C, C_star)
        elif self.loss == "l2":
            step = _L2Step(K, y_pm, labeled, C, C_star, self.tol, self.max_iter)
        else:
            step = _L1Step(K, y_pm, labeled, C, C_star, self.svc_tol)

        logit = np.full(u, float(np.log(r) - np.log1p(-r)))  # p = r (ICML Table 1 "Initialize")
        trace = []
        best = None
        n_f = 0
        beta = b = o = H = None

        def stage(k, T):
            nonlocal logit, best, n_f, beta, b, o, H
            if o is not None:
                trace.append(dict(anneal=k, T=T, inner=0, step="start", kl=np.nan,
                                  objective=self._da_objective(beta, b, o, logit, T, y_pm, labeled, C, C_star),
                                  s3vm_objective=np.nan))
            inner_reason = "max_inner"
            for i in range(1, int(self.max_inner) + 1):
                # f-step at fixed p (ICML 2006 Sec. 3.1, "Optimizing f for fixed p").
                beta, b, o, _ = step.solve(expit(logit))
                n_f += 1
                s3 = s3vm_objective(0.5 * float(beta @ (o - b)), o, y_pm, labeled, C, C_star, k_pos, self.loss)
                trace.append(dict(anneal=k, T=T, inner=i, step="f", kl=np.nan,
                                  objective=self._da_objective(beta, b, o, logit, T, y_pm, labeled, C, C_star),
                                  s3vm_objective=s3))
                best = self._select(best, s3, (s3, beta, b, o, dict(anneal=k, T=T, inner=i, objective=s3)))
                # p-step at fixed f (eq. 8): g_j = C* [V(f_j) - V(-f_j)], nu from the balance.
                o_u = o[unl]
                g = C_star * (V(o_u).value - V(-o_u).value)
                root = solve_nu(g, T, r)
                kl = bernoulli_kl(root.logit, logit)
                logit = root.logit
                trace.append(dict(anneal=k, T=T, inner=i, step="p", kl=kl, nu=root.nu, balance=root.residual,
                                  objective=self._da_objective(beta, b, o, logit, T, y_pm, labeled, C, C_star),
                                  s3vm_objective=np.nan))
                if kl < self.epsilon:
                    inner_reason = "kl<epsilon"
                    break
            H = bernoulli_entropy(logit)
            trace[-1]["entropy"] = H
            return H, inner_reason

        stop_reason = self._anneal(T, stage)
        s3, beta, b, o, where = best
        o_u = o[unl]
        shift = threshold_shift(o_u, k_pos)  # constraint (3) on the model's own outputs
        info = dict(trace=trace, n_factorizations=step.n_factorizations, best=where, bias_shift=shift,
                    outputs=o - shift, r=r, C_star=C_star, n_temperatures=int(max(t["anneal"] for t in trace)) + 1,
                    final_entropy=H)
        coef = beta if gram is not None else np.asarray(X.T @ beta).ravel()
        return BinaryFit(np.asarray(coef, dtype=np.float64), float(b - shift), n_f, stop_reason, info)
