"""Loss functions shared by the S3VM solvers, with first and second derivatives.

Every function takes an array ``t`` and returns a :class:`LossEval` of three
float64 arrays of the same shape: the value, the first derivative and the
second derivative with respect to ``t``. The losses used by first-order solvers take
``hess=False`` to skip the second derivative (``None`` in its place).

* Labeled losses take the margin ``t = y * f(x)``.
* Unlabeled ("symmetric") losses take the output ``t = f(x)`` itself; they are
  even functions of ``t``, which is how the S3VM objective eliminates the
  unknown label (JMLR 2008, eq. 5; SIGIR 2006, Fig. 1).

Where a loss is not twice differentiable (the kinks of the hinges, the
junctions of the piecewise quadratics) the second derivative returned is the
one-sided value used by generalized-Hessian Newton methods (Mangasarian 2002;
Keerthi & DeCoste 2005): 0 exactly at the breakpoint where the loss becomes
flat.  At the non-differentiable point of the hinge (t = 1) and of
``max(0, 1 - |t|)^2`` (t = 0) the derivative returned is the subgradient 0,
which keeps "flat at the breakpoint" consistent with the active-set rules of
the primal solvers (a point with ``y f = 1`` is not a support vector).

References
----------
JMLR 2008 : Chapelle, Sindhwani, Keerthi. Optimization Techniques for
    Semi-Supervised Support Vector Machines. JMLR 9:203-233.
SIGIR 2006 : Sindhwani, Keerthi. Large Scale Semi-supervised Linear SVMs.
ICML 2006 : Sindhwani, Keerthi, Chapelle. Deterministic Annealing for
    Semi-supervised Kernel Machines.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = [
    "LossEval",
    "hinge_loss",
    "squared_hinge_loss",
    "squared_loss",
    "symmetric_squared_hinge_loss",
    "exp_unlabeled_loss",
    "flat_unlabeled_loss",
    "FLAT_LOSS_DEFAULTS",
    "cccp_convex_loss",
    "smoothed_exp_unlabeled_loss",
    "SmoothedExpLoss",
]

#: Version of the results this module's numerics produce: part of the cache key of every cell
#: that runs this code (harness.grid.cell_key). Bump it when a change moves any result.
RESULT_VERSION = 1


class LossEval(NamedTuple):
    """Value and derivatives of a loss, elementwise.

    Attributes
    ----------
    value : ndarray
        The loss at each ``t``.
    grad : ndarray
        First derivative d loss / d t.
    hess : ndarray
        Second derivative d^2 loss / d t^2 (generalized at breakpoints).
    """

    value: np.ndarray
    grad: np.ndarray
    hess: np.ndarray


def _as_float_array(t) -> np.ndarray:
    return np.asarray(t, dtype=np.float64)


def hinge_loss(t) -> LossEval:
    """Hinge loss ``max(0, 1 - t)`` (JMLR 2008, eq. 2 with p = 1).

    Parameters
    ----------
    t : array_like
        Margins ``y * f(x)``.

    Returns
    -------
    LossEval
        Value, subgradient (-1 for ``t < 1``, 0 otherwise) and second
        derivative (identically 0).
    """
    t = _as_float_array(t)
    slack = 1.0 - t
    value = np.maximum(slack, 0.0)
    grad = np.where(slack > 0.0, -1.0, 0.0)
    return LossEval(value, grad, np.zeros_like(t))


def squared_hinge_loss(t, hess: bool = True) -> LossEval:
    """Quadratic hinge loss ``max(0, 1 - t)^2`` (JMLR 2008, eq. 2 with p = 2).

    This is the loss of the L2-SVM used throughout the common protocol
    (JMLR 2008, Sec. 5.2) and of L2-SVM-MFN (SIGIR 2006, eq. 1).

    Parameters
    ----------
    t : array_like
        Margins ``y * f(x)``.
    hess : bool, default=True
        Whether to compute the second derivative (``None`` in its place otherwise, for
        first-order solvers).

    Returns
    -------
    LossEval
        Value, derivative ``-2 max(0, 1 - t)`` and second derivative
        ``2 [t < 1]``.
    """
    t = _as_float_array(t)
    slack = np.maximum(1.0 - t, 0.0)
    return LossEval(slack * slack, -2.0 * slack, np.where(slack > 0.0, 2.0, 0.0) if hess else None)


def squared_loss(t) -> LossEval:
    """Squared loss ``(1 - t)^2`` (the RLS loss of ICML 2006, eq. 4).

    For ``y = +-1``, ``(1 - y f)^2 = (y - f)^2``, so on margins this is the
    regularized-least-squares loss.

    Parameters
    ----------
    t : array_like
        Margins ``y * f(x)``.

    Returns
    -------
    LossEval
        Value, derivative ``-2 (1 - t)`` and second derivative 2.
    """
    t = _as_float_array(t)
    slack = 1.0 - t
    return LossEval(slack * slack, -2.0 * slack, np.full_like(t, 2.0))


def symmetric_squared_hinge_loss(t) -> LossEval:
    """Unlabeled S3VM loss ``max(0, 1 - |t|)^2`` (JMLR 2008, eq. 5; Fig. 2).

    This is ``min over y in {-1, +1}`` of ``max(0, 1 - y t)^2``: the p = 2
    hinge of eq. (2) with the unknown label chosen optimally (SIGIR 2006,
    Sec. 3.1.1).

    Parameters
    ----------
    t : array_like
        Outputs ``f(x)`` on unlabeled points.

    Returns
    -------
    LossEval
        Value, derivative ``-2 sign(t) max(0, 1 - |t|)`` (0 at ``t = 0``, where
        the loss has a concave kink) and second derivative ``2 [0 < |t| < 1]``
        (2 also at t = 0 from either side; we return 2 there).
    """
    t = _as_float_array(t)
    slack = np.maximum(1.0 - np.abs(t), 0.0)
    grad = -2.0 * np.sign(t) * slack
    hess = np.where(slack > 0.0, 2.0, 0.0)
    return LossEval(slack * slack, grad, hess)


def exp_unlabeled_loss(t, s: float = 5.0, hess: bool = True) -> LossEval:
    """Smooth unlabeled loss ``exp(-s t^2)`` of grad-S3VM (JMLR 2008, eq. 14).

    JMLR 2008 uses ``s = 5`` with the quadratic hinge (footnote 8; Fig. 5).

    Parameters
    ----------
    t : array_like
        Outputs ``f(x)`` on unlabeled points.
    s : float, default=5.0
        Width parameter, must be positive.
    hess : bool, default=True
        Whether to compute the second derivative (``None`` in its place otherwise).

    Returns
    -------
    LossEval
        Value ``e = exp(-s t^2)``, derivative ``-2 s t e`` and second
        derivative ``(4 s^2 t^2 - 2 s) e``.
    """
    if not (np.isfinite(s) and s > 0):
        raise ValueError(f"s must be a positive finite number, got {s!r}")
    t = _as_float_array(t)
    e = np.exp(-s * t * t)
    grad = -2.0 * s * t * e
    return LossEval(e, grad, (4.0 * s * s * t * t - 2.0 * s) * e if hess else None)


#: Default shape of the flat unlabeled loss; see :func:`flat_unlabeled_loss`.
FLAT_LOSS_DEFAULTS = {"plateau": 0.25, "ramp": 0.125, "height": 1.0}


def flat_unlabeled_loss(t, plateau: float = FLAT_LOSS_DEFAULTS["plateau"], ramp: float = FLAT_LOSS_DEFAULTS["ramp"],
                        height: float = FLAT_LOSS_DEFAULTS["height"]) -> LossEval:
    """Flat piecewise-quadratic unlabeled loss of Newton-S3VM (JMLR 2008, Fig. 7).

    JMLR 2008, Sec. 4.4 describes the loss only in words and a figure: an even, continuously
    differentiable function "having several linear and flat parts which are smoothly connected
    by small quadratic components", flat in the middle (an unlabeled point with output 0 does not
    push the boundary) and zero outside the margin.  The pieces are not given in the text, so
    this function fixes them as follows, with ``a = |t|``, ``p = plateau``, ``d = ramp`` and
    slope ``k = height / (1 - p - d)``::

        a <= p              height                       (flat top)
        p < a <= p + d      height - k (a - p)^2 / (2 d)  (quadratic bend)
        p + d < a <= 1 - d  height - k d / 2 - k (a - p - d)   (linear)
        1 - d < a <= 1      k (1 - a)^2 / (2 d)           (quadratic landing)
        a > 1               0                            (flat, margin met)

    It is C^1, equals 0 exactly where ``max(0, 1 - |t|)^2`` does, has the same value as that loss
    at ``t = 0`` when ``height = 1``, and has non-zero curvature only on the two bends of width
    ``d`` on each side: those are the only unlabeled "support vectors" of the Newton step (JMLR
    2008, eq. 17 and footnote 11).

    Parameters
    ----------
    t : array_like
        Outputs ``f(x)`` on unlabeled points.
    plateau : float, default=0.25
        Half-width ``p`` of the flat top.
    ramp : float, default=0.125
        Width ``d`` of each quadratic connector.  Requires ``p >= 0``,
        ``d > 0`` and ``p + 2 d <= 1``.
    height : float, default=1.0
        Value on the flat top.

    Returns
    -------
    LossEval
        Value, derivative and (piecewise constant) second derivative.

    Notes
    -----
    The defaults are our reading of Fig. 7 (flat top, linear flanks, zero beyond |t| = 1), not
    numbers printed in the paper; they are exposed so that the Newton-S3VM solver can make them
    parameters.
    """
    p, d, h = float(plateau), float(ramp), float(height)
    if not (p >= 0.0 and d > 0.0 and p + 2.0 * d <= 1.0 + 1e-12 and h > 0.0):
        raise ValueError(
            "flat_unlabeled_loss needs plateau >= 0, ramp > 0, plateau + 2*ramp <= 1 "
            f"and height > 0; got plateau={plateau!r}, ramp={ramp!r}, height={height!r}"
        )
    t = _as_float_array(t)
    a = np.abs(t)
    sgn = np.sign(t)
    k = h / (1.0 - p - d)  # slope of the linear flank, so that the pieces meet at 0 for a=1
    a1, a2, a3 = p, p + d, 1.0 - d

    value = np.zeros_like(a)
    da = np.zeros_like(a)  # derivative with respect to a = |t|
    hess = np.zeros_like(a)

    top = a <= a1
    bend = (a > a1) & (a <= a2)
    lin = (a > a2) & (a <= a3)
    land = (a > a3) & (a < 1.0)

    value[top] = h
    x = a[bend] - a1
    value[bend] = h - k * x * x / (2.0 * d)
    da[bend] = -k * x / d
    hess[bend] = -k / d
    value[lin] = h - k * d / 2.0 - k * (a[lin] - a2)
    da[lin] = -k
    x = 1.0 - a[land]
    value[land] = k * x * x / (2.0 * d)
    da[land] = -k * x / d
    hess[land] = k / d
    # d/dt f(|t|) = sign(t) f'(|t|); the second derivative of an even function
    # of |t| is f''(|t|) (no delta at 0 because f' = 0 on the flat top).
    return LossEval(value, sgn * da, hess)


def cccp_convex_loss(t) -> LossEval:
    """Convex loss of one CCCP step on an unlabeled point (JMLR 2008 Sec. 4.1)::

        L~(t) = 0          t >= 1
                (1 - t)^2  |t| < 1
                -4 t       t <= -1

    on the margin ``t = y f`` with y the point's current label ``sign(f)``. It is the convex
    part ``max(0, 1 - |t|)^2 + 2|t|`` plus the tangent ``-2 y t`` of the concave part ``-2|t|``
    at the current point: the squared hinge continued linearly (slope -4, C^1) beyond t = -1.

    Parameters
    ----------
    t : array_like
        Margins ``y * f(x)``.

    Returns
    -------
    LossEval
        Value, derivative (``-2(1 - t)`` on |t| < 1, -4 below, 0 above) and second derivative
        (2 on |t| < 1, else 0: the linear tail adds no curvature, so it does not count as a
        support vector in the Newton step, JMLR 2008 eq. 18).
    """
    t = _as_float_array(t)
    mid = np.abs(t) < 1.0
    low = t <= -1.0
    slack = 1.0 - t
    value = np.where(mid, slack * slack, np.where(low, -4.0 * t, 0.0))
    grad = np.where(mid, -2.0 * slack, np.where(low, -4.0, 0.0))
    return LossEval(value, grad, np.where(mid, 2.0, 0.0))


def smoothed_exp_unlabeled_loss(t, var, s: float = 5.0, hess: bool = True) -> LossEval:
    """``exp(-s t^2)`` convolved with a Gaussian of variance ``var`` (cS3VM, JMLR 2008 Alg. 5).

    Closed form of ``E[exp(-s (t + e)^2)]`` for ``e ~ N(0, var)``::

        a = 1 + 2 s var,   value = a^(-1/2) exp(-s t^2 / a).

    Smoothing the objective with the Gaussian ``exp(-||u||^2 / gamma)`` of Alg. 5 in the
    variables w perturbs the output ``w . z_j`` by ``N(0, gamma ||z_j||^2 / 2)``, so the unlabeled
    term of eq. (14) is smoothed exactly by this function with ``var_j = gamma ||z_j||^2 / 2``.

    Parameters
    ----------
    t : array_like
        Outputs ``f(x)`` on unlabeled points.
    var : float or array_like
        Variance of the smoothing, >= 0 (0 gives :func:`exp_unlabeled_loss`).
    s : float, default=5.0
    hess : bool, default=True
        Whether to compute the second derivative (``None`` in its place otherwise).

    Returns
    -------
    LossEval
        Value, ``-2 s t / a * value`` and ``(4 s^2 t^2 / a^2 - 2 s / a) * value``.

    See Also
    --------
    SmoothedExpLoss : the same function with ``var`` fixed, validated and preprocessed once.
    """
    return SmoothedExpLoss(var, s)(t, hess=hess)


class SmoothedExpLoss:
    """:func:`smoothed_exp_unlabeled_loss` at a fixed ``var`` and ``s`` (cS3VM, JMLR 2008 Alg. 5).

    One smoothing stage of cS3VM evaluates the smoothed loss at many outputs ``t`` with the same
    variances; ``a = 1 + 2 s var`` and ``sqrt(a)`` are computed once here, and each call does
    the same floating-point operations as :func:`smoothed_exp_unlabeled_loss` on them, so the
    values are identical.

    Parameters
    ----------
    var : float or array_like
        Variance of the smoothing, >= 0.
    s : float, default=5.0
    """

    def __init__(self, var, s: float = 5.0):
        if not (np.isfinite(s) and s > 0):
            raise ValueError(f"s must be a positive finite number, got {s!r}")
        var = _as_float_array(var)
        if np.any(~np.isfinite(var)) or np.any(var < 0):
            raise ValueError("var must be finite and >= 0")
        self.s = s
        self.a = 1.0 + 2.0 * s * var
        self.sqrt_a = np.sqrt(self.a)

    def __call__(self, t, hess: bool = True) -> LossEval:
        """Value, first and (if ``hess``) second derivative at the outputs ``t``."""
        s, a = self.s, self.a
        t = _as_float_array(t)
        e = np.exp(-s * t * t / a) / self.sqrt_a
        grad = -2.0 * s * t / a * e
        return LossEval(e, grad, (4.0 * s * s * t * t / (a * a) - 2.0 * s / a) * e if hess else None)
