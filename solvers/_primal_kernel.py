"""Kernel finite Newton method for the convex L2-SVM (free bias), in the expansion coefficients.

Newton's method in beta of ``f = K beta + b`` (JMLR 2008, eqs. 15-17 with a convex loss; Chapelle
2007, "Training a support vector machine in the primal"), with the exact line search of SIGIR 2006
(Table 3).  :func:`kernel_newton_terms` is the method with several loss terms on one point (DA's
f-step), :func:`kernel_newton` its one-term-per-point case.  Re-exported by :mod:`solvers._primal`.

The method.  The objective is a convex piecewise quadratic.  With S the support set (``c_i > 0``
and ``y_i f_i < 1``), the Newton point is the minimizer of the quadratic that coincides with the
objective on S; it has ``beta = 0`` off S and solves a bordered (n_S + 1) system with matrix
``K_SS + diag(1/(2 c_S))`` (:func:`_newton_point`).  The step to it is followed by the exact
piecewise-quadratic line search of SIGIR 2006 (Table 3).  Every quantity the line search needs is
a by-product of the outputs (``K beta`` is kept up to date), so one step costs one Cholesky of
size n_S, ``O(n_S^3)``, and one product with n_S rows of K, ``O(n n_S)``.  The Cholesky factor is
kept (:class:`solvers._cholesky.CholeskyCache`): reused when S and the costs repeat, modified in
``O(n_S^2)`` per point when they change by a few points.  The first step from ``beta = 0`` has
every point in S.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from ._primal_common import (_MARGIN_TOL, PrimalResult, _check_cost, _check_scalar, _check_vector, _check_y,
                             _exact_line_search, _factors, _loss_sum, _rows_product)
from ._validation import check_int, check_positive


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


def _check_point(point, n: int) -> np.ndarray:
    p = np.asarray(point)
    if p.ndim != 1:
        raise ValueError(f"point must be a 1-D array of point indices, got shape {p.shape}")
    if p.size and not np.issubdtype(p.dtype, np.integer):
        raise TypeError(f"point must hold integer indices into the rows of K, got dtype {p.dtype}")
    if p.size and (p.min() < 0 or p.max() >= n):
        raise ValueError(f"point indices must lie in [0, {n}) (the rows of K), got [{p.min()}, {p.max()}]")
    return p.astype(np.intp, copy=False)


def _check_start(n, beta0, b0, tol, max_iter):
    """Validated ``(beta, b, tol, max_iter)`` of a kernel Newton call: the warm start (default
    ``beta = 0``, ``b = 0``) and the stopping parameters."""
    tol = check_positive(tol, "tol")
    max_iter = check_int(max_iter, "max_iter", 1)
    beta = np.zeros(n) if beta0 is None else _check_vector(beta0, n, "beta0")
    b = 0.0 if b0 is None else _check_scalar(b0, "b0")
    return beta, b, tol, max_iter


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
    beta, b, tol, max_iter = _check_start(n, beta0, b0, tol, max_iter)
    beta, b, Kbeta, o, n_steps, n_chol, stop = _finite_newton(factors, point, y, c, beta, b, tol, max_iter)
    objective = 0.5 * float(beta @ Kbeta) + _loss_sum(o[point], y, c)
    return PrimalResult(coef=beta, intercept=float(b), objective=objective, n_iter=n_steps, stop_reason=stop,
                        outputs=o, support=(c > 0.0) & (y * o[point] < 1.0), n_inner_iter=n_chol)


def kernel_newton(K, y, cost, beta0=None, b0=None, *, tol=1e-9, max_iter=100, init_subset=None, seed=0):
    """Primal Newton L2-SVM in the expansion coefficients (free bias).

    Minimizes (JMLR 2008, eq. 15 with ``l_L = l_U = max(0, 1 - t)^2``; eq. 1)::

        1/2 beta^T K beta + sum_i c_i max(0, 1 - y_i ((K beta)_i + b))^2

    over ``beta`` and an unregularized bias ``b``.  Per-example costs carry C and C* (``c_i = C``
    on labeled points, ``C*`` on completed unlabeled points in the common protocol, JMLR 2008
    Sec. 5.2).

    Method (Chapelle 2007; JMLR 2008, eqs. 16-17): finite Newton steps on the support set, each
    followed by the exact line search of SIGIR 2006 (Table 3); the module docstring has the steps
    and their costs.

    Stopping rules, checked after each Newton point is computed, in this order (``stop_reason``):

    * ``"support_set_stable"`` -- the Newton point has the same support set as the current point
      (margins ``y_i f_i <= 1 + 1e-9`` on S and ``>= 1 - 1e-9`` off S): it minimizes the
      quadratic that coincides with the objective around it, so it is the exact optimum and is
      returned (finite termination of the finite Newton method; the same test as SIGIR 2006,
      Table 1).  A warm start at the optimum stops here after one step, i.e. one factorization
      on the support vectors.
    * ``"newton_decrement"`` -- ``-phi'(0) <= tol * objective``, with ``phi'(0) = grad . (Newton
      point - current)`` the directional derivative toward the Newton point; this is Chapelle's
      (2007) relative-decrease criterion: the objective is within about ``tol/2`` (relative) of
      the minimum.  The current point is returned.
    * ``"max_iter"``.

    Parameters
    ----------
    K : ndarray, shape (n, n), or CholeskyCache
        Symmetric positive semi-definite kernel matrix (symmetry is not checked).  It may be
        singular or ill-conditioned.  A :class:`solvers._cholesky.CholeskyCache` of it (validated
        once) keeps the factorization across calls on the same K (warm-started retrains).
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
        Cold starts only (no ``beta0``/``b0``): first solve the problem on ``init_subset`` random
        points with positive cost and start from that solution (zero beta elsewhere).  From
        ``beta = 0`` every point is a support vector, so the first step is an O(n^3)
        factorization of the whole kernel; from a subset solution the first support set is
        usually close to the final one (Chapelle 2007 points out the O(n^3) first step; solving
        a subset first is the usual remedy).  The optimum does not depend on it.  Default: no
        subset (pure Newton from 0).
    seed : int, default=0
        Seed of ``np.random.default_rng`` for the subset.

    Returns
    -------
    PrimalResult
        ``coef`` is beta, ``n_iter`` counts Newton steps (including those on the subset),
        ``n_inner_iter`` counts the linear systems factored (or reused).

    Raises
    ------
    ValueError
        Bad shapes, non-finite values, labels other than +-1, negative costs, ``tol <= 0`` or
        ``max_iter < 1``.
    """
    factors = _factors(K)
    K = factors.K
    n = K.shape[0]
    y = _check_y(y, n)
    c = _check_cost(cost, n)
    beta, b, tol, max_iter = _check_start(n, beta0, b0, tol, max_iter)
    n_iter = n_chol = 0
    if init_subset is not None:
        init_subset = check_int(init_subset, "init_subset", 1)
        if beta0 is None and b0 is None:
            b, n_iter, n_chol = _subset_start(K, y, c, beta, b, init_subset, seed, tol, max_iter)
    point = np.arange(n)
    beta, b, Kbeta, o, n_steps, k, stop = _finite_newton(factors, point, y, c, beta, b, tol, max_iter)
    return PrimalResult(coef=beta, intercept=float(b), objective=0.5 * float(beta @ Kbeta) + _loss_sum(o, y, c),
                        n_iter=n_iter + n_steps, stop_reason=stop, outputs=o, support=(c > 0.0) & (y * o < 1.0),
                        n_inner_iter=n_chol + k)


def _subset_start(K, y, c, beta, b, size, seed, tol, max_iter):
    """Cold start of :func:`kernel_newton` from the solution on ``size`` random points of positive cost.

    Writes that solution's coefficients into ``beta`` (zero elsewhere) and returns ``(b, n_iter,
    n_chol)``: its bias and the Newton steps and factorizations it took.  Without enough points of
    positive cost it leaves ``beta`` as it is and returns ``(b, 0, 0)``.
    """
    pool = np.flatnonzero(c > 0.0)
    if size >= pool.size:
        return b, 0, 0
    sub = np.sort(np.random.default_rng(seed).choice(pool, size, replace=False))
    first = kernel_newton(K[np.ix_(sub, sub)], y[sub], c[sub], tol=tol, max_iter=max_iter)
    beta[sub] = first.coef
    return first.intercept, first.n_iter, first.n_inner_iter
