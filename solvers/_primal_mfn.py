"""Linear L2-SVM by the modified finite Newton method L2-SVM-MFN (SIGIR 2006, Sec. 2, Tables 1-3).

SVMlin's solver (Keerthi & DeCoste 2005; SIGIR 2006 Sec. 2, the retraining step of its linear
TSVM and MFA): CGLS (Table 2) for the regularized least-squares system on the active set, then the
exact piecewise-quadratic line search (Table 3) toward its solution.  X enters only through
``X v`` and ``X^T u`` on row subsets; ``X^T X`` is never formed.  Re-exported by
:mod:`solvers._primal`.

Parameterizations.  SIGIR's ``1/2 sum c'_i (...)^2`` has a 1/2 that the objective here does not,
so SIGIR costs map to ``cost = c'_i / 2``; SIGIR's averaged objective ``lam/2 ||w||^2 + 1/(2l)
sum_labeled + lam'/(2u) sum_unlabeled`` is ``lam * [1/2 ||w||^2 + C sum_labeled + C*
sum_unlabeled]`` with ``C = 1/(2 lam l)``, ``C* = lam'/(2 lam u)`` (DESIGN.md, "Two
parameterizations").
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

from scipy.linalg.blas import daxpy as _axpy

from ._primal_common import (_BIASES, PrimalResult, _check_cost, _check_scalar, _check_vector, _check_X, _check_y,
                             _dot, _exact_line_search, _loss_sum)
from ._validation import check_int, check_positive

# SVMlin defaults (svmlin.h, reference implementation of SIGIR 2006).
MFN_EPSILON = 1e-6  # CGLS relative tolerance and margin tolerance tau (Table 1)
MFN_BIG_EPSILON = 1e-2  # crude first CGLS from a cold start (Keerthi & DeCoste heuristic 2)
MFN_SMALL_CGITERMAX = 10  # first CGLS from a cold start (heuristic 1)
MFN_CGITERMAX = 10000
MFN_ITERMAX = 50
MFN_RELATIVE_STOP_EPS = 1e-9  # SVMlin's relative-decrease stop


@njit(cache=True, nogil=True)
def _csr_matvec(indptr, indices, data, v, out):  # pragma: no cover - compiled
    """``out = X v`` for X in CSR arrays: each row's products summed in index order, from 0."""
    for i in range(out.size):
        acc = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            acc += data[k] * v[indices[k]]
        out[i] = acc


@njit(cache=True, nogil=True)
def _csr_rmatvec(indptr, indices, data, u, out):  # pragma: no cover - compiled
    """``out = X^T u`` for X in CSR arrays (read as the CSC arrays of X^T): row i of X adds
    ``u_i X[i, :]`` into ``out`` (zeroed first), rows in order."""
    out[:] = 0.0
    for i in range(indptr.size - 1):
        ui = u[i]
        for k in range(indptr[i], indptr[i + 1]):
            out[indices[k]] += data[k] * ui


class _RowBlock:
    """Products ``X_j v`` and ``X_j^T u`` for a block of rows, low overhead.

    CGLS spends its time in these two products (SIGIR 2006, Sec. 2.1); on small sparse blocks
    the operator dispatch of ``scipy.sparse`` costs a sizeable fraction of the product itself, so
    float64 CSR blocks are multiplied by two compiled loops over their arrays
    (:func:`_csr_matvec`, :func:`_csr_rmatvec`; X^T is X's arrays read as CSC, so no transpose is
    built). They add the products in the order scipy's CSR and CSC kernels do, so the results
    are those of ``X_j @ v`` and ``X_j.T @ u``. Other sparse blocks use ``@``; dense blocks use
    BLAS gemv through ``@``.
    """

    __slots__ = ("matvec", "rmatvec")

    def __init__(self, Xj):
        if sp.issparse(Xj):
            n, d = Xj.shape
            if Xj.format == "csr" and Xj.dtype == np.float64:
                # The indices as unsigned integers of the same width (they are non-negative):
                # compiled code then indexes without the wraparound test of signed indices.
                indptr, indices = (np.ascontiguousarray(a).view(np.uint32 if a.itemsize == 4 else np.uint64)
                                   for a in (Xj.indptr, Xj.indices))
                data = np.ascontiguousarray(Xj.data)

                def matvec(v):
                    out = np.empty(n)
                    _csr_matvec(indptr, indices, data, np.ascontiguousarray(v, dtype=np.float64), out)
                    return out

                def rmatvec(u):
                    out = np.empty(d)
                    _csr_rmatvec(indptr, indices, data, np.ascontiguousarray(u, dtype=np.float64), out)
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


