"""The certificate of a lower bound on the balanced S3VM objective: the dual point and its exact check.

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
   ``J(y) >= sum_i a_i - sum_i a_i^2/(4 c_i) - 1/2 gam^T K gam - b sum_i gam_i``, ``gam = a*y``
   (the minimum over beta is at ``beta = gam``).  The bias term vanishes when
   ``sum_i gam_i = 0`` (the dual constraint of eq. 11).  The dual point is a graph-cut function
   of the labels::

       a_i = alpha_i + sum_j E_ij (1 - y_i y_j)                                  (labeled i),
       a_j = t + q_j y_j + sum_k G_jk (1 - y_j y_k) + sum_i E_ij (1 - y_i y_j)   (unlabeled j),

   with ``alpha >= 0``, ``|q_j| <= t``, ``G = G^T >= 0`` (unlabeled pairs, zero diagonal) and
   ``E >= 0`` (labeled-unlabeled pairs), so ``a >= 0`` for every labeling: a dual grows by
   ``2 G_jk`` (``2 E_ij``) for every neighbour labeled the other way, i.e. the duals are large where
   the labeling cuts the graph -- the points in the margin of a separator and the unlabeled points
   labeled against their labeled neighbours -- and ``t`` (``alpha``) where it does not.  Since
   ``y_j^2 = 1``, ``a_j^2 = gam_j^2`` and ``gam`` is *affine* in the unlabeled labels::

       gam_L = (alpha + E 1) * y_L - E y_U,    gam_U = W y_U + q - E^T y_L,
       W = t I + Lap(G) + Diag(E^T 1),         Lap(G) = Diag(G 1) - G (the graph Laplacian),

   so the bound stays a quadratic in ``y_U``.  Every pair enters ``sum_i gam_i`` twice with
   opposite signs and ``1^T Lap(G) = 0``: under the balance constraint ``sum_j y_j = s = 2k - u``
   the bias term is ``sum_L alpha_i y_i + t s + sum_j q_j`` for *every* balanced labeling, and one
   linear equality makes the point dual feasible for all of them at once.  With
   ``gam = R y_U + r0`` (``R = [-E; W]``, ``r0 = ((alpha + E 1) * y_L, q - E^T y_L)``),
   ``D = Diag(1/(4 c_i))`` and ``sum_i a_i = sum(alpha) + sum(E) + y_U^T W y_U + (q - 2 E^T y_L)^T y_U``,
   the bound is ``phi(y) = c0 + g^T y_U - 1/2 y_U^T M y_U`` with::

       c0 = sum(alpha) + sum(E) - r0^T D r0 - 1/2 r0^T K r0,
       g  = q - 2 E^T y_L - R^T (2 D + K) r0,
       M  = -2 W + R^T (2 D + K) R.

   (``G = 0``, ``E = 0`` is the separable dual point ``a_j = t + q_j y_j`` with one common t:
   every unlabeled dual in ``[0, 2t]``.)
2. *Semidefinite (Shor) bound on the quadratic.*  With ``x = (1, y_U)`` and ``e = (-s, 1, ..., 1)``
   (so ``e^T x = 0`` on balanced labelings), ``min phi = c0 - max x^T Cx`` where
   ``C = [[0, -g^T/2], [-g/2, M/2]]``, and for any ``lam``, ``m`` in R^{u+1}::

       x^T C x = sum(lam) + x^T A x + (e^T x)(m^T x) <= sum(lam) + (u + 1) lambda_max(A),
       A = C - Diag(lam) - (e m^T + m e^T)/2,

   i.e. ``Diag(lam + lambda_max(A)) - C + (e m^T + m e^T)/2`` is positive semidefinite: the dual
   of the SDP relaxation ``max <C, X>, X >= 0, diag X = 1, X e = 0`` (eq. 11's relaxation of
   ``Gamma = y y^T`` with the balance constraint lifted as ``Gamma 1 = s y``).

   L = c0 - sum(lam) - (u + 1) lambda_max(A)  <=  J*.

   Optionally the relaxation is strengthened by the products ``(1 + sig y_j)(1 + tau y_k) >= 0``
   (``sig, tau = +-1``, all pairs including ``j = k``): with
   ``Q = sym((e_0 + sig e_j)(e_0 + tau e_k)^T)``, ``x^T Q x`` is that product, so for multipliers
   ``N >= 0`` ``x^T C x <= x^T (C + sum N Q) x`` on every labeling, and ``A`` gets the term
   ``T = sum N Q`` (the first-level products of the lift-and-project/RLT hierarchy; they cut the
   relaxation where its first moments ``X_0j`` are far from 0).

The dual point ``(alpha, t, q, G, E, lam, m, N)`` comes from an inexact first-order method
(:func:`harness.certify.optimize_bound`: L-BFGS-B on a log-sum-exp smoothing of ``lambda_max`` with a decreasing
smoothing parameter), but the bound is never the optimizer's number: :func:`check_dual_point`
recomputes it from the point alone in float64 -- the sign and symmetry constraints checked
exactly, the bias residual summed exactly in rational arithmetic and charged at a proven bound on
the optimal bias (:func:`bias_bound`), ``lambda_max`` from a full symmetric eigendecomposition,
and a safety margin of ``1e-9`` times the magnitude of every term for rounding -- so an inexact
solver can give a weak bound but never an invalid one.

Limits.  The dual point is still a fixed function of the labels that must be feasible for all of
them, and the semidefinite step relaxes a quadratic whose size grows with the duals: the best
point keeps the graph weights well below the duals of an S3VM solution (up to about ``4 C*``),
and on g50c the bound stays well below the objective the solvers reach
(``reports/certified-gaps.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from s3vm_bench import is_int
from s3vm_bench.solvers.numerics import check_positive

__all__ = ["DualPoint", "Certificate", "BoundResult", "SAFETY", "bias_bound", "check_dual_point", "make_feasible"]

#: Relative rounding allowance of the certificate: every computed term is trusted to
#: ``SAFETY * (its magnitude)``.  float64 sums, products and the symmetric eigensolver are accurate
#: to a few ``n * eps`` (about 1e-13 for n = 2000); 1e-9 leaves four orders of magnitude to spare.
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
        Label-dependent parts: ``a_j = t + q_j y_j + (graph terms)`` (``|q_j| <= t``; module
        docstring, step 1).
    lam, m : ndarray, shape (u + 1,)
        Multipliers of the semidefinite step: diagonal (``diag X = 1``) and balance (``X e = 0``).
    G : ndarray, shape (u, u), optional
        Graph weights of the cut term between unlabeled points (symmetric, ``>= 0``, zero
        diagonal); ``None`` means 0 (with ``E = None``: the separable dual point
        ``a_j = t + q_j y_j``).
    E : ndarray, shape (l, u), optional
        Graph weights between labeled (rows) and unlabeled points (``>= 0``); ``None`` means 0.
    N : ndarray, shape (4, u, u), optional
        Multipliers (``>= 0``) of the products ``(1 + sigma y_j)(1 + tau y_k) >= 0`` for
        ``(sigma, tau) = (+, +), (+, -), (-, +), (-, -)`` (module docstring, step 2); ``None`` means 0.
    """

    alpha: np.ndarray
    t: float
    q: np.ndarray
    lam: np.ndarray
    m: np.ndarray
    G: np.ndarray | None = None
    E: np.ndarray | None = None
    N: np.ndarray | None = None


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
    cpu_seconds: float = float("nan")


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
    if not is_int(k):
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


