"""Primal Newton solvers shared by the S3VM algorithms: the one kernel Newton core and L2-SVM-MFN.

Convex L2-SVMs (squared hinge, p = 2) with per-example costs ``c_i >= 0``:

* :func:`kernel_newton` -- Newton's method in the expansion coefficients beta
  of ``f = K beta + b`` (JMLR 2008, eqs. 15-17 with a convex loss; Chapelle
  2007, "Training a support vector machine in the primal").  Each
  step solves a linear system on the current support vectors only.
  :func:`kernel_newton_terms` is the same method with several loss terms on
  one point (DA's f-step), :func:`kernel_newton` its one-term-per-point case.
* :func:`l2svm_mfn` -- the linear modified finite Newton method L2-SVM-MFN of
  SIGIR 2006 (Sec. 2, Tables 1-3; Keerthi & DeCoste 2005) with CGLS for the
  inner least-squares systems and the exact piecewise-quadratic line search.
  It only multiplies by X and X^T; X^T X is never formed.

and :func:`l2svm_objective`, the primal value of given coefficients.  Non-convex
losses at a fixed bias (Newton S3VM, CCCP's convex steps) are minimized by
:func:`lm_newton`, the Levenberg-Marquardt method of JMLR 2008 Alg. 6.

The kernel solvers share one linear-algebra core: their systems are
``K_SS + diag(d_S)`` on the current support set S, and the Cholesky factor is
kept in a :class:`solvers._cholesky.CholeskyCache` -- reused when (S, d) repeat,
modified by rank-one updates when they change by a few points, refactored
from a newly gathered block otherwise.  Pass a cache instead of K to keep it
across calls on the same kernel (the inputs are then validated once).

The objective (JMLR 2008, eq. 1 with p = 2, the problem of the common protocol)::

    lam/2 ||w||^2  +  sum_i c_i max(0, 1 - y_i (w . x_i + b))^2

kernel form: ``||w||^2 = beta^T K beta`` and ``w . x_i = (K beta)_i``.  With
``lam = 1`` and ``c_i = C`` (labeled) or ``C*`` (unlabeled) it is JMLR eq. (1).

Two parameterizations, one objective (DESIGN.md).  SIGIR 2006, Table 1 writes
``lam/2 ||w||^2 + 1/2 sum_i c'_i max(0, 1 - y_i w.x_i)^2`` -- note the 1/2 on the
loss -- so SIGIR costs ``c'_i`` correspond to ``cost = c'_i / 2`` here.  SIGIR's
averaged form (eq. 7, ``c'_i = 1/l`` labeled, ``lam'/u`` unlabeled) divided by
``lam`` is JMLR's with ``C = 1/(2 lam l)`` and ``C* = lam'/(2 lam u)``: pass
``lam=1, cost=C`` or, equivalently, ``lam=lam, cost=1/(2 l)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from numba import njit
from scipy.linalg.blas import daxpy as _axpy
from scipy.linalg.blas import ddot as _ddot
from scipy.linalg.lapack import dpotrf, dpotrs

from ._cholesky import CholeskyCache
from ._validation import check_kernel_matrix as _check_K
from ._validation import check_int, check_positive

__all__ = [
    "CholeskyCache",
    "LMResult",
    "PrimalResult",
    "lm_newton",
    "kernel_newton",
    "kernel_newton_terms",
    "l2svm_mfn",
    "l2svm_objective",
]

#: Version of the results this module's numerics produce: part of the cache key of every cell
#: that runs this code (harness.grid.cell_key). Bump it when a change moves any result.
RESULT_VERSION = 1

# SVMlin defaults (svmlin.h, reference implementation of SIGIR 2006).
MFN_EPSILON = 1e-6  # CGLS relative tolerance and margin tolerance tau (Table 1)
MFN_BIG_EPSILON = 1e-2  # crude first CGLS from a cold start (Keerthi & DeCoste heuristic 2)
MFN_SMALL_CGITERMAX = 10  # first CGLS from a cold start (heuristic 1)
MFN_CGITERMAX = 10000
MFN_ITERMAX = 50
MFN_RELATIVE_STOP_EPS = 1e-9  # SVMlin's relative-decrease stop


@dataclass(frozen=True)
class PrimalResult:
    """Solution of a primal L2-SVM.

    Attributes
    ----------
    coef : ndarray
        ``w`` (shape (d,)) for :func:`l2svm_mfn`; the expansion coefficients
        ``beta`` (shape (n,)) for :func:`kernel_newton`.
    intercept : float
        The bias b.
    objective : float
        Primal objective at (coef, intercept), see :func:`l2svm_objective`.
    n_iter : int
        Outer iterations: Newton steps taken, or MFN iterations (CGLS call +
        line search).
    stop_reason : str
        Why the solver stopped; documented in each solver.
    outputs : ndarray, shape (n,)
        ``f(x_i) = w . x_i + b`` (or ``(K beta)_i + b``) on the training points.
    support : ndarray of bool, shape (n,)
        Points with positive loss at the solution (``c_i > 0`` and
        ``y_i f(x_i) < 1``).
    n_inner_iter : int
        Total CGLS iterations (MFN) or Cholesky factorizations (Newton).
    """

    coef: np.ndarray
    intercept: float
    objective: float
    n_iter: int
    stop_reason: str
    outputs: np.ndarray
    support: np.ndarray
    n_inner_iter: int = 0


# ----------------------------------------------------------------------------
# validation
# ----------------------------------------------------------------------------
def _check_X(X):
    if sp.issparse(X):
        X = X.tocsr()  # CSR rows for X_j, CSR^T (= CSC view) for X^T z
        if X.dtype != np.float64:
            X = X.astype(np.float64)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {X.shape}")
        if not np.all(np.isfinite(X.data)):
            raise ValueError("X contains NaN or inf")
        return X
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features), got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or inf")
    return X


def _check_y(y, n: int) -> np.ndarray:
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"y must have shape ({n},), got {y.shape}")
    y = y.astype(np.float64)
    if not np.all((y == 1.0) | (y == -1.0)):
        raise ValueError("y must contain only -1 and +1")
    return y


def _check_cost(cost, n: int) -> np.ndarray:
    c = np.asarray(cost, dtype=np.float64)
    if c.ndim == 0:
        c = np.full(n, float(c))
    if c.shape != (n,):
        raise ValueError(f"cost must be a scalar or have shape ({n},), got {c.shape}")
    if not np.all(np.isfinite(c)):
        raise ValueError("cost contains NaN or inf")
    if np.any(c < 0):
        raise ValueError("cost must be >= 0")
    return c


def _check_vector(v, n: int, name: str) -> np.ndarray:
    v = np.asarray(v, dtype=np.float64)
    if v.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} contains NaN or inf")
    return v.copy()


def _check_scalar(v, name: str) -> float:
    v = float(v)
    if not np.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v!r}")
    return v


_BIASES = ("regularized", "free")
_MARGIN_TOL = 1e-9  # kernel Newton: margin slack when comparing support sets


# ----------------------------------------------------------------------------
# objective
# ----------------------------------------------------------------------------
def _dot(a, b) -> float:
    return float(_ddot(a, b))


def _loss_sum(outputs, y, c) -> float:
    slack = np.maximum(1.0 - y * outputs, 0.0)
    return float(np.dot(c, slack * slack))


def l2svm_objective(y, cost, coef, intercept=0.0, *, X=None, K=None, lam=1.0, bias="free"):
    """Primal L2-SVM objective of given coefficients (JMLR 2008, eq. 1, p = 2).

    Linear (``X`` given, ``coef = w``)::

        lam/2 (||w||^2 [+ b^2 if bias == "regularized"]) + sum_i c_i max(0, 1 - y_i (w.x_i + b))^2

    Kernel (``K`` given, ``coef = beta``, bias always free)::

        lam/2 beta^T K beta + sum_i c_i max(0, 1 - y_i ((K beta)_i + b))^2

    Parameters
    ----------
    y : array_like, shape (n,)
        Labels in {-1, +1}.
    cost : float or array_like, shape (n,)
        Per-example costs ``c_i >= 0``.
    coef : array_like
        ``w`` (shape (d,)) or ``beta`` (shape (n,)).
    intercept : float, default=0.0
    X : ndarray or scipy.sparse matrix, shape (n, d), optional
    K : ndarray, shape (n, n), optional
        Exactly one of ``X`` and ``K`` must be given.
    lam : float, default=1.0
        Regularization weight; ``lam = 1`` gives JMLR's C-parameterization.
    bias : {"free", "regularized"}, default="free"
        Whether ``b^2`` is part of the regularizer (linear form only).

    Returns
    -------
    float
    """
    if (X is None) == (K is None):
        raise ValueError("give exactly one of X (linear) or K (kernel)")
    lam = check_positive(lam, "lam")
    b = _check_scalar(intercept, "intercept")
    if X is not None:
        if bias not in _BIASES:
            raise ValueError(f"bias must be one of {_BIASES}, got {bias!r}")
        X = _check_X(X)
        n, d = X.shape
        w = _check_vector(coef, d, "coef")
        reg = float(w @ w) + (b * b if bias == "regularized" else 0.0)
        outputs = np.asarray(X @ w).ravel() + b
    else:
        if bias != "free":
            raise ValueError("the kernel objective has a free (unregularized) bias only")
        K = _check_K(K)
        n = K.shape[0]
        beta = _check_vector(coef, n, "coef")
        Kbeta = K @ beta
        reg = float(beta @ Kbeta)
        outputs = Kbeta + b
    y = _check_y(y, n)
    c = _check_cost(cost, n)
    return 0.5 * lam * reg + _loss_sum(outputs, y, c)


# ----------------------------------------------------------------------------
# exact line search on a piecewise quadratic (SIGIR 2006, Table 3)
# ----------------------------------------------------------------------------
def _exact_line_search(reg0, reg1, o, o_bar, y, c2, eligible):
    """Minimize phi(delta) = f(w + delta (w_bar - w)) over delta >= 0.

    SIGIR 2006, Sec. 2.2 and Table 3, vectorized: the breakpoints are sorted
    once and the linear pieces of phi' are scanned with cumulative sums.

    Parameters
    ----------
    reg0, reg1 : float
        Derivative of the (quadratic) regularizer part of phi at delta = 0 and
        delta = 1 (``lam w.(w_bar - w)`` and ``lam w_bar.(w_bar - w)``).
    o, o_bar : ndarray
        Outputs at delta = 0 and delta = 1.
    y : ndarray
        Labels.
    c2 : ndarray
        Twice the costs (phi has ``c_i (o - y)^2``, so its derivative ``2 c_i``).
    eligible : ndarray of bool
        Points with ``c_i > 0``.

    Returns
    -------
    delta : float
        The minimizer (>= 0).
    slope0 : float
        phi'(0), the directional derivative at the start (<= 0 for a descent
        direction); minus it is the Newton decrement when w_bar is a Newton point.
    """
    do = o_bar - o
    active = eligible & (y * o < 1.0)
    wdo = c2 * do
    L = reg0 + float(np.dot(wdo[active], (o - y)[active]))
    R = reg1 + float(np.dot(wdo[active], (o_bar - y)[active]))
    slope0 = L
    ydo = y * do
    leave = active & (ydo > 0.0)  # i in j(w) whose margin reaches 1 at delta_i
    enter = eligible & ~active & (ydo < 0.0)  # i not in j(w) whose margin drops to 1
    cand = np.flatnonzero(leave | enter)
    if cand.size:
        deltas = (y[cand] - o[cand]) / do[cand]
        order = np.argsort(deltas, kind="stable")
        cand = cand[order]
        deltas = deltas[order]
        s = np.where(leave[cand], -1.0, 1.0)
        dL = s * wdo[cand] * (o[cand] - y[cand])
        dR = s * wdo[cand] * (o_bar[cand] - y[cand])
        cL = np.cumsum(dL)
        cR = np.cumsum(dR)
        # L, R of the linear piece that ends at each breakpoint.
        Lb = L + np.concatenate(([0.0], cL[:-1]))
        Rb = R + np.concatenate(([0.0], cR[:-1]))
        hit = np.flatnonzero(Lb + deltas * (Rb - Lb) >= 0.0)
        if hit.size:
            L, R = Lb[hit[0]], Rb[hit[0]]
        else:
            L, R = L + cL[-1], R + cR[-1]
    curvature = R - L
    if not curvature > 0.0:
        # Flat direction (e.g. w_bar == w): nothing to gain.
        return 0.0, slope0
    return max(0.0, -L / curvature), slope0


# ----------------------------------------------------------------------------
# kernel Newton (finite Newton with exact line search, free bias)
# ----------------------------------------------------------------------------
def _factors(K) -> CholeskyCache:
    """``K`` as a :class:`CholeskyCache` (a new one, which validates K, when given as an array)."""
    return K if isinstance(K, CholeskyCache) else CholeskyCache(K)


def _newton_point(factors, idx, y_sv, c2_sv):
    """Minimizer of the quadratic model on a fixed support set.

    With S = idx fixed, the objective is
    ``1/2 beta^T K beta + sum_{i in S} c_i (y_i - (K beta)_i - b)^2``; setting
    its gradient ``K g`` (JMLR 2008, eq. 16) and its b-derivative to zero gives
    ``beta_i = 0`` off S and the bordered system (Chapelle 2007's Newton step
    on the support vectors, here with costs and a free bias)::

        [K_SS + diag(1/(2 c_S))   1] [beta_S]   [y_S]
        [1^T                      0] [b     ] = [ 0 ]

    K_SS + diag(1/(2c)) is positive definite even when K is singular, so no
    K^{-1} (and no Cholesky of K, cf. JMLR 2008 eq. 18) is needed.  It is
    solved by the Cholesky factor kept in ``factors`` (reused or modified when
    S and the costs repeat or change little, see :class:`CholeskyCache`) and
    the Schur complement for b.  If round-off makes the matrix indefinite
    (huge costs on duplicate points) it is factored with a growing ridge, and
    as a last resort the bordered system is solved by least squares.

    Returns ``(beta_S, b, systems)``, ``systems`` counting factorization attempts.
    """
    K = factors.K
    m = idx.size
    diag = 1.0 / c2_sv
    rhs = np.empty((m, 2))
    rhs[:, 0] = 1.0
    rhs[:, 1] = y_sv
    n_chol = 1
    sol = None
    if factors.factor(idx, diag):
        sol = factors.solve(rhs)
    else:
        M = factors.block(idx, idx)
        M.flat[:: m + 1] += diag
        scale = float(np.mean(np.diag(M)))
        jitter = 1e-12 * scale
        for _ in range(7):
            n_chol += 1
            A = M.copy()
            A.flat[:: m + 1] += jitter
            try:
                factor = sla.cho_factor(A, lower=True, overwrite_a=True, check_finite=False)
            except np.linalg.LinAlgError:
                jitter *= 100.0
                continue
            sol = sla.cho_solve(factor, rhs, check_finite=False)
            break
    if sol is not None:
        v1, v2 = sol[:, 0], sol[:, 1]
        b = float(v2.sum() / v1.sum())
        return v2 - b * v1, b, n_chol
    # Last resort: least squares on the bordered system.
    A = np.zeros((m + 1, m + 1))
    A[:m, :m] = factors.block(idx, idx)
    A[np.arange(m), np.arange(m)] += diag
    A[:m, m] = 1.0
    A[m, :m] = 1.0
    sol = np.linalg.lstsq(A, np.concatenate((y_sv, [0.0])), rcond=None)[0]
    return sol[:m], float(sol[m]), n_chol


@njit(cache=True, nogil=True)
def _combine_rows(K, rows, coef, out):  # pragma: no cover - compiled
    """``out = sum_i coef[i] K[rows[i], :]``, four rows per sweep over ``out``."""
    n = K.shape[1]
    out[:] = 0.0
    m = rows.size
    i = 0
    while i + 4 <= m:
        r0, r1, r2, r3 = K[rows[i]], K[rows[i + 1]], K[rows[i + 2]], K[rows[i + 3]]
        c0, c1, c2, c3 = coef[i], coef[i + 1], coef[i + 2], coef[i + 3]
        for j in range(n):
            out[j] += c0 * r0[j] + c1 * r1[j] + c2 * r2[j] + c3 * r3[j]
        i += 4
    while i < m:
        r0, c0 = K[rows[i]], coef[i]
        for j in range(n):
            out[j] += c0 * r0[j]
        i += 1


def _rows_product(K, v, rows):
    """``K @ v`` for v zero off ``rows`` (K symmetric), from the rows ``rows`` of K only.

    The rows are read in place, four at a time, with no gathered copy; reading them all costs
    no more than a dense ``K @ v``, so there is no threshold on ``rows.size``.
    """
    out = np.empty(K.shape[0])
    _combine_rows(K, np.asarray(rows, dtype=np.intp), np.ascontiguousarray(v[rows]), out)
    return out


def _check_point(point, n: int) -> np.ndarray:
    p = np.asarray(point)
    if p.ndim != 1:
        raise ValueError(f"point must be a 1-D array of point indices, got shape {p.shape}")
    if p.size and not np.issubdtype(p.dtype, np.integer):
        raise TypeError(f"point must hold integer indices into the rows of K, got dtype {p.dtype}")
    if p.size and (p.min() < 0 or p.max() >= n):
        raise ValueError(f"point indices must lie in [0, {n}) (the rows of K), got [{p.min()}, {p.max()}]")
    return p.astype(np.intp, copy=False)


def _finite_newton(factors, point, y, c, beta, b, tol, max_iter):
    """The finite Newton loop of :func:`kernel_newton_terms` on validated inputs.

    Returns ``(beta, b, Kbeta, o, n_steps, n_chol, stop_reason)``.
    """
    K = factors.K
    n = K.shape[0]
    c2 = 2.0 * c
    eligible = c > 0.0
    nz = np.flatnonzero(beta)
    Kbeta = _rows_product(K, beta, nz)  # K beta from the rows of the non-zero coefficients
    o = Kbeta + b

    def objective(beta, Kbeta, o):
        return 0.5 * float(beta @ Kbeta) + _loss_sum(o[point], y, c)

    stop_reason = "max_iter"
    n_steps = n_chol = 0
    while n_steps < max_iter:
        ot = o[point]
        sv = eligible & (y * ot < 1.0)
        # Pool the active terms of each point: sum c_j (y_j - f)^2 = C (ybar - f)^2 + const.
        w = np.bincount(point[sv], weights=c2[sv], minlength=n)
        idx = np.flatnonzero(w > 0.0)
        beta_bar = np.zeros(n)
        if idx.size:
            target = np.bincount(point[sv], weights=c2[sv] * y[sv], minlength=n)[idx] / w[idx]
            beta_sv, b_bar, k = _newton_point(factors, idx, target, w[idx])
            n_chol += k
            beta_bar[idx] = beta_sv
            Kbeta_bar = _rows_product(K, beta_bar, idx)
        else:
            # No loss anywhere: the model is 1/2 beta^T K beta, minimized by beta = 0, b unchanged.
            b_bar = b
            Kbeta_bar = np.zeros(n)
        o_bar = Kbeta_bar + b_bar
        ot_bar = o_bar[point]
        m_bar = y * ot_bar
        if np.all(m_bar[sv] <= 1.0 + _MARGIN_TOL) and np.all(m_bar[eligible & ~sv] >= 1.0 - _MARGIN_TOL):
            # The Newton point keeps the active set: the quadratic it minimizes is the objective
            # around it, so it is the optimum (finite termination; SIGIR 2006, Table 1).
            beta, b, Kbeta, o = beta_bar, b_bar, Kbeta_bar, o_bar
            n_steps += 1
            stop_reason = "support_set_stable"
            break
        dbeta = beta_bar - beta
        # phi(t) = objective at beta + t dbeta; SIGIR 2006 Table 3's L and R are the derivatives
        # of its regularizer at t = 0 and t = 1.
        t, slope0 = _exact_line_search(float(dbeta @ Kbeta), float(dbeta @ Kbeta_bar), ot, ot_bar, y, c2, eligible)
        if -slope0 <= tol * max(objective(beta, Kbeta, o), np.finfo(float).tiny):
            stop_reason = "newton_decrement"
            break
        beta = beta + t * dbeta
        b = b + t * (b_bar - b)
        Kbeta = Kbeta + t * (Kbeta_bar - Kbeta)
        o = Kbeta + b
        n_steps += 1
    return beta, b, Kbeta, o, n_steps, n_chol, stop_reason


def kernel_newton_terms(K, point, y, cost, beta0=None, b0=None, *, tol=1e-9, max_iter=100):
    """Primal Newton L2-SVM (free bias) whose loss terms may share points.

    Minimizes over ``beta`` (shape (n,)) and an unregularized bias ``b``::

        1/2 beta^T K beta + sum_j c_j max(0, 1 - y_j f_{point_j})^2,   f = K beta + b,

    where term j (label ``y_j``, cost ``c_j``) acts on the output of point ``point_j``.  With
    ``point = arange(n)`` it is :func:`kernel_newton`; several terms on one point are DA's
    weighted f-step at fixed p (ICML 2006 Sec. 3.1; JMLR 2008 Sec. 3.3 item 1), where an
    unlabeled point carries ``C* p_j max(0, 1 - f_j)^2`` and ``C* (1 - p_j) max(0, 1 + f_j)^2``.

    Method: the finite Newton method of :func:`kernel_newton` (its docstring has the steps and
    stopping rules).  On a fixed set S of active terms the loss of a point i is a sum of
    quadratics in its output, which pools into one::

        sum_{j in S, point j = i} c_j (y_j - f_i)^2 = C_i (ybar_i - f_i)^2 + const,
        C_i = sum_j c_j,   ybar_i = sum_j c_j y_j / C_i,

    so each Newton point solves a system on the distinct points of S (at most n rows, where the
    same problem written as an L2-SVM on duplicated points has up to n + u).  The regularizer
    depends on the coefficients only through their sum over a point's copies, so the iterates
    are those of :func:`kernel_newton` on the duplicated set, coefficients collapsed, up to
    rounding.

    Parameters
    ----------
    K : ndarray, shape (n, n), or CholeskyCache
        Symmetric positive semi-definite kernel matrix of the points; a
        :class:`solvers._cholesky.CholeskyCache` of it (validated once) keeps the factorization
        of the Newton systems across calls on the same K.
    point : array_like of int, shape (m,)
        The point of each term, in ``[0, n)``.
    y : array_like, shape (m,)
        Labels of the terms in {-1, +1}.
    cost : float or array_like, shape (m,)
        Costs ``c_j >= 0`` of the terms; terms with ``c_j = 0`` are ignored.
    beta0 : array_like, shape (n,), optional
        Warm start for beta (default 0).
    b0 : float, optional
        Warm start for b (default 0).
    tol : float, default=1e-9
        Relative Newton-decrement tolerance.
    max_iter : int, default=100
        Maximum number of Newton steps.

    Returns
    -------
    PrimalResult
        ``coef`` is beta (shape (n,)), ``outputs`` the points' outputs ``K beta + b`` (shape
        (n,)), ``support`` the active terms (shape (m,)), ``n_iter`` the Newton steps,
        ``n_inner_iter`` the linear systems factored (or reused).

    Raises
    ------
    ValueError
        Bad shapes, non-finite values, labels other than +-1, negative costs, point indices
        outside ``[0, n)``, ``tol <= 0`` or ``max_iter < 1``.
    TypeError
        Non-integer point indices, or a sparse K.
    """
    factors = _factors(K)
    n = factors.K.shape[0]
    point = _check_point(point, n)
    m = point.size
    y = _check_y(y, m)
    c = _check_cost(cost, m)
    tol = check_positive(tol, "tol")
    max_iter = check_int(max_iter, "max_iter", 1)
    beta = np.zeros(n) if beta0 is None else _check_vector(beta0, n, "beta0")
    b = 0.0 if b0 is None else _check_scalar(b0, "b0")
    beta, b, Kbeta, o, n_steps, n_chol, stop = _finite_newton(factors, point, y, c, beta, b, tol, max_iter)
    objective = 0.5 * float(beta @ Kbeta) + _loss_sum(o[point], y, c)
    return PrimalResult(coef=beta, intercept=float(b), objective=objective, n_iter=n_steps, stop_reason=stop,
                        outputs=o, support=(c > 0.0) & (y * o[point] < 1.0), n_inner_iter=n_chol)


def kernel_newton(
    K, y, cost, beta0=None, b0=None, *, tol=1e-9, max_iter=100, init_subset=None, seed=0
):
    """Primal Newton L2-SVM in the expansion coefficients (free bias).

    Minimizes (JMLR 2008, eq. 15 with ``l_L = l_U = max(0, 1 - t)^2``; eq. 1)::

        1/2 beta^T K beta + sum_i c_i max(0, 1 - y_i ((K beta)_i + b))^2

    over ``beta`` and an unregularized bias ``b``.  Per-example costs carry C
    and C* (``c_i = C`` on labeled points, ``C*`` on completed unlabeled
    points in the common protocol, JMLR 2008 Sec. 5.2).

    Method (Chapelle 2007; JMLR 2008, eqs. 16-17): the objective is a
    convex piecewise quadratic.  With S the support set (``c_i > 0`` and
    ``y_i f_i < 1``), the Newton point is the minimizer of the quadratic that
    coincides with the objective on S; it has ``beta = 0`` off S and solves a
    bordered (n_S + 1) system with matrix ``K_SS + diag(1/(2 c_S))`` (see
    ``_newton_point``).  The step to it is followed by the exact
    piecewise-quadratic line search of SIGIR 2006 (Table 3).  Every quantity
    the line search needs is a by-product of the outputs (``K beta`` is kept
    up to date), so one step costs one Cholesky of size n_S, ``O(n_S^3)``, and
    one product with n_S rows of K, ``O(n n_S)``.  The Cholesky factor is kept
    (:class:`solvers._cholesky.CholeskyCache`): reused when S and the costs
    repeat, modified in ``O(n_S^2)`` per point when they change by a few
    points.  The first step from ``beta = 0`` has every point in S.

    Stopping rules, checked after each Newton point is computed, in this
    order (``stop_reason``):

    * ``"support_set_stable"`` -- the Newton point has the same support set as
      the current point (margins ``y_i f_i <= 1 + 1e-9`` on S and
      ``>= 1 - 1e-9`` off S): it minimizes the quadratic that coincides with
      the objective around it, so it is the exact optimum and is returned
      (finite termination of the finite Newton method; the same test as
      SIGIR 2006, Table 1).  A warm start at the optimum stops here after one
      step, i.e. one factorization on the support vectors.
    * ``"newton_decrement"`` -- ``-phi'(0) <= tol * objective``, with
      ``phi'(0) = grad . (Newton point - current)`` the directional derivative
      toward the Newton point; this is Chapelle's (2007) relative-decrease
      criterion: the objective is within about ``tol/2`` (relative) of the
      minimum.  The current point is returned.
    * ``"max_iter"``.

    Parameters
    ----------
    K : ndarray, shape (n, n), or CholeskyCache
        Symmetric positive semi-definite kernel matrix (symmetry is not
        checked).  It may be singular or ill-conditioned.  A
        :class:`solvers._cholesky.CholeskyCache` of it (validated once) keeps
        the factorization across calls on the same K (warm-started retrains).
    y : array_like, shape (n,)
        Labels in {-1, +1}.
    cost : float or array_like, shape (n,)
        Costs ``c_i >= 0``; points with ``c_i = 0`` are ignored.
    beta0 : array_like, shape (n,), optional
        Warm start for beta (default 0).
    b0 : float, optional
        Warm start for b (default 0).
    tol : float, default=1e-9
        Relative Newton-decrement tolerance.
    max_iter : int, default=100
        Maximum number of Newton steps.
    init_subset : int, optional
        Cold starts only (no ``beta0``/``b0``): first solve the problem on
        ``init_subset`` random points with positive cost and start from that
        solution (zero beta elsewhere).  From ``beta = 0`` every point is a
        support vector, so the first step is an O(n^3) factorization of the
        whole kernel; from a subset solution the first support set is usually
        close to the final one (Chapelle 2007 points out the O(n^3) first
        step; solving a subset first is the usual remedy).  The optimum does
        not depend on it.  Default: no subset (pure Newton from 0).
    seed : int, default=0
        Seed of ``np.random.default_rng`` for the subset.

    Returns
    -------
    PrimalResult
        ``coef`` is beta, ``n_iter`` counts Newton steps (including those on
        the subset), ``n_inner_iter`` counts the linear systems factored (or
        reused).

    Raises
    ------
    ValueError
        Bad shapes, non-finite values, labels other than +-1, negative costs,
        ``tol <= 0`` or ``max_iter < 1``.
    """
    factors = _factors(K)
    K = factors.K
    n = K.shape[0]
    y = _check_y(y, n)
    c = _check_cost(cost, n)
    tol = check_positive(tol, "tol")
    max_iter = check_int(max_iter, "max_iter", 1)
    beta = np.zeros(n) if beta0 is None else _check_vector(beta0, n, "beta0")
    b = 0.0 if b0 is None else _check_scalar(b0, "b0")
    n_iter = n_chol = 0
    if init_subset is not None:
        init_subset = check_int(init_subset, "init_subset", 1)
        pool = np.flatnonzero(c > 0.0)
        if beta0 is None and b0 is None and init_subset < pool.size:
            sub = np.sort(np.random.default_rng(seed).choice(pool, init_subset, replace=False))
            first = kernel_newton(K[np.ix_(sub, sub)], y[sub], c[sub], tol=tol, max_iter=max_iter)
            beta[sub] = first.coef
            b = first.intercept
            n_iter, n_chol = first.n_iter, first.n_inner_iter
    point = np.arange(n)
    beta, b, Kbeta, o, n_steps, k, stop = _finite_newton(factors, point, y, c, beta, b, tol, max_iter)
    return PrimalResult(coef=beta, intercept=float(b), objective=0.5 * float(beta @ Kbeta) + _loss_sum(o, y, c),
                        n_iter=n_iter + n_steps, stop_reason=stop, outputs=o, support=(c > 0.0) & (y * o < 1.0),
                        n_inner_iter=n_chol + k)

# ----------------------------------------------------------------------------
# L2-SVM-MFN
# ----------------------------------------------------------------------------
class _RowBlock:
    """Products ``X_j v`` and ``X_j^T u`` for a block of rows, low overhead.

    CGLS spends its time in these two products (SIGIR 2006, Sec. 2.1); on
    small sparse blocks scipy's operator dispatch costs a sizeable fraction of
    the product itself, so CSR blocks call scipy's compiled CSR/CSC kernels
    directly (X^T is X's arrays read as CSC, so no transpose is built).  If
    those private kernels are unavailable the public ``@`` is used.  Dense
    blocks use BLAS gemv through ``@``.
    """

    __slots__ = ("matvec", "rmatvec")

    def __init__(self, Xj):
        if sp.issparse(Xj):
            n, d = Xj.shape
            if _csr_matvec is not None and Xj.format == "csr":
                indptr, indices, data = Xj.indptr, Xj.indices, Xj.data

                def matvec(v):
                    out = np.zeros(n)
                    _csr_matvec(n, d, indptr, indices, data, v, out)
                    return out

                def rmatvec(u):
                    out = np.zeros(d)
                    _csc_matvec(d, n, indptr, indices, data, u, out)
                    return out

                self.matvec, self.rmatvec = matvec, rmatvec
                return
            XjT = Xj.T  # one transpose object per block, not per product
            self.matvec = lambda v: np.asarray(Xj @ v).ravel()
            self.rmatvec = lambda u: np.asarray(XjT @ u).ravel()
            return
        XjT = Xj.T
        self.matvec = Xj.__matmul__
        self.rmatvec = XjT.__matmul__


try:  # private but stable for 15+ years; _RowBlock falls back if it moves
    from scipy.sparse._sparsetools import csc_matvec as _csc_matvec
    from scipy.sparse._sparsetools import csr_matvec as _csr_matvec
except ImportError:  # pragma: no cover
    _csr_matvec = _csc_matvec = None


def _cgls(Xj, yj, c2j, lam, lam_b, w, b, oj, eps, max_iter):
    """CGLS for ``[lam I~ + X~^T C X~] beta = X~^T C Y`` (SIGIR 2006, Table 2).

    ``X~ = [X_j, 1]`` is X with the constant bias feature, applied implicitly
    (``X~ v = X v_w + v_b``, ``X~^T u = [X^T u, sum u]``) so X is never copied
    or augmented; ``I~ = diag(1, ..., 1, lam_b / lam)`` regularizes the bias
    (lam_b = lam, SVMlin) or not (lam_b = 0).  ``C`` holds ``2 c_i``: the
    objective here has ``c_i`` where SIGIR has ``c_i / 2``.

    Stops when ``||r|| <= eps ||z||`` (SVMlin's relative test, Table 2) or
    after ``max_iter`` iterations.  Returns ``(w, b, converged, n_iter)``.
    """
    op = _RowBlock(Xj)
    w = np.array(w, dtype=np.float64)  # copy: updated in place below
    z = c2j * (yj - oj)
    r_w = op.rmatvec(z)
    _axpy(w, r_w, a=-lam)
    r_b = float(z.sum()) - lam_b * b
    omega1 = _dot(r_w, r_w) + r_b * r_b
    eps2 = eps * eps
    # "<=" rather than Table 2's "<": an exact solution with z = 0 (every
    # active output on its label) must count as converged.
    if omega1 <= eps2 * _dot(z, z):
        # Seed already solves the system (warm start at the optimum): Table 2
        # would divide 0 by 0 in gamma.
        return w, b, True, 0
    p_w = r_w.copy()
    p_b = r_b
    it = 0
    converged = False
    cq = np.empty_like(z)
    while it < max_iter:
        it += 1
        q = op.matvec(p_w)
        q += p_b
        np.multiply(c2j, q, out=cq)
        denom = lam * _dot(p_w, p_w) + lam_b * p_b * p_b + _dot(q, cq)
        if not denom > 0.0:
            break
        gamma = omega1 / denom
        _axpy(p_w, w, a=gamma)  # w += gamma p  (in place, BLAS)
        b += gamma * p_b
        _axpy(cq, z, a=-gamma)  # z -= gamma C q
        r_w = op.rmatvec(z)
        _axpy(w, r_w, a=-lam)  # r = X^T z - lam w
        r_b = float(z.sum()) - lam_b * b
        omega2 = omega1
        omega1 = _dot(r_w, r_w) + r_b * r_b
        if omega1 <= eps2 * _dot(z, z):
            converged = True
            break
        ratio = omega1 / omega2
        _axpy(p_w, r_w, a=ratio)  # p = r + ratio p, built in r's buffer
        p_w = r_w
        p_b = r_b + ratio * p_b
    return w, b, converged, it


def l2svm_mfn(
    X,
    y,
    cost,
    lam=1.0,
    w0=None,
    b0=None,
    *,
    bias="regularized",
    tol=MFN_EPSILON,
    max_iter=MFN_ITERMAX,
    cg_max_iter=MFN_CGITERMAX,
    rel_tol=MFN_RELATIVE_STOP_EPS,
):
    """Linear L2-SVM by the modified finite Newton method (SIGIR 2006, Table 1).

    Minimizes::

        lam/2 (||w||^2 [+ b^2 if bias == "regularized"])
            + sum_i c_i max(0, 1 - y_i (w . x_i + b))^2

    * ``bias="regularized"`` (default): SIGIR 2006 eq. (1) and SVMlin -- a
      constant feature 1 is appended and its weight b is regularized like w.
      This is also scikit-learn's ``LinearSVC(loss="squared_hinge",
      dual=False, intercept_scaling=1)`` objective with ``lam=1, cost=C``.
    * ``bias="free"``: unregularized b, JMLR 2008 eq. (1); with ``lam=1,
      cost=C`` it is the same problem as :func:`kernel_newton` with the linear
      kernel ``K = X X^T``.

    Parameterizations.  SIGIR's ``1/2 sum c'_i (...)^2`` has a 1/2 that this
    objective does not, so SIGIR costs map to ``cost = c'_i / 2``; SIGIR's
    averaged objective ``lam/2 ||w||^2 + 1/(2l) sum_labeled + lam'/(2u)
    sum_unlabeled`` is ``lam * [1/2 ||w||^2 + C sum_labeled + C* sum_unlabeled]``
    with ``C = 1/(2 lam l)``, ``C* = lam'/(2 lam u)`` (DESIGN.md, "Two
    parameterizations").

    Algorithm (SIGIR 2006, Table 1, with SVMlin's defaults).  Each iteration
    solves the regularized least-squares problem on the active set
    ``j = {i : c_i > 0, y_i o_i < 1}`` (eq. 4) by CGLS (Table 2, seeded with
    the current w), then takes the exact line search (Table 3) toward its
    solution.  From a cold start (no ``w0``/``b0``, or both zero) the first
    CGLS uses ``eps = 1e-2`` and at most 10 iterations (Keerthi & DeCoste
    2005, heuristics 1-2), then ``eps = tol``, ``cg_max_iter``.  X enters only
    through ``X v`` and ``X^T u`` on row subsets; ``X^T X`` is never formed.

    Stopping rules (``stop_reason``):

    * ``"optimality"`` -- CGLS converged at ``eps = tol`` and its solution
      keeps the active set: ``y_i o_i <= 1 + tol`` on j and ``>= 1 - tol`` off
      j (Table 1); the CGLS solution is returned.
    * ``"relative_decrease"`` -- the objective decreased by less than
      ``rel_tol`` (relative) in one iteration (SVMlin's second test).
    * ``"max_iter"`` -- ``max_iter`` iterations (SVMlin: 50).

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n, d)
        Sparse input is converted to CSR (no densification).
    y : array_like, shape (n,)
        Labels in {-1, +1}.
    cost : float or array_like, shape (n,)
        Costs ``c_i >= 0``; points with ``c_i = 0`` are ignored.
    lam : float, default=1.0
        Regularization weight ``lam > 0``.
    w0 : array_like, shape (d,), optional
        Warm start for w (SIGIR 2006, Sec. 2.1 "seeding").
    b0 : float, optional
        Warm start for b.
    bias : {"regularized", "free"}, default="regularized"
    tol : float, default=1e-6
        SVMlin's epsilon: CGLS relative residual and margin tolerance tau.
    max_iter : int, default=50
        Maximum MFN iterations.
    cg_max_iter : int, default=10000
        Maximum CGLS iterations per call.
    rel_tol : float, default=1e-9
        Relative objective decrease that stops the iterations.

    Returns
    -------
    PrimalResult
        ``coef`` is w, ``n_inner_iter`` the total number of CGLS iterations.

    Raises
    ------
    ValueError
        Bad shapes, non-finite values, labels other than +-1, negative costs,
        non-positive ``lam``/``tol``, or an unknown ``bias``.
    """
    X = _check_X(X)
    n, d = X.shape
    y = _check_y(y, n)
    c = _check_cost(cost, n)
    lam = check_positive(lam, "lam")
    tol = check_positive(tol, "tol")
    rel_tol = check_positive(rel_tol, "rel_tol")
    max_iter = check_int(max_iter, "max_iter", 1)
    cg_max_iter = check_int(cg_max_iter, "cg_max_iter", 1)
    if bias not in _BIASES:
        raise ValueError(f"bias must be one of {_BIASES}, got {bias!r}")
    lam_b = lam if bias == "regularized" else 0.0
    c2 = 2.0 * c
    eligible = c > 0.0

    w = np.zeros(d) if w0 is None else _check_vector(w0, d, "w0")
    b = 0.0 if b0 is None else _check_scalar(b0, "b0")
    cold = not (np.any(w) or b != 0.0)
    if cold:
        o = np.zeros(n)
        eps, cgmax = MFN_BIG_EPSILON, MFN_SMALL_CGITERMAX
    else:
        o = np.asarray(X @ w).ravel() + b
        eps, cgmax = tol, cg_max_iter
    eps = max(eps, tol)  # a user tol above 1e-2 makes the crude phase moot

    def objective(w, b, o):
        return 0.5 * lam * (float(w @ w) + (b * b if lam_b else 0.0)) + _loss_sum(o, y, c)

    F = objective(w, b, o)
    active = eligible & (y * o < 1.0)
    seed_w, seed_b, seed_o = w, b, o
    n_iter = 0
    n_cg = 0
    stop_reason = "max_iter"
    while n_iter < max_iter:
        n_iter += 1
        idx = np.flatnonzero(active)
        if idx.size:
            Xj = X if idx.size == n else X[idx]
            w_bar, b_bar, opt, k = _cgls(
                Xj, y[idx], c2[idx], lam, lam_b, seed_w, seed_b, seed_o[idx], eps, cgmax
            )
            n_cg += k
        else:
            # Empty active set: eq. (4) reduces to lam w = 0 (b free stays put).
            w_bar, b_bar, opt = np.zeros(d), (b if lam_b == 0.0 else 0.0), True
        cgmax = cg_max_iter
        o_bar = np.asarray(X @ w_bar).ravel() + b_bar
        if opt:
            m_bar = y * o_bar
            keeps = np.all(m_bar[active] <= 1.0 + tol) and np.all(
                m_bar[eligible & ~active] >= 1.0 - tol
            )
            if keeps:
                if eps > tol:
                    # Crude solve was consistent: redo it accurately (Table 1),
                    # seeded with its own solution (same system).
                    eps = tol
                    seed_w, seed_b, seed_o = w_bar, b_bar, o_bar
                    continue
                w, b, o = w_bar, b_bar, o_bar
                F = objective(w, b, o)
                stop_reason = "optimality"
                break
        dw = w_bar - w
        reg0 = lam * float(w @ dw) + lam_b * b * (b_bar - b)
        reg1 = lam * float(w_bar @ dw) + lam_b * b_bar * (b_bar - b)
        delta, _ = _exact_line_search(reg0, reg1, o, o_bar, y, c2, eligible)
        w = w + delta * dw
        b = b + delta * (b_bar - b)
        o = o + delta * (o_bar - o)
        seed_w, seed_b, seed_o = w, b, o
        active = eligible & (y * o < 1.0)
        F_old = F
        F = objective(w, b, o)
        if abs(F - F_old) < rel_tol * abs(F_old):
            stop_reason = "relative_decrease"
            break

    if stop_reason != "optimality":
        # o was updated by convex combinations; recompute it exactly once.
        o = np.asarray(X @ w).ravel() + b
        F = objective(w, b, o)
    return PrimalResult(
        coef=w,
        intercept=float(b),
        objective=F,
        n_iter=n_iter,
        stop_reason=stop_reason,
        outputs=o,
        support=eligible & (y * o < 1.0),
        n_inner_iter=n_cg,
    )


# ----------------------------------------------------------------------------
# Levenberg-Marquardt Newton in beta, fixed bias (JMLR 2008 Sec. 4.4, Alg. 6)
# ----------------------------------------------------------------------------
@dataclass(frozen=True)
class LMResult:
    """Outcome of :func:`lm_newton`.

    Attributes
    ----------
    coef : ndarray, shape (n,)
        beta.
    objective : float
        ``Omega(beta)`` of eq. (15).
    outputs : ndarray, shape (n,)
        ``K beta + b``.
    n_iter : int
        Levenberg-Marquardt iterations (steps tried, accepted or not).
    n_accepted : int
        Steps accepted (rho > 0).
    stop_reason : str
        ``"decrement"`` (converged, see :func:`lm_newton`), ``"stalled"`` or ``"max_iter"``.
    n_sv : int
        Points with non-zero curvature at the last step (the size of the linear systems).
    lam : float
        The Levenberg-Marquardt parameter at exit.
    """

    coef: np.ndarray
    objective: float
    outputs: np.ndarray
    n_iter: int
    n_accepted: int
    stop_reason: str
    n_sv: int
    lam: float


class _ShiftedSystem:
    """``M(lam) s = rhs`` with ``M(lam) = K_sv + lam D^-1``, for the successive lam of one LM step.

    With ``P = {i: D_ii > 0}`` and ``N = {i: D_ii < 0}``, ``A = K_PP + lam D_P^-1`` is positive
    definite (K is positive semi-definite) and ``S = K_NN + lam D_N^-1 - K_NP A^-1 K_PN`` is its
    Schur complement in M. Haynsworth's inertia additivity, ``In(M) = In(A) + In(S)``, makes the
    test of Alg. 6 -- M has exactly ``|N|`` negative eigenvalues, i.e. ``lam K + K D K > 0`` (see
    :func:`lm_newton`) -- the same as "``-S`` is positive definite". So two Cholesky
    factorizations, of A and of ``-S``, decide the test and give the solution by block
    elimination (LAPACK ``dpotrf`` is several times faster than the Bunch-Kaufman ``dsytrf`` of
    M, and N is usually a few points). With ``A = L L^T`` and ``[W, w] = L^-1 [K_PN, rhs_P]`` (one
    forward triangular sweep), ``-S = W^T W - K_NN - lam D_N^-1``, ``s_N = S^-1 (rhs_N - W^T w)``
    and ``s_P = L^-T (w - W s_N)`` (one backward sweep). The factor of A is the one kept by
    ``factors`` (:class:`solvers._cholesky.CholeskyCache`: reused or modified from the previous
    step's when P and lam D_P^-1 repeat or change little); the blocks ``K_PN``, ``K_NN`` are
    gathered once per step, not once per lam.

    Parameters
    ----------
    factors : CholeskyCache or ndarray, shape (n, n)
        The kernel matrix K (wrapped in a new cache if an array).
    sv : ndarray of int
        The support vectors (points with ``h != 0``), sorted.
    D : ndarray, shape (len(sv),)
        Their curvatures, all non-zero.
    """

    def __init__(self, factors, sv, D):
        self.factors = _factors(factors)
        self.P = np.flatnonzero(D > 0.0)
        self.N = np.flatnonzero(D < 0.0)
        if self.P.size + self.N.size != len(D) or not len(D):
            # a NaN curvature is in neither block and would leave its step entry unset
            raise ValueError("the curvatures D must be finite and non-zero, and there must be at least one")
        self.iP, iN = sv[self.P], sv[self.N]
        self.inv_D_P = 1.0 / D[self.P]
        if self.N.size:
            self._rhs = np.empty((self.P.size, iN.size + 1), order="F")  # [K_PN, rhs_P]
            self._rhs[:, :-1] = self.factors.block(self.iP, iN)
            self.K_NN = self.factors.block(iN, iN)
            self.inv_D_N = 1.0 / D[self.N]

    def solve(self, lam, rhs):
        """``M(lam)^-1 rhs``, or None if ``lam K + K D K`` is not positive definite at this lam."""
        P, N = self.P, self.N
        if P.size:
            if not self.factors.factor(self.iP, lam * self.inv_D_P):
                return None
            if not N.size:
                return self.factors.solve(rhs)
            # With A = L L^T: [W, w] = L^-1 [K_PN, rhs_P] in one triangular sweep, so that
            # K_NP A^-1 K_PN = W^T W and K_NP A^-1 rhs_P = W^T w.
            self._rhs[:, -1] = rhs[P]
            Ww = self.factors.forward(self._rhs)
            W, w = Ww[:, :-1], Ww[:, -1]
            minus_S = W.T @ W
            minus_S -= self.K_NN
            r_N = rhs[N] - W.T @ w
        else:
            minus_S, r_N = -self.K_NN, rhs[N]
        minus_S.flat[:: N.size + 1] -= lam * self.inv_D_N
        L_N, info = dpotrf(minus_S, lower=1, overwrite_a=1, clean=0)
        if info != 0:
            return None
        s = np.empty(rhs.size)
        s[N] = -dpotrs(L_N, r_N, lower=1)[0]
        if P.size:
            s[P] = self.factors.backward(w - W @ s[N])  # A^-1 (rhs_P - K_PN s_N)
        return s


def lm_newton(K, b, loss, beta0=None, *, Kbeta0=None, tol=1e-10, max_iter=200):
    """Levenberg-Marquardt minimization of eq. (15) of JMLR 2008 in beta, bias fixed.

    Minimizes ::

        Omega(beta) = 1/2 beta^T K beta + sum_i loss_i((K beta)_i + b)

    where ``loss(o) -> (value, d, h)`` returns the summed loss and its first and second
    derivatives with respect to each output (costs and label signs folded in, so
    ``d_i = C y_i l_L'(y_i o_i)`` on a labeled point). The losses may be non-convex and piecewise
    quadratic with linear and flat parts: the curvature ``h`` vanishes there.

    Method: JMLR 2008 Algorithm 6. The gradient is ``K g`` with ``g = beta + d`` (eq. 16), the
    Hessian ``K + K D K`` with ``D = diag(h)`` (eq. 17). The step solves
    ``(lam K + K D K) s = -K g`` by eq. (18): ``s = -g / lam`` on the points with ``h = 0`` and,
    on the ``n_sv`` "support vectors" with ``h != 0``, ``(lam I + D_sv K_sv) s_sv = rhs`` with
    ``rhs = -(g_sv - D_sv K_sv,nsv g_nsv / lam)``. The paper solves this system through the
    Cholesky factor A of K_sv (``s_sv = A^{-1} B^{-1} A rhs``, ``B = lam I + A D_sv A^T``, whose
    Cholesky factorization also tests ``lam K + K D K > 0``); we solve the equivalent symmetric
    system ``(K_sv + lam D_sv^{-1}) s_sv = D_sv^{-1} rhs`` instead, with no product ``A D A^T``.
    By Haynsworth's inertia additivity, ``lam K_sv^{-1} + D_sv > 0`` (i.e. B > 0) if and only if
    ``K_sv + lam D_sv^{-1}`` has exactly as many negative eigenvalues as D_sv; the system and
    this test are solved by :class:`_ShiftedSystem` (one Cholesky factorization when every
    ``D_ii > 0`` -- the matrix is then positive definite even for a singular K -- and two on a
    block split otherwise). If the test fails, lam is multiplied by 4 (Fletcher 1987, Alg.
    5.2.7). With ``rho`` the ratio of the actual decrease to the decrease predicted by the
    quadratic model (true Hessian), the step is taken if ``rho > 0``; lam is multiplied by 4 if
    ``rho < 0.25`` and set to ``max(1, lam / 2)`` if ``rho > 0.75`` (the text of Alg. 6 reads
    "rho > 0.25" and "min(1, lam/2)" -- extraction slips: lam >= 1 by the paper's own
    definition, and Fletcher's rule enlarges the ridge when the model is poor). A rejected step
    leaves beta, g, the support vectors and the right-hand side's ``K_sv,nsv g_nsv`` unchanged;
    they are kept for the next lam. One step costs ``O(n (n_sv + n_g))`` for ``K s``, read from
    the rows of the support vectors and of the ``n_g`` other points where g is non-zero (few after
    the first full step), and, for the factorization, ``O(n_sv^3)`` -- or nothing when the
    support vectors, their curvatures and lam repeat, and ``O(n_sv^2)`` per point when they
    change by a few points (:class:`solvers._cholesky.CholeskyCache`).

    Stopping. With the centered kernel of eq. (13) K is singular, so ``g`` need not vanish at a
    minimizer (only ``K g`` does) and the paper's ``Norm(g) <= epsilon`` is replaced by the
    predicted decrease of the step at ``lam = 1`` (the Newton decrement): ``"decrement"`` when
    it is at most ``tol * max(1, Omega)``; ``"stalled"`` when lam has grown beyond 1e12 without
    an acceptable step.

    Parameters
    ----------
    K : ndarray, shape (n, n), or CholeskyCache
        Symmetric positive semi-definite kernel matrix (e.g. centered, eq. 13); a
        :class:`solvers._cholesky.CholeskyCache` of it (validated once) keeps the factorization
        across calls on the same K (annealing stages, CCCP iterations).
    b : float
        The fixed bias (``2 r~ - 1`` under the mean-output constraint, eq. 12).
    loss : callable
        ``loss(outputs) -> (value: float, d: ndarray, h: ndarray)``.
    beta0 : ndarray, shape (n,), optional
        Starting point (default 0, as Alg. 6).
    Kbeta0 : ndarray, shape (n,), optional
        ``K @ beta0`` when the caller has it (the outputs of a previous call on the same K, less
        b: a warm start from the previous annealing stage or CCCP step); it spares the
        ``O(n^2)`` product. Ignored without ``beta0``.
    tol : float, default=1e-10
        Relative tolerance of the Newton decrement.
    max_iter : int, default=200

    Returns
    -------
    LMResult
    """
    factors = _factors(K)
    K = factors.K
    n = K.shape[0]
    b = _check_scalar(b, "b")
    tol = check_positive(tol, "tol")
    max_iter = check_int(max_iter, "max_iter", 1)
    beta = np.zeros(n) if beta0 is None else _check_vector(beta0, n, "beta0")
    if beta0 is not None and Kbeta0 is not None:
        Kbeta = _check_vector(Kbeta0, n, "Kbeta0")
    else:
        Kbeta = K @ beta if np.any(beta) else np.zeros(n)
    o = Kbeta + b
    value, d, h = loss(o)
    omega = 0.5 * float(beta @ Kbeta) + float(value)
    lam = 1.0
    it = accepted = 0
    stop = "max_iter"
    n_sv = 0
    moved = True  # beta changed since the step's terms were built (they are kept after a rejection)
    while it < max_iter:
        it += 1
        if moved:
            moved = False
            g = beta + d  # eq. (16): the gradient is K g
            sv_mask = h != 0.0
            sv = np.flatnonzero(sv_mask)
            nsv = np.flatnonzero(~sv_mask)
            n_sv = sv.size
            # K g_N, g_N = g off the support vectors. Its sv entries are the K_sv,nsv g_nsv of
            # eq. (18); and since s = -g / lam off sv, K s = K_:,sv s_sv - K g_N / lam. After one
            # full step g vanishes on most non-support points (beta_i = -d_i there), so only the
            # rows of the others are read.
            gz = nsv[g[nsv] != 0.0]
            K_gN = _rows_product(K, g, gz)
            if n_sv:
                D_sv = h[sv]
                system = _ShiftedSystem(factors, sv, D_sv)
                KsvN_gN = K_gN[sv]
        while lam <= 1e12:
            s = np.empty(n)
            s[nsv] = -g[nsv] / lam
            if not n_sv:
                break
            s_sv = system.solve(lam, -(g[sv] - D_sv * KsvN_gN / lam) / D_sv)
            if s_sv is not None:
                s[sv] = s_sv
                break
            lam *= 4.0  # lam K + K D K is not positive definite (Alg. 6)
        if lam > 1e12:
            stop = "stalled"
            break
        Ks = _rows_product(K, s, sv) - K_gN / lam  # K s from the rows of sv and gz only
        # Quadratic model with the true Hessian K + K D K (rho of Alg. 6).
        pred = float(Ks @ g) + 0.5 * float(s @ Ks) + 0.5 * float(Ks @ (h * Ks))
        if lam == 1.0 and -pred <= tol * max(1.0, omega):
            stop = "decrement"
            break
        beta_new = beta + s
        Kbeta_new = Kbeta + Ks
        o_new = Kbeta_new + b
        value_new, d_new, h_new = loss(o_new)
        omega_new = 0.5 * float(beta_new @ Kbeta_new) + float(value_new)
        rho = (omega_new - omega) / pred if pred < 0.0 else -1.0
        if rho > 0.0:
            beta, Kbeta, o, d, h, omega = beta_new, Kbeta_new, o_new, d_new, h_new, omega_new
            accepted += 1
            moved = True
        if rho < 0.25:
            lam *= 4.0
            if lam > 1e12:
                stop = "stalled"
                break
        elif rho > 0.75:
            lam = max(1.0, lam / 2.0)
    return LMResult(beta, float(omega), o, it, accepted, stop, int(n_sv), float(lam))