def l2svm_mfn(X, y, cost, lam=1.0, w0=None, b0=None, *, bias="regularized", tol=MFN_EPSILON, max_iter=MFN_ITERMAX,
              cg_max_iter=MFN_CGITERMAX, rel_tol=MFN_RELATIVE_STOP_EPS):
    """Linear L2-SVM by the modified finite Newton method (SIGIR 2006, Table 1).

    Minimizes::

        lam/2 (||w||^2 [+ b^2 if bias == "regularized"]) + sum_i c_i max(0, 1 - y_i (w . x_i + b))^2

    * ``bias="regularized"`` (default): SIGIR 2006 eq. (1) and SVMlin -- a constant feature 1 is
      appended and its weight b is regularized like w.  This is also scikit-learn's
      ``LinearSVC(loss="squared_hinge", dual=False, intercept_scaling=1)`` objective with
      ``lam=1, cost=C``.
    * ``bias="free"``: unregularized b, JMLR 2008 eq. (1); with ``lam=1, cost=C`` it is the same
      problem as :func:`solvers._primal.kernel_newton` with the linear kernel ``K = X X^T``.

    SIGIR's costs and averaged objective map to these as the module docstring says.

    Algorithm (SIGIR 2006, Table 1, with SVMlin's defaults).  Each iteration solves the
    regularized least-squares problem on the active set ``j = {i : c_i > 0, y_i o_i < 1}``
    (eq. 4) by CGLS (Table 2, seeded with the current w), then takes the exact line search
    (Table 3) toward its solution.  From a cold start (no ``w0``/``b0``, or both zero) the first
    CGLS uses ``eps = 1e-2`` and at most 10 iterations (Keerthi & DeCoste 2005, heuristics 1-2),
    then ``eps = tol``, ``cg_max_iter``.

    Stopping rules (``stop_reason``):

    * ``"optimality"`` -- CGLS converged at ``eps = tol`` and its solution keeps the active set:
      ``y_i o_i <= 1 + tol`` on j and ``>= 1 - tol`` off j (Table 1); the CGLS solution is
      returned.
    * ``"relative_decrease"`` -- the objective decreased by less than ``rel_tol`` (relative) in
      one iteration (SVMlin's second test).
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
        Bad shapes, non-finite values, labels other than +-1, negative costs, non-positive
        ``lam``/``tol``, or an unknown ``bias``.
    """
    X, y, c, lam, tol, rel_tol, max_iter, cg_max_iter = _check_mfn_args(X, y, cost, lam, tol, rel_tol, max_iter,
                                                                        cg_max_iter, bias)
    lam_b = lam if bias == "regularized" else 0.0
    c2 = 2.0 * c
    eligible = c > 0.0

    def solve(o, b, seed_w, seed_b, seed_o, eps, cgmax):
        # Table 1, step 1: the regularized least-squares solution on the active set (eq. 4) by CGLS.
        active = eligible & (y * o < 1.0)
        w_bar, b_bar, opt, k = _active_set_solution(X, y, c2, active, lam, lam_b, seed_w, seed_b, seed_o, b,
                                                    eps, cgmax)
        return w_bar, b_bar, opt, k, lambda o_bar: _keeps_active_set(y * o_bar, active, eligible, tol)

    w, b, o, F, n_iter, n_cg, stop_reason = mfn_iterations(
        X, *_mfn_start(X, w0, b0, tol, cg_max_iter), solve=solve,
        objective=lambda w, b, o: _mfn_objective(w, b, o, lam, lam_b, y, c),
        line_step=lambda *segment: _line_step(*segment, lam, lam_b, y, c2, eligible),
        tol=tol, max_iter=max_iter, cg_max_iter=cg_max_iter, rel_tol=rel_tol)
    return PrimalResult(coef=w, intercept=float(b), objective=F, n_iter=n_iter, stop_reason=stop_reason, outputs=o,
                        support=eligible & (y * o < 1.0), n_inner_iter=n_cg)