def _graph(G, shape):
    """Graph weights of a point as an array of ``shape`` (zeros for ``None``)."""
    if G is None:
        return np.zeros(shape)
    return np.asarray(G, dtype=np.float64)


def _matrix_W(t, G, E):
    """``W = t I + Lap(G) + Diag(E^T 1)`` (module docstring, step 1)."""
    W = -G
    W[np.diag_indices(G.shape[0])] = t + G.sum(axis=1) - np.diag(G) + E.sum(axis=0)
    return W


def _affine(y_lab, alpha, t, q, G, E):
    """``gam = R y_U + r0`` and the terms of ``sum_i a_i = const + y_U^T W y_U + lin^T y_U`` (module
    docstring, step 1): returns ``W, R, r0, const, lin``."""
    l, u = E.shape
    W = _matrix_W(t, G, E)
    R = np.empty((l + u, u))
    R[:l] = -E
    R[l:] = W
    return (W, R) + _affine_offsets(y_lab, alpha, q, E)


def _affine_offsets(y_lab, alpha, q, E):
    """``r0``, ``const`` and ``lin`` of :func:`_affine` (the parts that do not involve W)."""
    r0 = np.r_[(alpha + E.sum(axis=1)) * y_lab, q - E.T @ y_lab]
    return r0, float(np.sum(alpha) + np.sum(E)), q - 2.0 * (E.T @ y_lab)


