"""Linear algebra of S3VM-path: solves with ``Q_FF`` and its Cholesky factor kept along the path.

Ogawa, Imamura, Takeuchi, Sugiyama, *Infinitesimal Annealing for Training Semi-Supervised
Support Vector Machines*, ICML 2013. With ``theta_i = y_i alpha_i`` and
``Q = diag(y) K diag(y)``, both path steps solve with a principal block ``Q_FF`` of Q: the CP
step (Alg. 2) solves ``Q_MM d theta_M = -Q_{M, I_u} 1`` at every event, and the DJ re-solve
(Alg. 3, the convex problem (5)) solves with the block of its free variables at every
active-set iteration. Between two solves the index set changes by one point, so the upper
Cholesky factor ``R'R = Q_FF`` is updated rather than recomputed (:class:`_CholeskyQ`).

Duplicated training points (splice has some) and kernels of low numerical rank make such a
block singular. :func:`_solve_spd` then returns the minimum-norm solution, and
:class:`_CholeskyQ` refuses a point whose column of Q lies in the span of the block (the caller
moves along the null direction instead, see :func:`solvers._path_qp.conditional_optimum`).
The pivot test of both is :data:`_SINGULAR`.

The ``O(n |F|)`` products ``K[:, F] @ w`` that update the outputs ``t_i = y_i f_i`` are
:func:`_kdot` and :meth:`_CholeskyQ.kdot`, which keeps the rows ``K[F]`` contiguous.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

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
        ``potrf``, cheaper than a fresh factor gathered from K); from ``givens_from`` points on,
        the Givens re-triangularization of ``T`` (``O(k^2)``) is cheaper than the ``O(k^3)``
        product.
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