def mfn_iterations(X, w, b, o, eps, cgmax, *, solve, objective, line_step, tol, max_iter, cg_max_iter, rel_tol):
    """The outer loop of L2-SVM-MFN (SIGIR 2006, Table 1), shared by :func:`l2svm_mfn` and MFA's
    w-step (:func:`solvers.mfa.optimize_w`, Table 7).

    Starts at ``(w, b)`` with outputs ``o``, its first CGLS call at tolerance ``eps`` and at most
    ``cgmax`` iterations (then ``cg_max_iter``). Each iteration builds the least-squares system at
    the current outputs and solves it by CGLS from the seed (step 1):
    ``solve(o, b, seed_w, seed_b, seed_o, eps, cgmax)`` returns ``(w_bar, b_bar, converged,
    cg_iterations, keeps)``, where ``keeps(o_bar)`` is the optimality test (the new outputs keep
    the pieces the system was built on). A converged solution that keeps them is the optimum,
    unless it was a crude solve (``eps > tol``): that is redone at ``tol``, seeded with its own
    solution. Otherwise ``line_step(w, b, o, w_bar, b_bar, o_bar)`` (the exact line search of
    Table 3) gives the next point and seed (step 2), and the loop stops once ``objective(w, b,
    o)`` decreases by less than ``rel_tol`` relative, or after ``max_iter`` iterations; the
    outputs, updated by convex combinations, are then recomputed once from ``(w, b)``.

    Returns
    -------
    tuple
        ``(w, b, o, objective, n_iter, cg_iterations, stop_reason)``, ``stop_reason`` one of
        ``"optimality"``, ``"relative_decrease"``, ``"max_iter"``.
    """
    F = objective(w, b, o)
    seed_w, seed_b, seed_o = w, b, o
    n_iter = n_cg = 0
    stop_reason = "max_iter"
    while n_iter < max_iter:
        n_iter += 1
        w_bar, b_bar, opt, k, keeps = solve(o, b, seed_w, seed_b, seed_o, eps, cgmax)
        n_cg += k
        cgmax = cg_max_iter
        o_bar = np.asarray(X @ w_bar).ravel() + b_bar
        if opt and keeps(o_bar):
            if eps > tol:  # the crude solve was consistent: redo it accurately, seeded with its solution
                eps = tol
                seed_w, seed_b, seed_o = w_bar, b_bar, o_bar
                continue
            w, b, o = w_bar, b_bar, o_bar
            F = objective(w, b, o)
            stop_reason = "optimality"
            break
        w, b, o = line_step(w, b, o, w_bar, b_bar, o_bar)
        seed_w, seed_b, seed_o = w, b, o
        F_old = F
        F = objective(w, b, o)
        if abs(F - F_old) < rel_tol * abs(F_old):
            stop_reason = "relative_decrease"
            break
    if stop_reason != "optimality":
        o = np.asarray(X @ w).ravel() + b
        F = objective(w, b, o)
    return w, b, o, F, n_iter, n_cg, stop_reason


def _check_mfn_args(X, y, cost, lam, tol, rel_tol, max_iter, cg_max_iter, bias):
    """Validated ``(X, y, c, lam, tol, rel_tol, max_iter, cg_max_iter)`` of :func:`l2svm_mfn`."""
    X = _check_X(X)
    n = X.shape[0]
    y = _check_y(y, n)
    c = _check_cost(cost, n)
    lam = check_positive(lam, "lam")
    tol = check_positive(tol, "tol")
    rel_tol = check_positive(rel_tol, "rel_tol")
    max_iter = check_int(max_iter, "max_iter", 1)
    cg_max_iter = check_int(cg_max_iter, "cg_max_iter", 1)
    if bias not in _BIASES:
        raise ValueError(f"bias must be one of {_BIASES}, got {bias!r}")
    return X, y, c, lam, tol, rel_tol, max_iter, cg_max_iter


