"""S3VM-path (``s3vm_path``): infinitesimal annealing by parametric programming.

Ogawa, Imamura, Takeuchi, Sugiyama, *Infinitesimal Annealing for Training Semi-Supervised
Support Vector Machines*, ICML 2013.

The problem is the hinge-loss S3VM of eq. (1)/(4) with a kernel and the bias fixed at
``b = 2 r - 1`` (Sec. 2; ``r`` = fraction of positive labeled points unless given). Sec. 2
refers to Chapelle & Zien (2005) for this device: there the kernel is centered on the unlabeled
mean (JMLR 2008 eq. 13), so that b *is* the mean output over U and fixing it is the balance
constraint; the estimator does the same (``center=True``) ::

    J(f, y^) = 1/2 ||w||^2 + C sum_L [1 - y_i f_i]_+ + C* sum_U [1 - y^_i f_i]_+ ,
    f(x) = b + sum_i alpha_i k(x, x_i)                                          (eq. 7)

traced over C* in [0, C_end] (``C_end = C`` by default). With the labels y^ fixed, the
*conditionally optimal* solution (Definition 1, eq. 5) minimizes J over the polytope
``pol(y^) = {f : y^_i f_i >= 0, i in U}`` (eq. 6). Writing ``theta_i = y_i alpha_i >= 0`` and
``t_i = y_i f_i`` (labels y^ on U), its optimality conditions are those of Lemma 3 (8a-8f) plus,
for unlabeled points on the polytope's boundary, ``t_i = 0`` with ``theta_i >= C*`` (the
constraint's multiplier is ``theta_i - C*``). Lemma 3 / Theorem 4: the solution is a local
optimum of (4) iff no unlabeled ``t_i`` is 0 (eq. 9).

Algorithm (Alg. 1-3):

* start (Alg. 1): the SVM on the labeled points with the same fixed b (the problem at C* = 0),
  ``y^ = sgn f`` on U (``f = 0`` counts as +1);
* CP step (Alg. 2): with the index sets O (t > 1, theta = 0), M (t = 1), I_l (t < 1,
  theta = C), I_u (t < 1, theta = C*) fixed, theta is linear in C*: ``d theta_{I_u} = 1``,
  ``Q_MM d theta_M = -Q_{M, I_u} 1`` (``Q = diag(y) K diag(y)``; b is fixed, so there is no
  equality constraint). The next event is found exactly: a point of M reaching 0 or its cost,
  a point of O or I reaching the margin, an unlabeled point of I_u reaching ``t = 0`` (the
  polytope boundary), or C* = C_end;
* DJ step (Alg. 3): at the boundary, flip the labels of ``S = {i in U : f_i = 0}`` (eq. 10)
  and re-solve the convex problem (5) at the same C*, warm-started, by a primal active-set
  method on the dual; repeat while the new solution touches the boundary. Theorem 5: each flip
  strictly lowers J.

The result is the whole path: knots (C*, alpha, labels, J, kind) with alpha linear in C*
between consecutive knots of a CP segment, and two knots at the same C* around each jump (the
right one is the local optimum). :meth:`S3VMPath.decision_function` evaluates any C* on the
path and :meth:`S3VMPath.select_c_star` finds the C* in [0, C_end] that exactly minimizes a
validation error (the outputs are linear in C* on each segment, so the error only changes at
computable roots), as the paper's experiments do.

Implementation notes. The Gram matrix of the training points is formed once (the dual needs
its entries, as Hastie et al.'s SVM path does). Between events theta and t are updated
linearly and recomputed exactly from the index sets every ``refresh`` events and after every
jump, so round-off does not accumulate along long paths. Ties between events are taken one at
a time; a zero-length step is allowed (degenerate vertices), and ``max_events`` bounds the
loop. The sets change by one point per event, so the Cholesky factor of ``Q_MM`` (CP step) and
of ``Q_FF`` (active-set iterations of the DJ re-solve) is updated, not recomputed
(:class:`_CholeskyQ`); a singular ``Q_MM`` in the CP step (duplicated points) falls back to the
minimum-norm solve, and the active-set method keeps ``Q_FF`` nonsingular by moving along null
directions (see :func:`conditional_optimum`). The factor also keeps the rows ``K[F]``
contiguous, so the ``O(n |F|)`` products of every event do not gather them from K again. Full
``O(n^2)`` products are kept for the exact recomputations (every ``refresh`` events, at each
boundary, and to confirm each DJ re-solve); the warm start of a re-solve and the snap of
theta_M after it update outputs that are already exact in ``O(n |S|)`` and ``O(n |M|)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as sla
from sklearn.utils.validation import check_consistent_length, check_is_fitted, column_or_1d, validate_data

from ._balance import check_r, estimate_r
from ._base import BaseS3VM, BinaryFit
from ._kernels import KernelCentering
from ._validation import check_int, check_positive

__all__ = ["S3VMPath", "PathResult", "conditional_optimum", "hinge_objective", "s3vm_path",
           "O", "M", "I", "Z"]

#: Index-set codes of the dual variables theta_i = y_i alpha_i (ICML 2013 Sec. 5, "CP step"):
#: O: theta = 0 (t >= 1); M: 0 <= theta <= c free, t = 1; I: theta = c (t <= 1);
#: Z: unlabeled point on the polytope's boundary, t = 0, theta >= c.
O, M, I, Z = 0, 1, 2, 3


def hinge_objective(K, alpha, b, y, cost) -> float:
    """ICML 2013 eq. (1): ``1/2 alpha'K alpha + sum_i cost_i [1 - y_i f_i]_+``, ``f = b + K alpha``."""
    Ka = K @ alpha
    return float(0.5 * alpha @ Ka + cost @ np.maximum(0.0, 1.0 - y * (b + Ka)))


def _objective_from_t(alpha, t, y, b, cost) -> float:
    # alpha'K alpha = alpha'(f - b) with f = y t: no extra kernel product.
    return float(0.5 * alpha @ (y * t - b) + cost @ np.maximum(0.0, 1.0 - t))


#: Relative pivot below which a block of Q counts as singular: ``min diag(R)^2 <= _SINGULAR max diag(R)^2``.
_SINGULAR = 1e-10


def _kdot(K, idx, w):
    """``sum_k w_k K[idx_k]`` (= ``K[:, idx] @ w``, K symmetric) without copying a large block.

    Gathering ``|idx|`` rows copies ``|idx| n`` entries before the product reads them again; when
    idx covers a good part of the points, one product with the full, mostly zero, weight vector
    reads K once and is cheaper.
    """
    if 3 * idx.size > K.shape[0]:
        full = np.zeros(K.shape[0])
        full[idx] = w
        return K @ full
    return w @ K[idx]


