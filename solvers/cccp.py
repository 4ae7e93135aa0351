"""CCCP S3VM (``cccp``): concave-convex procedure, with or without annealing of C*.

Chapelle, Sindhwani, Keerthi, JMLR 2008, Sec. 4.1 (Algorithms 3 and 4, Table 12); Collobert,
Sinz, Weston, Bottou 2006.

The unlabeled loss of eq. (5) is split as ::

    max(0, 1 - |t|)^2 = [max(0, 1 - |t|)^2 + 2|t|] + [-2|t|]      (convex + concave)

and each CCCP step replaces the concave part by its tangent at the current point: an unlabeled
point currently classified ``y_j = sign(f_j)`` gets the convex loss
``L~(y_j f_j)`` (:func:`solvers._losses.cccp_convex_loss`). Algorithm 4::

    start from the supervised SVM
    repeat
        y_j <- sign(f(x_j))                     (unlabeled j)
        f <- argmin 1/2||f||^2 + C sum_lab max(0, 1 - y_i f_i)^2 + C* sum_unl L~(y_j f_j)
    until the y_j do not change

Each convex step is solved by the primal Newton core :func:`solvers._primal.lm_newton` (JMLR
2008 eq. 18; the problem is convex, so no ridge is needed and it runs as a plain Newton method
with finite termination on the piecewise-quadratic objective), warm-started from the previous
step. The paper solves in "Method 1" variables (``w`` over explicit features); the minimizer in
``f`` is the same, and Method 2 keeps every step at ``O(n_sv^3 + n^2)`` (the linear tail of L~
has no curvature). As for every solver of Sec. 4, the data are centered on the unlabeled mean
(eq. 13) and ``b = 2 r~ - 1`` (eq. 12), with the dichotomic search on r~.

Annealing (``anneal=True``, Table 12): "C* is increased in 10 steps from its final value divided
by 1000", CCCP being run to convergence at each value and warm-started at the next;
``anneal=False`` is the original method of Collobert et al. (2006), one stage at C*.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np

from ._losses import cccp_convex_loss
from ._mean_output import (C_STAR_ANNEALING_CONSTRAINTS, MeanOutputS3VM, Solution, c_star_schedule,
                           labeled_loss_terms, s3vm_objective_p2)
from ._primal import CholeskyCache, lm_newton
from ._validation import Boolean, Interval

__all__ = ["CCCP"]


class CCCP(MeanOutputS3VM):
    """CCCP for S3VMs (JMLR 2008 Alg. 4) with optional annealing of C* (Table 12).

    Parameters
    ----------
    kernel, sigma, C, C_star, r, r_tilde
        As for :class:`solvers.newton.NewtonS3VM`.
    anneal : bool, default=True
        Anneal C* (JMLR 2008 Table 12) or not (Collobert et al. 2006).
    anneal_steps : int, default=10
    anneal_start : float, default=1e-3
        First C* as a fraction of the final one (Table 12 and Sec. 5.4.4: "from 10^-3 C to C").
    max_cccp_iter : int, default=100
        CCCP iterations (label updates) per annealing stage at most.
    tol : float, default=1e-10
        Relative Newton-decrement tolerance of each convex step.
    max_iter : int, default=200
        Newton iterations per convex step at most.
    search_stall_halvings : int >= 1 or None, default=None
        Opt-in early end of the dichotomic search on r~ (JMLR 2008 Sec. 4, eq. 12): once this many
        consecutive halvings of the bracket left the positive counts at both of its ends
        unchanged and moved both ends, the search stops and constraint (3) is met by the threshold shift of the
        closest solution (:class:`solvers._mean_output.MeanOutputS3VM`). None (default) bisects
        down to the bracket width 1e-4.

    Attributes
    ----------
    ``binary_fits_[k].info["trace"]``: per stage, C*, CCCP iterations, Newton iterations,
    whether the labels converged, and objective (5) with p = 2 (which CCCP never increases).
    ``n_iter_`` counts CCCP iterations (convex problems solved) of the retained solve.
    ``stop_reason_``: ``"labels_converged"`` or ``"max_cccp_iter"`` at the last stage.

    References
    ----------
    .. [1] R. Collobert, F. Sinz, J. Weston and L. Bottou. Large scale transductive SVMs. *Journal of Machine
           Learning Research*, 7:1687-1712, 2006.
    .. [2] O. Chapelle, V. Sindhwani and S. S. Keerthi. Optimization techniques for semi-supervised support
           vector machines. *Journal of Machine Learning Research*, 9:203-233, 2008.
    """

    _accepts_sparse = True
    _parameter_constraints: dict = {
        **MeanOutputS3VM._parameter_constraints,
        **C_STAR_ANNEALING_CONSTRAINTS,
        "anneal": [Boolean()],
        "max_cccp_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, kernel="rbf", sigma=1.0, C=1.0, C_star=None, r=None, r_tilde=None, anneal=True,
                 anneal_steps=10, anneal_start=1e-3, max_cccp_iter=100, tol=1e-10, max_iter=200,
                 search_stall_halvings=None):
        self.kernel = kernel
        self.sigma = sigma
        self.C = C
        self.C_star = C_star
        self.r = r
        self.r_tilde = r_tilde
        self.anneal = anneal
        self.anneal_steps = anneal_steps
        self.anneal_start = anneal_start
        self.max_cccp_iter = max_cccp_iter
        self.tol = tol
        self.max_iter = max_iter
        self.search_stall_halvings = search_stall_halvings

    def _solve(self, problem, y_pm, C, C_star, b):
        K = problem.centered_gram()
        lab = problem.labeled
        unl = ~lab
        y_lab = y_pm[lab]
        n = K.shape[0]
        tol, max_iter = float(self.tol), int(self.max_iter)

        def supervised_loss(o):
            v, d_l, h_l = labeled_loss_terms(o[lab], y_lab, C)
            d = np.zeros(n)
            h = np.zeros(n)
            d[lab], h[lab] = d_l, h_l
            return v, d, h

        def convex_loss(cs, y_u):
            def loss(o):
                v_l, d_l, h_l = labeled_loss_terms(o[lab], y_lab, C)
                L = cccp_convex_loss(y_u * o[unl])
                d = np.empty(n)
                h = np.empty(n)
                d[lab], h[lab] = d_l, h_l
                d[unl], h[unl] = cs * y_u * L.grad, cs * L.hess
                return v_l + cs * float(np.sum(L.value)), d, h
            return loss

        # Alg. 4: start from the supervised SVM (same centered kernel and fixed bias).
        # One factorization cache for every convex step of this solve. Successive convex steps
        # share most of their support vectors, so their factors are modified rather than
        # refactored; a new factorization every 1000 modified points bounds the rounding drift.
        factors = CholeskyCache(K, refresh=1000, check=False)  # K validated by centered_gram
        res = lm_newton(factors, b, supervised_loss, None, tol=tol, max_iter=max_iter)
        beta, o = res.coef, res.outputs
        schedule = c_star_schedule(C_star, self.anneal_steps if self.anneal else 1, self.anneal_start)
        trace, n_cccp, stop = [], 0, "labels_converged"
        for cs in schedule:
            y_u = np.where(o[unl] >= 0.0, 1.0, -1.0)
            newton_it, converged = 0, False
            for k in range(int(self.max_cccp_iter)):
                res = lm_newton(factors, b, convex_loss(cs, y_u), beta, Kbeta0=o - b, tol=tol, max_iter=max_iter)
                beta, o = res.coef, res.outputs
                newton_it += res.n_iter
                n_cccp += 1
                y_new = np.where(o[unl] >= 0.0, 1.0, -1.0)
                if np.array_equal(y_new, y_u):
                    converged = True
                    break
                y_u = y_new
            stop = "labels_converged" if converged else "max_cccp_iter"
            reg = 0.5 * float(beta @ (o - b))
            trace.append(dict(C_star=float(cs), cccp_iter=k + 1, newton_iter=newton_it, converged=converged,
                              s3vm_objective=s3vm_objective_p2(reg, o, y_pm, lab, C, cs)))
        return Solution(beta, o, n_cccp, stop, trace)
