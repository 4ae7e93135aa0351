"""Certified lower bounds on the balanced S3VM objective at sizes branch and bound cannot reach.

The objective is the one the common protocol recomputes (:func:`harness.protocol.protocol_objective`;
JMLR 2008 eq. 1 with p = 2 and an unregularized bias, Sec. 5.2), minimized over the labelings of
the unlabeled points that meet the balance constraint (JMLR 2008 eq. 3 in the exact-r setting:
exactly ``k = round(u r)`` positives)::

    J* = min_{y_U in {-1,+1}^u, #{y_j = +1} = k}  J(y),
    J(y) = min_{beta, b} 1/2 beta^T K beta + sum_i c_i max(0, 1 - y_i (K beta + b)_i)^2,

with ``c_i = C`` on labeled and ``C*`` on unlabeled points and K the protocol's Gram matrix.

The bound (a Lagrangian relaxation in the spirit of the semidefinite relaxation of transduction,
De Bie and Cristianini 2006, JMLR 2008 Sec. 3.4 eqs. 10-11, with the bias and the balance
constraint handled exactly):

1. *Weak duality at a labeling-dependent dual point.*  For ``a >= 0`` the squared hinge obeys
   ``c max(0, s)^2 >= a s - a^2/(4c)``, so for every (beta, b)
   ``J(y) >= sum_i a_i - sum_i a_i^2/(4 c_i) - 1/2 (a*y)^T K (a*y) - b sum_i a_i y_i``
   (the minimum over beta is at ``beta = a*y``).  The bias term vanishes when
   ``sum_i a_i y_i = 0`` (the dual constraint of eq. 11).  The dual point is taken as

       a_i = alpha_i (labeled),    a_j = t + q_j y_j  with |q_j| <= t  (unlabeled),

   so ``a >= 0`` for both labels of every point, and under the balance constraint
   ``sum_j y_j = s = 2k - u`` the bias term is ``sum_L alpha_i y_i + t s + sum_j q_j`` for
   *every* balanced labeling: one linear equality makes the point dual feasible for all of them
   at once.  (``t`` must be the same for all unlabeled points: a coefficient of ``y_j`` that varied
   with j would leave a bias term that depends on the labeling.)  The bound is then a quadratic
   function of the unlabeled labels, ``phi(y) = c0 + g^T y_U - (t^2/2) y_U^T K_UU y_U``.
2. *Semidefinite (Shor) bound on the quadratic.*  With ``x = (1, y_U)`` and ``e = (-s, 1, ..., 1)``
   (so ``e^T x = 0`` on balanced labelings), ``min phi = c0 - max x^T Cx`` where
   ``C = [[0, -g^T/2], [-g/2, t^2/2 K_UU]]``, and for any ``lam``, ``m`` in R^{u+1}::

       x^T C x = sum(lam) + x^T A x + (e^T x)(m^T x) <= sum(lam) + (u + 1) lambda_max(A),
       A = C - Diag(lam) - (e m^T + m e^T)/2,

   i.e. ``Diag(lam + lambda_max(A)) - C + (e m^T + m e^T)/2`` is positive semidefinite: the dual
   of the SDP relaxation ``max <C, X>, X >= 0, diag X = 1, X e = 0`` (eq. 11's relaxation of
   ``Gamma = y y^T`` with the balance constraint lifted as ``Gamma 1 = s y``).

   L = c0 - sum(lam) - (u + 1) lambda_max(A)  <=  J*.

The dual point ``(alpha, t, q, lam, m)`` comes from an inexact first-order method
(:func:`optimize_bound`: L-BFGS-B on a log-sum-exp smoothing of ``lambda_max`` with a decreasing
smoothing parameter), but the bound is never the optimizer's number: :func:`check_dual_point`
recomputes it from the point alone in float64 -- the sign constraints checked exactly, the
bias residual summed exactly in rational arithmetic and charged at a proven bound on the
optimal bias (:func:`bias_bound`), ``lambda_max`` from a full symmetric eigendecomposition, and a
safety margin of ``1e-9`` times the magnitude of every term for rounding -- so an inexact
solver can give a weak bound but never an invalid one.

Limits.  The quadratic ``(t^2/2) y^T K_UU y`` is what the semidefinite step relaxes, and its
integrality gap grows with t, while the dual values of an S3VM solution range from 0 to about
``4 C*`` (a point on the wrong side): the best dual point trades a small t (a weak dual) against
a loose relaxation.  On g50c the bound is far from the objective the solvers reach
(``reports/certified-gaps.md``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
from scipy.optimize import minimize

from s3vm_bench.solvers.numerics import check_positive, kernel_newton

__all__ = ["DualPoint", "Certificate", "BoundResult", "bias_bound", "check_dual_point", "dual_point_from_labels",
           "make_feasible", "optimize_bound"]

#: Relative rounding allowance of the certificate: every computed term is trusted to
#: ``SAFETY * (its magnitude)``.  float64 sums and the symmetric eigensolver are accurate to a few
#: ``n * eps`` (about 1e-13 for n = 2000); 1e-9 leaves four orders of magnitude to spare.
SAFETY = 1e-9


@dataclass
class DualPoint:
    """A dual point of the relaxation (module docstring, steps 1-2).

    Attributes
    ----------
    alpha : ndarray, shape (l,)
        Dual variables of the labeled points (``>= 0``).
    t : float
        The common part of the unlabeled dual variables (``>= 0``).
    q : ndarray, shape (u,)
        Label-dependent parts: an unlabeled point labeled ``y_j`` has dual ``t + q_j y_j``
        (``|q_j| <= t``).
    lam, m : ndarray, shape (u + 1,)
        Multipliers of the semidefinite step: diagonal (``diag X = 1``) and balance (``X e = 0``).
    """

    alpha: np.ndarray
    t: float
    q: np.ndarray
    lam: np.ndarray
    m: np.ndarray


@dataclass
class Certificate:
    """The outcome of :func:`check_dual_point`.

    Attributes
    ----------
    bound : float
        The certified lower bound on ``J*`` (``-inf`` when the point is rejected).
    feasible : bool
        Whether the point passed every check as given: signs, bias residual within tolerance and
        ``Diag(lam) - C + sym(e m^T)`` positive semidefinite up to the safety margin.
    reasons : list of str
        Why a point was rejected (empty when feasible).
    value : float
        ``c0 - sum(lam)`` before the eigenvalue term and the margins.
    lambda_max : float
        ``lambda_max(A)`` (<= margin for a feasible point).
    bias_residual : float
        ``sum_i a_i y_i`` of the dual point, summed exactly (the same for every balanced labeling).
    bias_bound : float
        The proven bound on the optimal bias that the residual is charged at.
    margin : float
        The total rounding allowance subtracted.
    """

    bound: float
    feasible: bool
    reasons: list = field(default_factory=list)
    value: float = float("nan")
    lambda_max: float = float("nan")
    bias_residual: float = float("nan")
    bias_bound: float = float("nan")
    margin: float = float("nan")


@dataclass
class BoundResult:
    """The outcome of :func:`optimize_bound`: the best certified point found and its certificate."""

    bound: float
    point: DualPoint
    certificate: Certificate
    seconds: float
    n_iter: int
    stages: list


# ------------------------------------------------------------------------------------ checks
def _check_problem(K, y_lab, k, C, C_star):
    K = np.asarray(K, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"K must be a square matrix, got shape {K.shape}")
    if not np.all(np.isfinite(K)):
        raise ValueError("K has NaN or infinite entries")
    y_lab = np.asarray(y_lab, dtype=np.float64).ravel()
    l = y_lab.size
    n = K.shape[0]
    if not 0 < l < n:
        raise ValueError(f"need 0 < l < n labeled points, got l = {l} for n = {n}")
    if not np.all(np.abs(y_lab) == 1.0):
        raise ValueError("y_lab must hold labels in {-1, +1}")
    if not (np.any(y_lab > 0) and np.any(y_lab < 0)):
        raise ValueError("the labeled points must include both classes")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"k must be an int, got {type(k).__name__}")
    u = n - l
    if not 0 <= int(k) <= u:
        raise ValueError(f"k must be in [0, {u}], got {k}")
    C = check_positive(C, "C")
    C_star = check_positive(C_star, "C_star")
    return K, y_lab, l, u, int(k), C, C_star


def bias_bound(K, C, C_star, l, upper) -> float:
    """A bound on ``|b|`` at the optimum of ``J(y)`` for every labeling with ``J(y) <= upper``.

    At the optimum, ``sum_i a_i y_i = 0`` with ``a_i = 2 c_i max(0, 1 - y_i f_i)`` (the bias
    equation), so b is the ``c``-weighted mean over the support set of ``y_i - (K beta)_i``:
    ``|b| <= 1 + max_i |(K beta)_i| <= 1 + sqrt(max_i K_ii) ||beta||_K`` and
    ``||beta||_K^2 <= 2 J(y) <= 2 upper``.  With ``upper=None`` the value of ``beta = 0, b = 0``,
    ``sum_i c_i``, bounds J(y) for every labeling.
    """
    n = K.shape[0]
    if upper is None:
        upper = l * C + (n - l) * C_star
    upper = float(upper)
    if not np.isfinite(upper) or upper < 0:
        raise ValueError(f"upper must be a finite objective value >= 0, got {upper}")
    return 1.0 + math.sqrt(max(float(np.max(np.diag(K))), 0.0)) * math.sqrt(2.0 * upper)


def _terms(K, y_lab, l, C, C_star, alpha, t, q, magnitudes=False):
    """``c0`` and ``g`` of ``phi(y) = c0 + g^T y_U - (t^2/2) y_U^T K_UU y_U`` (module docstring, step 1).

    With ``magnitudes=True`` also the size the rounding errors of ``c0`` and of ``g^T y`` scale
    with: the same sums taken over absolute values (no cancellation), ``sum_j |g_j|``-wise.
    """
    KLL, KLU, KUU = K[:l, :l], K[:l, l:], K[l:, l:]
    u = K.shape[0] - l
    gL = alpha * y_lab
    kL = KLU.T @ gL
    Kq = KUU @ q
    parts = np.array([np.sum(alpha), -np.sum(alpha ** 2) / (4 * C), u * t, -u * t * t / (4 * C_star),
                      -(q @ q) / (4 * C_star), -0.5 * gL @ (KLL @ gL), -(q @ kL), -0.5 * (q @ Kq)])
    c0 = float(np.sum(parts))
    g = (1.0 - t / (2 * C_star)) * q - t * kL - t * Kq
    if not magnitudes:
        return c0, g
    absK = K if float(np.min(K)) >= 0.0 else np.abs(K)
    aL, aq = np.abs(alpha), np.abs(q)
    kLa = absK[:l, l:].T @ aL
    Kqa = absK[l:, l:] @ aq
    c0_mag = float(np.sum(np.abs(parts[:5])) + 0.5 * aL @ (absK[:l, :l] @ aL) + aq @ kLa + 0.5 * aq @ Kqa)
    g_mag = float(np.sum(abs(1.0 - t / (2 * C_star)) * aq + t * kLa + t * Kqa))
    return c0, g, c0_mag + g_mag


def _matrix_A(KUU, g, t, lam, m, e):
    """``A = C - Diag(lam) - (e m^T + m e^T)/2`` with ``C = [[0, -g^T/2], [-g/2, t^2/2 K_UU]]``
    (module docstring, step 2)."""
    u = KUU.shape[0]
    A = np.empty((u + 1, u + 1))
    A[0, 0] = 0.0
    A[0, 1:] = -0.5 * g
    A[1:, 0] = -0.5 * g
    A[1:, 1:] = (0.5 * t * t) * KUU
    A[np.diag_indices(u + 1)] -= lam
    A -= 0.5 * (np.outer(e, m) + np.outer(m, e))
    return A


def check_dual_point(K, y_lab, k, C, C_star, point: DualPoint, *, upper=None, strict=True) -> Certificate:
    """Recompute the lower bound of a dual point from scratch and check that it is a certificate.

    Parameters
    ----------
    K : ndarray, shape (n, n)
        The protocol's Gram matrix of ``[X_lab; X_unl]`` (labeled rows first).
    y_lab : array_like, shape (l,)
        Labels of the labeled points in {-1, +1}.
    k : int
        Positives among the unlabeled points (JMLR 2008 eq. 3 with exact r).
    C, C_star : float
        Costs of the labeled and unlabeled losses.
    point : DualPoint
    upper : float, optional
        An objective value reached by some balanced labeling (an upper bound on ``J*``; a smaller
        number would void the certificate): bounds the optimal bias that the (rounding-size) bias
        residual is charged at (:func:`bias_bound`); default ``sum_i c_i``, valid for any labeling.
    strict : bool, default=True
        Reject (bound ``-inf``) a point whose matrix ``Diag(lam) - C + sym(e m^T)`` is not
        positive semidefinite up to the margin or whose bias residual exceeds ``1e-6``.  With
        ``strict=False`` such a point is repaired instead: ``lam`` is shifted by ``lambda_max(A)``
        and the residual is charged at the bias bound (both valid for any point); points with a
        negative dual variable (``alpha < 0`` or ``|q_j| > t``) are rejected either way.

    Returns
    -------
    Certificate
    """
    K, y_lab, l, u, k, C, C_star = _check_problem(K, y_lab, k, C, C_star)
    if not isinstance(point, DualPoint):
        raise TypeError(f"point must be a DualPoint, got {type(point).__name__}")
    alpha = np.asarray(point.alpha, dtype=np.float64).ravel()
    q = np.asarray(point.q, dtype=np.float64).ravel()
    lam = np.asarray(point.lam, dtype=np.float64).ravel()
    m = np.asarray(point.m, dtype=np.float64).ravel()
    t = float(point.t)
    for name, v, size in (("alpha", alpha, l), ("q", q, u), ("lam", lam, u + 1), ("m", m, u + 1)):
        if v.size != size:
            raise ValueError(f"point.{name} must have {size} entries, got {v.size}")
        if not np.all(np.isfinite(v)):
            raise ValueError(f"point.{name} has NaN or infinite entries")
    if not np.isfinite(t):
        raise ValueError("point.t must be finite")
    reasons = []
    # Weak duality needs every dual variable >= 0 for both labels of every point (exact comparisons).
    if np.any(alpha < 0):
        reasons.append(f"{int(np.sum(alpha < 0))} labeled dual variables are negative")
    if t < 0 or np.any(np.abs(q) > t):
        reasons.append(f"{int(np.sum(np.abs(q) > t))} unlabeled dual variables t +- q_j are negative (|q_j| > t)")
    if reasons:
        return Certificate(-math.inf, False, reasons)
    s = 2 * k - u
    # The bias residual sum_i a_i y_i, the same for every balanced labeling, summed exactly.
    residual = (sum((Fraction(float(v)) for v in alpha[y_lab > 0]), Fraction(0))
                - sum((Fraction(float(v)) for v in alpha[y_lab < 0]), Fraction(0))
                + Fraction(t) * s + sum((Fraction(float(v)) for v in q), Fraction(0)))
    residual = abs(float(residual)) if residual != 0 else 0.0
    residual = math.nextafter(residual, math.inf) if residual else 0.0  # rounded up
    B = bias_bound(K, C, C_star, l, upper)
    c0, g, mag = _terms(K, y_lab, l, C, C_star, alpha, t, q, magnitudes=True)
    e = np.r_[-float(s), np.ones(u)]
    A = _matrix_A(K[l:, l:], g, t, lam, m, e)
    lmax = float(np.linalg.eigvalsh(A)[-1])
    normA = float(np.linalg.norm(A))
    margin = SAFETY * (mag + float(np.sum(np.abs(lam))) + (u + 1) * normA)
    if residual > 1e-6:
        reasons.append(f"bias residual {residual:.3g} (sum_i a_i y_i must vanish)")
    if lmax > SAFETY * normA:
        reasons.append(f"Diag(lam) - C + sym(e m^T) is not positive semidefinite: lambda_max(A) = {lmax:.3g}")
    value = c0 - float(np.sum(lam))
    cert = Certificate(-math.inf, not reasons, reasons, value, lmax, residual, B, margin)
    if reasons and strict:
        return cert
    # Feasible: lambda_max(A) <= 0 is a slack of the certificate and is used (still valid);
    # repaired (strict=False): the same formula is the bound of the shifted point.
    cert.bound = value - (u + 1) * lmax - B * residual - margin
    return cert


def make_feasible(K, y_lab, k, C, C_star, point: DualPoint) -> DualPoint:
    """The point with the bias residual removed (by moving q within ``|q_j| <= t``) and ``lam``
    shifted by ``lambda_max(A)`` plus a margin, so that :func:`check_dual_point` accepts it."""
    K, y_lab, l, u, k, C, C_star = _check_problem(K, y_lab, k, C, C_star)
    alpha = np.maximum(np.asarray(point.alpha, dtype=np.float64), 0.0)
    t = max(float(point.t), 0.0)
    q = np.clip(np.asarray(point.q, dtype=np.float64), -t, t)
    s = 2 * k - u
    resid = float(np.sum(alpha * y_lab)) + t * s + float(np.sum(q))
    if resid != 0.0:
        # A common shift d of the q_j (clipped to [-t, t]) moves sum(q) monotonically: bisect for
        # sum(q) = -rest; if q alone cannot absorb the residual, first shrink the labeled duals of
        # the class that causes it.
        rest = resid - float(np.sum(q))
        if not np.sum(np.clip(q - 2 * t, -t, t)) <= -rest <= np.sum(np.clip(q + 2 * t, -t, t)):
            mask = y_lab > 0 if resid > 0 else y_lab < 0
            tot = float(np.sum(alpha[mask]))
            new = max(tot - abs(resid), 0.0)
            if tot > 0:
                alpha[mask] *= new / tot
            rest = float(np.sum(alpha * y_lab)) + t * s
        lo, hi = -2 * t, 2 * t
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if np.sum(np.clip(q + mid, -t, t)) < -rest:
                lo = mid
            else:
                hi = mid
        q = np.clip(q + 0.5 * (lo + hi), -t, t)
        # the last rounding-size remainder goes into the entry farthest from its bounds
        r = float(np.sum(alpha * y_lab)) + t * s + float(np.sum(q))
        j = int(np.argmin(np.abs(q)))
        q[j] = float(np.clip(q[j] - r, -t, t))
    e = np.r_[-float(s), np.ones(u)]
    c0, g = _terms(K, y_lab, l, C, C_star, alpha, t, q)
    lam = np.asarray(point.lam, dtype=np.float64).copy()
    m = np.asarray(point.m, dtype=np.float64).copy()
    A = _matrix_A(K[l:, l:], g, t, lam, m, e)
    lmax = float(np.linalg.eigvalsh(A)[-1])
    lam += lmax + 4 * SAFETY * float(np.linalg.norm(A))
    return DualPoint(alpha, t, q, lam, m)


# ------------------------------------------------------------------------------------ optimize
def dual_point_from_labels(K, y_lab, k, C, C_star, labels, t=None) -> DualPoint:
    """A starting dual point from a balanced labeling: the L2-SVM duals ``a_i = 2 c_i max(0, 1 -
    y_i f_i)`` of the completed set (JMLR 2008 eq. 1; they satisfy ``sum a_i y_i = 0``), with t the
    half of the largest unlabeled dual and ``q_j = y_j (a_j - t)`` so that the point reproduces
    them at ``labels``.  With ``t`` given, ``q_j = y_j (a_j - t)`` is clipped to ``[-t, t]`` (duals
    above ``2 t`` are cut).  ``lam`` is the diagonal of C and ``m = 0`` (a poor but finite start)."""
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
    lam = np.r_[0.0, 0.5 * t * t * np.diag(K)[l:]]
    return DualPoint(a[:l].copy(), t, q, lam, np.zeros(u + 1))


def _smoothed(K, y_lab, l, u, s, C, C_star, P):
    """Negated smoothed bound and its gradient in z = (alpha, t, w, lam, m), q = t w.

    ``lambda_max`` is replaced by ``mu log sum exp(lambda_i / mu)`` (>= lambda_max, within
    ``mu log(u + 1)``), and the bias equation by a penalty ``P rho^2`` (removed exactly by
    :func:`make_feasible` before certification)."""
    KLL, KLU, KUU = K[:l, :l], K[:l, l:], K[l:, l:]
    e = np.r_[-float(s), np.ones(u)]

    def unpack(z):
        return z[:l], z[l], z[l + 1:l + 1 + u], z[l + 1 + u:l + 2 + 2 * u], z[l + 2 + 2 * u:]

    def fun(z, mu):
        alpha, t, w, lam, m = unpack(z)
        q = t * w
        gL = alpha * y_lab
        kL = KLU.T @ gL
        Kw = KUU @ w
        c0 = (np.sum(alpha - alpha ** 2 / (4 * C)) + u * (t - t * t / (4 * C_star)) - t * t * (w @ w) / (4 * C_star)
              - 0.5 * gL @ (KLL @ gL) - t * (w @ kL) - 0.5 * t * t * (w @ Kw))
        g = (t - t * t / (2 * C_star)) * w - t * kL - t * t * Kw
        A = _matrix_A(KUU, g, t, lam, m, e)
        ev, V = np.linalg.eigh(A)
        top = ev[-1]
        p = np.exp((ev - top) / mu)
        Z = p.sum()
        p /= Z
        rho = alpha @ y_lab + t * s + t * w.sum()
        val = c0 - lam.sum() - (u + 1) * (top + mu * np.log(Z)) - P * rho * rho
        sel = p > 1e-12
        Vs = V[:, sel] * np.sqrt(p[sel])  # G = Vs Vs^T, the gradient of the smoothed lambda_max
        h, VU = Vs[1:] @ Vs[0], Vs[1:]
        KH = float(np.sum(VU * (KUU @ VU)))
        dc_a = 1 - alpha / (2 * C) - y_lab * (KLL @ gL) - t * y_lab * (KLU @ w)
        dc_t = u * (1 - t / (2 * C_star)) - t * (w @ w) / (2 * C_star) - w @ kL - t * (w @ Kw)
        dc_w = -t * t * w / (2 * C_star) - t * kL - t * t * Kw
        dT_a = t * y_lab * (KLU @ h)
        dT_t = -(((1 - t / C_star) * w - kL - 2 * t * Kw) @ h) + t * KH
        dT_w = -(t - t * t / (2 * C_star)) * h + t * t * (KUU @ h)
        grad = np.r_[dc_a - (u + 1) * dT_a - 2 * P * rho * y_lab,
                     dc_t - (u + 1) * dT_t - 2 * P * rho * (s + w.sum()),
                     dc_w - (u + 1) * dT_w - 2 * P * rho * t,
                     -1 + (u + 1) * np.sum(Vs * Vs, axis=1),
                     (u + 1) * (Vs @ (Vs.T @ e))]
        return -val, -grad

    return fun, unpack


def optimize_bound(K, y_lab, k, C, C_star, labels, *, upper=None, mus=(1.0, 0.1, 0.03, 0.01), max_iter=400,
                   time_limit=None, penalty=1.0, t_init="auto") -> BoundResult:
    """Search for a good dual point and return the best *certified* bound met on the way.

    Starts from :func:`dual_point_from_labels` (``labels``: a balanced labeling, e.g. a solver's;
    ``t_init``: its t, by default ``"auto"`` = ``min(C*/20, half the largest dual)`` -- a start with
    the t of the labeling's own duals puts the relaxation's quadratic term far above the
    optimum's and the search can stall there) and runs L-BFGS-B (box constraints ``alpha >= 0``, ``t > 0``, ``q = t w`` with ``|w| <= 1``)
    on the smoothed bound (:func:`_smoothed`) for each smoothing parameter of ``mus`` in turn
    (``max_iter`` iterations each -- L-BFGS-B's relative-decrease test is switched off, as the
    first values are far larger than the last -- the whole within ``time_limit`` seconds when given).  After
    each stage the point is made feasible (:func:`make_feasible`) and certified
    (:func:`check_dual_point`, strict); the best certified bound is returned.  Deterministic
    (no random numbers) when no stage is cut by ``time_limit``.

    Raises
    ------
    ValueError
        Bad problem data (:func:`check_dual_point`), or ``labels`` not a balanced labeling.
    """
    K, y_lab, l, u, k, C, C_star = _check_problem(K, y_lab, k, C, C_star)
    t_start = time.perf_counter()
    if isinstance(t_init, str):
        if t_init != "auto":
            raise ValueError(f"t_init must be a positive number, None or 'auto', got {t_init!r}")
        full = dual_point_from_labels(K, y_lab, k, C, C_star, labels)
        t_init = min(C_star / 20.0, full.t)
    p0 = dual_point_from_labels(K, y_lab, k, C, C_star, labels, t=t_init)
    s = 2 * k - u
    fun, unpack = _smoothed(K, y_lab, l, u, s, C, C_star, float(penalty))
    z = np.r_[p0.alpha, p0.t, p0.q / p0.t, p0.lam, p0.m]
    box = [(0.0, None)] * l + [(1e-8, None)] + [(-1.0, 1.0)] * u + [(None, None)] * (2 * u + 2)
    best_point = make_feasible(K, y_lab, k, C, C_star, p0)
    best = check_dual_point(K, y_lab, k, C, C_star, best_point, upper=upper)
    stages, n_iter = [], 0
    for mu in mus:
        left = None if time_limit is None else time_limit - (time.perf_counter() - t_start)
        if left is not None and left <= 0:
            break
        deadline = None if left is None else time.perf_counter() + left

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
            res = minimize(f, z, jac=True, method="L-BFGS-B", bounds=box, options={"maxiter": int(max_iter), "maxcor": 20, "ftol": 1e-15, "gtol": 1e-12})
            z, nit, why = res.x, int(res.nit), str(res.message)
        except _Stop:
            z, nit, why = last["z"], -1, "time limit"
        n_iter += max(nit, 0)
        alpha, t, w, lam, m = unpack(z)
        cand = make_feasible(K, y_lab, k, C, C_star, DualPoint(alpha.copy(), float(t), float(t) * w, lam.copy(), m.copy()))
        cert = check_dual_point(K, y_lab, k, C, C_star, cand, upper=upper)
        stages.append({"mu": mu, "iterations": nit, "stop": why, "bound": cert.bound,
                       "seconds": round(time.perf_counter() - t_start, 2)})
        if cert.bound > best.bound:
            best, best_point = cert, cand
        if why == "time limit":
            break
    return BoundResult(best.bound, best_point, best, time.perf_counter() - t_start, n_iter, stages)