_POTRF, _POTRS = sla.get_lapack_funcs(("potrf", "potrs"), dtype=np.float64)


def _solve_spd(A, rhs):
    """Solve with the (semi)definite block ``A = Q_FF``; minimum-norm when it is singular.

    Duplicated training points (splice has some) make two columns of Q equal: only the sum of
    their theta is determined, and a Cholesky factor would return an arbitrary, huge split. The
    pseudo-inverse splits it evenly, which keeps both within their bounds whenever any split is.
    LAPACK is called directly (what ``scipy.linalg.cho_factor``/``cho_solve`` call, without
    their argument checks, which cost more than the factorization at the typical sizes).
    """
    R, info = _POTRF(A, lower=0, clean=0)
    if info == 0:
        dg = np.abs(R.diagonal())
        if dg.min() ** 2 > _SINGULAR * dg.max() ** 2:
            return _POTRS(R, rhs, lower=0)[0]
    return np.linalg.lstsq(A, rhs, rcond=1e-10)[0]


class _CholeskyQ:
    """Upper Cholesky factor ``R'R = Q_FF`` (``Q = diag(y) K diag(y)``) kept along index-set changes.

    The CP step (ICML 2013 Alg. 2) solves ``Q_MM d theta_M = -Q_{M, I_u} 1`` at every event and
    the DJ re-solve (Alg. 3, eq. 5) solves with ``Q_FF`` at every active-set iteration, while the
    sets change by one point at a time. A fresh factorization costs ``O(|F|^3)`` per solve; here a
    point entering F borders the factor (``O(|F|^2)``) and a point leaving it deletes its column,
    re-triangularized by Givens rotations on the trailing block only
    (``scipy.linalg.qr_delete`` with ``Q = I``: R is the R factor of any B with ``B'B = Q_FF``,
    and deleting a column of B deletes a row and column of ``Q_FF``). Below ``givens_from``
    points the call overhead of the rotations exceeds the arithmetic, and the trailing block's
    factor is recomputed from its small Gram product instead (:meth:`remove`). After
    ``max_updates`` updates, or when the updated factor fails the pivot test of
    :func:`_solve_spd`, the factor is recomputed from scratch, so round-off cannot build up.
    LAPACK is called directly: at the typical ``|F| ~ 20`` the checks of the scipy wrappers cost
    ten times the arithmetic. The order of ``idx`` is the order of insertion. The rows ``K[F]``
    are kept contiguous for :meth:`kdot`.

    Parameters
    ----------
    K : ndarray (n, n)
        Gram matrix.
    y : ndarray (n,)
        +-1 labels (read at each update, so flips made between updates count).
    max_updates : int
        Updates between fresh factorizations.
    givens_from : int
        Smallest ``|F|`` at which a removal re-triangularizes by Givens rotations instead of
        refactoring the trailing block from its Gram product.
    """

    _potrf, _potrs, _trtrs = sla.get_lapack_funcs(("potrf", "potrs", "trtrs"), dtype=np.float64)

    def __init__(self, K, y, max_updates=100, givens_from=112):
        self.K, self.y = K, y
        self.idx = np.empty(0, dtype=np.intp)
        self.R = np.empty((0, 0), order="F")
        self.d2 = np.empty(0)                     # diag(R)^2, for the pivot test
        self.max_updates = int(max_updates)
        self.givens_from = int(givens_from)
        self.n_updates = 0
        # Rows K[i] of the points of F, contiguous, for the O(n |F|) products of the CP step
        # and of the active-set moves (:meth:`kdot`): gathering them from K at every product
        # costs as much as the product. rows[pos[k]] = K[idx[k]]; a point leaving F hands its
        # row to the last one, so the occupied rows stay 0..|F|-1. Beyond ``max_rows`` points
        # (memory) the buffer is dropped and :func:`_kdot` gathers from K.
        self.max_rows = max(64, K.shape[0] // 2)
        self._set_rows(self.idx)

    def _set_rows(self, idx):
        if idx.size > self.max_rows:
            self.rows = None
            return
        self.rows = np.empty((max(16, 2 * idx.size), self.K.shape[0]))
        self.rows[:idx.size] = self.K[idx]
        self.pos = np.arange(idx.size)

    def kdot(self, w):
        """``K[:, idx] @ w`` (``sum_k w_k K[idx_k]``), from the contiguous rows when they are kept."""
        if self.rows is None:
            return _kdot(self.K, self.idx, w)
        z = np.empty(self.idx.size)
        z[self.pos] = w
        return z @ self.rows[:self.idx.size]

    @staticmethod
    def _ok(d2):
        return d2.size == 0 or d2.min() > _SINGULAR * d2.max()

    def refactor(self, idx=None) -> bool:
        """Fresh factor over ``idx`` (default: the current set).

        Returns False, leaving the factor unchanged, when ``Q_idx,idx`` is numerically singular
        (the test of :func:`_solve_spd`).
        """
        idx = self.idx if idx is None else np.asarray(idx, dtype=np.intp)
        if idx.size:
            y = self.y[idx]
            R, info = self._potrf(self.K[np.ix_(idx, idx)] * np.outer(y, y), lower=0, clean=1,
                                  overwrite_a=1)
            if info != 0:
                return False
            d2 = np.diag(R) ** 2
            if not self._ok(d2):
                return False
        else:
            R, d2 = np.empty((0, 0), order="F"), np.empty(0)
        if idx is not self.idx:
            self._set_rows(idx)
        self.idx, self.R, self.d2, self.n_updates = idx.copy(), R, d2, 0
        return True

    def _tick(self) -> bool:
        self.n_updates += 1
        if self.n_updates >= self.max_updates or not self._ok(self.d2):
            return self.refactor()
        return True

    def add(self, j):
        """Border the factor with point ``j``.

        Returns
        -------
        ok : bool
            False (factor unchanged) when column j of Q is numerically in the span of the
            columns of F (a duplicated point, or a kernel of low numerical rank).
        r : ndarray
            ``R^-T Q_Fj``; ``R^-1 r`` solves ``Q_FF x = Q_Fj`` (the null direction when not ok).
        """
        idx, R = self.idx, self.R
        m = idx.size
        q = self.y[idx] * (self.y[j] * self.K[j, idx])
        r = self._trtrs(R, q, lower=0, trans=1)[0] if m else q
        rho2 = float(self.K[j, j] - r @ r)
        if not (rho2 > _SINGULAR * rho2 if m == 0 else rho2 > _SINGULAR * max(self.d2.max(), rho2)):
            return False, r
        Rn = np.zeros((m + 1, m + 1), order="F")
        Rn[:m, :m] = R
        Rn[:m, m] = r
        Rn[m, m] = np.sqrt(rho2)
        old = self.R, self.idx, self.d2, self.rows, self.pos
        if self.rows is not None:
            if m + 1 > self.max_rows:
                self.rows = None
            else:
                if m + 1 > self.rows.shape[0]:
                    grown = np.empty((2 * self.rows.shape[0], self.rows.shape[1]))
                    grown[:m] = self.rows[:m]
                    self.rows = grown
                self.rows[m] = self.K[j]
                self.pos = np.concatenate((self.pos, (m,)))
        # (concatenate: np.append/np.delete cost more in argument handling than in copying here)
        self.R, self.idx, self.d2 = Rn, np.concatenate((idx, (j,))), np.concatenate((self.d2, (rho2,)))
        if not self._tick():
            # A fresh factor in this order fails the pivot test: treat j as dependent (row m
            # of the buffer, if written, is beyond the occupied ones again).
            self.R, self.idx, self.d2, self.rows, self.pos = old
            return False, r
        return True, r

    def remove(self, j) -> bool:
        """Delete point ``j``; False (factor unusable) if not even a fresh factor passes the pivot test.

        With ``R = [[R11, r12, R13], [0, r22, r23'], [0, 0, R33]]`` (j at position p), deleting
        row and column p of ``Q_FF = R'R`` keeps ``R11`` and ``R13`` and turns the trailing block
        into ``R33'R33 + r23 r23' = T'T``, ``T = R[p:, p+1:]``. Below ``givens_from`` points its
        factor is recomputed from that ``k x k`` product (one small matrix product and one
        ``potrf``: measured at half to a quarter of the time of a fresh factor gathered from K,
        |F| = 10..75); from about 112 points on, the Givens re-triangularization of ``T``
        (``O(k^2)``) is cheaper than the ``O(k^3)`` product.
        """
        p = int((self.idx == j).argmax())
        m = self.idx.size
        idx = np.concatenate((self.idx[:p], self.idx[p + 1:]))
        if self.rows is not None:
            s_, last = self.pos[p], m - 1
            if s_ != last:
                self.rows[s_] = self.rows[last]
                self.pos[self.pos == last] = s_
            self.pos = np.concatenate((self.pos[:p], self.pos[p + 1:]))
        if m - 1 < self.givens_from:
            R = self.R
            Rn = np.zeros((m - 1, m - 1), order="F")
            Rn[:p, :p] = R[:p, :p]
            Rn[:p, p:] = R[:p, p + 1:]
            if p < m - 1:
                T = R[p:, p + 1:]
                Rk, info = self._potrf(T.T @ T, lower=0, clean=1, overwrite_a=1)
                if info != 0:
                    if self.refactor(idx):
                        return True
                    self.idx, self.R, self.d2 = idx, np.empty((0, 0), order="F"), np.empty(0)
                    return False
                Rn[p:, p:] = Rk
        else:
            Rn = np.delete(np.delete(self.R, p, axis=0), p, axis=1)
            if p < m - 1:
                k = m - p
                _, T = sla.qr_delete(np.eye(k), self.R[p:, p:], 0, which="col", check_finite=False)
                Rn[p:, p:] = T[:k - 1]
            Rn = np.asfortranarray(Rn)
        self.R, self.idx = Rn, idx
        self.d2 = Rn.diagonal() ** 2
        return self._tick()

    def solve(self, rhs):
        """``Q_FF^-1 rhs`` (rhs in the order of ``idx``)."""
        if self.idx.size == 0:
            return np.empty(0)
        return self._potrs(self.R, rhs, lower=0)[0]

    def null_direction(self, r):
        """``R^-1 r``: with r from a failed :meth:`add` of j, ``Q_FF x = Q_Fj``."""
        return self._trtrs(self.R, r, lower=0, trans=0)[0]


def conditional_optimum(K, y, cost, b, unlabeled, theta0=None, status0=None, *, tol=1e-9,
                        max_iter=None, t0=None):
    """Conditionally optimal solution in pol(y) (ICML 2013 Definition 1, eq. 5).

    Minimizes the dual ``1/2 theta'Q theta - sum_i h_i(theta_i)``, ``Q = diag(y) K diag(y)``,
    with ``h_i(theta) = theta (1 - y_i b)`` for ``theta <= cost_i`` and slope ``-y_i b`` beyond
    (unlabeled points only: the polytope multiplier), ``theta >= 0`` and ``theta <= cost`` on
    labeled points, by a primal active-set method: Newton steps on the free variables F (M:
    target t = 1; Z: target t = 0), shortened at the first bound; at a subspace optimum the
    most violated fixed variable is released. Every step of positive length lowers the dual;
    after a zero-length step (degenerate vertex) Bland's rule (smallest index) picks the
    blocking and the released variable, against cycling; ``max_iter`` bounds the loop.

    ``Q_FF`` is kept nonsingular and its Cholesky factor is updated as F changes
    (:class:`_CholeskyQ`). A released variable whose column of Q is (numerically) in the span
    of F's columns would make ``Q_FF`` singular: then ``v = (-Q_FF^-1 Q_Fj, 1)`` satisfies
    ``Q v = 0`` up to round-off (``sum_i v_i y_i phi(x_i) = 0``), so moving theta along ``v``
    leaves every output t unchanged and changes the dual linearly; it moves in the descent
    direction until a variable of F or j reaches a bound and leaves F. This is the usual
    treatment of singular reduced Hessians in active-set QP; the optimum (unique in the outputs
    f) is the same as with a minimum-norm Newton step, with fewer and cheaper iterations when
    the kernel has low numerical rank.

    Parameters
    ----------
    K : ndarray (n, n)
        Gram matrix.
    y : ndarray (n,)
        +-1 labels (the y^ on unlabeled points).
    cost : ndarray (n,)
        C on labeled points, C* on unlabeled ones.
    b : float
        The fixed bias.
    unlabeled : ndarray of bool (n,)
    theta0, status0 : ndarray, optional
        Warm start (feasible); default all zero / O.
    t0 : ndarray, optional
        Outputs ``y_i f_i`` of the warm start, if the caller has them (the DJ step updates them
        for the flipped points in ``O(n |S|)``); saves the initial ``O(n^2)`` product. They are
        not trusted as exact: the optimum is confirmed on exactly recomputed outputs.
    tol : float
        Tolerance on the optimality conditions, in units of t.
    max_iter : int, optional
        Active-set iterations (Newton steps, releases and null-direction moves) at most
        (default ``50 n + 100``); exceeding it raises ``RuntimeError``.

    Returns
    -------
    theta, status, t, n_iter
    """
    n = y.size
    theta = np.zeros(n) if theta0 is None else np.array(theta0, dtype=float)
    status = np.full(n, O, dtype=np.int8) if status0 is None else np.array(status0, dtype=np.int8)
    max_iter = 50 * n + 100 if max_iter is None else int(max_iter)
    yb = y * b
    fac = _CholeskyQ(K, y)
    # degenerate: the last step had zero length; then Bland's rule (smallest index first, among
    # the blocking variables and among the violators) so that zero steps cannot cycle.
    state = {"it": 0, "exact": True, "degenerate": False}

    def first(lim, idx):
        # The blocking variable: the smallest step; under Bland's rule, the smallest index among ties.
        k = int(np.argmin(lim))
        if state["degenerate"]:
            tie = np.flatnonzero(lim <= lim[k])
            k = int(tie[np.argmin(idx[tie])])
        return k

    def exact_t():
        nz = np.flatnonzero(theta)
        return yb + y * _kdot(K, nz, y[nz] * theta[nz])

    def tick():
        state["it"] += 1
        if state["it"] > max_iter:
            raise RuntimeError(f"conditional_optimum: no convergence in {max_iter} active-set iterations")

    def move(idx, dth, free=False):
        # t moves with the changed block only: O(n |F|), not a full product; for idx = F
        # (free=True) from the factor's contiguous rows.
        nonlocal t
        theta[idx] += dth
        w = y[idx] * dth
        t = t + y * (fac.kdot(w) if free else _kdot(K, idx, w))
        state["exact"] = False

    def to_bound(i, up):
        # A variable leaving F: Z points and rising M points stop at their cost, falling M at 0.
        if status[i] == Z or up:
            theta[i], status[i] = cost[i], I
        else:
            theta[i], status[i] = 0.0, O

    def drop(i):
        if not fac.remove(i):
            rebuild(fac.idx[fac.idx != i])

    def rebuild(members):
        fac.refactor(np.empty(0, dtype=np.intp))
        for i in members:
            if status[i] in (M, Z) and not enter(i):
                raise RuntimeError("conditional_optimum: a free variable could not be refactored into the free set")

    def enter(j):
        """Make j (status M or Z) free: border the factor, or move along the null direction.

        Returns False when j could not be released (a flat, unbounded null direction)."""
        while True:
            ok, r = fac.add(j)
            if ok:
                return True
            tick()
            F = fac.idx
            idx = np.append(F, j)
            v = np.append(-fac.null_direction(r), 1.0) if F.size else np.ones(1)
            g = t[idx] - np.where(status[idx] == Z, 0.0, 1.0)
            slope = g[-1] if abs(g[-1]) > tol else g @ v
            v = v if slope < 0 else -v                       # descent: the dual changes by slope * step
            th, c, isz = theta[idx], cost[idx], status[idx] == Z
            with np.errstate(divide="ignore", invalid="ignore"):
                lim = np.where(v < 0, np.where(isz, (th - c) / -v, th / -v),
                               np.where(isz | (v == 0), np.inf, (c - th) / v))
            lim = np.maximum(lim, 0.0)
            k = first(lim, idx)
            if not np.isfinite(lim[k]):
                # Only boundary (Z) points move, all upwards, leaving every output unchanged.
                # Along v the dual changes by b sum_i v_i y_i exactly (Qv = 0): if that is < 0,
                # no f satisfies y_i f_i >= 0 on these points (pol(y) is empty); otherwise the
                # dual is flat and the violation of j is round-off, magnified by the large
                # multipliers of dependent boundary points: leave j fixed.
                if b * (v @ y[idx]) < -tol * np.abs(v).sum():
                    raise RuntimeError("conditional_optimum: pol(y) is empty (the dual is unbounded)")
                return False
            move(idx, lim[k] * v)
            state["degenerate"] = lim[k] == 0.0
            i = int(idx[k])
            to_bound(i, v[k] > 0)
            if i == j:
                return True
            drop(i)

    if t0 is None:
        t = exact_t()
    else:
        t, state["exact"] = np.array(t0, dtype=float), False
    held = []       # violators whose release found only a flat unbounded direction (see enter)
    free0 = np.flatnonzero((status == M) | (status == Z))
    if not fac.refactor(free0):
        rebuild(free0)
    while True:
        tick()
        free = fac.idx
        if free.size:
            isz = status[free] == Z
            g = t[free] - np.where(isz, 0.0, 1.0)                    # targets: t = 0 on Z, 1 on M
            if np.max(np.abs(g)) > tol:
                d = fac.solve(-g)
                th = theta[free]
                # Step to the first bound along d: an M point falling to 0 (-th / d), a Z point
                # falling to its cost or an M point rising to its cost ((c - th) / d); a rising
                # Z point has no bound. Ratios only where they apply (no division by 0).
                rise = d > 0
                num = np.where(isz | rise, cost[free] - th, -th)
                lim = np.full(free.size, np.inf)
                np.divide(num, d, out=lim, where=(d < 0) | (rise & ~isz))
                np.maximum(lim, 0.0, out=lim)
                j = first(lim, free)
                step = min(1.0, lim[j])
                state["degenerate"] = step == 0.0
                move(free, step * d, free=True)
                if step < 1.0:
                    i = int(free[j])
                    to_bound(i, d[j] > 0)
                    drop(i)
                continue
        # Subspace optimal: check the fixed variables (Lemma 3, 8a-8f; boundary t >= 0).
        # viol: the largest violation of each fixed variable (0 if none); to_z: its release
        # target is the boundary (t = 0) rather than the margin. 1 - t is -(t - 1) exactly.
        isI = status == I
        g = t - 1.0
        viol = np.maximum(np.where(status == O, -g, np.where(isI, g, 0.0)), 0.0)  # O needs t >= 1, I t <= 1
        z = np.where(isI & unlabeled, -t, 0.0)              # ... and t >= 0 on unlabeled points
        to_z = z > viol
        viol = np.where(to_z, z, viol)
        bad = np.flatnonzero(viol > tol)
        if bad.size == 0:
            if state["exact"]:
                return theta, status, t, state["it"]
            # Confirm the optimum on exactly recomputed outputs (no drift), then re-check.
            t, state["exact"] = exact_t(), True
            continue
        # Release the most violated one only: with a kernel of low numerical rank most
        # violators are dependent on F, and releasing them all costs one null-direction move
        # each (fourclass, C = 100: 5444 iterations instead of 715 one at a time).
        bad = bad[~np.isin(bad, held)] if held else bad
        if bad.size == 0:
            if state["exact"]:
                return theta, status, t, state["it"]
            t, state["exact"] = exact_t(), True
            continue
        j = int(bad[0] if state["degenerate"] else bad[np.argmax(viol[bad])])
        back, status[j] = status[j], (Z if to_z[j] else M)
        if enter(j):
            held.clear()
        else:
            status[j] = back
            held.append(j)


@dataclass
class PathResult:
    """The S3VM path of one binary problem.

    ``knots`` rows are in path order; between knot k and k+1 with ``c_star[k] < c_star[k+1]``
    the coefficients are linear in C*; two knots with the same C* bracket a jump (DJ step).
    """

    c_star: np.ndarray            # (m,)
    alpha: np.ndarray             # (m, n) expansion coefficients over the training points
    y_unlabeled: np.ndarray       # (m, u) int8 labels y^ in force at each knot
    objective: np.ndarray         # (m,) J(f, y^) at each knot (eq. 1)
    kind: np.ndarray              # (m,) "start", "event", "boundary", "jump", "flip" (at C* = 0), "end"
    intercept: np.ndarray         # (m,) intercept at each knot (constant b unless uncentered)
    C: float
    n_events: int = 0
    n_jumps: int = 0              # DJ steps (boundary hits)
    n_flips: int = 0              # labels flipped over all DJ steps
    n_qp_iter: int = 0            # active-set iterations (start + DJ re-solves)
    seconds: float = 0.0
    events: dict = field(default_factory=dict)
    jump_objectives: list = field(default_factory=list)  # per DJ step: J before, then after each flip

    def index_at(self, c_star: float) -> int:
        """Index of the knot from which the segment containing ``c_star`` starts."""
        c = float(c_star)
        if not self.c_star[0] <= c <= self.c_star[-1] * (1 + 1e-12):
            raise ValueError(f"C* = {c!r} is outside the path [{self.c_star[0]}, {self.c_star[-1]}]")
        return int(np.searchsorted(self.c_star, c, side="right") - 1)

    def _bracket(self, c_star: float):
        """(k, w): the value at ``c_star`` is ``(1 - w) * knot[k] + w * knot[k + 1]`` (w = 0 at a knot)."""
        k = self.index_at(c_star)
        c = float(c_star)
        if k == self.c_star.size - 1 or self.c_star[k] == c:
            return k, 0.0
        return k, (c - self.c_star[k]) / (self.c_star[k + 1] - self.c_star[k])

    def interpolate(self, values: np.ndarray, c_star: float):
        """Any per-knot quantity linear on the segments (rows of ``values``) at ``c_star``."""
        k, w = self._bracket(c_star)
        return values[k] if w == 0.0 else (1.0 - w) * values[k] + w * values[k + 1]

    def alpha_at(self, c_star: float) -> np.ndarray:
        """Coefficients at ``c_star``; at a jump, the solution after it (the local optimum)."""
        return np.array(self.interpolate(self.alpha, c_star), dtype=float)

    def intercept_at(self, c_star: float) -> float:
        """Intercept at ``c_star`` (linear between knots like the coefficients)."""
        return float(self.interpolate(self.intercept, c_star))

    def labels_at(self, c_star: float) -> np.ndarray:
        """The labels y^ in force at ``c_star``."""
        return self.y_unlabeled[self.index_at(c_star)].copy()


def _start(K, y, labeled, C, b, tol):
    """Alg. 1 lines 3-4: the fixed-b SVM on the labeled points; y^ = sgn f on U."""
    lab = np.flatnonzero(labeled)
    Kl = K[np.ix_(lab, lab)]
    yl = y[lab]
    th, st, _, it = conditional_optimum(Kl, yl, np.full(lab.size, C), b, np.zeros(lab.size, bool), tol=tol)
    theta = np.zeros(y.size)
    theta[lab] = th
    f = b + (yl * th) @ K[lab]
    y = y.copy()
    unl = ~labeled
    y[unl] = np.where(f[unl] >= 0, 1.0, -1.0)
    status = np.full(y.size, O, dtype=np.int8)
    status[lab] = st
    t = y * f
    status[unl] = np.where(t[unl] < 1.0, I, O)  # theta = 0 = C* either way
    return theta, status, y, t, it


def _exact_state(K, y, b, theta, status, cost):
    """Recompute theta_M (t_M = 1) and every t from the index sets (no accumulated drift)."""
    m = np.flatnonzero(status == M)
    fixed = np.flatnonzero(status == I)
    theta = np.where(status == O, 0.0, theta)
    theta[fixed] = cost[fixed]
    f_fixed = _kdot(K, fixed, y[fixed] * theta[fixed])    # outputs of the bounded part, all points
    if m.size:
        rhs = 1.0 - y[m] * b - y[m] * f_fixed[m]
        theta[m] = _solve_spd(K[np.ix_(m, m)] * np.outer(y[m], y[m]), rhs)
    t = y * b + y * (f_fixed + _kdot(K, m, y[m] * theta[m]))
    return theta, t


def _exact_state_from(K, y, b, theta, status, cost, t):
    """:func:`_exact_state` when ``t`` is already exact for ``theta`` (O(n |M|), no O(n^2) product).

    After a DJ re-solve, :func:`conditional_optimum` returns outputs it has just recomputed
    exactly. The outputs of the bounded part at M follow from them by removing M's own terms
    (``O(|M|^2)``), theta_M is re-solved from them as in :func:`_exact_state`, and t moves with the
    changed coefficients only (``O(n |M|)``; any bounded coefficient not exactly at its bound is
    set there and its change applied the same way).
    """
    m = np.flatnonzero(status == M)
    fixed = np.flatnonzero(status == I)
    new = np.where(status == O, 0.0, theta)
    new[fixed] = cost[fixed]
    moved = np.flatnonzero(new != theta)
    t = np.array(t, dtype=float)
    if moved.size:
        t += y * _kdot(K, moved, y[moved] * (new[moved] - theta[moved]))
    if m.size:
        ym = y[m]
        Qmm = K[np.ix_(m, m)] * np.outer(ym, ym)
        f_fixed_m = ym * t[m] - b - ym * (Qmm @ new[m])          # f_M without b and M's own terms
        rhs = 1.0 - ym * b - ym * f_fixed_m
        th_m = _solve_spd(Qmm, rhs)
        t += y * _kdot(K, m, ym * (th_m - new[m]))
        new[m] = th_m
    return new, t


def s3vm_path(K, y_pm, C, b, *, c_end=None, tol=1e-9, max_events=None, refresh=50):
    """Trace the S3VM-path (ICML 2013 Alg. 1) over C* in [0, c_end].

    Parameters
    ----------
    K : ndarray (n, n)
        Gram matrix of the training points.
    y_pm : ndarray (n,)
        +-1 on labeled points, 0 on unlabeled ones.
    C : float
        Cost of the labeled losses.
    b : float
        Fixed bias (``2 r - 1``).
    c_end : float, optional
        Last C* (default C).
    tol : float
        Tolerance on t for the optimality conditions and the boundary test.
    max_events : int, optional
        Events (CP breakpoints plus jumps) at most (default ``20 n + 1000``); exceeding it raises
        ``RuntimeError``.
    refresh : int
        Exact recomputation of theta and t every ``refresh`` events.

    Returns
    -------
    PathResult
    """
    import time

    t0 = time.perf_counter()
    K = np.asarray(K, dtype=float)
    y_pm = np.asarray(y_pm, dtype=float)
    n = y_pm.size
    labeled = y_pm != 0
    unl = ~labeled
    uidx = np.flatnonzero(unl)
    C = float(C)
    c_end = C if c_end is None else float(c_end)
    max_events = 20 * n + 1000 if max_events is None else int(max_events)
    theta, status, y, t, n_qp = _start(K, y_pm, labeled, C, b, tol)
    c_star = 0.0
    cost = np.where(labeled, C, 0.0)

    knots_c, knots_a, knots_y, knots_j, knots_kind = [], [], [], [], []

    def record(kind):
        alpha = y * theta
        knots_c.append(c_star)
        knots_a.append(alpha)
        knots_y.append(y[uidx].astype(np.int8))
        knots_j.append(_objective_from_t(alpha, t, y, b, cost))
        knots_kind.append(kind)

    jump_objectives = []
    record("start")
    counts = {"to_M": 0, "to_O": 0, "to_I": 0, "boundary": 0}
    n_events = n_jumps = n_flips = 0
    since_refresh = 0
    undo = s_u = None
    # s_u = sum_{I_u} y_i K[i] is updated, not recomputed, as points enter or leave I_u; s_u_age
    # counts those updates since the last exact product, which is redone beyond ``refresh``.
    s_u_age = 0
    # Cholesky factor of Q_MM kept along the events (None: refactor, or Q_MM is singular and the
    # minimum-norm solve of _solve_spd is used until a fresh factor passes the pivot test).
    fac = None
    while True:
        # --- CP step (Alg. 2): direction of theta and t per unit of C*.
        if s_u is None:
            iu = np.flatnonzero((status == I) & unl)
            s_u, s_u_age = _kdot(K, iu, y[iu]), 0
        isO, isI = status == O, status == I
        isIu = isI & unl
        dtheta = isIu.astype(float)                 # d theta_{I_u} = 1, d theta_O = d theta_{I_l} = 0
        if fac is None:
            m = np.flatnonzero(status == M)
            fac = _CholeskyQ(K, y)
            if not fac.refactor(m):
                fac = None
        else:
            m = fac.idx
        if m.size:
            rhs = -y[m] * s_u[m]
            if fac is not None:
                dm = fac.solve(rhs)
                dt = y * (fac.kdot(y[m] * dm) + s_u)
            else:
                dm = np.linalg.lstsq(K[np.ix_(m, m)] * np.outer(y[m], y[m]), rhs, rcond=1e-10)[0]
                dt = y * (_kdot(K, m, y[m] * dm) + s_u)
            dtheta[m] = dm
            # |d theta| <= 1 on I_u is covered by the 1.0 of the max.
            eps = 1e-12 * max(1.0, np.abs(dt).max(), np.abs(dm).max())
        else:
            dt = y * s_u
            eps = 1e-12 * max(1.0, np.abs(dt).max())
        # Next event (ICML 2013 Alg. 2): smallest step Delta >= 0 in C*. Each point has at most
        # one candidate (the directions exclude each other). The ratios are computed only where
        # they are candidates (``where=``), so no division by a zero slope happens; the set a
        # point would move to is worked out for the chosen point only (:func:`code_of`).
        neg = dt < -eps
        ok_m = np.where(isO, neg, isI & (dt > eps))                    # O -> M, I -> M (t reaches 1)
        ok_z = isIu & neg                                               # I_u -> boundary (t = 0)
        cand = np.full(n, np.inf)
        np.divide(1.0 - t, dt, out=cand, where=ok_m)
        np.divide(-t, dt, out=cand, where=ok_z)
        if m.size:
            thm = theta[m]
            slope = dm - unl[m]                                          # theta - cost per unit C*
            cost_m = np.where(unl[m], c_star, C)
            to_o = np.full(m.size, np.inf)
            to_i = np.full(m.size, np.inf)
            np.divide(-thm, dm, out=to_o, where=dm < -eps)               # M -> O
            np.divide(cost_m - thm, slope, out=to_i, where=slope > eps)  # M -> I
            cand[m] = np.minimum(to_o, to_i)
        np.maximum(cand, 0.0, out=cand)

        def code_of(i):
            # The set point i reaches at its candidate step (O for a point without candidate).
            if status[i] == M:
                p = int(np.flatnonzero(m == i)[0])
                return O if to_o[p] <= to_i[p] else I
            return Z if ok_z[i] else (M if ok_m[i] else O)

        if undo is not None and cand[undo[0]] == 0.0 and code_of(undo[0]) == undo[1]:
            # Degenerate vertex: the point that just changed set would change straight back at
            # zero step (a round-off-level slope). Let any other event go first.
            cand[undo[0]] = np.inf
        j = int(np.argmin(cand))
        delta = float(cand[j])
        code_j = code_of(j)
        last = c_star + delta >= c_end
        if last:
            delta = c_end - c_star
        theta = theta + delta * dtheta
        t = t + delta * dt
        c_star = c_star + delta
        cost[uidx] = c_star
        if last:
            theta, t = _exact_state(K, y, b, theta, status, cost)
            record("end")
            break
        n_events += 1
        if n_events > max_events:
            raise RuntimeError(f"s3vm_path: more than max_events={max_events} events before C* = {c_end}")
        if code_j != Z:
            counts["to_" + "OMI"[code_j]] += 1
            undo = (j, int(status[j]))
            if unl[j] and (status[j] == I) != (code_j == I):
                s_u = s_u + (1.0 if code_j == I else -1.0) * y[j] * K[j]
                s_u_age += 1
            if fac is not None:
                # ICML 2013 Alg. 2: one point enters or leaves M per event; update the factor.
                if code_j == M:
                    if not fac.add(j)[0]:
                        fac = None
                elif status[j] == M and not fac.remove(j):
                    fac = None
            status[j] = code_j
            since_refresh += 1
            if since_refresh >= refresh:
                theta, t = _exact_state(K, y, b, theta, status, cost)
                since_refresh, s_u, fac = 0, None, None
            else:
                theta[j] = {O: 0.0, I: cost[j]}.get(int(code_j), theta[j])
            record("event")
            continue
        # --- The path reached the polytope's boundary: DJ step (Alg. 3) at this C*.
        counts["boundary"] += 1
        theta, t = _exact_state(K, y, b, theta, status, cost)
        record("boundary")
        S = np.flatnonzero(unl & (t <= tol))
        if S.size == 0:
            S = np.array([j])
        if c_star <= 0.0:
            # No unlabeled cost yet: flipping changes nothing but the side the point leaves to.
            y[S] = -y[S]
            t[S] = -t[S]
            n_flips += S.size
            undo = s_u = fac = None
            record("flip")
            continue
        n_jumps += 1
        seq = [knots_j[-1]]
        w_u = np.where((status == I) & unl, y, 0.0)   # s_u = K w_u (I_u and its labels before the jump)
        while S.size:
            # Outputs of the warm start below without a full kernel product: f loses the terms
            # of S (O(n |S|)), and t = y f with the flipped labels.
            f = y * t - _kdot(K, S, y[S] * theta[S])
            y[S] = -y[S]                       # eq. (10)
            n_flips += S.size
            # Warm start: the flipped points restart at theta = 0 (feasible, f changes least).
            theta[S] = 0.0
            status[S] = O
            theta, status, t, it = conditional_optimum(K, y, cost, b, unl, theta, status, tol=tol, t0=y * f)
            n_qp += it
            seq.append(_objective_from_t(y * theta, t, y, b, cost))
            # eq. (10): S = {i in U : f_i = 0}. Points on the boundary with a positive multiplier
            # are Z; one whose multiplier happens to be zero (theta_i = C*, t_i = 0) is left in I,
            # and which of the two a degenerate boundary point gets depends on the (then not
            # unique) multipliers, not on f: take both.
            S = np.flatnonzero(unl & ((status == Z) | (t <= tol)))
            if n_flips > max_events:
                raise RuntimeError("s3vm_path: DJ step does not terminate (more flips than max_events)")
        # Z points have left; settle statuses of points exactly at bounds for the CP step.
        status[(status == Z)] = I
        # conditional_optimum returned exactly recomputed outputs: snap theta_M without a full product.
        theta, t = _exact_state_from(K, y, b, theta, status, cost, t)
        since_refresh = 0
        # The jump changes I_u and the labels of few points: s_u follows in O(n |changed|).
        dw = np.where((status == I) & unl, y, 0.0) - w_u
        ch = np.flatnonzero(dw)
        s_u_age += ch.size
        s_u = s_u + _kdot(K, ch, dw[ch]) if s_u_age < refresh else None
        undo = fac = None
        jump_objectives.append(np.array(seq))
        record("jump")
    return PathResult(c_star=np.array(knots_c), alpha=np.vstack(knots_a), y_unlabeled=np.vstack(knots_y),
                      objective=np.array(knots_j), kind=np.array(knots_kind), intercept=np.full(len(knots_c), float(b)), C=C,
                      n_events=n_events, n_jumps=n_jumps, n_flips=n_flips, n_qp_iter=n_qp,
                      seconds=time.perf_counter() - t0, events=counts, jump_objectives=jump_objectives)


class S3VMPath(BaseS3VM):
    """S3VM-path (ICML 2013): the entire path of local optima of the hinge-loss S3VM over C*.

    Parameters
    ----------
    kernel : {"rbf"}, default="rbf"
        ``exp(-||x - z||^2 / (2 sigma^2))``, the paper's kernel (Sec. 6).
    sigma : float, default=1.0
        Gaussian width (the paper's ``gamma`` is ``1 / (2 sigma^2)``).
    C : float, default=1.0
        Cost of the labeled hinge losses.
    C_star : float or None, default=None
        End of the path, C* in [0, C_star]; None means C (the paper's range [0, C]).
    r : float in (0, 1) or None, default=None
        Fixes ``b = 2 r - 1`` (ICML 2013 Sec. 2); None uses the fraction of positive labeled
        points, as the paper does.
    center : bool, default=True
        Center the kernel on the unlabeled mean (JMLR 2008 eq. 13), so that the fixed b is the
        mean output over U and fixing it is the balance constraint of Chapelle & Zien (2005),
        which ICML 2013 Sec. 2 refers to. ``False`` fixes b in the raw kernel (b is then an
        offset only: with a Gaussian kernel the outputs far from the labeled points tend to b,
        and every unlabeled point can end up in one class).
    tol : float, default=1e-9
        Tolerance of the optimality conditions (units of y f).
    max_events : int or None, default=None
        Cap on path events (default ``20 n + 1000``).

    Attributes
    ----------
    paths_ : list of PathResult
        One per binary problem (one-vs-rest for more than two classes).
    dual_coef_, intercept_
        The solution at the end of the path (C* = C_star).
    assigned_labels_ : ndarray (n_problems, n_unlabeled)
        The labels y^ at the end of the path.
    """

    _accepts_sparse = True
    balance = "threshold"

    def __init__(self, kernel="rbf", sigma=1.0, C=1.0, C_star=None, r=None, center=True, tol=1e-9,
                 max_events=None):
        self.kernel = kernel
        self.sigma = sigma
        self.C = C
        self.C_star = C_star
        self.r = r
        self.center = center
        self.tol = tol
        self.max_events = max_events

    def _check_params(self):
        super()._check_params()
        check_positive(self.tol, "tol")
        if self.max_events is not None:
            check_int(self.max_events, "max_events", 1)
        if self.kernel != "rbf":
            raise ValueError(f"s3vm_path traces the kernel expansion of eq. (7) with the Gaussian kernel the "
                             f"paper uses; kernel must be 'rbf', got {self.kernel!r}")
        if self.C_star is not None and self.C_star > self.C:
            raise ValueError(f"C_star must be <= C (the path runs over [0, C]); got C_star={self.C_star!r}, "
                             f"C={self.C!r}")

    def fit(self, X, y):
        """Fit on labeled and unlabeled points (``y == -1`` marks unlabeled); see the class doc."""
        super().fit(X, y)
        self.paths_ = [f.info.get("path") for f in self.binary_fits_]  # None: fully labeled y, no path
        self.assigned_labels_ = np.vstack([np.empty(0) if p is None else p.y_unlabeled[-1] for p in self.paths_])
        return self

    def _fit_binary(self, X, y_pm, labeled, gram):
        r = check_r(estimate_r(y_pm[labeled]) if self.r is None else self.r)
        C = float(self.C)
        c_end = C if self.C_star is None else float(self.C_star)
        b = 2.0 * r - 1.0
        if self.center:
            unl = np.flatnonzero(~labeled)
            cen = KernelCentering.fit(gram, unl)
            K = cen.center_train(gram)
        else:
            K = gram
        path = s3vm_path(K, y_pm, C, b, c_end=c_end, tol=float(self.tol), max_events=self.max_events)
        if self.center:
            # f = sum_i a_i k~(x, x_i) + b is an ordinary expansion (linear in a, so the map
            # commutes with the interpolation along the path): coefficients of the unlabeled
            # points shift by -sum(a)/u, the intercept absorbs the constant terms.
            # The (knots, n) array is the path's own: shifted in place, through a slice when U is
            # one block of columns (labeled points first, as the harness orders them), which
            # avoids the gather/scatter copies of fancy indexing on a large array.
            a = path.alpha
            path.intercept = b + a @ (cen.grand_mean - cen.train_means)
            shift = a.sum(axis=1, keepdims=True) / unl.size
            if unl[-1] - unl[0] + 1 == unl.size:
                a[:, unl[0]:unl[-1] + 1] -= shift
            else:
                a[:, unl] -= shift
        info = {"path": path, "r": r, "b": b, "objective": float(path.objective[-1]), "n_events": path.n_events,
                "n_jumps": path.n_jumps, "n_flips": path.n_flips}
        return BinaryFit(path.alpha[-1].copy(), float(path.intercept[-1]), path.n_events, "path_end", info)

    # ----------------------------------------------------------------- along the path
    def decision_function(self, X, C_star=None):
        """Outputs at the end of the path, or at ``C_star`` anywhere in [0, C_end]."""
        if C_star is None:
            return super().decision_function(X)
        coefs = np.vstack([p.alpha_at(C_star) for p in self.paths_])
        intercepts = np.array([p.intercept_at(C_star) for p in self.paths_])
        saved = self.dual_coef_, self.intercept_
        try:
            self.dual_coef_, self.intercept_ = coefs, intercepts
            return super().decision_function(X)
        finally:
            self.dual_coef_, self.intercept_ = saved

    def predict(self, X, C_star=None):
        """Labels at the end of the path, or at ``C_star``."""
        F = self.decision_function(X, C_star)
        if self.classes_.size == 2:
            return self.classes_[(F > 0).astype(int)]
        return self.classes_[np.argmax(F, axis=1)]

    def validation_curve(self, X_val, y_val):
        """Exact validation error as a piecewise-constant function of C* (two classes).

        Returns
        -------
        edges : ndarray (k + 1,)
            C* values bounding the pieces (knots and the roots where a validation output
            changes sign); the error is constant on each open piece.
        errors : ndarray (k,)
            Validation error rate on each piece.
        """
        check_is_fitted(self, "paths_")
        if self.classes_.size != 2:
            raise ValueError("validation_curve/select_c_star need a binary problem (two classes); "
                             f"got {self.classes_.size} classes")
        X_val = validate_data(self, X_val, accept_sparse="csr", dtype=np.float64, reset=False)
        y_val = column_or_1d(y_val, warn=True)
        check_consistent_length(X_val, y_val)
        # A label outside the training classes (a typo, -1 for 0) would silently count as the
        # negative class.
        unknown = np.setdiff1d(np.unique(y_val), self.classes_)
        if unknown.size:
            raise ValueError(f"y_val has labels {unknown.tolist()} that are not among the training classes "
                             f"{self.classes_.tolist()}")
        truth = np.where(y_val == self.classes_[1], 1.0, -1.0)
        path = self.paths_[0]
        Kv = self._kernel(X_val, self.X_fit_)
        F = Kv @ path.alpha.T + path.intercept          # (n_val, m): outputs at the knots
        edges = [path.c_star[0]]
        for k in range(path.c_star.size - 1):
            c0, c1 = path.c_star[k], path.c_star[k + 1]
            if c1 <= c0:
                continue
            f0, f1 = F[:, k], F[:, k + 1]
            with np.errstate(divide="ignore", invalid="ignore"):
                w = f0 / (f0 - f1)                       # sign change inside the segment
            w = w[(w > 0) & (w < 1) & np.isfinite(w)]
            edges.extend(np.sort(c0 + w * (c1 - c0)))
            edges.append(c1)
        edges = np.unique(np.asarray(edges))
        if edges.size == 1:
            edges = np.array([edges[0], edges[0]])
        mids = 0.5 * (edges[:-1] + edges[1:])
        errors = np.array([np.mean(np.where(path.interpolate(F.T, c) > 0, 1.0, -1.0) != truth) for c in mids])
        return edges, errors

    def select_c_star(self, X_val, y_val):
        """C* in [0, C_end] that exactly minimizes the validation error (ICML 2013 Sec. 6).

        Ties: the minimizing piece with the largest C* (the most semi-supervised solution),
        evaluated at its midpoint, or at C_end when that piece ends the path.

        Returns
        -------
        c_star : float
        error : float
        """
        edges, errors = self.validation_curve(X_val, y_val)
        best = np.flatnonzero(errors == errors.min())[-1]
        c = edges[best + 1] if best + 1 == edges.size - 1 else 0.5 * (edges[best] + edges[best + 1])
        return float(c), float(errors[best])

