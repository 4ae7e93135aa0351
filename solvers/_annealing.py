"""Pieces of deterministic annealing shared by :mod:`solvers.da` and :mod:`solvers.grad_da`.

The p-step's balance multiplier (ICML 2006 eq. 8), the entropy and KL tests of the annealing
loops (ICML 2006 Table 1), the losses V by name, the parameter constraints of both estimators and the
S3VM objective with the balanced labeling by which both select the returned solution.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from scipy.special import expit

from ._balance import balance_root, check_r, estimate_r, threshold_to_count
from ._losses import hinge_loss, squared_hinge_loss, squared_loss
from ._validation import Interval, Options, check_positive

__all__ = ["NuRoot", "solve_nu", "bernoulli_entropy", "bernoulli_kl", "s3vm_objective", "LOSSES"]

#: Version of the results this module's numerics produce: part of the cache key of every cell
#: that runs this code (harness.grid.cell_key). Bump it when a change moves any result.
RESULT_VERSION = 1

#: V(t) on margins t = y f (value, first and second derivative), by name.
LOSSES = {"l1": hinge_loss, "l2": squared_hinge_loss, "sqr": squared_loss}

_LN2 = np.log(2.0)


# ----------------------------------------------------------------------------
# the p-step: root of the balance equation (ICML 2006 eq. 8; JMLR 2008 eq. 8)
# ----------------------------------------------------------------------------
@dataclass(frozen=True)
class NuRoot:
    """Outcome of :func:`solve_nu`.

    Attributes
    ----------
    nu : float
        The multiplier ``nu`` of the balance constraint, in the units of g.
    p : ndarray
        ``p_j = 1 / (1 + exp((g_j - nu) / T))``.
    logit : ndarray
        ``log(p_j / (1 - p_j))`` as used to form ``p`` (``p = expit(logit)``); keeps
        ``log p`` and ``log(1 - p)`` accurate when p is within rounding of 0 or 1.
    residual : float
        ``mean(p) - r`` of the returned ``p``.
    n_iter : int
        Newton/bisection steps.
    converged : bool
        ``|residual| <= tol``.
    """

    nu: float
    p: np.ndarray
    logit: np.ndarray
    residual: float
    n_iter: int
    converged: bool


def solve_nu(g, T, r, *, tol: float = 1e-12, max_iter: int = 500) -> NuRoot:
    """Balance multiplier nu of DA's p-step (ICML 2006 eq. 8 and the text after it).

    The root itself is found once for the whole project by
    :func:`solvers._balance.balance_root` (safeguarded Newton-bisection on
    ``mean_j 1/(1 + exp((g_j - nu)/T)) = r``); this adds the logits DA needs so that ``log p``
    and ``log(1 - p)`` stay accurate when p is within rounding of 0 or 1 (entropy and KL tests).

    Parameters
    ----------
    g : array_like, shape (u,)
        ``g_j = C* [V(f_j) - V(-f_j)]`` (JMLR 2008 eq. 8), any finite reals.
    T : float
        Temperature > 0.
    r : float
        Target mean of p, in (0, 1).
    tol : float, default=1e-12
        Tolerance on ``|mean(p) - r|``.
    max_iter : int, default=500
        Steps at most.

    Returns
    -------
    NuRoot
    """
    T = check_positive(T, "T")
    root = balance_root(g, T, r, tol=tol, max_iter=max_iter)
    g = np.asarray(g, dtype=np.float64).ravel()
    if root.method != "interpolation":
        logit = (root.nu - g) / T  # exactly the argument balance_root passed to expit
    else:  # sub-ulp root: p was interpolated, take its logits
        p = np.clip(root.p, np.finfo(float).tiny, None)
        logit = np.log(p) - np.log1p(-np.minimum(root.p, 1.0 - np.finfo(float).epsneg))
    p = expit(logit)
    residual = float(np.mean(p)) - check_r(r)
    return NuRoot(nu=root.nu, p=p, logit=logit, residual=residual, n_iter=root.n_iter,
                  converged=abs(residual) <= tol)


def _log_pq(logit):
    # log p and log(1 - p) for p = expit(logit), without cancellation.
    return -np.logaddexp(0.0, -logit), -np.logaddexp(0.0, logit)


def bernoulli_entropy(logit) -> float:
    """Mean binary entropy (bits) of ``p = expit(logit)``.

    The annealing stops when it falls below epsilon (ICML 2006 Table 1 "while S(p) > eps"); as in
    the authors' SVMlin code the entropy is averaged over the unlabeled points and in bits, so
    epsilon does not depend on u.
    """
    x = np.asarray(logit, dtype=np.float64)
    lp, lq = _log_pq(x)
    p, q = expit(x), expit(-x)
    return float(-np.mean(p * lp + q * lq) / _LN2)


def bernoulli_kl(logit_new, logit_old) -> float:
    """Mean KL divergence (bits) ``KL(p_new || p_old)`` between independent Bernoullis.

    The inner alternation stops when it falls below epsilon (ICML 2006 Table 1 "while
    KL(p, q) > eps", q the previous p); averaged per point and in bits like the entropy.
    """
    xn = np.asarray(logit_new, dtype=np.float64)
    xo = np.asarray(logit_old, dtype=np.float64)
    lpn, lqn = _log_pq(xn)
    lpo, lqo = _log_pq(xo)
    kl = expit(xn) * (lpn - lpo) + expit(-xn) * (lqn - lqo)
    return float(max(np.mean(kl), 0.0) / _LN2)


# ----------------------------------------------------------------------------
# shared by the estimators
# ----------------------------------------------------------------------------
#: Constraints (:mod:`solvers._validation`) of the annealing parameters :class:`DA` and
#: :class:`solvers.grad_da.GradDA` share; each adds the base's, its ``loss`` and its own.
ANNEALING_CONSTRAINTS = {
    "T0": [Interval(Real, 0, None, closed="neither")],
    "T_fixed": [Interval(Real, 0, None, closed="neither"), None],
    "R": [Interval(Real, 1, None, closed="neither")],  # the annealing rate, T <- T / R
    "epsilon": [Interval(Real, 0, None, closed="neither")],
    "max_anneal": [Interval(Integral, 1, None, closed="left")],
    "T_scale": [Options({"C_star", "absolute"})],
    "select": [Options({"best", "last"})],
    "tol": [Interval(Real, 0, None, closed="neither")],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
}


class _AnnealingParams:
    """What :class:`DA` and :class:`solvers.grad_da.GradDA` share beyond their constraints
    (:data:`ANNEALING_CONSTRAINTS`): C*, r and the first temperature of a binary problem."""

    def _resolve(self, y_pm, labeled):
        """C* (None -> C), r (None -> estimated from the labeled points) and the first temperature."""
        C_star = float(self.C if self.C_star is None else self.C_star)
        r = check_r(estimate_r(y_pm[labeled]) if self.r is None else self.r)
        scale = C_star if self.T_scale == "C_star" else 1.0
        T_start = float(self.T_fixed if self.T_fixed is not None else self.T0) * scale
        return C_star, r, T_start

    def _anneal(self, T, stage) -> str:
        """The temperature loop of ICML 2006 Table 1 and JMLR 2008 Alg. 2; returns why it stopped.

        ``stage(k, T)`` minimizes at the k-th temperature T (from the first one, ``T``) and returns
        the entropy of its p and what ended its own iterations ("" if nothing to say). With
        ``T_fixed`` one stage runs (``"fixed_T"``, then ``:`` and that reason if any). Otherwise T
        is divided by ``R`` after each stage until the entropy falls below ``epsilon``
        (``"entropy<epsilon"``) or ``max_anneal`` stages have run (``"max_anneal"``).
        """
        if self.T_fixed is not None:
            reason = stage(0, T)[1]
            return f"fixed_T:{reason}" if reason else "fixed_T"
        for k in range(int(self.max_anneal)):
            if stage(k, T)[0] < self.epsilon:
                return "entropy<epsilon"
            T = T / float(self.R)
        return "max_anneal"

    def _select(self, best, s3, candidate):
        """The solution kept so far (``select``): ``candidate`` (whose first item is its S3VM
        objective ``s3``) with ``"last"``, else the one of lower objective, the earlier on a tie."""
        return candidate if best is None or s3 < best[0] or self.select == "last" else best


def s3vm_objective(reg, outputs, y_pm, labeled, C, C_star, k_pos, loss):
    """S3VM objective (JMLR 2008 eq. 1, loss V) of a model with the balanced labeling it induces.

    The unlabeled points are labeled by thresholding their outputs so that exactly ``k_pos`` are
    positive (constraint 3) -- the labels DA finally returns; the model itself is not retrained.
    ``reg`` is ``1/2 ||f||^2`` (``1/2 beta^T K beta = 1/2 beta . (outputs - b)`` in a kernel
    expansion).
    """
    V = LOSSES[loss]
    unl = ~labeled
    y_u = threshold_to_count(outputs[unl], k_pos)
    return (float(reg) + C * float(np.sum(V(y_pm[labeled] * outputs[labeled]).value))
            + C_star * float(np.sum(V(y_u * outputs[unl]).value)))
