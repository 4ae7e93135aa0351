"""Newton S3VM (``newton``): Levenberg-Marquardt in beta with a flat unlabeled loss.

Chapelle, Sindhwani, Keerthi, JMLR 2008, Sec. 4.4 (eqs. 15-18, Algorithm 6, Figure 7, Table 3).

Problem (eq. 15, "Method 2": the expansion ``w = sum_i beta_i phi(x_i)``, kernel centered on the
unlabeled mean by eq. 13 and bias fixed at ``b = 2 r~ - 1``, eq. 12)::

    min_beta  1/2 beta^T K beta + C sum_lab l_L(y_i (K_i beta + b)) + C* sum_unl l_U(K_j beta + b)

with the quadratic hinge ``l_L = max(0, 1 - t)^2`` and either the flat piecewise-quadratic loss
of Fig. 7 (``loss="flat"``, :func:`solvers._losses.flat_unlabeled_loss`) or the plain
``max(0, 1 - |t|)^2`` (``loss="quadratic"``, Fig. 2). Each annealing stage is minimized by
:func:`solvers._primal.lm_newton` (Alg. 6, step by eq. 18 at ``O(n_sv^3 + n^2)``), warm-started
from the previous stage; C* is annealed on nabla-S3VM's schedule (Sec. 4.2: ``2^(i-10) C*``,
i = 1..10), which Table 12's caption says Newton shares. The first stage starts from beta = 0
(Alg. 6), where every unlabeled output equals b.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from ._losses import FLAT_LOSS_DEFAULTS, flat_unlabeled_loss, symmetric_squared_hinge_loss
from ._mean_output import (C_STAR_ANNEALING_CONSTRAINTS, MeanOutputS3VM, Solution, c_star_schedule,
                           labeled_loss_terms, s3vm_objective_p2)
from ._primal import CholeskyCache, lm_newton
from ._validation import Interval, Options

__all__ = ["NewtonS3VM"]

#: New factorizations of eq. (18)'s system kept for recall by the cache of one solve
#: (:class:`solvers._cholesky.CholeskyCache`): a bit-identical shortcut, not a change of method.
_RECALL = 3


class NewtonS3VM(MeanOutputS3VM):
    """Newton S3VM (JMLR 2008 Sec. 4.4, Alg. 6) with the flat or the quadratic unlabeled loss.

    Parameters
    ----------
    kernel : {"rbf", "linear"}, default="rbf"
    sigma : float, default=1.0
        Gaussian kernel width, ``k = exp(-||x - x'||^2 / (2 sigma^2))``.
    C, C_star : float
        Costs of labeled and unlabeled losses (C_star=None: C* = C, JMLR 2008 Sec. 5.2).
    r : float, optional
        Fraction of positive unlabeled points (None: estimated from the labeled points).
    r_tilde : float, optional
        None (default): dichotomic search on r~ until exactly round(u r) unlabeled outputs are
        positive (JMLR 2008 Sec. 4); a number: one solve with ``b = 2 r_tilde - 1``.
    loss : {"flat", "quadratic"}, default="flat"
        ``l_U``: Fig. 7 or ``max(0, 1 - |t|)^2`` (the two columns of Table 3).
    plateau, ramp : float
        Shape of the flat loss (see :func:`solvers._losses.flat_unlabeled_loss`; the paper gives
        only a figure, these are our reading of it).
    anneal_steps : int, default=10
    anneal_start : float, default=2**-9
        First C* as a fraction of the final one; ``anneal_steps=1`` disables annealing.
    tol : float, default=1e-10
        Relative Newton-decrement tolerance of each stage (:func:`solvers._primal.lm_newton`).
    max_iter : int, default=200
        Levenberg-Marquardt iterations per stage at most.
    search_stall_halvings : int >= 1 or None, default=None
        Opt-in early end of the dichotomic search on r~ (JMLR 2008 Sec. 4, eq. 12): once this many
        consecutive halvings of the bracket left the positive counts at both of its ends
        unchanged and moved both ends, the search stops and constraint (3) is met by the threshold shift of the
        closest solution (:class:`solvers._mean_output.MeanOutputS3VM`). None (default) bisects
        down to the bracket width 1e-4.

    Attributes
    ----------
    See :class:`solvers._base.BaseS3VM`; ``binary_fits_[k].info["trace"]`` has one entry per
    annealing stage (C*, LM iterations and accepted steps, n_sv, stop reason, objective (15),
    objective (5) with p = 2). ``n_iter_`` counts LM iterations of the retained solve;
    ``info["total_iter"]`` over the whole dichotomic search.

    References
    ----------
    .. [1] O. Chapelle, V. Sindhwani and S. S. Keerthi. Optimization techniques for semi-supervised support
           vector machines. *Journal of Machine Learning Research*, 9:203-233, 2008.
    .. [2] O. Chapelle. Training a support vector machine in the primal. *Neural Computation*,
           19(5):1155-1178, 2007.
    """

    _accepts_sparse = True
    _parameter_constraints: dict = {
        **MeanOutputS3VM._parameter_constraints,
        **C_STAR_ANNEALING_CONSTRAINTS,
        "loss": [Options({"flat", "quadratic"})],
        "plateau": [Interval(Real, 0, 1, closed="left")],
        "ramp": [Interval(Real, 0, 0.5, closed="right")],  # and plateau + 2 ramp <= 1 (_check_params)
        "search_warm_stages": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(self, kernel="rbf", sigma=1.0, C=1.0, C_star=None, r=None, r_tilde=None, loss="flat",
                 plateau=FLAT_LOSS_DEFAULTS["plateau"], ramp=FLAT_LOSS_DEFAULTS["ramp"], anneal_steps=10,
                 anneal_start=2.0 ** -9, tol=1e-10, max_iter=200, search_stall_halvings=None,
                 search_warm_stages=None):
        self.kernel = kernel
        self.sigma = sigma
        self.C = C
        self.C_star = C_star
        self.r = r
        self.r_tilde = r_tilde
        self.loss = loss
        self.plateau = plateau
        self.ramp = ramp
        self.anneal_steps = anneal_steps
        self.anneal_start = anneal_start
        self.tol = tol
        self.max_iter = max_iter
        self.search_stall_halvings = search_stall_halvings
        self.search_warm_stages = search_warm_stages

    def _check_params(self):
        super()._check_params()
        if self.loss == "flat":
            flat_unlabeled_loss(0.0, plateau=self.plateau, ramp=self.ramp)  # plateau + 2 ramp <= 1

    def _unlabeled_loss(self, o):
        if self.loss == "flat":
            return flat_unlabeled_loss(o, plateau=self.plateau, ramp=self.ramp)
        return symmetric_squared_hinge_loss(o)

    def _solve(self, problem, y_pm, C, C_star, b, warm=None):
        K = problem.centered_gram()
        lab = problem.labeled
        unl = ~lab
        y_lab = y_pm[lab]
        n = K.shape[0]

        def make_loss(cs):
            def loss(o):
                v_l, d_l, h_l = labeled_loss_terms(o[lab], y_lab, C)
                U = self._unlabeled_loss(o[unl])
                d = np.empty(n)
                h = np.empty(n)
                d[lab], h[lab] = d_l, h_l
                d[unl], h[unl] = cs * U.grad, cs * U.hess
                return v_l + cs * float(np.sum(U.value)), d, h
            return loss

        # One factorization cache for every stage of this solve; it recalls the last new
        # factorizations, since lam of Alg. 6 often cycles (lam, 4 lam, lam / 2) on one support set.
        factors = CholeskyCache(K, recall=_RECALL, check=False)  # K validated by centered_gram
        schedule = c_star_schedule(C_star, self.anneal_steps, self.anneal_start)
        beta = Kbeta = None
        if warm is not None:  # search_warm_stages: continue from another bias's beta (K beta kept)
            schedule = schedule[-int(self.search_warm_stages):]
            beta, Kbeta = warm.state
        trace = []
        n_iter = 0
        res = None
        for cs in schedule:
            res = lm_newton(factors, b, make_loss(cs), beta, Kbeta0=Kbeta,
                            tol=float(self.tol), max_iter=int(self.max_iter))
            beta, Kbeta = res.coef, res.outputs - b
            n_iter += res.n_iter
            reg = 0.5 * float(beta @ (res.outputs - b))
            trace.append(dict(C_star=float(cs), n_iter=res.n_iter, n_accepted=res.n_accepted, n_sv=res.n_sv,
                              stop_reason=res.stop_reason, objective=res.objective,
                              s3vm_objective=s3vm_objective_p2(reg, res.outputs, y_pm, lab, C, C_star)))
        return Solution(beta, res.outputs, n_iter, res.stop_reason, trace, state=(beta, Kbeta),
                        warm_started=warm is not None)
