"""Shared parts of the primal L2-SVM solvers of :mod:`solvers._primal`.

* :class:`PrimalResult`, the solution both convex solvers return, and the checks of their inputs;
* :func:`_exact_line_search`, the exact line search on a piecewise quadratic of SIGIR 2006
  (Sec. 2.2, Table 3), used by L2-SVM-MFN and by the kernel finite Newton method;
* :func:`_rows_product`, ``K v`` from the rows of K where v is non-zero, the one kernel product of
  the kernel Newton and Levenberg-Marquardt steps.

Cost convention: the loss is ``sum_i c_i max(0, 1 - y_i f_i)^2``, with no 1/2 (see
:mod:`solvers._primal` for SIGIR's parameterization).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from numba import njit
from scipy.linalg.blas import ddot as _ddot

from ._cholesky import CholeskyCache


@dataclass(frozen=True)
class PrimalResult:
    """Solution of a primal L2-SVM.

    Attributes
    ----------
    coef : ndarray
        ``w`` (shape (d,)) for :func:`solvers._primal.l2svm_mfn`; the expansion coefficients
        ``beta`` (shape (n,)) for :func:`solvers._primal.kernel_newton`.
    intercept : float
        The bias b.
    objective : float
        Primal objective at (coef, intercept): ``lam/2 ||w||^2 (+ b^2 if regularized) + sum_i c_i
        max(0, 1 - y_i f_i)^2`` (linear), ``lam/2 beta^T K beta + ...`` (kernel); JMLR 2008 eq. 1, p = 2.
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

