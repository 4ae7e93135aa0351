"""Levenberg-Marquardt Newton in beta at a fixed bias, for non-convex losses (JMLR 2008 Sec. 4.4, Alg. 6).

The primal core of Newton S3VM and of CCCP's convex steps: minimizes eq. (15) of JMLR 2008 in the
expansion coefficients, with the step of eq. (18) solved by :class:`_ShiftedSystem` on the
support vectors.  Re-exported by :mod:`solvers._primal`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scipy.linalg.lapack import dpotrf, dpotrs

from ._primal_common import _check_scalar, _check_vector, _factors, _rows_product
from ._validation import check_int, check_positive


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
    ``(lam K + K D K) s = -K g`` by eq. (18) on the "support vectors" with ``h != 0``
    (:class:`_LMStep`, which has the linear algebra and its cost); if ``lam K + K D K`` is not
    positive definite, lam is multiplied by 4 (Fletcher 1987, Alg. 5.2.7). With ``rho`` the ratio
    of the actual decrease to the decrease predicted by the quadratic model (true Hessian), the
    step is taken if ``rho > 0``; lam is multiplied by 4 if ``rho < 0.25`` and set to
    ``max(1, lam / 2)`` if ``rho > 0.75`` (the text of Alg. 6 reads "rho > 0.25" and
    "min(1, lam/2)" -- extraction slips: lam >= 1 by the paper's own definition, and Fletcher's
    rule enlarges the ridge when the model is poor). A rejected step leaves beta, g, the support
    vectors and the right-hand side of eq. (18) unchanged; they are kept for the next lam.

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
    b = _check_scalar(b, "b")
    tol = check_positive(tol, "tol")
    max_iter = check_int(max_iter, "max_iter", 1)
    beta, Kbeta = _lm_start(factors.K, beta0, Kbeta0)
    o = Kbeta + b
    value, d, h = loss(o)
    omega = 0.5 * float(beta @ Kbeta) + float(value)
    lam = 1.0
    it = accepted = n_sv = 0
    stop = "max_iter"
    step = None  # the terms of eq. (18) at the current beta; kept after a rejected step
    while it < max_iter:
        it += 1
        if step is None:
            step = _LMStep(factors, beta, d, h)
            n_sv = step.sv.size
        lam, s = step.direction(lam)  # eq. (18), lam grown until lam K + K D K > 0
        if s is None:
            stop = "stalled"
            break
        Ks, pred = step.model(s, lam)
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
            step = None
        if rho < 0.25:
            lam *= 4.0
            if lam > 1e12:
                stop = "stalled"
                break
        elif rho > 0.75:
            lam = max(1.0, lam / 2.0)
    return LMResult(beta, float(omega), o, it, accepted, stop, int(n_sv), float(lam))


def _lm_start(K, beta0, Kbeta0):
    """``(beta, K beta)`` at the start of :func:`lm_newton`: ``beta0`` (default 0), with the
    caller's ``Kbeta0`` when both are given."""
    n = K.shape[0]
    beta = np.zeros(n) if beta0 is None else _check_vector(beta0, n, "beta0")
    if beta0 is not None and Kbeta0 is not None:
        return beta, _check_vector(Kbeta0, n, "Kbeta0")
    return beta, (K @ beta if np.any(beta) else np.zeros(n))


class _LMStep:
    """The terms of the Levenberg-Marquardt step of :func:`lm_newton` at one beta (JMLR 2008, eq. 18).

    The step solves ``(lam K + K D K) s = -K g``, ``g = beta + d`` (eq. 16), ``D = diag(h)``
    (eq. 17), by eq. (18): ``s = -g / lam`` on the points with ``h = 0`` and, on the ``n_sv``
    "support vectors" with ``h != 0``, ``(lam I + D_sv K_sv) s_sv = rhs`` with
    ``rhs = -(g_sv - D_sv K_sv,nsv g_nsv / lam)``. The paper solves this system through the
    Cholesky factor A of K_sv (``s_sv = A^{-1} B^{-1} A rhs``, ``B = lam I + A D_sv A^T``, whose
    Cholesky factorization also tests ``lam K + K D K > 0``); we solve the equivalent symmetric
    system ``(K_sv + lam D_sv^{-1}) s_sv = D_sv^{-1} rhs`` instead, with no product ``A D A^T``.
    By Haynsworth's inertia additivity, ``lam K_sv^{-1} + D_sv > 0`` (i.e. B > 0) if and only if
    ``K_sv + lam D_sv^{-1}`` has exactly as many negative eigenvalues as D_sv; the system and
    this test are solved by :class:`_ShiftedSystem` (one Cholesky factorization when every
    ``D_ii > 0`` -- the matrix is then positive definite even for a singular K -- and two on a
    block split otherwise).

    Cost. ``K s`` is read from the rows of the support vectors and of the ``n_g`` other points
    where g is non-zero (few after the first full step), ``O(n (n_sv + n_g))``; the
    factorization costs ``O(n_sv^3)`` -- or nothing when the support vectors, their curvatures
    and lam repeat, and ``O(n_sv^2)`` per point when they change by a few points
    (:class:`solvers._cholesky.CholeskyCache`). Everything here depends on beta only, so it is
    kept across the lam of rejected steps.
    """

    def __init__(self, factors, beta, d, h):
        self.K = factors.K
        self.g = g = beta + d  # eq. (16): the gradient is K g
        self.h = h
        sv_mask = h != 0.0
        self.sv = sv = np.flatnonzero(sv_mask)
        self.nsv = nsv = np.flatnonzero(~sv_mask)
        # K g_N, g_N = g off the support vectors. Its sv entries are the K_sv,nsv g_nsv of
        # eq. (18); and since s = -g / lam off sv, K s = K_:,sv s_sv - K g_N / lam. After one
        # full step g vanishes on most non-support points (beta_i = -d_i there), so only the
        # rows of the others are read.
        gz = nsv[g[nsv] != 0.0]
        self.K_gN = _rows_product(self.K, g, gz)
        if sv.size:
            self.D_sv = h[sv]
            self.system = _ShiftedSystem(factors, sv, self.D_sv)
            self.KsvN_gN = self.K_gN[sv]

    def direction(self, lam):
        """``(lam, s)``: the step of eq. (18) at the first of ``lam, 4 lam, 16 lam, ...`` where
        ``lam K + K D K`` is positive definite (Alg. 6), or ``(lam, None)`` once lam exceeds 1e12."""
        g, sv, nsv = self.g, self.sv, self.nsv
        while lam <= 1e12:
            s = np.empty(g.size)
            s[nsv] = -g[nsv] / lam
            if not sv.size:
                return lam, s
            s_sv = self.system.solve(lam, -(g[sv] - self.D_sv * self.KsvN_gN / lam) / self.D_sv)
            if s_sv is not None:
                s[sv] = s_sv
                return lam, s
            lam *= 4.0  # lam K + K D K is not positive definite (Alg. 6)
        return lam, None

    def model(self, s, lam):
        """``(K s, pred)``: ``K s`` from the rows of the support vectors and of the points where g is
        non-zero, and the change ``pred`` of the quadratic model with the true Hessian
        ``K + K D K`` along s (the denominator of rho in Alg. 6)."""
        Ks = _rows_product(self.K, s, self.sv) - self.K_gN / lam
        pred = float(Ks @ self.g) + 0.5 * float(s @ Ks) + 0.5 * float(Ks @ (self.h * Ks))
        return Ks, pred