def _terms(K, y_lab, l, C, C_star, alpha, t, q, G, E, magnitudes=False):
    """``c0``, ``g`` and ``M`` of ``phi(y) = c0 + g^T y_U - 1/2 y_U^T M y_U`` (module docstring, step 1).

    With ``magnitudes=True`` also the size the rounding errors scale with: the same sums and
    products taken over absolute values (no cancellation) -- of ``c0 + g^T y`` (one number) and
    of M (the Frobenius norm of a bound on ``|M|``).
    """
    W, R, r0, const, lin = _affine(y_lab, alpha, t, q, G, E)
    d = np.r_[np.full(l, 1.0 / (4 * C)), np.full(K.shape[0] - l, 1.0 / (4 * C_star))]
    Kr0 = K @ r0
    c0 = const - r0 @ (d * r0) - 0.5 * (r0 @ Kr0)
    g = lin - R.T @ (2 * d * r0 + Kr0)
    N = 2 * d[:, None] * R + K @ R
    M = R.T @ N
    M -= 2 * W
    M = 0.5 * (M + M.T)
    if not magnitudes:
        return c0, g, M
    absK = K if float(np.min(K)) >= 0.0 else np.abs(K)
    aR, ar0 = np.abs(R), np.abs(r0)
    c0_mag = abs(const) + ar0 @ (d * ar0) + 0.5 * ar0 @ (absK @ ar0)
    g_mag = float(np.sum(np.abs(lin) + aR.T @ (2 * d * ar0 + absK @ ar0)))
    M_mag = float(np.linalg.norm(2 * np.abs(W) + aR.T @ (2 * d[:, None] * aR + absK @ aR)))
    return float(c0), g, M, float(c0_mag) + g_mag, M_mag


def _matrix_A(g, M, lam, m, e):
    """``A = C - Diag(lam) - (e m^T + m e^T)/2`` with ``C = [[0, -g^T/2], [-g/2, M/2]]``
    (module docstring, step 2)."""
    u = g.size
    A = np.empty((u + 1, u + 1))
    A[0, 0] = 0.0
    A[0, 1:] = -0.5 * g
    A[1:, 0] = -0.5 * g
    A[1:, 1:] = 0.5 * M
    A[np.diag_indices(u + 1)] -= lam
    A -= 0.5 * (np.outer(e, m) + np.outer(m, e))
    return A


_SIGNS = ((1.0, 1.0), (1.0, -1.0), (-1.0, 1.0), (-1.0, -1.0))


