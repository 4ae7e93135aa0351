"""Cholesky factors of ``K_SS + diag(d_S)`` over a changing index set S, kept between Newton steps.

The kernel Newton methods (:func:`solvers._primal.kernel_newton`, :func:`solvers._primal.lm_newton`;
JMLR 2008 eqs. 16-18, Chapelle 2007) solve, at every step, a system whose matrix is the kernel
block of the current support vectors S plus a diagonal: ``K_SS + diag(1/(2 c_S))`` (L2-SVM
Newton point) or ``K_SS + lam D_S^-1`` (Levenberg-Marquardt step, eq. 18). Between consecutive
steps S usually changes by a few points and the diagonal by a few entries, and often not at all.
:class:`CholeskyCache` keeps the last lower Cholesky factor and, for a new (S, d):

* returns it unchanged when S and d are the same (the factor is bit-for-bit what a new
  factorization would give);
* otherwise, when few points enter or leave S or few diagonal entries change, modifies it: a
  point leaving S deletes a row and column of the factor (a rank-one update of the trailing
  block), a changed diagonal entry is a rank-one update or downdate ``+- |delta| e_i e_i^T``
  (Golub & Van Loan, Matrix Computations, Sec. 6.5.4) -- all of them applied in one pass over the
  columns of the factor (:func:`_modify_pass`) --, and entering points are appended by block
  elimination (``L21 = K_new,S L^-T``, Cholesky of the Schur complement). Each costs ``O(m^2)``
  against ``O(m^3)`` for a new factorization;
* otherwise, or when a downdate loses positive definiteness, factors anew with LAPACK
  ``dpotrf`` from the lower triangle of the block, gathered element by element (``O(m^2)``
  reads of K, no copy of whole rows) into the column-major layout LAPACK works on and kept:
  the matrix factored is a copy of it plus the diagonal, so a new diagonal on the same points
  (the successive lam of a Levenberg-Marquardt step) costs a copy, not a gather;
* with ``recall > 0``, returns a factor computed anew among the last ``recall`` ones when (S, d)
  is that factor's: the lam of JMLR 2008 Alg. 6 can cycle through a few values (lam, 4 lam,
  lam / 2 ...) while the support set and its curvatures stay the same, so the same matrix is
  factored again. LAPACK ``dpotrf`` on the same input gives the same output, so a recalled
  factor is bit-for-bit the one a new factorization would give (a failed factorization is
  recalled as a failure). A recalled factor is copied before it is modified.

The factor's rows are in the order the points entered, not necessarily sorted; :meth:`solve`
permutes right-hand sides accordingly. :meth:`forward` and :meth:`backward` are its two
triangular halves (``L^-1``, ``L^-T``), for block elimination on a larger system (the
Levenberg-Marquardt step of :class:`solvers._primal._ShiftedSystem`). A modified factor is exact
up to rounding (rank-one modifications are backward stable), so solutions agree with a new
factorization to rounding, not bit for bit; a new factorization is forced after ``refresh``
modified points to bound the drift.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from scipy.linalg.blas import dtrsm
from scipy.linalg.lapack import dpotrf, dpotrs, dtrtrs

from ._validation import check_kernel_matrix

__all__ = ["CholeskyCache"]

#: Costs that decide between modifying a factor and factoring anew, in flops of LAPACK's blocked
#: ``dpotrf`` (which costs ``m^3 / 3``), measured on one core: a rank-one modification, per
#: element of the trailing block it sweeps (``(m - j)^2 / 2`` elements from row j, in the one pass
#: of :func:`_modify_pass`); gathering or copying one element; and the triangular solve that
#: appends a point, per element of the factor it reads.
_SWEEP_COST = 12.0
_COPY_COST = 40.0
_TRSM_COST = 2.0


@njit(cache=True, nogil=True)
def _gather(K, rows, cols, out):  # pragma: no cover - compiled
    """``out[i, j] = K[rows[i], cols[j]]``: reads only the elements gathered."""
    for i in range(rows.size):
        Kr = K[rows[i]]
        for j in range(cols.size):
            out[i, j] = Kr[cols[j]]


@njit(cache=True, nogil=True)
def _gather_lower(K, idx, out):  # pragma: no cover - compiled
    """``out[i, j] = K[idx[i], idx[j]]`` for ``j <= i`` (the triangle ``dpotrf(lower=1)`` reads)."""
    for i in range(idx.size):
        Ki = K[idx[i]]
        for j in range(i + 1):
            out[i, j] = Ki[idx[j]]


@njit(cache=True, nogil=True)
def _modify_pass(L, cols, signs, vals, leave, keep, out):  # pragma: no cover - compiled
    """Diagonal changes and deletions of rows/columns of ``A = L L^T`` in one pass over L.

    Applies, in this order, the rank-one modifications ``A + signs[p] vals[p]^2 e_j e_j^T``
    (``j = cols[p]``) and then the deletion of every row/column j with ``leave[j]`` in increasing
    j: deleting row/column j leaves the factor with row and column j removed and its trailing
    block updated by ``+ L[j+1:, j] L[j+1:, j]^T`` (Golub & Van Loan, Sec. 6.5.4). A rank-one
    modification that starts at column j changes column k >= j and its own vector only, so the
    steps of all modifications on column k are applied while the column is in cache, in the
    order the modifications would be applied one after another: every operation sees the same
    operands as in that sequence, and the result is the same to the bit. The kept rows/columns
    ``keep`` (increasing) of each finished column are written to ``out`` (lower triangle,
    Fortran-ordered, at least ``keep.size`` square; it may be L itself when nothing leaves).
    ``L`` is overwritten. Returns False, leaving L and out unusable, if a downdate loses
    positive definiteness.
    """
    m = L.shape[0]
    n_vec = cols.size + int(np.sum(leave))
    X = np.zeros((n_vec, m))
    sgn = np.empty(n_vec)
    start = np.empty(n_vec, dtype=np.intp)
    for p in range(cols.size):
        X[p, cols[p]] = vals[p]
        sgn[p] = signs[p]
        start[p] = cols[p]
    first = m
    for p in range(cols.size):
        first = min(first, cols[p])
    for j in range(m):
        if leave[j]:
            first = min(first, j)
            break
    active = cols.size
    compact = out.shape[0] != m or keep.size != m
    c_out = 0
    for k in range(m):
        if k >= first:
            lkk = L[k, k]
            col = L[k + 1:, k]
            for p in range(active):
                if start[p] > k:
                    continue
                xp = X[p]
                xk = xp[k]
                if xk == 0.0:
                    continue
                sign = sgn[p]
                r2 = lkk * lkk + sign * xk * xk
                if not r2 > 0.0:
                    return False
                r = np.sqrt(r2)
                c = r / lkk
                s = xk / lkk
                inv_c = 1.0 / c
                ss = sign * s
                lkk = r
                xs = xp[k + 1:]
                for i in range(col.size):
                    lik = (col[i] + ss * xs[i]) * inv_c
                    col[i] = lik
                    xs[i] = c * xs[i] - s * lik
            L[k, k] = lkk
            if leave[k]:
                X[active, k + 1:] = col
                sgn[active] = 1.0
                start[active] = k + 1
                active += 1
                continue
        elif leave[k]:
            continue
        if compact:
            for r in range(c_out, keep.size):
                out[r, c_out] = L[keep[r], k]
        c_out += 1
    return True


class CholeskyCache:
    """The last Cholesky factor of ``K_SS + diag(d)`` for one kernel matrix K (module docstring).

    Parameters
    ----------
    K : array_like, shape (n, n)
        Symmetric positive semi-definite (symmetry is not checked); validated here, once (dense,
        square, finite), converted to float64 if needed but otherwise not copied: it must not
        change while the cache is used.
    refresh : int, default=200
        Points modified (entered, left, or with a changed diagonal) after which the next change
        is a new factorization.
    recall : int, default=0
        New factorizations kept (with their S and d) to be returned again when the same (S, d)
        asks for a new one (module docstring); each kept factor holds ``|S|^2`` floats.
    check : bool, default=True
        Validate K (an O(n^2) pass). False for a float64 ndarray already validated by
        :func:`~solvers._validation.check_kernel_matrix`, as when every solve of a dichotomic
        search makes its own cache on the same kernel.

    Attributes
    ----------
    n_factor, n_reuse, n_modify : int
        New factorizations (computed or recalled), unchanged reuses and modifications so far.
    n_recall : int
        Of the ``n_factor`` new factorizations, those recalled rather than computed.
    """

    def __init__(self, K, refresh=200, recall=0, check=True):
        self.K = K = check_kernel_matrix(K) if check else K
        self.refresh = int(refresh)
        self.recall = int(recall)
        self._recent = []  # (idx, diag, factor or None if not PD) of the last new factorizations, oldest first
        self._order = None  # point of each row of the factor
        self._diag = None  # d of each row of the factor
        self._L = None  # lower factor, Fortran-ordered
        self._perm = None  # rows of the last request, in factor order (None: identity)
        self._drift = 0
        self._block_idx = self._block = None  # the last gathered K[idx, idx]
        self._pos = np.full(K.shape[0], -1, dtype=np.intp)
        self.n_factor = self.n_reuse = self.n_modify = self.n_recall = 0

    # ---------------------------------------------------------------- gathering
    def block(self, rows, cols):
        """``K[rows][:, cols]`` (C-ordered), gathered element by element."""
        rows = np.asarray(rows, dtype=np.intp)
        cols = np.asarray(cols, dtype=np.intp)
        out = np.empty((rows.size, cols.size))
        _gather(self.K, rows, cols, out)
        return out

    def lower_block(self, idx):
        """Lower triangle of ``K[idx][:, idx]``, Fortran-ordered (the upper triangle is zero)."""
        idx = np.asarray(idx, dtype=np.intp)
        out = np.zeros((idx.size, idx.size), order="F")
        _gather_lower(self.K, idx, out)
        return out

    # ---------------------------------------------------------------- factoring
    def factor(self, idx, diag):
        """Factor ``K[idx, idx] + diag(diag)``; returns False if it is not (numerically) PD.

        ``idx`` holds distinct point indices (any order); :meth:`solve` then takes right-hand
        sides aligned with it.
        """
        idx = np.asarray(idx, dtype=np.intp)
        diag = np.asarray(diag, dtype=np.float64)
        if self._L is not None:
            if (idx.size == self._order.size and np.array_equal(idx, self._order)
                    and np.array_equal(diag, self._diag)):
                self._perm = None
                self.n_reuse += 1
                return True
            if self._modify(idx, diag):
                return True
        return self._new(idx, diag)

    def _new(self, idx, diag):
        self.n_factor += 1
        self._perm = None
        if self._recall(idx, diag):
            return self._L is not None
        m = idx.size
        if self._block_idx is None or not np.array_equal(idx, self._block_idx):
            idx = idx.copy()
            self._block_idx, self._block = idx, self.lower_block(idx)
        # The block is kept: a new diagonal on the same points (a new lam of Alg. 6) copies it again.
        M = self._block.copy(order="F")
        M.ravel(order="K")[:: m + 1] += diag  # the diagonal (a view: M is contiguous)
        L, info = dpotrf(M, lower=1, overwrite_a=1, clean=0)
        if info != 0:
            self._L = self._order = self._diag = None
        else:
            self._L, self._order, self._diag, self._drift = L, idx.copy(), diag.copy(), 0
        if self.recall > 0:
            if len(self._recent) >= self.recall:
                del self._recent[0]
            self._recent.append((idx.copy() if self._L is None else self._order,
                                 diag.copy() if self._L is None else self._diag, self._L))
        return self._L is not None

    def _recall(self, idx, diag):
        """Set the state :meth:`_new` would compute from a kept new factorization of (idx, diag);
        False when none is kept."""
        for k, (r_idx, r_diag, r_L) in enumerate(self._recent):
            if r_idx.size == idx.size and np.array_equal(r_idx, idx) and np.array_equal(r_diag, diag):
                self._recent.append(self._recent.pop(k))  # the most recently used is kept longest
                self.n_recall += 1
                if r_L is None:
                    self._L = self._order = self._diag = None
                else:
                    self._L, self._order, self._diag, self._drift = r_L, r_idx, r_diag, 0
                return True
        return False

    def _modify(self, idx, diag):
        """Modify the kept factor toward (idx, diag) if that is cheaper; False when it was not done."""
        order, old_diag = self._order, self._diag
        m_old, m_new = order.size, idx.size
        pos = self._pos
        pos[idx] = np.arange(m_new)
        where = pos[order]  # row of each kept point in the request, -1 if it leaves
        pos[idx] = -1
        stay = where >= 0
        leave = np.flatnonzero(~stay)
        enter_mask = np.ones(m_new, bool)
        enter_mask[where[stay]] = False
        enter = np.flatnonzero(enter_mask)
        delta = np.zeros(m_old)
        delta[stay] = diag[where[stay]] - old_diag[stay]
        changed = np.flatnonzero(delta)
        n_mod = leave.size + enter.size + changed.size
        if self._drift + n_mod > self.refresh:
            return False
        # Work of the modification (rank-one sweeps over trailing blocks, the compaction, the
        # appended rows) against a new factorization (gather, dpotrf), in dpotrf flops.
        m_keep = m_old - leave.size
        sweeps = float(np.sum((m_old - leave) ** 2)) + float(np.sum((m_old - changed) ** 2))
        work = _SWEEP_COST / 2.0 * sweeps + (_COPY_COST * m_keep * m_keep if leave.size else 0.0)
        if enter.size:
            work += _COPY_COST * m_new * m_new + (_TRSM_COST * m_keep * m_keep + _COPY_COST * m_keep) * enter.size
        if work > m_new ** 3 / 3.0 + 2.0 * _COPY_COST * m_new * m_new:
            return False
        L = self._L
        keep_order = order
        if changed.size or leave.size:
            if any(L is r_L for _, _, r_L in self._recent):
                L = L.copy(order="F")  # a kept factor is not modified in place (it may be recalled)
            # Diagonal changes (updates before downdates), then deletions, in one pass over L.
            changed = changed[np.argsort(delta[changed] < 0.0, kind="stable")]
            kept = np.flatnonzero(stay)
            out = np.empty((m_keep, m_keep), order="F") if leave.size else L
            if not _modify_pass(L, changed, np.where(delta[changed] > 0.0, 1.0, -1.0),
                                np.sqrt(np.abs(delta[changed])), ~stay, kept, out):
                self._L = None
                return False
            L = out
            keep_order = order[kept]
        if enter.size:
            new_pts = idx[enter]
            k = enter.size
            L2 = np.zeros((m_keep + k, m_keep + k), order="F")
            L2[:m_keep, :m_keep] = L
            if m_keep:
                B = np.asfortranarray(self.block(keep_order, new_pts))  # (m_keep, k)
                L21t = dtrsm(1.0, L, B, lower=1, trans_a=0)  # L^-1 K_S,new
                L2[m_keep:, :m_keep] = L21t.T
                S = self.block(new_pts, new_pts) - L21t.T @ L21t
            else:
                S = self.block(new_pts, new_pts)
            S.flat[:: k + 1] += diag[enter]
            L22, info = dpotrf(S, lower=1, overwrite_a=1, clean=1)
            if info != 0:
                self._L = None
                return False
            L2[m_keep:, m_keep:] = L22
            L = L2
            keep_order = np.concatenate((keep_order, new_pts))
        self._L = L
        self._order = keep_order
        pos[idx] = np.arange(m_new)
        perm = pos[keep_order]  # row of the request of each factor row
        pos[idx] = -1
        self._diag = diag[perm]
        self._perm = None if np.array_equal(perm, np.arange(m_new)) else perm
        self._drift += n_mod
        self.n_modify += 1
        return True

    def solve(self, rhs):
        """``(K[idx, idx] + diag)^-1 rhs`` for the last successful :meth:`factor` (rhs aligned with idx)."""
        perm = self._perm
        if perm is None:
            return dpotrs(self._L, rhs, lower=1)[0]
        out = np.empty_like(rhs, dtype=np.float64)
        out[perm] = dpotrs(self._L, rhs[perm], lower=1)[0]
        return out

    def forward(self, rhs):
        """``L^-1 rhs`` for the last successful :meth:`factor`, ``K[idx, idx] + diag = L L^T``.

        ``rhs`` is aligned with idx; the result's rows are in the factor's own order (the inner
        products of its columns do not depend on it). ``backward(forward(r))`` is ``solve(r)``.
        """
        b = rhs if self._perm is None else rhs[self._perm]
        return dtrtrs(self._L, b, lower=1, trans=0)[0]

    def backward(self, w):
        """``L^-T w`` (w in the factor's row order, see :meth:`forward`), aligned with idx."""
        x = dtrtrs(self._L, w, lower=1, trans=1)[0]
        if self._perm is None:
            return x
        out = np.empty_like(x)
        out[self._perm] = x
        return out
