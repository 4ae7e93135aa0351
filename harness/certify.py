"""Certified lower bounds on the balanced S3VM objective at sizes branch and bound cannot reach.

The bound, its dual point and the exact check that makes it a certificate are in
:mod:`harness.certify_check` (whose docstring states the relaxation: JMLR 2008 eq. 1 with p = 2 and
a free bias, eq. 3 exact r, the semidefinite relaxation of JMLR 2008 Sec. 3.4). This module finds a
good dual point: :func:`dual_point_from_labels` starts from the L2-SVM duals of a balanced
labeling, and :func:`optimize_bound` maximizes a log-sum-exp smoothing of the bound by L-BFGS-B
over stages of decreasing smoothing. Whatever the optimizer returns, the bound reported is the one
:func:`harness.certify_check.check_dual_point` recomputes from the point alone.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.optimize import minimize

from s3vm_bench.solvers.numerics import check_positive, kernel_newton

from .certify_check import (_SIGNS, BoundResult, Certificate, DualPoint, _affine, _affine_offsets, _check_problem,
                            _matrix_A, _matrix_T, bias_bound, check_dual_point, make_feasible)

__all__ = ["DualPoint", "Certificate", "BoundResult", "bias_bound", "check_dual_point", "dual_point_from_labels",
           "make_feasible", "neighbour_edges", "optimize_bound"]

#: Eigenpairs of A whose weight ``exp((lambda_i - lambda_max) / mu)`` in the smoothed lambda_max is
#: below this are left out of the value and gradient of :func:`_smoothed` and :func:`_smoothed_sparse`.
_WEIGHT_CUT = 1e-12


# ------------------------------------------------------------------------------------ optimize
def dual_point_from_labels(K, y_lab, k, C, C_star, labels, t=None) -> DualPoint:
    """A starting dual point from a balanced labeling: the L2-SVM duals ``a_i = 2 c_i max(0, 1 -
    y_i f_i)`` of the completed set (JMLR 2008 eq. 1; they satisfy ``sum a_i y_i = 0``), with t the
    half of the largest unlabeled dual, ``q_j = y_j (a_j - t)`` so that the point reproduces
    them at ``labels``, and ``G = 0``.  With ``t`` given, ``q_j = y_j (a_j - t)`` is clipped to
    ``[-t, t]`` (duals above ``2 t`` are cut).  ``lam`` is half the diagonal of M and ``m = 0``
    (a poor but finite start)."""
    K, y_lab, l, u, k, C, C_star = _check_problem(K, y_lab, k, C, C_star)
    labels = np.asarray(labels, dtype=np.float64).ravel()
    if labels.size != u or not np.all(np.abs(labels) == 1.0) or int(np.sum(labels > 0)) != k:
        raise ValueError(f"labels must be {u} labels in {{-1, +1}} with exactly k = {k} positives")
    y = np.r_[y_lab, labels]
    cost = np.r_[np.full(l, C), np.full(u, C_star)]
    res = kernel_newton(K, y, cost)
    f = K @ res.coef + res.intercept
    a = 2 * cost * np.maximum(0.0, 1.0 - y * f)
    t = max(float(np.max(a[l:])) / 2, 1e-3) if t is None else check_positive(t, "t")
    q = np.clip(labels * (a[l:] - t), -t, t)
    lam = np.r_[0.0, 0.5 * (t * t * np.diag(K)[l:] + t * t / (2 * C_star) - 2 * t)]
    return DualPoint(a[:l].copy(), t, q, lam, np.zeros(u + 1), np.zeros((u, u)), np.zeros((l, u)))


def _soft_max_eigen(ev, V, mu):
    """``mu log sum exp(lambda_i / mu)`` of the eigenvalues ``ev`` (ascending; >= lambda_max, within
    ``mu log(u + 1)``) and ``Vs`` with ``Vs Vs^T`` its gradient in the matrix, over the
    eigenpairs (columns of V) whose weight exceeds :data:`_WEIGHT_CUT`."""
    top = ev[-1]
    p = np.exp((ev - top) / mu)
    Z = p.sum()
    p /= Z
    sel = p > _WEIGHT_CUT
    return top + mu * np.log(Z), V[:, sel] * np.sqrt(p[sel])


def _smoothed(K, y_lab, l, u, s, C, C_star, P, graph, products=True):
    """Negated smoothed bound and its gradient in z = (alpha, t, w, G_upper, E, N, lam, m), q = t w.

    ``lambda_max`` is replaced by ``mu log sum exp(lambda_i / mu)`` (>= lambda_max, within
    ``mu log(u + 1)``), and the bias equation by a penalty ``P rho^2`` (removed exactly by
    :func:`make_feasible` before certification).  ``G_upper`` holds the strict upper triangle of
    G and E its l x u entries (both absent when ``graph`` is false: G = 0, E = 0), N the 4 u^2
    multipliers of the products (absent when ``products`` is false: N = 0)."""
    e = np.r_[-float(s), np.ones(u)]
    iu = np.triu_indices(u, 1) if graph else (np.zeros(0, int), np.zeros(0, int))
    nG, nE, nN = iu[0].size, (l * u if graph else 0), (4 * u * u if products else 0)
    d = np.r_[np.full(l, 1.0 / (4 * C)), np.full(u, 1.0 / (4 * C_star))]

    def unpack(z):
        i = l + 1 + u
        G = np.zeros((u, u))
        G[iu] = z[i:i + nG]
        G += G.T
        i += nG
        E = z[i:i + nE].reshape(l, u) if graph else np.zeros((l, u))
        i += nE
        prod = z[i:i + nN].reshape(4, u, u) if products else np.zeros((4, u, u))
        i += nN
        return z[:l], z[l], z[l + 1:l + 1 + u], G, E, prod, z[i:i + u + 1], z[i + u + 1:]

    def fun(z, mu):
        alpha, t, w, G, E, prod, lam, m = unpack(z)
        q = t * w
        W, R, r0, const, lin = _affine(y_lab, alpha, t, q, G, E)
        Kr0 = K @ r0
        c0 = const - r0 @ (d * r0) - 0.5 * (r0 @ Kr0)
        v = 2 * d * r0 + Kr0
        g = lin - R.T @ v
        N = 2 * d[:, None] * R + K @ R
        M = R.T @ N - 2 * W
        M = 0.5 * (M + M.T)
        A = _matrix_A(g, M, lam, m, e)
        if products:
            A += _matrix_T(prod)
        ev, V = np.linalg.eigh(A)
        smax, Vs = _soft_max_eigen(ev, V, mu)
        rho = alpha @ y_lab + t * s + q.sum()
        val = c0 - lam.sum() - (u + 1) * smax - P * rho * rho
        h = (u + 1) * (Vs[1:] @ Vs[0])
        VU = Vs[1:]
        H = (u + 1) * (VU @ VU.T)
        # the bound as a function of (const, lin, R, r0, W) with the eigenvectors fixed:
        # c0 + h.g - <H, M>/2, then chained to (alpha, t, q, G, E)
        Rh = R @ h
        d_r0 = -(2 * d * (r0 + Rh) + Kr0 + K @ Rh)
        d_R = -np.outer(v, h) - N @ H
        d_W = d_R[l:] + H
        d_q = d_r0[l:] + h - 2 * P * rho
        d_alpha = 1 + d_r0[:l] * y_lab - 2 * P * rho * y_lab
        d_t = np.trace(d_W) + d_q @ w - 2 * P * rho * s
        dd = np.diag(d_W)
        d_G = (dd[:, None] + dd[None, :] - d_W - d_W.T)[iu]
        if graph:
            d_E = (1 - d_R[:l] + (d_r0[:l] * y_lab)[:, None] - np.outer(y_lab, d_r0[l:] + 2 * h) + dd[None, :]).ravel()
        else:
            d_E = np.zeros(0)
        if products:
            h00 = (u + 1) * float(Vs[0] @ Vs[0])
            d_N = np.concatenate([(-(h00 + sg * h[:, None] + tg * h[None, :] + sg * tg * H)).ravel()
                                  for sg, tg in _SIGNS])
        else:
            d_N = np.zeros(0)
        grad = np.r_[d_alpha, d_t, d_q * t, d_G, d_E, d_N, -1 + (u + 1) * np.sum(Vs * Vs, axis=1),
                     (u + 1) * (Vs @ (Vs.T @ e))]
        return -val, -grad

    return fun, unpack, nG + nE + nN


def neighbour_edges(K_uu, k: int):
    """The pairs ``(j, k)``, ``j < k``, of unlabeled points where one is among the other's ``k``
    nearest neighbours in the kernel (largest ``K_jk``): the edges the graph weights G of a sparse
    dual point live on (:func:`optimize_bound`, ``graph_neighbors``)."""
    K_uu = np.asarray(K_uu, dtype=np.float64)
    u = K_uu.shape[0]
    k = int(k)
    if k < 1:
        raise ValueError(f"graph_neighbors must be an int >= 1, got {k}")
    k = min(k, u - 1)
    if k < 1:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    S = K_uu.copy()
    np.fill_diagonal(S, -np.inf)
    nn = np.argpartition(-S, k - 1, axis=1)[:, :k]
    rows = np.repeat(np.arange(u), k)
    a, b = np.minimum(rows, nn.ravel()), np.maximum(rows, nn.ravel())
    pairs = np.unique(a * u + b)
    return (pairs // u).astype(np.int64), (pairs % u).astype(np.int64)


def _top_eigenpairs(A, mu, state):
    """The eigenpairs of symmetric ``A`` with weight ``exp((lambda_i - lambda_max) / mu)`` above
    :data:`_WEIGHT_CUT`: LAPACK ``syevr`` on that range of eigenvalues only, placed by
    ``state["top"]`` (the largest eigenvalue at the previous call) and placed again when the top
    moved down; ``syevd`` on the whole spectrum at the first call and when the previous one kept
    more than an eighth of it."""
    reach = -np.log(_WEIGHT_CUT) * mu
    if state.get("top") is None or state["kept"] > A.shape[0] // 8:
        ev, V = sla.eigh(A, driver="evd", check_finite=False)
    else:
        lo = state["top"] - 1.1 * reach
        ev, V = sla.eigh(A, driver="evr", subset_by_value=(lo, np.inf), check_finite=False)
        if ev.size == 0 or lo > ev[-1] - reach:  # the range may miss weighted eigenpairs
            top = ev[-1] if ev.size else sla.eigh(A, driver="evr", eigvals_only=True, check_finite=False,
                                                  subset_by_index=(A.shape[0] - 1, A.shape[0] - 1))[0]
            ev, V = sla.eigh(A, driver="evr", subset_by_value=(top - 1.1 * reach, np.inf), check_finite=False)
    keep = ev > ev[-1] - reach
    state["top"], state["kept"] = float(ev[-1]), int(np.sum(keep))
    return ev[keep], V[:, keep]


def _smoothed_sparse(K, y_lab, l, u, s, C, C_star, P, edges):
    """:func:`_smoothed` (``graph`` on, no products) with the graph weights G on ``edges`` only.

    ``W = t I + Lap(G) + Diag(E^T 1)`` is then sparse, so the products with ``R = [-E; W]`` cost
    ``O(n (l u + nnz W))`` instead of ``O(n^2 u)``; only the eigenpairs of A that weigh in the
    smoothed lambda_max are computed (:func:`_top_eigenpairs`), and the gradient's terms in
    ``H = (u + 1) V V^T`` are kept in that low-rank form. z = (alpha, t, w, G on the edges, E,
    lam, m), q = t w."""
    e = np.r_[-float(s), np.ones(u)]
    ei, ej = (np.asarray(a, dtype=np.int64) for a in edges)
    nG, nE = ei.size, l * u
    dl, du = 1.0 / (4 * C), 1.0 / (4 * C_star)
    d = np.r_[np.full(l, dl), np.full(u, du)]
    KL = np.ascontiguousarray(K[:, :l])
    KU_T = np.ascontiguousarray(K[l:, :])  # K[:, l:]^T (K is symmetric)
    rows, cols = np.r_[ei, ej, np.arange(u)], np.r_[ej, ei, np.arange(u)]
    state = {}

    def graph(z):
        i = l + 1 + u
        return z[i:i + nG], z[i + nG:i + nG + nE].reshape(l, u)

    def unpack(z):
        gw, E = graph(z)
        G = np.zeros((u, u))
        G[ei, ej] = gw
        G[ej, ei] = gw
        i = l + 1 + u + nG + nE
        return z[:l], z[l], z[l + 1:l + 1 + u], G, E, None, z[i:i + u + 1], z[i + u + 1:]

    def fun(z, mu):
        alpha, t, w = z[:l], z[l], z[l + 1:l + 1 + u]
        gw, E = graph(z)
        i = l + 1 + u + nG + nE
        lam, m = z[i:i + u + 1], z[i + u + 1:]
        q = t * w
        deg = np.bincount(ei, gw, u) + np.bincount(ej, gw, u)
        Ws = sp.csr_matrix((np.r_[-gw, -gw, t + deg + E.sum(axis=0)], (rows, cols)), shape=(u, u))
        r0, const, lin = _affine_offsets(y_lab, alpha, q, E)
        Kr0 = K @ r0
        c0 = const - r0 @ (d * r0) - 0.5 * (r0 @ Kr0)
        v = 2 * d * r0 + Kr0
        g = lin - (Ws @ v[l:] - E.T @ v[:l])
        # N = (2 D + K) R with R = [-E; W]
        W_dense = Ws.toarray()
        N = np.asarray(Ws @ KU_T).T - KL @ E
        N[:l] -= 2 * dl * E
        N[l:] += 2 * du * W_dense
        M = np.asarray(Ws @ N[l:]) - E.T @ N[:l]
        M -= 2 * W_dense
        M = 0.5 * (M + M.T)
        A = _matrix_A(g, M, lam, m, e)
        smax, Vs = _soft_max_eigen(*_top_eigenpairs(A, mu, state), mu)
        rho = alpha @ y_lab + t * s + q.sum()
        val = c0 - lam.sum() - (u + 1) * smax - P * rho * rho
        h = (u + 1) * (Vs[1:] @ Vs[0])
        VU = Vs[1:]
        Rh = np.r_[-E @ h, Ws @ h]
        d_r0 = -(2 * d * (Rh + r0) + Kr0 + K @ Rh)
        NV = (u + 1) * (N @ VU)  # N H = NV VU^T
        d_RL = -np.outer(v[:l], h) - NV[:l] @ VU.T
        HV = (u + 1) * VU
        dd = -v[l:] * h - np.einsum("jk,jk->j", NV[l:], VU) + np.einsum("jk,jk->j", HV, VU)  # diag of d_W
        H_e = np.einsum("jk,jk->j", HV[ei], VU[ej])
        dW_ij = -v[l + ei] * h[ej] - np.einsum("jk,jk->j", NV[l + ei], VU[ej]) + H_e
        dW_ji = -v[l + ej] * h[ei] - np.einsum("jk,jk->j", NV[l + ej], VU[ei]) + H_e
        d_G = dd[ei] + dd[ej] - dW_ij - dW_ji
        d_q = d_r0[l:] + h - 2 * P * rho
        d_alpha = 1 + d_r0[:l] * y_lab - 2 * P * rho * y_lab
        d_t = dd.sum() + d_q @ w - 2 * P * rho * s
        d_E = (1 - d_RL + (d_r0[:l] * y_lab)[:, None] - np.outer(y_lab, d_r0[l:] + 2 * h) + dd[None, :]).ravel()
        grad = np.r_[d_alpha, d_t, d_q * t, d_G, d_E, -1 + (u + 1) * np.sum(Vs * Vs, axis=1),
                     (u + 1) * (Vs @ (Vs.T @ e))]
        return -val, -grad

    return fun, unpack, nG + nE


def optimize_bound(K, y_lab, k, C, C_star, labels, *, upper=None, mus=(1.0, 0.1, 0.03, 0.01, 0.003, 0.001),
                   max_iter=250, time_limit=None, penalty=1.0, t_init="auto", graph=True,
                   products_from=None, graph_neighbors=None) -> BoundResult:
    """Search for a good dual point and return the best *certified* bound met on the way.

    Starts from :func:`dual_point_from_labels` (``labels``: a balanced labeling, e.g. a solver's;
    ``t_init``: its t, by default ``"auto"`` = ``min(C*/20, half the largest dual)`` -- a start with
    the t of the labeling's own duals puts the relaxation's quadratic term far above the
    optimum's and the search can stall there; G = 0, E = 0) and runs L-BFGS-B (box constraints
    ``alpha >= 0``, ``t > 0``, ``q = t w`` with ``|w| <= 1``, ``G >= 0``, ``E >= 0``; G and E stay
    0 when ``graph`` is false) on the smoothed bound (:func:`_smoothed`) for each smoothing
    parameter of ``mus`` in turn (``max_iter`` iterations each -- L-BFGS-B's relative-decrease test
    is switched off, as the first values are far larger than the last; with ``time_limit`` seconds
    of wall time, stage i also stops at ``(i + 1)/len(mus)`` of it, so that every stage runs).
    From stage ``products_from`` on (``None``: never) the multipliers N of the products
    ``(1 +- y_j)(1 +- y_k) >= 0`` join the search, starting at 0 from the point reached. With
    ``graph_neighbors = k`` the graph weights G live only on the pairs of :func:`neighbour_edges`
    (each unlabeled point and its k nearest unlabeled neighbours in the kernel) and the search runs
    on :func:`_smoothed_sparse`, whose cost per evaluation grows as ``n^2`` instead of ``n^2 u``
    (no products then); ``None`` (default): every unlabeled pair.  After
    each stage the point is made feasible (:func:`make_feasible`) and certified
    (:func:`check_dual_point`, strict); the best certified bound is returned.  Deterministic (no
    random numbers) when no stage is cut by ``time_limit``.

    Raises
    ------
    ValueError
        Bad problem data (:func:`check_dual_point`), or ``labels`` not a balanced labeling.
    """
    K, y_lab, l, u, k, C, C_star = _check_problem(K, y_lab, k, C, C_star)
    if graph_neighbors is not None and (products_from is not None or not graph):
        raise ValueError("graph_neighbors needs graph=True and products_from=None (a sparse graph has no products)")
    t_start, cpu_start = time.perf_counter(), time.process_time()
    if isinstance(t_init, str):
        if t_init != "auto":
            raise ValueError(f"t_init must be a positive number, None or 'auto', got {t_init!r}")
        full = dual_point_from_labels(K, y_lab, k, C, C_star, labels)
        t_init = min(C_star / 20.0, full.t)
    p0 = dual_point_from_labels(K, y_lab, k, C, C_star, labels, t=t_init)
    s = 2 * k - u
    if graph_neighbors is None:
        fun, unpack, n_graph = _smoothed(K, y_lab, l, u, s, C, C_star, float(penalty), bool(graph), False)
    else:
        edges = neighbour_edges(K[l:, l:], graph_neighbors)
        fun, unpack, n_graph = _smoothed_sparse(K, y_lab, l, u, s, C, C_star, float(penalty), edges)
    z = np.r_[p0.alpha, p0.t, p0.q / p0.t, np.zeros(n_graph), p0.lam, p0.m]
    box = ([(0.0, None)] * l + [(1e-8, None)] + [(-1.0, 1.0)] * u + [(0.0, None)] * n_graph
           + [(None, None)] * (2 * u + 2))
    best_point = make_feasible(K, y_lab, k, C, C_star, p0)
    best = check_dual_point(K, y_lab, k, C, C_star, best_point, upper=upper)
    stages, n_iter = [], 0
    for i_stage, mu in enumerate(mus):
        deadline = None if time_limit is None else t_start + float(time_limit) * (i_stage + 1) / len(mus)
        if products_from is not None and i_stage == int(products_from):
            fun, unpack, n_all = _smoothed(K, y_lab, l, u, s, C, C_star, float(penalty), bool(graph), True)
            at = l + 1 + u + n_graph
            z = np.r_[z[:at], np.zeros(n_all - n_graph), z[at:]]
            box = box[:at] + [(0.0, None)] * (n_all - n_graph) + box[at:]

        class _Stop(Exception):
            pass

        last = {"z": z}

        def f(zz, mu=mu):
            if deadline is not None and time.perf_counter() > deadline:
                raise _Stop
            out = fun(zz, mu)
            last["z"] = zz.copy()
            return out

        try:
            res = minimize(f, z, jac=True, method="L-BFGS-B", bounds=box,
                           options={"maxiter": int(max_iter), "maxcor": 20, "ftol": 1e-15, "gtol": 1e-12})
            z, nit, why = res.x, int(res.nit), str(res.message)
        except _Stop:
            z, nit, why = last["z"], -1, "time limit"
        n_iter += max(nit, 0)
        alpha, t, w, G, E, N, lam, m = unpack(z)
        cand = make_feasible(K, y_lab, k, C, C_star, DualPoint(alpha.copy(), float(t), float(t) * w, lam.copy(),
                                                                m.copy(), G, E.copy(), None if N is None else N.copy()))
        cert = check_dual_point(K, y_lab, k, C, C_star, cand, upper=upper)
        stages.append({"mu": mu, "iterations": nit, "stop": why, "bound": cert.bound,
                       "seconds": round(time.perf_counter() - t_start, 2),
                       "cpu_seconds": round(time.process_time() - cpu_start, 2)})
        if cert.bound > best.bound:
            best, best_point = cert, cand
    return BoundResult(best.bound, best_point, best, time.perf_counter() - t_start, n_iter, stages,
                       time.process_time() - cpu_start)
