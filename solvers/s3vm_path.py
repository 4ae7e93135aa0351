"""S3VM-path (``s3vm_path``): infinitesimal annealing by parametric programming.

Ogawa, Imamura, Takeuchi, Sugiyama, *Infinitesimal Annealing for Training Semi-Supervised
Support Vector Machines*, ICML 2013.

The problem is the hinge-loss S3VM of eq. (1)/(4) with a kernel and the bias fixed at
``b = 2 r - 1`` (Sec. 2; ``r`` = fraction of positive labeled points unless given). Sec. 2
refers to Chapelle & Zien (2005) for this device: there the kernel is centered on the unlabeled
mean (JMLR 2008 eq. 13), so that b *is* the mean output over U and fixing it is the balance
constraint; the estimator does the same (``center=True``) ::

    J(f, y^) = 1/2 ||w||^2 + C sum_L [1 - y_i f_i]_+ + C* sum_U [1 - y^_i f_i]_+ ,
    f(x) = b + sum_i alpha_i k(x, x_i)                                          (eq. 7)

traced over C* in [0, C_end] (``C_end = C`` by default). With the labels y^ fixed, the
*conditionally optimal* solution (Definition 1, eq. 5) minimizes J over the polytope
``pol(y^) = {f : y^_i f_i >= 0, i in U}`` (eq. 6). Writing ``theta_i = y_i alpha_i >= 0`` and
``t_i = y_i f_i`` (labels y^ on U), its optimality conditions are those of Lemma 3 (8a-8f) plus,
for unlabeled points on the polytope's boundary, ``t_i = 0`` with ``theta_i >= C*`` (the
constraint's multiplier is ``theta_i - C*``). Lemma 3 / Theorem 4: the solution is a local
optimum of (4) iff no unlabeled ``t_i`` is 0 (eq. 9).

Algorithm (Alg. 1-3):

* start (Alg. 1): the SVM on the labeled points with the same fixed b (the problem at C* = 0),
  ``y^ = sgn f`` on U (``f = 0`` counts as +1);
* CP step (Alg. 2): with the index sets O (t > 1, theta = 0), M (t = 1), I_l (t < 1,
  theta = C), I_u (t < 1, theta = C*) fixed, theta is linear in C*: ``d theta_{I_u} = 1``,
  ``Q_MM d theta_M = -Q_{M, I_u} 1`` (``Q = diag(y) K diag(y)``; b is fixed, so there is no
  equality constraint). The next event is found exactly: a point of M reaching 0 or its cost,
  a point of O or I reaching the margin, an unlabeled point of I_u reaching ``t = 0`` (the
  polytope boundary), or C* = C_end;
* DJ step (Alg. 3): at the boundary, flip the labels of ``S = {i in U : f_i = 0}`` (eq. 10)
  and re-solve the convex problem (5) at the same C*, warm-started, by a primal active-set
  method on the dual; repeat while the new solution touches the boundary. Theorem 5: each flip
  strictly lowers J.

The result is the whole path: knots (C*, alpha, labels, J, kind) with alpha linear in C*
between consecutive knots of a CP segment, and two knots at the same C* around each jump (the
right one is the local optimum). :meth:`S3VMPath.decision_function` evaluates any C* on the
path and :meth:`S3VMPath.select_c_star` finds the C* in [0, C_end] that exactly minimizes a
validation error (the outputs are linear in C* on each segment, so the error only changes at
computable roots), as the paper's experiments do.

Layout. This module holds the estimator (:class:`S3VMPath`) and its model selection along the
path; the path itself is traced by :func:`solvers._path.s3vm_path` (start, CP and DJ steps,
:class:`solvers._path.PathResult`), the convex problem (5) of the start and of every DJ
re-solve is :func:`solvers._path_qp.conditional_optimum`, and the solves with blocks of
``Q = diag(y) K diag(y)`` and their incrementally updated Cholesky factor are in
:mod:`solvers._path_linalg`. The names tests and the harness use are re-exported here.

Implementation notes. The Gram matrix of the training points is formed once (the dual needs
its entries, as Hastie et al.'s SVM path does). Between events theta and t are updated
linearly and recomputed exactly from the index sets every ``refresh`` events and after every
jump, so round-off does not accumulate along long paths. Ties between events are taken one at
a time; a zero-length step is allowed (degenerate vertices), and ``max_events`` bounds the
loop. The sets change by one point per event, so the Cholesky factor of ``Q_MM`` (CP step) and
of ``Q_FF`` (active-set iterations of the DJ re-solve) is updated, not recomputed
(:class:`_CholeskyQ`); a singular ``Q_MM`` in the CP step (duplicated points) falls back to the
minimum-norm solve, and the active-set method keeps ``Q_FF`` nonsingular by moving along null
directions (see :func:`conditional_optimum`). The factor also keeps the rows ``K[F]``
contiguous, so the ``O(n |F|)`` products of every event do not gather them from K again. Full
``O(n^2)`` products are kept for the exact recomputations (every ``refresh`` events, at each
boundary, and to confirm each DJ re-solve); the warm start of a re-solve and the snap of
theta_M after it update outputs that are already exact in ``O(n |S|)`` and ``O(n |M|)``.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils.validation import check_consistent_length, check_is_fitted, column_or_1d, validate_data

from ._balance import check_r, estimate_r
from ._base import BaseS3VM, BinaryFit
from ._kernels import KernelCentering
from ._path import PathResult, hinge_objective, s3vm_path
from ._path_qp import I, M, O, Z, conditional_optimum
from ._validation import Boolean, Interval, Options

__all__ = ["S3VMPath", "PathResult", "conditional_optimum", "hinge_objective", "s3vm_path",
           "O", "M", "I", "Z"]


class S3VMPath(BaseS3VM):
    """S3VM-path (ICML 2013): the entire path of local optima of the hinge-loss S3VM over C*.

    Parameters
    ----------
    kernel : {"rbf"}, default="rbf"
        ``exp(-||x - z||^2 / (2 sigma^2))``, the paper's kernel (Sec. 6).
    sigma : float, default=1.0
        Gaussian width (the paper's ``gamma`` is ``1 / (2 sigma^2)``).
    C : float, default=1.0
        Cost of the labeled hinge losses.
    C_star : float or None, default=None
        End of the path, C* in [0, C_star]; None means C (the paper's range [0, C]).
    r : float in (0, 1) or None, default=None
        Fixes ``b = 2 r - 1`` (ICML 2013 Sec. 2); None uses the fraction of positive labeled
        points, as the paper does.
    center : bool, default=True
        Center the kernel on the unlabeled mean (JMLR 2008 eq. 13), so that the fixed b is the
        mean output over U and fixing it is the balance constraint of Chapelle & Zien (2005),
        which ICML 2013 Sec. 2 refers to. ``False`` fixes b in the raw kernel (b is then an
        offset only: with a Gaussian kernel the outputs far from the labeled points tend to b,
        and every unlabeled point can end up in one class).
    tol : float, default=1e-9
        Tolerance of the optimality conditions (units of y f).
    max_events : int or None, default=None
        Cap on path events (default ``20 n + 1000``).

    Attributes
    ----------
    paths_ : list of PathResult
        One per binary problem (one-vs-rest for more than two classes).
    dual_coef_, intercept_
        The solution at the end of the path (C* = C_star).
    assigned_labels_ : ndarray (n_problems, n_unlabeled)
        The labels y^ at the end of the path.

    References
    ----------
    .. [1] K. Ogawa, M. Imamura, I. Takeuchi and M. Sugiyama. Infinitesimal annealing for training semi-
           supervised support vector machines. In *Proc. ICML*, 2013.
    """

    _accepts_sparse = True
    balance = "threshold"
    _parameter_constraints: dict = {
        **BaseS3VM._parameter_constraints,
        "kernel": [Options({"rbf"})],  # the kernel expansion of eq. (7) with the paper's Gaussian kernel
        "sigma": [Interval(Real, 0, None, closed="neither")],
        "center": [Boolean()],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_events": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(self, kernel="rbf", sigma=1.0, C=1.0, C_star=None, r=None, center=True, tol=1e-9,
                 max_events=None):
        self.kernel = kernel
        self.sigma = sigma
        self.C = C
        self.C_star = C_star
        self.r = r
        self.center = center
        self.tol = tol
        self.max_events = max_events

    def _check_params(self):
        super()._check_params()
        if self.C_star is not None and self.C_star > self.C:
            raise ValueError(f"C_star must be <= C (the path runs over [0, C]); got C_star={self.C_star!r}, "
                             f"C={self.C!r}")

    def fit(self, X, y):
        """Fit on labeled and unlabeled points (``y == -1`` marks unlabeled); see the class doc."""
        super().fit(X, y)
        self.paths_ = [f.info.get("path") for f in self.binary_fits_]  # None: fully labeled y, no path
        self.assigned_labels_ = np.vstack([np.empty(0) if p is None else p.y_unlabeled[-1] for p in self.paths_])
        return self

    def _fit_binary(self, X, y_pm, labeled, gram):
        r = check_r(estimate_r(y_pm[labeled]) if self.r is None else self.r)
        C = float(self.C)
        c_end = C if self.C_star is None else float(self.C_star)
        b = 2.0 * r - 1.0
        if self.center:
            unl = np.flatnonzero(~labeled)
            cen = KernelCentering.fit(gram, unl)
            K = cen.center_train(gram)
        else:
            K = gram
        path = s3vm_path(K, y_pm, C, b, c_end=c_end, tol=float(self.tol), max_events=self.max_events)
        if self.center:
            # f = sum_i a_i k~(x, x_i) + b is an ordinary expansion (linear in a, so the map
            # commutes with the interpolation along the path): coefficients of the unlabeled
            # points shift by -sum(a)/u, the intercept absorbs the constant terms.
            # The (knots, n) array is the path's own: shifted in place, through a slice when U is
            # one block of columns (labeled points first, as the harness orders them), which
            # avoids the gather/scatter copies of fancy indexing on a large array.
            a = path.alpha
            path.intercept = b + a @ (cen.grand_mean - cen.train_means)
            shift = a.sum(axis=1, keepdims=True) / unl.size
            if unl[-1] - unl[0] + 1 == unl.size:
                a[:, unl[0]:unl[-1] + 1] -= shift
            else:
                a[:, unl] -= shift
        info = {"path": path, "r": r, "b": b, "objective": float(path.objective[-1]), "n_events": path.n_events,
                "n_jumps": path.n_jumps, "n_flips": path.n_flips}
        return BinaryFit(path.alpha[-1].copy(), float(path.intercept[-1]), path.n_events, "path_end", info)

    # ----------------------------------------------------------------- along the path
    def decision_function(self, X, C_star=None):
        """Outputs at the end of the path, or at ``C_star`` anywhere in [0, C_end]."""
        if C_star is None:
            return super().decision_function(X)
        coefs = np.vstack([p.alpha_at(C_star) for p in self.paths_])
        intercepts = np.array([p.intercept_at(C_star) for p in self.paths_])
        saved = self.dual_coef_, self.intercept_
        try:
            self.dual_coef_, self.intercept_ = coefs, intercepts
            return super().decision_function(X)
        finally:
            self.dual_coef_, self.intercept_ = saved

    def predict(self, X, C_star=None):
        """Labels at the end of the path, or at ``C_star``."""
        return self._labels_of(self.decision_function(X, C_star))

    def validation_curve(self, X_val, y_val):
        """Exact validation error as a piecewise-constant function of C* (two classes).

        Returns
        -------
        edges : ndarray (k + 1,)
            C* values bounding the pieces (knots and the roots where a validation output
            changes sign); the error is constant on each open piece.
        errors : ndarray (k,)
            Validation error rate on each piece.
        """
        check_is_fitted(self, "paths_")
        if self.classes_.size != 2:
            raise ValueError("validation_curve/select_c_star need a binary problem (two classes); "
                             f"got {self.classes_.size} classes")
        X_val = validate_data(self, X_val, accept_sparse="csr", dtype=np.float64, reset=False)
        y_val = column_or_1d(y_val, warn=True)
        check_consistent_length(X_val, y_val)
        # A label outside the training classes (a typo, -1 for 0) would silently count as the
        # negative class.
        unknown = np.setdiff1d(np.unique(y_val), self.classes_)
        if unknown.size:
            raise ValueError(f"y_val has labels {unknown.tolist()} that are not among the training classes "
                             f"{self.classes_.tolist()}")
        truth = np.where(y_val == self.classes_[1], 1.0, -1.0)
        path = self.paths_[0]
        Kv = self._kernel(X_val, self.X_fit_)
        F = Kv @ path.alpha.T + path.intercept          # (n_val, m): outputs at the knots
        edges = [path.c_star[0]]
        for k in range(path.c_star.size - 1):
            c0, c1 = path.c_star[k], path.c_star[k + 1]
            if c1 <= c0:
                continue
            f0, f1 = F[:, k], F[:, k + 1]
            with np.errstate(divide="ignore", invalid="ignore"):
                w = f0 / (f0 - f1)                       # sign change inside the segment
            w = w[(w > 0) & (w < 1) & np.isfinite(w)]
            edges.extend(np.sort(c0 + w * (c1 - c0)))
            edges.append(c1)
        edges = np.unique(np.asarray(edges))
        if edges.size == 1:
            edges = np.array([edges[0], edges[0]])
        mids = 0.5 * (edges[:-1] + edges[1:])
        errors = np.array([np.mean(np.where(path.interpolate(F.T, c) > 0, 1.0, -1.0) != truth) for c in mids])
        return edges, errors

    def select_c_star(self, X_val, y_val):
        """C* in [0, C_end] that exactly minimizes the validation error (ICML 2013 Sec. 6).

        Ties: the minimizing piece with the largest C* (the most semi-supervised solution),
        evaluated at its midpoint, or at C_end when that piece ends the path.

        Returns
        -------
        c_star : float
        error : float
        """
        edges, errors = self.validation_curve(X_val, y_val)
        best = np.flatnonzero(errors == errors.min())[-1]
        c = edges[best + 1] if best + 1 == edges.size - 1 else 0.5 * (edges[best] + edges[best + 1])
        return float(c), float(errors[best])

