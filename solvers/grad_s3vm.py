"""nabla-S3VM (``grad_s3vm``): gradient descent on the smoothed S3VM objective (14).

Chapelle & Zien 2005; Chapelle, Sindhwani, Keerthi, JMLR 2008, Sec. 4.2, eq. (14), Fig. 5::

    min_w  1/2 ||w||^2 + C sum_lab max(0, 1 - y_i (w . z_i + b))^2 + C* sum_unl exp(-s (w . z_j + b)^2)

with s = 5 (footnote 8: the value for the quadratic hinge), in "Method 1" variables: explicit
features ``z_i`` with ``z_i . z_j = k~(x_i, x_j)``, the kernel centered on the unlabeled mean
(eq. 13) so that the bias can be fixed at ``b = 2 r~ - 1`` (eq. 12). ``kernel_map="eigh"``
(default) is the kernel-PCA map ``Z = U Lambda^{1/2}``, ``"cholesky"`` the Cholesky factor used
by Chapelle & Zien (2005) (the centered kernel is singular, so a small jitter is added, see
:func:`solvers._kernels.kernel_pca_map`). For the linear kernel z is x - mean_U x itself (sparse X
stays sparse).

Annealing (Sec. 4.2): C* takes the values ``2^(i-10) C*``, i = 1..10, each stage minimized by
L-BFGS (``scipy.optimize.minimize(method="L-BFGS-B")``; the paper allows nonlinear CG or
L-BFGS) and warm-started from the previous stage; the first starts from w = 0.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
from scipy.optimize import minimize

from ._kernels import kernel_pca_map
from ._losses import exp_unlabeled_loss, squared_hinge_loss
from ._mean_output import MeanOutputS3VM, Solution, c_star_schedule, s3vm_objective_p2
from ._validation import check_int, check_positive

__all__ = ["GradS3VM", "smooth_objective", "Method1Mixin"]


def smooth_objective(w, Z, b, y_lab, labeled, C, C_star, unlabeled_loss):
    """Objective (14) (any smooth unlabeled loss) and its gradient in w, bias fixed.

    Parameters
    ----------
    w : ndarray, shape (d,)
    Z : ndarray, sparse matrix or LinearOperator, shape (n, d)
        Features of the training points (``Z @ w`` and ``Z.T @ v`` are all that is used).
    b : float
        Fixed bias.
    y_lab : ndarray
        Labels +-1 of the labeled points.
    labeled : ndarray of bool, shape (n,)
    C, C_star : float
    unlabeled_loss : callable
        ``t -> LossEval`` of the unlabeled outputs (e.g. ``exp(-s t^2)``).

    Returns
    -------
    value : float
    grad : ndarray, shape (d,)
    outputs : ndarray, shape (n,)
    """
    o = np.asarray(Z @ w).ravel() + b
    Ll = squared_hinge_loss(y_lab * o[labeled])
    Lu = unlabeled_loss(o[~labeled])
    value = 0.5 * float(w @ w) + C * float(np.sum(Ll.value)) + C_star * float(np.sum(Lu.value))
    d = np.empty_like(o)
    d[labeled] = C * y_lab * Ll.grad
    d[~labeled] = C_star * Lu.grad
    return value, w + np.asarray(Z.T @ d).ravel(), o


class Method1Mixin:
    """JMLR 2008 Sec. 4 "Method 1" features of the centered problem, computed once per fit."""

    def _check_method1(self):
        if self.kernel_map not in ("eigh", "cholesky"):
            raise ValueError(f"kernel_map must be 'eigh' or 'cholesky', got {self.kernel_map!r}")
        check_positive(self.s, "s")
        check_int(self.max_iter, "max_iter", 1)

    def _prepare_key(self):
        return super()._prepare_key() + (self.kernel_map,)

    def _prepare(self, problem):
        if problem.linear:
            problem.cache["Z"] = problem.centered_features()
            problem.cache["to_coef"] = lambda w: w
            return
        Z, kmap = kernel_pca_map(problem.centered_gram(), self.kernel_map)
        problem.cache["Z"] = Z
        if kmap.method == "eigh":
            basis = kmap.basis
            problem.cache["to_coef"] = lambda w: basis @ w  # K beta = Z w
        else:
            L = kmap.basis
            problem.cache["to_coef"] = lambda w: sla.solve_triangular(L.T, w, lower=False, check_finite=False)
        problem.cache.pop("Kc", None)  # only Z is needed from here on

    def _lbfgs_stages(self, problem, y_pm, C, C_star, b, stages):
        """Minimize objective (14) by L-BFGS over a sequence of stages, each warm-started.

        ``stages`` yields ``(C*_stage, unlabeled_loss, trace_fields)``; the first stage starts
        from w = 0. The trace's ``s3vm_objective`` is eq. (5) with p = 2 at the final C*.
        """
        Z = problem.cache["Z"]
        lab = problem.labeled
        y_lab = y_pm[lab]
        gtol = float(self.tol) * max(1.0, float(self.C))
        options = dict(maxiter=int(self.max_iter), ftol=float(self.tol), gtol=gtol, maxcor=20)
        w = np.zeros(Z.shape[1])
        trace, n_iter, res = [], 0, None
        for cs, unl_loss, fields in stages:
            def fun(x, cs=cs, unl_loss=unl_loss):
                v, g, _ = smooth_objective(x, Z, b, y_lab, lab, C, cs, unl_loss)
                return v, g
            res = minimize(fun, w, jac=True, method="L-BFGS-B", options=options)
            w = res.x
            n_iter += int(res.nit)
            v, _, o = smooth_objective(w, Z, b, y_lab, lab, C, cs, unl_loss)
            trace.append(dict(fields, nit=int(res.nit), message=str(res.message), objective=v,
                              s3vm_objective=s3vm_objective_p2(0.5 * float(w @ w), o, y_pm, lab, C, C_star)))
        stop = "converged" if res.success else f"lbfgs: {res.message}"
        kind = "w" if problem.linear else "beta"
        return Solution(problem.cache["to_coef"](w), o, n_iter, stop, trace, kind)


class GradS3VM(Method1Mixin, MeanOutputS3VM):
    """nabla-S3VM (JMLR 2008 Sec. 4.2): L-BFGS on objective (14), C* annealed.

    Parameters
    ----------
    kernel, sigma, C, C_star, r, r_tilde
        As for :class:`solvers.newton.NewtonS3VM`.
    s : float, default=5.0
        Width of the unlabeled loss ``exp(-s t^2)`` (JMLR 2008 footnote 8).
    anneal_steps : int, default=10
    anneal_start : float, default=2**-9
        First C* / final C*: ``2^(i-10) C*``, i = 1..10 (Sec. 4.2).
    kernel_map : {"eigh", "cholesky"}, default="eigh"
    tol : float, default=1e-9
        L-BFGS-B ``ftol``; ``gtol = tol * max(1, C)``.
    max_iter : int, default=1000
        L-BFGS iterations per stage at most.

    Attributes
    ----------
    ``binary_fits_[k].info["trace"]``: per stage, C*, L-BFGS iterations and message, objective
    (14) and objective (5) with p = 2. ``n_iter_`` counts L-BFGS iterations of the retained solve.
    """

    _accepts_sparse = True

    def __init__(self, kernel="rbf", sigma=1.0, C=1.0, C_star=None, r=None, r_tilde=None, s=5.0, anneal_steps=10,
                 anneal_start=2.0 ** -9, kernel_map="eigh", tol=1e-9, max_iter=1000):
        self.kernel = kernel
        self.sigma = sigma
        self.C = C
        self.C_star = C_star
        self.r = r
        self.r_tilde = r_tilde
        self.s = s
        self.anneal_steps = anneal_steps
        self.anneal_start = anneal_start
        self.kernel_map = kernel_map
        self.tol = tol
        self.max_iter = max_iter

    def _check_params(self):
        super()._check_params()
        self._check_method1()
        self._check_anneal_schedule()

    def _solve(self, problem, y_pm, C, C_star, b):
        s = float(self.s)

        def unl_loss(t):
            return exp_unlabeled_loss(t, s)

        stages = ((cs, unl_loss, {"C_star": float(cs)})
                  for cs in c_star_schedule(C_star, self.anneal_steps, self.anneal_start))
        return self._lbfgs_stages(problem, y_pm, C, C_star, b, stages)
