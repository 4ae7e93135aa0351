"""Shared machinery of the continuous S3VMs of JMLR 2008 Sec. 4 (mean-output constraint).

The solvers of Sec. 4 (CCCP, nabla-S3VM, cS3VM, Newton S3VM) replace the hard balance
constraint (3) by the mean-output constraint (12)::

    (1/u) sum_{j unlabeled} f(x_j) = 2 r~ - 1,

which is enforced by centering the data on the unlabeled mean -- the kernel of eq. (13),
:class:`solvers._kernels.KernelCentering`, or ``x - mean_U x`` for the linear kernel -- and fixing
the bias at ``b = 2 r~ - 1``: the problem over ``beta`` (or ``w``) is then unconstrained. Because
(12) only relaxes (3), r~ is searched in an outer loop -- the dichotomic search of Sec. 4 and
Sec. 5.2, :func:`solvers._balance.dichotomic_search` -- until exactly round(u r) unlabeled
outputs are positive.

:class:`MeanOutputS3VM` does this once for all four solvers. A subclass implements
:meth:`MeanOutputS3VM._solve`, the optimization at one fixed bias on the centered problem; the base
prepares the centered kernel once per ``fit`` (shared by every binary problem and every r~),
runs the search (``r_tilde=None``, the default) or a single solve (``r_tilde`` given), and maps
the centered solution back to an ordinary expansion over the training points::

    f(x) = sum_i beta_i k~(x, x_i) + b
         = sum_i beta'_i k(x, x_i) + b',
    beta' = beta - (sum_i beta_i / u) 1_U,   b' = b + sum_i beta_i (mean_{U,U} k - mean_U k(x_i, .)),

(from eq. 13; for the linear kernel ``w' = w`` and ``b' = b - w . mean_U x``), so prediction
on new points uses the centering fitted on the training set, exactly.

The protocol (harness) calls ``fit`` once per binary problem with ``r`` set and ``r_tilde=None``;
the search runs inside ``fit`` with the same :func:`~solvers._balance.dichotomic_search` the harness
uses for third-party solvers that only expose ``r_tilde``, so the expensive preparation (Gram
matrix, centering, kernel-PCA map) is not redone for every r~.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator

from ._balance import SEARCH_MAX_ITER, SEARCH_XTOL, check_r, dichotomic_search, estimate_r, n_positive, threshold_shift
from ._base import BaseS3VM, BinaryFit, array_digest, shared_work
from ._kernels import KernelCentering, linear_kernel
from ._losses import squared_hinge_loss, symmetric_squared_hinge_loss
from ._validation import Interval, check_int, check_kernel_matrix

#: Constraints (:mod:`solvers._validation`) of the annealing of C* of the mean-output solvers that
#: have one (:func:`c_star_schedule`): ``anneal_steps`` and ``anneal_start`` (first C* / final C*).
C_STAR_ANNEALING_CONSTRAINTS = {
    "anneal_steps": [Interval(Integral, 1, None, closed="left")],
    "anneal_start": [Interval(Real, 0, 1, closed="right")],
}

__all__ = ["MeanOutputS3VM", "CenteredProblem", "Solution", "c_star_schedule", "labeled_loss_terms",
           "s3vm_objective_p2"]

#: Version of the results this module's numerics produce: part of the cache key of every cell
#: that runs this code (harness.grid.cell_key). Bump it when a change moves any result.
RESULT_VERSION = 1


def labeled_loss_terms(o_lab, y_lab, C):
    """``C sum max(0, 1 - y o)^2`` and its first/second derivatives with respect to o."""
    L = squared_hinge_loss(y_lab * o_lab)
    return C * float(np.sum(L.value)), C * y_lab * L.grad, C * L.hess


def s3vm_objective_p2(reg, outputs, y_pm, labeled, C, C_star):
    """JMLR 2008 eq. (5) with p = 2: ``reg + C sum max(0,1-y o)^2 + C* sum max(0,1-|o|)^2``."""
    lab = float(np.sum(squared_hinge_loss(y_pm[labeled] * outputs[labeled]).value))
    unl = float(np.sum(symmetric_squared_hinge_loss(outputs[~labeled]).value))
    return float(reg) + C * lab + C_star * unl


def c_star_schedule(C_star: float, steps: int, start: float) -> np.ndarray:
    """Annealing of C*: ``steps`` values growing geometrically from ``start * C*`` to ``C*``.

    ``steps=10, start=2**-9`` is the nabla-S3VM schedule of JMLR 2008 Sec. 4.2 (``2^(i-10) C*``,
    i = 1..10), also used for Newton S3VM; ``start=1e-3`` is the CCCP schedule of Table 12 ("C*
    is increased in 10 steps from its final value divided by 1000"). One step means no
    annealing.
    """
    steps = check_int(steps, "anneal_steps", 1)
    if steps == 1:
        return np.array([float(C_star)])
    return float(C_star) * np.geomspace(float(start), 1.0, steps)


@dataclass
class CenteredProblem:
    """One fit's data after the centering of eq. (13), shared by all binary problems and all r~.

    Attributes
    ----------
    labeled : ndarray of bool, shape (n,)
    unlabeled : ndarray of int
        Indices of the unlabeled points.
    gram : ndarray or None
        Uncentered training Gram matrix (None for the linear kernel).
    centering : KernelCentering or None
    X : ndarray or sparse matrix or None
        Training inputs (linear kernel only).
    mean_u : ndarray or None
        Unlabeled mean of X (linear kernel only).
    cache : dict
        Subclass-specific precomputations (kernel-PCA map, centered Gram ...).
    """

    labeled: np.ndarray
    unlabeled: np.ndarray
    gram: np.ndarray | None
    centering: KernelCentering | None
    X: object = None
    mean_u: np.ndarray | None = None
    cache: dict = field(default_factory=dict)

    @property
    def linear(self) -> bool:
        return self.gram is None

    def unlabeled_rows(self, A):
        """The rows of ``A`` at the unlabeled points: a view when they are one block of rows (the
        protocol puts them after the labeled ones) of a sparse or row-major ``A``, else the copy
        ``A[unlabeled]`` (row-major: a product with it sums in the same order as with the view)."""
        unl = self.unlabeled
        if unl.size and unl[-1] - unl[0] + 1 == unl.size and (sp.issparse(A) or A.flags.c_contiguous):
            return A[unl[0]:unl[-1] + 1]
        return A[unl]

    def centered_gram(self) -> np.ndarray:
        """The centered kernel matrix k~ of eq. (13) (for the linear kernel, ``Xc Xc^T``), validated
        (:func:`~solvers._validation.check_kernel_matrix`) once."""
        if "Kc" not in self.cache:
            if self.linear:
                Kc = linear_kernel(self.X)
                # (x_i - m).(x_j - m) = x_i.x_j - x_i.m - x_j.m + m.m, without densifying X.
                Xm = np.asarray(self.X @ self.mean_u).ravel()
                Kc -= Xm[:, None]
                Kc -= Xm[None, :]
                Kc += float(self.mean_u @ self.mean_u)
            else:
                Kc = self.centering.center_train(self.gram)
            self.cache["Kc"] = check_kernel_matrix(Kc)
        return self.cache["Kc"]

    def centered_features(self):
        """``Xc = X - 1 m^T`` (linear kernel): an array for dense X, a LinearOperator for sparse X."""
        if "Xc" not in self.cache:
            X, m = self.X, self.mean_u
            if sp.issparse(X):
                n, d = X.shape
                self.cache["Xc"] = LinearOperator(
                    (n, d), dtype=np.float64,
                    matvec=lambda v: np.asarray(X @ np.ravel(v)).ravel() - float(m @ np.ravel(v)),
                    rmatvec=lambda u: np.asarray(X.T @ np.ravel(u)).ravel() - m * float(np.sum(u)))
            else:
                self.cache["Xc"] = X - m
        return self.cache["Xc"]

    def uncenter(self, coef, b, kind="beta"):
        """Map a centered solution to the ordinary ``(coef, intercept)`` of :class:`BinaryFit`.

        For the linear kernel ``kind="beta"`` coefficients are first turned into
        ``w = Xc^T beta = X^T beta - mean_U x * sum(beta)``.
        """
        if self.linear and kind == "beta":
            beta = np.asarray(coef, dtype=np.float64)
            coef = np.asarray(self.X.T @ beta).ravel() - self.mean_u * beta.sum()
        coef = np.asarray(coef, dtype=np.float64)
        if self.linear:
            return coef, float(b - coef @ self.mean_u)
        if kind == "w":
            raise ValueError("a kernel solution must be expansion coefficients")
        c = self.centering
        beta = coef.copy()
        beta[self.unlabeled] -= coef.sum() / self.unlabeled.size
        return beta, float(b + coef @ (c.grand_mean - c.train_means))


@dataclass
class Solution:
    """What :meth:`MeanOutputS3VM._solve` returns for one fixed bias.

    ``coef`` is beta over the training points in the centered kernel (w in centered input space
    for the linear kernel); ``outputs`` are ``f(x_i)`` on every training point.
    """

    coef: np.ndarray
    outputs: np.ndarray
    n_iter: int
    stop_reason: str
    trace: list = field(default_factory=list)
    #: "beta": expansion coefficients over the training points (Method 2) even for the linear
    #: kernel, where ``w = Xc^T beta``; "w": weights over the explicit features.
    kind: str = "beta"
    #: What a later solve at another bias may start from (the explicit-feature weights w of
    #: nabla-S3VM and cS3VM; see ``search_warm_stages``), or None.
    state: object = None
    #: Whether this solve started from another r~'s solution (``search_warm_stages``).
    warm_started: bool = False


class MeanOutputS3VM(BaseS3VM):
    """Base of the solvers of JMLR 2008 Sec. 4: centering (eq. 13), fixed bias, search on r~.

    Common parameters (set by the subclasses' ``__init__``): ``kernel``, ``sigma``, ``C``,
    ``C_star`` (None: C* = C), ``r`` (None: estimated from the labeled points, JMLR 2008 Sec.
    5.4.5) and ``r_tilde``: None runs the dichotomic search of Sec. 4 so that exactly
    round(u r) unlabeled outputs are positive; a number fixes ``b = 2 r_tilde - 1`` (one solve,
    the balance then only holds on average, eq. 12). A subclass that declares the parameter
    ``search_stall_halvings`` (None, or an int >= 1) passes it to the search as
    ``stall_halvings``: the search then also stops once that many consecutive halvings left the
    counts at both ends of the bracket unchanged and moved both ends, and the threshold shift
    below is applied to the closest solution (:func:`~solvers._balance.dichotomic_search`). A
    subclass that declares ``search_warm_stages`` (None, or an int >= 1) and sets it has every
    solve of the search after the first called as ``_solve(..., warm=start)``, ``start`` being the :class:`Solution` whose
    unlabeled positive count came closest to round(u r) so far (the later one on a tie): the
    continuation in r~ then follows the best solution met, not one that jumped away from the
    target.

    ``binary_fits_[k].info`` records ``r``, ``r_tilde``, ``dichotomic_iter`` (solves of the
    search), ``search_exact`` (whether some r~ gave exactly round(u r) positives),
    ``threshold_shift`` (when it did not: the count jumped over the target between two r~ closer
    than 1e-4, and the closest solution's bias was moved by this much to meet constraint (3)),
    ``search_stop`` (why the search ended, :class:`~solvers._balance.DichotomicResult`; ``"fixed"``
    when ``r_tilde`` is given), ``total_iter`` (inner iterations over the whole search),
    ``warm_started`` (whether the retained solve started from another r~'s solution) and the
    subclass's ``trace`` of the retained solve.
    """

    balance = "mean_output"
    #: ``fit`` runs the dichotomic search itself (the harness then does not wrap it).
    _internal_search = True
    #: The parameters every mean-output solver has; a subclass adds its own.
    _parameter_constraints: dict = {
        **BaseS3VM._parameter_constraints,
        "r_tilde": [Interval(Real, None, None, closed="neither"), None],  # b = 2 r_tilde - 1
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "search_stall_halvings": [Interval(Integral, 1, None, closed="left"), None],
    }

    # ------------------------------------------------------------------ hooks
    def _prepare(self, problem: CenteredProblem) -> None:
        """Add per-fit precomputations to ``problem.cache`` (called once per ``fit``)."""

    def _solve(self, problem: CenteredProblem, y_pm, C: float, C_star: float, b: float) -> Solution:
        raise NotImplementedError  # pragma: no cover - abstract

    # -------------------------------------------------------------------- fit
    def fit(self, X, y):
        """Fit on labeled and unlabeled points (``y == -1`` marks unlabeled); see the class doc."""
        self._problem = None
        try:
            return super().fit(X, y)
        finally:
            self._problem = None  # the n x n caches are not kept on the fitted estimator

    def _prepare_key(self) -> tuple:
        """The parameters :meth:`_prepare` depends on (subclasses extend): with the Gram matrix and
        the unlabeled set they key the prepared problem shared between fits (:func:`shared_work`)."""
        return ()

    def _get_problem(self, X, labeled, gram) -> CenteredProblem:
        if self._problem is None:
            unl = np.flatnonzero(~labeled)
            if gram is None:
                Xf = X.tocsr() if sp.issparse(X) else X
                m = np.asarray(Xf[unl].mean(axis=0)).ravel()
                problem = CenteredProblem(labeled, unl, None, None, Xf, m)
                self._prepare(problem)
            else:
                def build():
                    prepared = CenteredProblem(labeled, unl, gram, KernelCentering.fit(gram, unl))
                    self._prepare(prepared)
                    return prepared

                if self._gram_key is None:
                    problem = build()
                else:  # the one-versus-rest fits of a split share the centering and kernel map
                    cls = type(self)
                    problem = shared_work(("centered", cls.__module__, cls.__qualname__, self._prepare_key(),
                                           self._gram_key, array_digest(unl)), build)
            self._problem = problem
        return self._problem

    def _fit_binary(self, X, y_pm, labeled, gram):
        problem = self._get_problem(X, labeled, gram)
        C = float(self.C)
        C_star = float(self.C if self.C_star is None else self.C_star)
        r = check_r(estimate_r(y_pm[labeled]) if self.r is None else self.r)
        unl = problem.unlabeled
        target = n_positive(unl.size, r)
        total = [0]
        warm = getattr(self, "search_warm_stages", None) is not None
        # (|count - target|, solution): where the next warm solve starts -- the solution whose
        # positive count came closest to round(u r) so far, the later one on a tie
        start = [None, None]

        def solve(r_tilde):
            if warm and start[1] is not None:
                sol = self._solve(problem, y_pm, C, C_star, 2.0 * r_tilde - 1.0, warm=start[1])
            else:
                sol = self._solve(problem, y_pm, C, C_star, 2.0 * r_tilde - 1.0)
            total[0] += sol.n_iter
            coef, intercept = problem.uncenter(sol.coef, 2.0 * r_tilde - 1.0, sol.kind)
            # Count positives on the uncentered model, as decision_function will see it.
            if problem.linear:
                out_u = np.asarray(problem.unlabeled_rows(problem.X) @ coef).ravel() + intercept
            else:
                out_u = problem.unlabeled_rows(gram) @ coef + intercept
            if warm:
                miss = abs(int(np.sum(out_u > 0)) - target)
                if start[1] is None or miss <= start[0]:
                    start[0], start[1] = miss, sol
            return out_u, (sol, coef, intercept)

        shift = 0.0
        if self.r_tilde is None:
            res = dichotomic_search(solve, target, r0=r, max_iter=SEARCH_MAX_ITER, xtol=SEARCH_XTOL,
                                    stall_halvings=getattr(self, "search_stall_halvings", None))
            (sol, coef, intercept), r_tilde, d_iter, exact = res.payload, res.r_tilde, res.n_iter, res.exact
            search_stop = res.stop
            if not exact:
                # The count jumped over the target between two r~ closer than SEARCH_XTOL (the
                # solution path bifurcates): constraint (3) is then met by moving the threshold
                # of the closest solution -- the smallest change that meets it -- and recorded.
                shift = threshold_shift(res.outputs, target)
                intercept -= shift
        else:
            r_tilde = float(self.r_tilde)
            out_u, (sol, coef, intercept) = solve(r_tilde)
            d_iter, exact = 0, int(np.sum(out_u > 0)) == target
            search_stop = "fixed"
        info = dict(r=r, r_tilde=r_tilde, b_centered=2.0 * r_tilde - 1.0, dichotomic_iter=d_iter,
                    search_exact=bool(exact), search_stop=search_stop, threshold_shift=float(shift), n_pos_target=target,
                    total_iter=total[0], C_star=C_star, warm_started=bool(sol.warm_started), trace=sol.trace,
                    outputs=sol.outputs - shift)
        return BinaryFit(coef, intercept, sol.n_iter, sol.stop_reason, info)
