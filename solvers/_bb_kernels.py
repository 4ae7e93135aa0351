"""Compiled node kernels of branch and bound (NIPS 2006 Alg. 1, Sec. 6).

A branch-and-bound node does little arithmetic -- on Coil3 (216 points) the support set has
about 50 points and 130 points are still free -- which written with NumPy would be spent in
dozens of small array calls per node. These are the algorithms of a node written as loops and
compiled with numba, so that a node costs what its arithmetic costs:

* :func:`factor`, :func:`grow`, :func:`shrink`, :func:`solve` -- the lower Cholesky factor of
  the support-vector block ``A_S = K_SS + diag(1/(2 c_S))``, bordered when points enter and
  refactored from the exact Gram entries behind the first removed row when points leave (the
  scheme of :class:`solvers._bb_search._IncrementalL2SVM`, whose docstring says why a factor and not
  an inverse);
* :func:`add` -- the L2-SVM optimum after labeled points enter, by finite Newton with exact line
  search warm-started at the parent optimum (as :func:`solvers._primal.kernel_newton`; the line
  search is SIGIR 2006 Table 3, as :func:`solvers._primal._exact_line_search`);
* :func:`lookahead` -- the branching scores of NIPS 2006 eqs. 7-8 and the dual bounds of both
  children along Proposition 1's ray;
* :func:`balanced_bottleneck` -- the balance-aware completion bound.

Each is checked in ``tests/test_bb.py`` against a fresh factorization, the batch Newton solver,
brute force, or the closed form it implements.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Version of the results this module's numerics produce: part of the cache key of every cell
#: that runs this code (harness.grid.cell_key). Bump it when a change moves any result.
RESULT_VERSION = 1

MARGIN_TOL = 1e-9  # same support-set test as kernel_newton
RESID_TOL = 1e-6  # Newton-system residual that triggers refactoring from scratch
MAX_NEWTON = 200


@njit(cache=True)
def _chol_inplace(A):
    """Overwrite A by its lower Cholesky factor (upper triangle zeroed); False if not SPD."""
    m = A.shape[0]
    for j in range(m):
        s = A[j, j]
        for k in range(j):
            s -= A[j, k] * A[j, k]
        if not s > 0.0:
            return False
        d = np.sqrt(s)
        A[j, j] = d
        for i in range(j + 1, m):
            t = A[i, j]
            for k in range(j):
                t -= A[i, k] * A[j, k]
            A[i, j] = t / d
    for i in range(m):
        for j in range(i + 1, m):
            A[i, j] = 0.0
    return True


@njit(cache=True)
def gram(K, ridge, S, T):
    """``A[S, T]`` = ``K[S, T]``, plus ``ridge`` where the row and column are the same point."""
    out = np.empty((S.size, T.size))
    for a in range(S.size):
        i = S[a]
        for c in range(T.size):
            out[a, c] = K[i, T[c]]
            if T[c] == i:
                out[a, c] += ridge[i]
    return out


@njit(cache=True)
def factor(K, ridge, S):
    """Fresh lower Cholesky factor of ``A_S`` (SPD: the ridge 1/(2c) > 0 is added to a PSD K)."""
    A = gram(K, ridge, S, S)
    if _chol_inplace(A):
        return A
    # Only if K is not PSD beyond the ridge: a relative jitter, as the NumPy version did.
    A = gram(K, ridge, S, S)
    tr = 0.0
    for a in range(S.size):
        tr += A[a, a]
    for a in range(S.size):
        A[a, a] += 1e-12 * tr / S.size
    if not _chol_inplace(A):
        raise ValueError("the Gram matrix is not positive semidefinite: its support-vector block "
                         "has no Cholesky factor even with a jitter")
    return A


@njit(cache=True)
def _forward(L, B):
    """``B <- L^{-1} B`` in place (L lower triangular, B of shape (m, p))."""
    m, p = B.shape
    for i in range(m):
        for k in range(i):
            lik = L[i, k]
            if lik != 0.0:
                for j in range(p):
                    B[i, j] -= lik * B[k, j]
        inv = 1.0 / L[i, i]
        for j in range(p):
            B[i, j] *= inv


@njit(cache=True)
def _backward(L, B):
    """``B <- L^{-T} B`` in place."""
    m, p = B.shape
    for i in range(m - 1, -1, -1):
        for k in range(i + 1, m):
            lki = L[k, i]
            if lki != 0.0:
                for j in range(p):
                    B[i, j] -= lki * B[k, j]
        inv = 1.0 / L[i, i]
        for j in range(p):
            B[i, j] *= inv


@njit(cache=True)
def solve(L, B):
    """``A_S^{-1} B`` from the factor ``A_S = L L^T`` (B of shape (m, p); a new array)."""
    X = B.copy()
    _forward(L, X)
    _backward(L, X)
    return X


@njit(cache=True)
def solve2(L, u, v):
    """``A_S^{-1} [u, v]`` for two vectors, by dot products along the rows of L.

    The Newton step's two right-hand sides: for them the inner loops of :func:`solve` (over the
    columns of B) are too short to pay for themselves.
    """
    m = u.size
    x = u.copy()
    z = v.copy()
    for i in range(m):
        s, t = x[i], z[i]
        for k in range(i):
            s -= L[i, k] * x[k]
            t -= L[i, k] * z[k]
        x[i] = s / L[i, i]
        z[i] = t / L[i, i]
    for i in range(m - 1, -1, -1):
        xi, zi = x[i] / L[i, i], z[i] / L[i, i]
        x[i], z[i] = xi, zi
        for k in range(i):  # the column L[i, :i] of L^T: subtract row i's contribution now
            x[k] -= L[i, k] * xi
            z[k] -= L[i, k] * zi
    return x, z


@njit(cache=True)
def grow(K, ridge, S, L, J):
    """Append the points J: ``[[L, 0], [W^T, chol(A_JJ - W^T W)]]`` with ``W = L^{-1} A_SJ``.

    Returns ``(S2, L2, refactored)``; ``refactored`` is 1 when round-off made the Schur
    complement indefinite and the factor was rebuilt from scratch.
    """
    m, q = S.size, J.size
    S2 = np.empty(m + q, np.int64)
    S2[:m] = S
    S2[m:] = J
    if q == 0:
        return S2, L.copy(), 0
    if m == 0:
        return S2, factor(K, ridge, S2), 0
    W = gram(K, ridge, S, J)
    _forward(L, W)
    B = gram(K, ridge, J, J)
    for a in range(q):
        for c in range(q):
            s = 0.0
            for k in range(m):
                s += W[k, a] * W[k, c]
            B[a, c] -= s
    if not _chol_inplace(B):
        return S2, factor(K, ridge, S2), 1
    out = np.zeros((m + q, m + q))
    out[:m, :m] = L
    out[m:, :m] = W.T
    out[m:, m:] = B
    return S2, out, 0


@njit(cache=True)
def shrink(K, ridge, S, L, keep):
    """Drop the positions ``~keep``: the factor of a principal submatrix of A_S.

    Rows before the first removed position p0 keep their factor rows (a leading principal block
    factors by the leading block of L); the kept rows after p0 keep their first p0 columns, and
    their trailing block is the Cholesky factor of the exact Schur complement
    ``A_TT - L_T,:p0 L_T,:p0^T`` (T the kept positions after p0). Returns ``(S2, L2, refactored)``.
    """
    R = np.flatnonzero(keep)
    if R.size == S.size:
        return S.copy(), L.copy(), 0
    S2 = S[R]
    if R.size == 0:
        return S2, np.zeros((0, 0)), 0
    p0 = 0
    while keep[p0]:
        p0 += 1
    T = R[p0:]  # the kept positions before p0 are exactly 0 .. p0 - 1
    out = np.zeros((R.size, R.size))
    out[:p0, :p0] = L[:p0, :p0]
    if T.size:
        nt = T.size
        LT = np.empty((nt, p0))
        for a in range(nt):
            for k in range(p0):
                LT[a, k] = L[T[a], k]
        B = gram(K, ridge, S[T], S[T])
        for a in range(nt):
            for c in range(a + 1):  # the lower triangle: all the factorization reads
                s = 0.0
                for k in range(p0):
                    s += LT[a, k] * LT[c, k]
                B[a, c] -= s
        if not _chol_inplace(B):
            return S2, factor(K, ridge, S2), 1
        out[p0:, :p0] = LT
        out[p0:, p0:] = B
    return S2, out, 0


@njit(cache=True)
def objective(beta, S, b, f, y, cost):
    """``1/2 beta_S^T (f_S - b) + sum_assigned c_i max(0, 1 - y_i f_i)^2`` (y = 0: not assigned).

    ``beta`` has one entry per point of S; ``f - b = K beta`` at an exact optimum, so the first
    term is the regularizer ``1/2 beta^T K beta``.
    """
    reg = 0.0
    for a in range(S.size):
        reg += beta[a] * (f[S[a]] - b)
    loss = 0.0
    for i in range(y.size):
        if y[i] != 0.0:
            s = 1.0 - y[i] * f[i]
            if s > 0.0:
                loss += cost[i] * s * s
    return 0.5 * reg + loss


@njit(cache=True)
def line_search(reg0, reg1, o, o_bar, y, c2):
    """Exact line search on the piecewise quadratic (SIGIR 2006, Table 3); y = 0 is ineligible.

    The loop form of :func:`solvers._primal._exact_line_search` (same breakpoints, same stable
    order, same first piece where the derivative turns non-negative). Returns ``(t, slope0)``.
    """
    n = y.size
    L = reg0
    R = reg1
    ncand = 0
    for i in range(n):
        if y[i] == 0.0:
            continue
        do = o_bar[i] - o[i]
        if y[i] * o[i] < 1.0:
            L += c2[i] * do * (o[i] - y[i])
            R += c2[i] * do * (o_bar[i] - y[i])
            if y[i] * do > 0.0:
                ncand += 1
        elif y[i] * do < 0.0:
            ncand += 1
    slope0 = L
    if ncand:
        cand = np.empty(ncand, np.int64)
        sign = np.empty(ncand)
        deltas = np.empty(ncand)
        c = 0
        for i in range(n):
            if y[i] == 0.0:
                continue
            do = o_bar[i] - o[i]
            active = y[i] * o[i] < 1.0
            if (active and y[i] * do > 0.0) or (not active and y[i] * do < 0.0):
                cand[c] = i
                sign[c] = -1.0 if active else 1.0  # leaving the active set, or entering it
                deltas[c] = (y[i] - o[i]) / do
                c += 1
        order = np.argsort(deltas, kind="mergesort")
        Lb, Rb = L, R
        hit = False
        for c in order:
            i = cand[c]
            if Lb + deltas[c] * (Rb - Lb) >= 0.0:
                hit = True
                break
            w = sign[c] * c2[i] * (o_bar[i] - o[i])
            Lb += w * (o[i] - y[i])
            Rb += w * (o_bar[i] - y[i])
        L, R = Lb, Rb  # past the last breakpoint (no hit): the final piece
    curvature = R - L
    if not curvature > 0.0:
        return 0.0, slope0
    return max(0.0, -L / curvature), slope0


@njit(cache=True)
def add(K, ridge, cost, y, S, L, beta, b, f, new):
    """L2-SVM optimum for the labels ``y`` (0 = not in the set), whose set extends the parent's by ``new``.

    Finite Newton with exact line search (as :func:`solvers._primal.kernel_newton`), warm-started
    at the parent optimum ``(S, L, beta, b, f)``: the parent is the exact starting point, and a
    point entering outside the margin leaves it optimal. Each step takes the Newton point on the
    support set S (:func:`_newton_point`); if it keeps S it is the optimum (SIGIR 2006, Table 1),
    otherwise the exact line search (Table 3) moves toward it (:func:`_line_step`) and S follows
    the margins (:func:`shrink`, :func:`grow`). Returns ``(changed, S, L, beta, b, f, value,
    n_refactor)``; ``changed`` is False (and the parent returned) when no point entered inside
    the margin.
    """
    n = y.size
    c2 = 2.0 * cost
    enter = _entering(new, y, f)
    if enter.size == 0:
        return False, S, L, beta, b, f, 0.0, 0
    n_ref = 0
    S, L, r = grow(K, ridge, S, L, enter)
    n_ref += r
    beta = beta.copy()
    f = f.copy()
    refreshed = False
    in_S = np.zeros(n, np.bool_)
    for _ in range(MAX_NEWTON):
        bS, b_bar, f_bar, resid = _newton_point(K, ridge, S, L, y, b)
        if not refreshed and resid > RESID_TOL:
            # Safety net (rare with the factor): refactor once and redo the point.
            L = factor(K, ridge, S)
            n_ref += 1
            refreshed = True
            continue
        refreshed = False
        _mark(in_S, S)
        if _keeps_support(y, f_bar, in_S):
            beta_bar = np.zeros(n)
            for a in range(S.size):
                beta_bar[S[a]] = bS[a]
            return True, S, L, beta_bar, b_bar, f_bar, objective(bS, S, b_bar, f_bar, y, cost), n_ref
        b, slope0 = _line_step(beta, f, b, S, bS, b_bar, f_bar, y, c2)
        if -slope0 <= 1e-13 * max(abs(objective(beta[S], S, b, f, y, cost)), 1e-300):
            break
        keep = np.empty(S.size, np.bool_)
        for a in range(S.size):
            keep[a] = y[S[a]] * f[S[a]] < 1.0
        S, L, r = shrink(K, ridge, S, L, keep)
        n_ref += r
        _mark(in_S, S)
        S, L, r = grow(K, ridge, S, L, _inside_margin(y, f, in_S))
        n_ref += r
    # Newton decrement at round-off level (or the cap): the current point is the optimum.
    nz = np.flatnonzero(beta)
    S2 = _inside_margin(y, f, np.zeros(n, np.bool_))
    return True, S2, factor(K, ridge, S2), beta, b, f, objective(beta[nz], nz, b, f, y, cost), n_ref + 1


@njit(cache=True)
def _entering(new, y, f):
    """The points of ``new`` inside the margin (``y_x f_x < 1``), in the order of ``new``."""
    n_enter = 0
    for x in new:
        if y[x] * f[x] < 1.0:
            n_enter += 1
    enter = np.empty(n_enter, np.int64)
    c = 0
    for x in new:
        if y[x] * f[x] < 1.0:
            enter[c] = x
            c += 1
    return enter


@njit(cache=True)
def _inside_margin(y, f, skip):
    """The points in the set (``y_i != 0``) inside the margin (``y_i f_i < 1``) and not ``skip``, sorted."""
    n = y.size
    count = 0
    for i in range(n):
        if y[i] != 0.0 and y[i] * f[i] < 1.0 and not skip[i]:
            count += 1
    out = np.empty(count, np.int64)
    c = 0
    for i in range(n):
        if y[i] != 0.0 and y[i] * f[i] < 1.0 and not skip[i]:
            out[c] = i
            c += 1
    return out


@njit(cache=True)
def _mark(mask, idx):
    """``mask`` set to the indicator of ``idx``, in place."""
    mask[:] = False
    for a in range(idx.size):
        mask[idx[a]] = True


@njit(cache=True)
def _newton_point(K, ridge, S, L, y, b):
    """Minimizer of the quadratic model on the support set S, from the factor L of ``A_S``.

    The bordered system of :func:`solvers._primal_kernel._newton_point` (``A_S beta_S + b 1 =
    y_S``, ``1^T beta_S = 0``) by two solves with L and the Schur complement for b.  Returns
    ``(beta_S, b_bar, f_bar, resid)``: the coefficients on S, the bias, the outputs of every
    point and the largest residual of the system on S; with S empty (no loss anywhere) beta = 0
    minimizes the model and the free bias stays ``b``.
    """
    n = y.size
    m = S.size
    bS = np.empty(m)
    f_bar = np.empty(n)
    if not m:
        f_bar[:] = b
        return bS, b, f_bar, 0.0
    v1, v2 = solve2(L, np.ones(m), y[S])
    b_bar = v2.sum() / v1.sum()
    f_bar[:] = b_bar
    for a in range(m):
        bS[a] = v2[a] - b_bar * v1[a]
        row = K[S[a]]
        ba = bS[a]
        for j in range(n):
            f_bar[j] += ba * row[j]
    resid = 0.0
    for a in range(m):
        i = S[a]
        resid = max(resid, abs(f_bar[i] + bS[a] * ridge[i] - y[i]))
    return bS, b_bar, f_bar, resid


@njit(cache=True)
def _keeps_support(y, f_bar, in_S):
    """Whether the Newton point keeps the support set: margins ``<= 1 + MARGIN_TOL`` on S and
    ``>= 1 - MARGIN_TOL`` on the other points in the set (SIGIR 2006, Table 1)."""
    for i in range(y.size):
        if y[i] == 0.0:
            continue
        mg = y[i] * f_bar[i]
        if (in_S[i] and mg > 1.0 + MARGIN_TOL) or (not in_S[i] and mg < 1.0 - MARGIN_TOL):
            return False
    return True


@njit(cache=True)
def _line_step(beta, f, b, S, bS, b_bar, f_bar, y, c2):
    """Exact line search (SIGIR 2006, Table 3) from ``(beta, b, f)`` toward the Newton point.

    ``beta`` and ``f`` are moved in place; returns the new bias and ``phi'(0)``, the directional
    derivative toward the Newton point (minus the Newton decrement).
    """
    n = y.size
    dbeta = -beta
    for a in range(S.size):
        dbeta[S[a]] += bS[a]
    reg0 = 0.0
    reg1 = 0.0
    for j in range(n):
        if dbeta[j] != 0.0:
            reg0 += dbeta[j] * (f[j] - b)
            reg1 += dbeta[j] * (f_bar[j] - b_bar)
    t, slope0 = line_search(reg0, reg1, f, f_bar, y, c2)
    for j in range(n):
        beta[j] += t * dbeta[j]
        f[j] += t * (f_bar[j] - f[j])
    return b + t * (b_bar - b), slope0


@njit(cache=True)
def lookahead(K, kdiag, ridge, S, L, beta, b, f, value, y, U, c_star, level=np.inf):
    """Branching scores (NIPS 2006 eqs. 7-8) and dual lower bounds of both children, per x in U.

    See :meth:`solvers._bb_search._IncrementalL2SVM.lookahead` for the derivation. Returns
    ``(score, lb_pos, lb_neg)``. A bound whose ray was cut by a support vector, and whose uncut
    value would reach ``level``, is refined by :func:`_refine` (the path continued without
    that support vector).
    """
    p = U.size
    m = S.size
    ridge_x = 1.0 / (2.0 * c_star)
    if m == 0:
        # No support vector (every assigned point outside the margin): only the trivial bound
        # s(L + {x, y}) >= s(L) is used.
        score = np.empty(p)
        lbp = np.empty(p)
        lbn = np.empty(p)
        for c in range(p):
            x = U[c]
            score[c] = (1.0 + abs(f[x])) ** 2 / (2.0 * (kdiag[x] + ridge_x))
            lbp[c] = value
            lbn[c] = value
        return score, lbp, lbn
    A = gram(K, ridge, S, U)  # U and S are disjoint: no ridge is added
    W = solve(L, A)
    g = solve2(L, np.ones(m), np.zeros(m))[0]
    sigma = g.sum()
    yS, bS, grad, D0 = _dual_at_optimum(S, y, beta, f, b, ridge)
    score, t, q, lin0 = _ray(A, W, g, grad, sigma, U, kdiag, f, b, ridge_x)
    aa = np.empty(m)
    for a in range(m):
        aa[a] = max(yS[a] * bS[a], 0.0)
    N = np.empty((0, 0))  # M^{-1}, formed only if a bound is refined
    lbp, N = _child_bounds(1.0, lin0, q, W, A, g, t, yS, aa, D0, level, L, sigma, N)
    lbn, N = _child_bounds(-1.0, lin0, q, W, A, g, t, yS, aa, D0, level, L, sigma, N)
    return score, lbp, lbn


@njit(cache=True)
def _dual_at_optimum(S, y, beta, f, b, ridge):
    """``(y_S, beta_S, grad, D0)``: labels and coefficients of the support vectors, the gradient
    of the dual at beta* and the dual value D0 (= s(L) at the exact optimum), from the actual
    solution (exact even with round-off)."""
    m = S.size
    yS = np.empty(m)
    bS = np.empty(m)
    grad = np.empty(m)
    D0 = 0.0
    for a in range(m):
        i = S[a]
        yS[a] = y[i]
        bS[a] = beta[i]
        grad[a] = y[i] - (f[i] - b) - bS[a] * ridge[i]
    for a in range(m):
        D0 += yS[a] * bS[a] - 0.5 * bS[a] * (yS[a] - grad[a])
    return yS, bS, grad, D0


@njit(cache=True)
def _ray(A, W, g, grad, sigma, U, kdiag, f, b, ridge_x):
    """The ray of Proposition 1 for each candidate x in U: ``(score, t, q, lin0)``.

    ``t`` is the bias component of the direction ``delta = -W - g t^T``, ``q`` the curvature
    ``v^T M^{-1} v`` of the bordered system plus x's ridge, ``score`` the branching score of NIPS
    2006 eqs. 7-8 and ``lin0`` the derivative of the dual at ``tau = 0`` less the ``y_x`` term.
    """
    m, p = A.shape
    # Loops run over the support vectors outside and the points x inside, along the rows of A
    # and W (this is where the time goes: m x p entries, each touched a few times).
    gA = np.zeros(p)  # g^T A
    aw = np.zeros(p)  # diag(A^T A_S^{-1} A)
    hW = np.zeros(p)  # grad^T W
    for a in range(m):
        ga, gr = g[a], grad[a]
        for c in range(p):
            gA[c] += ga * A[a, c]
            aw[c] += A[a, c] * W[a, c]
            hW[c] += gr * W[a, c]
    gg = 0.0
    for a in range(m):
        gg += grad[a] * g[a]
    score = np.empty(p)
    t = np.empty(p)
    q = np.empty(p)
    lin0 = np.empty(p)
    for c in range(p):
        x = U[c]
        t[c] = (1.0 - gA[c]) / sigma
        # v^T M^{-1} v for the bordered M, through the block inverse of [[A_S, 1], [1^T, 0]].
        q[c] = max(kdiag[x] - aw[c] + t[c] * t[c] * sigma, 0.0) + ridge_x
        score[c] = (1.0 + abs(f[x])) ** 2 / (2.0 * q[c])
        # d D / d tau at tau = 0 along delta = -W - g t^T, less the y_x term.
        lin0[c] = -hW[c] - gg * t[c] - (f[x] - b)
    return score, t, q, lin0


@njit(cache=True)
def _child_bounds(label, lin0, q, W, A, g, t, yS, aa, D0, level, L, sigma, N):
    """Dual lower bounds of the children that give each x in U the label ``label``.

    The dual is maximized along the ray up to the first support vector whose ``y_i beta_i``
    reaches 0; where that cut lost what could reach ``level`` the bound is refined by
    :func:`_refine`, with ``N = M^{-1}`` (formed on first use). Returns ``(bounds, N)``.
    """
    m = yS.size
    p = q.size
    slope = label * lin0 + 1.0  # theta-derivative; = 1 - y_x f(x) at the exact optimum
    theta = np.maximum(slope, 0.0) / q
    # Shorten the step to the first support vector whose y_i beta_i reaches 0: theta <=
    # a_i / -e_i wherever e_i = d(y_i beta_i)/d tau = label y_i delta_i < 0.
    for a in range(m):
        ya, ga, ra = label * yS[a], g[a], aa[a]
        for c in range(p):
            e = -ya * (W[a, c] + ga * t[c])
            if e < 0.0:
                r = ra / -e
                if r < theta[c]:
                    theta[c] = r
    bound = D0 + theta * slope - 0.5 * q * theta * theta
    for c in range(p):
        # Refine where the cut lost what could reach the level: the uncut maximum
        # slope^2 / 2q bounds every continuation (each later piece curves more).
        if slope[c] > 0.0 and bound[c] < level <= D0 + slope[c] * slope[c] / (2.0 * q[c]):
            if N.shape[0] == 0:
                N = _bordered_inverse(L, g, sigma)
            delta = np.empty(m + 1)
            for a in range(m):
                delta[a] = -(W[a, c] + g[a] * t[c])
            delta[m] = t[c]
            bound[c] = max(bound[c], _refine(N, delta, A[:, c], label * yS, aa, slope[c], q[c], D0, level))
    return bound, N


#: Support vectors a refined look-ahead path may drop at most (each costs O(m k + k^3) at the k-th).
MAX_DROPS = 24


@njit(cache=True)
def _bordered_inverse(L, g, sigma):
    """``N = M^{-1}`` for the bordered ``M = [[A_S, 1], [1^T, 0]]`` (A_S = L L^T; bias last)."""
    m = g.size
    N = np.empty((m + 1, m + 1))
    Ainv = solve(L, np.eye(m))
    for i in range(m):
        for j in range(m):
            N[i, j] = Ainv[i, j] - g[i] * g[j] / sigma
        N[i, m] = g[i] / sigma
        N[m, i] = g[i] / sigma
    N[m, m] = -1.0 / sigma
    return N


@njit(cache=True)
def _refine(N, delta, a_x, ys, aa, slope, q, D0, level):
    """The dual of the child along the restricted solution path, past the support vectors it drops.

    Proposition 1's ray ``beta_S = beta*_S + theta delta`` (``delta = -M^{-1} [a_x; 1]``, bias
    last) keeps every support vector; where a multiplier ``y_i beta_i`` reaches 0 the ray stops
    (:func:`lookahead`). Here the path goes on with that point's multiplier held at 0: over the
    kept set T (bias included) the direction is ``-M_TT^{-1} r_T = delta_T - N_TR N_RR^{-1}
    delta_R`` (R the dropped points, N = M^{-1}: the inverse of a principal submatrix through
    the Schur complement), and the curvature is ``kdiag_x + 1/(2C*) + r_T . delta'_T`` with
    ``r = [a_x; 1]``. Every point of the path is dual feasible (signs kept, equality kept, the
    other points' multipliers at 0), so its dual value is a lower bound on s(L + {x, y}); the
    dual is concave along it (each piece curves more), and the path ends at its maximum, at
    ``level`` (enough to prune or fix), after MAX_DROPS drops, or when N_RR is not positive
    definite. ``ys`` holds ``label * y_i`` and ``aa`` the multipliers ``y_i beta*_i``.
    """
    m = ys.size
    u = aa.copy()  # y_i beta_i along the path
    active = np.ones(m, np.bool_)
    dropped = np.empty(MAX_DROPS, np.int64)
    nd = 0
    d = delta.copy()
    D = D0
    base = q - delta[m]  # kdiag_x + 1/(2C*)
    for i in range(m):
        base -= a_x[i] * delta[i]
    while True:
        step = slope / q
        hit = -1
        for i in range(m):
            if active[i]:
                e = ys[i] * d[i]
                if e < 0.0 and u[i] / -e < step:
                    step = u[i] / -e
                    hit = i
        D += slope * step - 0.5 * q * step * step
        if hit < 0 or D >= level or nd == MAX_DROPS or nd + 1 == m:
            return D
        slope -= q * step
        for i in range(m):
            if active[i]:
                u[i] += ys[i] * d[i] * step
        active[hit] = False
        u[hit] = 0.0
        dropped[nd] = hit
        nd += 1
        # z = N_RR^{-1} delta_R by a Cholesky factorization of the small N_RR.
        R = dropped[:nd]
        B = np.empty((nd, nd))
        for i in range(nd):
            for j in range(nd):
                B[i, j] = N[R[i], R[j]]
        if not _chol_inplace(B):
            return D
        z = np.empty(nd)
        for i in range(nd):
            z[i] = delta[R[i]]
        for i in range(nd):
            s = z[i]
            for k in range(i):
                s -= B[i, k] * z[k]
            z[i] = s / B[i, i]
        for i in range(nd - 1, -1, -1):
            s = z[i]
            for k in range(i + 1, nd):
                s -= B[k, i] * z[k]
            z[i] = s / B[i, i]
        q = base
        for i in range(m + 1):
            if i < m and not active[i]:
                d[i] = 0.0
                continue
            s = delta[i]
            for k in range(nd):
                s -= N[i, R[k]] * z[k]
            d[i] = s
            q += (a_x[i] if i < m else 1.0) * s
        if not q > 0.0:
            return D


@njit(cache=True)
def _attainable(lb_pos, lb_neg, k, tau):
    m = lb_pos.size
    only_p = 0
    only_n = 0
    for i in range(m):
        ok_p = lb_pos[i] <= tau
        ok_n = lb_neg[i] <= tau
        if not (ok_p or ok_n):
            return False
        if ok_p and not ok_n:
            only_p += 1
        elif ok_n and not ok_p:
            only_n += 1
    return only_p <= k and only_n <= m - k


@njit(cache=True)
def balanced_bottleneck(lb_pos, lb_neg, k):
    """``min_y max_x lb_{y_x}(x)`` over labelings with k positives (see :func:`solvers._bb_search._balanced_bottleneck`)."""
    taus = np.unique(np.concatenate((lb_pos, lb_neg)))
    lo, hi = 0, taus.size - 1  # taus[-1] is attainable whenever 0 <= k <= m
    while lo < hi:
        mid = (lo + hi) // 2
        if _attainable(lb_pos, lb_neg, k, taus[mid]):
            hi = mid
        else:
            lo = mid + 1
    return taus[lo]


_warm = False


def warm_up():
    """Compile (or load from numba's cache) every kernel before a timed search starts.

    The first call of a numba function in a process compiles it (slow: tens of seconds for this
    module) or loads it from the on-disk cache (fast); :func:`solvers.bb.branch_and_bound` calls this
    before it starts its clock, so its ``seconds`` and time limit count the search only.
    """
    global _warm
    if _warm:
        return
    K = np.array([[2.0, 1.0, 0.5], [1.0, 2.0, 1.0], [0.5, 1.0, 2.0]])
    cost = np.ones(3)
    ridge = 0.5 / cost
    y = np.array([1.0, -1.0, 0.0])
    st = add(K, ridge, cost, y, np.empty(0, np.int64), np.empty((0, 0)), np.zeros(3), 0.0, np.zeros(3),
             np.array([0, 1], np.int64))
    _, S, L, beta, b, f, value, _ = st
    _, lbp, lbn = lookahead(K, np.ascontiguousarray(np.diag(K)), ridge, S, L, beta, b, f, value, y,
                            np.array([2], np.int64), 1.0, np.inf)
    balanced_bottleneck(lbp, lbn, 1)
    grow(K, ridge, S[:1], factor(K, ridge, S[:1]), S[1:])
    shrink(K, ridge, S, L, np.array([False, True]))
    _warm = True