def _matrix_T(N):
    """``T = sum N^{st}_jk Q^{st}_jk`` with ``x^T Q^{st}_jk x = (1 + s y_j)(1 + t y_k)`` (module
    docstring, step 2): ``T_00 = sum(N)``, ``T_0j = (row and column sums of the signed N)/2``,
    ``T_UU = sym(N++ - N+- - N-+ + N--)``."""
    u = N.shape[1]
    T = np.empty((u + 1, u + 1))
    T[0, 0] = float(np.sum(N))
    b = 0.5 * ((N[0] + N[1] - N[2] - N[3]).sum(axis=1) + (N[0] - N[1] + N[2] - N[3]).sum(axis=0))
    T[0, 1:] = b
    T[1:, 0] = b
    P = N[0] - N[1] - N[2] + N[3]
    T[1:, 1:] = 0.5 * (P + P.T)
    return T


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
        negative dual variable (``alpha < 0``, ``|q_j| > t`` or a negative graph weight), an
        asymmetric G or a negative product multiplier N are rejected either way.

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
    G = _graph(point.G, (u, u))
    E = _graph(point.E, (l, u))
    N = _graph(point.N, (4, u, u))
    t = float(point.t)
    for name, v, size in (("alpha", alpha, l), ("q", q, u), ("lam", lam, u + 1), ("m", m, u + 1)):
        if v.size != size:
            raise ValueError(f"point.{name} must have {size} entries, got {v.size}")
        if not np.all(np.isfinite(v)):
            raise ValueError(f"point.{name} has NaN or infinite entries")
    if G.shape != (u, u):
        raise ValueError(f"point.G must have shape {(u, u)}, got {G.shape}")
    if E.shape != (l, u):
        raise ValueError(f"point.E must have shape {(l, u)}, got {E.shape}")
    if N.shape != (4, u, u):
        raise ValueError(f"point.N must have shape {(4, u, u)}, got {N.shape}")
    if not (np.all(np.isfinite(G)) and np.all(np.isfinite(E)) and np.all(np.isfinite(N))):
        raise ValueError("point.G, point.E or point.N has NaN or infinite entries")
    if not np.isfinite(t):
        raise ValueError("point.t must be finite")
    reasons = []
    # Weak duality needs every dual variable >= 0 for both labels of every point (exact comparisons);
    # the bias term is the same for every balanced labeling only when Lap(G) has zero column sums,
    # i.e. G is exactly symmetric.
    if np.any(alpha < 0):
        reasons.append(f"{int(np.sum(alpha < 0))} labeled dual variables are negative")
    if t < 0 or np.any(np.abs(q) > t):
        reasons.append(f"{int(np.sum(np.abs(q) > t))} unlabeled dual variables t +- q_j are negative (|q_j| > t)")
    if np.any(G < 0) or np.any(E < 0) or np.any(np.diag(G) != 0):
        reasons.append(f"{int(np.sum(G < 0) + np.sum(E < 0))} graph weights are negative or the diagonal of G "
                       "is not zero")
    if not np.array_equal(G, G.T):
        reasons.append("G is not symmetric")
    if np.any(N < 0):
        reasons.append(f"{int(np.sum(N < 0))} multipliers of the products (1 +- y_j)(1 +- y_k) >= 0 are negative")
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
    c0, g, M, mag, M_mag = _terms(K, y_lab, l, C, C_star, alpha, t, q, G, E, magnitudes=True)
    e = np.r_[-float(s), np.ones(u)]
    A = _matrix_A(g, M, lam, m, e) + _matrix_T(N)
    lmax = float(np.linalg.eigvalsh(A)[-1])
    normA = float(np.linalg.norm(A))
    margin = SAFETY * (mag + float(np.sum(np.abs(lam))) + (u + 1) * (normA + M_mag + 4 * float(np.sum(N))))
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
    """The point with the bias residual removed (by moving q within ``|q_j| <= t``), G made
    symmetric and nonnegative with a zero diagonal, E and N made nonnegative, and ``lam`` shifted by
    ``lambda_max(A)`` plus a margin, so that :func:`check_dual_point` accepts it."""
    K, y_lab, l, u, k, C, C_star = _check_problem(K, y_lab, k, C, C_star)
    alpha = np.maximum(np.asarray(point.alpha, dtype=np.float64), 0.0)
    t = max(float(point.t), 0.0)
    q = np.clip(np.asarray(point.q, dtype=np.float64), -t, t)
    G = np.maximum(_graph(point.G, (u, u)), 0.0)
    G = 0.5 * (G + G.T)
    G[np.diag_indices(u)] = 0.0
    E = np.maximum(_graph(point.E, (l, u)), 0.0)
    N = np.maximum(_graph(point.N, (4, u, u)), 0.0)
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
    c0, g, M = _terms(K, y_lab, l, C, C_star, alpha, t, q, G, E)
    lam = np.asarray(point.lam, dtype=np.float64).copy()
    m = np.asarray(point.m, dtype=np.float64).copy()
    A = _matrix_A(g, M, lam, m, e) + _matrix_T(N)
    lmax = float(np.linalg.eigvalsh(A)[-1])
    lam += lmax + 4 * SAFETY * float(np.linalg.norm(A))
    return DualPoint(alpha, t, q, lam, m, G, E, N)