def _mfn_objective(w, b, o, lam, lam_b, y, c) -> float:
    """The objective of :func:`l2svm_mfn` at ``(w, b)`` with outputs ``o``."""
    return 0.5 * lam * (float(w @ w) + (b * b if lam_b else 0.0)) + _loss_sum(o, y, c)


def _mfn_start(X, w0, b0, tol, cg_max_iter):
    """Start of :func:`l2svm_mfn`: ``(w, b, outputs, eps, cgmax)`` of its first CGLS call.

    A warm start (``w0``/``b0``, not both zero) seeds CGLS with the given point at ``eps = tol``
    (SIGIR 2006, Sec. 2.1 "seeding"); a cold start begins at 0 with a crude CGLS, ``eps = 1e-2``
    and at most 10 iterations (Keerthi & DeCoste 2005, heuristics 1-2), unless ``tol`` is
    larger.
    """
    n, d = X.shape
    w = np.zeros(d) if w0 is None else _check_vector(w0, d, "w0")
    b = 0.0 if b0 is None else _check_scalar(b0, "b0")
    if not (np.any(w) or b != 0.0):
        return w, b, np.zeros(n), max(MFN_BIG_EPSILON, tol), MFN_SMALL_CGITERMAX
    return w, b, np.asarray(X @ w).ravel() + b, tol, cg_max_iter


def _active_set_solution(X, y, c2, active, lam, lam_b, seed_w, seed_b, seed_o, b, eps, cgmax):
    """Minimizer of the regularized least squares on the active set (SIGIR 2006, eq. 4), by CGLS.

    Returns ``(w_bar, b_bar, converged, cg_iterations)``.  CGLS (Table 2, :func:`_cgls`) starts
    from the seed; on an empty active set eq. (4) reduces to ``lam w = 0``, with a free bias
    ``b`` staying where it is.
    """
    idx = np.flatnonzero(active)
    if not idx.size:
        return np.zeros(X.shape[1]), (b if lam_b == 0.0 else 0.0), True, 0
    Xj = X if idx.size == X.shape[0] else X[idx]
    return _cgls(Xj, y[idx], c2[idx], lam, lam_b, seed_w, seed_b, seed_o[idx], eps, cgmax)


def _keeps_active_set(margins, active, eligible, tol) -> bool:
    """SIGIR 2006 Table 1's optimality test: margins ``<= 1 + tol`` on the active set and
    ``>= 1 - tol`` on the other points of positive cost."""
    return bool(np.all(margins[active] <= 1.0 + tol) and np.all(margins[eligible & ~active] >= 1.0 - tol))


def _line_step(w, b, o, w_bar, b_bar, o_bar, lam, lam_b, y, c2, eligible):
    """The point the exact line search (SIGIR 2006, Table 3) picks on the segment from ``(w, b)``
    toward ``(w_bar, b_bar)``: ``(w, b, outputs)`` there, the outputs by convex combination."""
    delta = _step_length(w, b, w_bar, b_bar, o, o_bar, lam, lam_b, y, c2, eligible)
    return w + delta * (w_bar - w), b + delta * (b_bar - b), o + delta * (o_bar - o)


def _step_length(w, b, w_bar, b_bar, o, o_bar, lam, lam_b, y, c2, eligible) -> float:
    """The step ``delta >= 0`` of the exact line search (SIGIR 2006, Table 3) from ``(w, b)``
    toward ``(w_bar, b_bar)``, whose loss terms have outputs ``o`` and ``o_bar`` there (labels
    ``y``, twice the costs ``c2``, ``eligible`` where the cost is positive)."""
    dw = w_bar - w
    # phi'(0) and phi'(1) of the regularizer part of phi(delta) = f(w + delta (w_bar - w)).
    reg0 = lam * float(w @ dw) + lam_b * b * (b_bar - b)
    reg1 = lam * float(w_bar @ dw) + lam_b * b_bar * (b_bar - b)
    return _exact_line_search(reg0, reg1, o, o_bar, y, c2, eligible)[0]
