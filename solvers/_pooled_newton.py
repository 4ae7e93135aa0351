"""Primal kernel Newton L2-SVM whose loss terms share points: DA's weighted f-step without duplication.

DA's f-step at fixed p (ICML 2006 Sec. 3.1; JMLR 2008 Sec. 3.3 item 1) is a weighted L2-SVM in
which each unlabeled point carries two loss terms, ``C* p_j max(0, 1 - f_j)^2`` and
``C* (1 - p_j) max(0, 1 + f_j)^2``. Written as an ordinary L2-SVM it is a "duplicated" training
set of ``n + u`` rows whose kernel matrix repeats the unlabeled rows and columns, and
:func:`solvers._primal.kernel_newton` on it factors systems of up to ``n + u`` rows: on Coil6
(n = 1098, u = 1008) the support sets had a median of 1961 rows.

:func:`kernel_newton_terms` runs the same finite Newton method (Chapelle 2007; JMLR 2008 eqs.
15-17; exact line search of SIGIR 2006 Table 3) on the points themselves. On a fixed set S of
active terms the loss of a point i is a sum of quadratics in its output f_i, which pools into one:

    sum_{j in S, point j = i} c_j (y_j - f_i)^2 = C_i (ybar_i - f_i)^2 + const,
    C_i = sum_j c_j,   ybar_i = sum_j c_j y_j / C_i,

so the Newton point solves :func:`solvers._primal._newton_point` on the distinct points of S
(at most n rows: at least (1961 / 1098)^3 = 5.7 times fewer flops on that Coil6 problem). The
regularizer depends on the coefficients only through their sum over a point's copies
(``beta_d^T K_d beta_d = beta^T K beta`` with ``beta`` the collapsed coefficients), so in exact
arithmetic the iterates, support sets, line-search steps and stopping decisions are those of
``kernel_newton`` on the duplicated set, with the coefficients collapsed; in floating point they
agree to rounding (tests/test_pooled_newton.py).

This is a second copy of ``kernel_newton``'s loop, on purpose for now: ``kernel_newton`` is
``kernel_newton_terms`` with one term per point, but editing ``solvers/_primal.py`` re-keys every
cached cell of the benchmark (about 29 h of compute; :func:`harness.grid.solver_source_hash`).
Make ``kernel_newton`` call this with the next change that edits ``_primal.py`` anyway.
"""

from __future__ import annotations

import numpy as np

from ._primal import (_MARGIN_TOL, PrimalResult, _check_cost, _check_int, _check_K, _check_scalar, _check_vector,
                      _check_y, _exact_line_search, _loss_sum, _newton_point)
from ._validation import check_positive

__all__ = ["kernel_newton_terms"]

#: Version of the results this module's numerics produce: part of the cache key of every cell
#: that runs this code (harness.grid.cell_key). Bump it when a change moves any result.
RESULT_VERSION = 1


def _check_point(point, n: int) -> np.ndarray:
    p = np.asarray(point)
    if p.ndim != 1:
        raise ValueError(f"point must be a 1-D array of point indices, got shape {p.shape}")
    if p.size and not np.issubdtype(p.dtype, np.integer):
        raise TypeError(f"point must hold integer indices into the rows of K, got dtype {p.dtype}")
    if p.size and (p.min() < 0 or p.max() >= n):
        raise ValueError(f"point indices must lie in [0, {n}) (the rows of K), got [{p.min()}, {p.max()}]")
    return p.astype(np.intp, copy=False)


def kernel_newton_terms(K, point, y, cost, beta0=None, b0=None, *, tol=1e-9, max_iter=100):
    """Primal Newton L2-SVM (free bias) with loss terms on shared points.

    Minimizes over ``beta`` (shape (n,)) and an unregularized bias ``b``::

        1/2 beta^T K beta + sum_j c_j max(0, 1 - y_j f_{point_j})^2,   f = K beta + b,

    where term j (label ``y_j``, cost ``c_j``) acts on the output of point ``point_j``; several
    terms may share a point (DA's two copies of an unlabeled point with labels +1 and -1).
    With ``point = arange(n)`` this is :func:`solvers._primal.kernel_newton`.

    Method: that of ``kernel_newton`` (see its docstring for the steps and stopping rules), with
    the Newton point computed on the distinct points of the active terms after pooling their
    quadratics (module docstring). One step costs one Cholesky factorization of the number of
    distinct support points, not of support terms.

    Parameters
    ----------
    K : ndarray, shape (n, n)
        Symmetric positive semi-definite kernel matrix of the points.
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
        ``n_inner_iter`` the Cholesky factorizations.

    Raises
    ------
    ValueError
        Bad shapes, non-finite values, labels other than +-1, negative costs, point indices
        outside ``[0, n)``, ``tol <= 0`` or ``max_iter < 1``.
    TypeError
        Non-integer point indices, or a sparse K.
    """
    K = _check_K(K)
    n = K.shape[0]
    point = _check_point(point, n)
    m = point.size
    y = _check_y(y, m)
    c = _check_cost(cost, m)
    tol = check_positive(tol, "tol")
    max_iter = _check_int(max_iter, "max_iter", 1)
    c2 = 2.0 * c
    eligible = c > 0.0

    beta = np.zeros(n) if beta0 is None else _check_vector(beta0, n, "beta0")
    b = 0.0 if b0 is None else _check_scalar(b0, "b0")
    nz = np.flatnonzero(beta)
    # K beta from the rows of the non-zero coefficients: O(n nnz(beta)).
    Kbeta = K @ beta if 3 * nz.size > n else beta[nz] @ K[nz]
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
            beta_sv, b_bar, k = _newton_point(K, idx, target, w[idx])
            n_chol += k
            beta_bar[idx] = beta_sv
            Kbeta_bar = K @ beta_bar if 3 * idx.size > n else beta_sv @ K[idx]
        else:
            # No loss anywhere: the model is 1/2 beta^T K beta, minimized by beta = 0, b unchanged.
            b_bar = b
            Kbeta_bar = np.zeros(n)
        o_bar = Kbeta_bar + b_bar
        ot_bar = o_bar[point]
        m_bar = y * ot_bar
        if np.all(m_bar[sv] <= 1.0 + _MARGIN_TOL) and np.all(m_bar[eligible & ~sv] >= 1.0 - _MARGIN_TOL):
            # The Newton point keeps the active set: it is the optimum (finite termination).
            beta, b, Kbeta, o = beta_bar, b_bar, Kbeta_bar, o_bar
            n_steps += 1
            stop_reason = "support_set_stable"
            break
        dbeta = beta_bar - beta
        # SIGIR 2006 Table 3's L and R: the regularizer's derivative along dbeta at t = 0 and 1.
        t, slope0 = _exact_line_search(float(dbeta @ Kbeta), float(dbeta @ Kbeta_bar), ot, ot_bar, y, c2, eligible)
        if -slope0 <= tol * max(objective(beta, Kbeta, o), np.finfo(float).tiny):
            stop_reason = "newton_decrement"
            break
        beta = beta + t * dbeta
        b = b + t * (b_bar - b)
        Kbeta = Kbeta + t * (Kbeta_bar - Kbeta)
        o = Kbeta + b
        n_steps += 1

    return PrimalResult(coef=beta, intercept=float(b), objective=objective(beta, Kbeta, o), n_iter=n_steps,
                        stop_reason=stop_reason, outputs=o, support=eligible & (y * o[point] < 1.0),
                        n_inner_iter=n_chol)
