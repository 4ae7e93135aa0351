"""The "intermediate" solutions of JMLR 2008 Sec. 5.3 (Table 6), as an estimator the protocol runs.

Table 6 correlates unlabeled error and objective over 10 solutions per split: the six S3VM
methods' and 4 "intermediate" ones, obtained as follows (JMLR 2008 Sec. 5.3): "A standard SVM is
trained on the original labeled set and a fraction of the unlabeled set (with their true
labels). The fraction was either 0, 10, 20 or 30%. The labels of the remaining unlabeled points
are assigned through a thresholding of the real value outputs of the SVM. This threshold is such
that the balancing constraint (3) is satisfied. Finally, an SVM is retrained using the entire
training set."

:class:`IntermediateSolution` is the estimator part: SVM on the points it is given labels for,
balanced thresholding of the others at its ``r``, L2-SVM retrained on everything. Revealing the
true labels of a fraction of the unlabeled points is the protocol's part
(:func:`harness.protocol.run_split`, ``evaluation = "reveal"``): it passes them as labeled and
sets ``r`` so that, with the revealed positives, constraint (3) holds over the whole unlabeled
set. It is not a semi-supervised method of the papers and is not registered; specs name it
``"harness.intermediate:IntermediateSolution"``.

Choices where the paper is silent: the revealed points are a seeded uniform draw from the
unlabeled set, the same for every binary problem of a split; revealed points cost C (they are
labeled) and the retrained SVM costs C on labeled and C* on unlabeled points, as the protocol's
objective does.
"""

from __future__ import annotations

import numpy as np

from s3vm_bench.solvers.numerics import estimate_r, n_positive, threshold_to_count
from s3vm_bench.solvers.base import BaseS3VM, BinaryFit
from s3vm_bench.solvers.numerics import kernel_newton, l2svm_mfn

__all__ = ["IntermediateSolution"]


class IntermediateSolution(BaseS3VM):
    """SVM on the labeled points, balanced labels by thresholding, SVM retrained on all points.

    Parameters
    ----------
    kernel : {"rbf", "linear"}, default="rbf"
    sigma : float, default=1.0
    C : float, default=1.0
        Cost of the labeled losses (both trainings).
    C_star : float or None, default=None
        Cost of the unlabeled losses in the retrained SVM; None means C.
    r : float or None, default=None
        Fraction of the unlabeled points labeled positive by the threshold; None estimates it
        from the labeled points.
    fraction : float, default=0.0
        Fraction of the unlabeled labels the harness reveals (JMLR 2008 Table 6: 0, 0.1, 0.2,
        0.3). Read by :func:`harness.protocol.run_split`; the estimator itself only checks it.
    tol : float, default=1e-9
    max_iter : int, default=100

    Attributes
    ----------
    classes_, dual_coef_ (rbf) or coef_ (linear), intercept_, n_iter_, stop_reason_
        As for the other solvers; the expansion runs over every training point.
    """

    balance = "threshold"
    evaluation = "reveal"

    def __init__(self, kernel="rbf", sigma=1.0, C=1.0, C_star=None, r=None, fraction=0.0, tol=1e-9,
                 max_iter=100):
        self.kernel = kernel
        self.sigma = sigma
        self.C = C
        self.C_star = C_star
        self.r = r
        self.fraction = fraction
        self.tol = tol
        self.max_iter = max_iter

    def _check_params(self):
        super()._check_params()
        try:
            fraction = float(self.fraction)
        except (TypeError, ValueError):
            raise TypeError(f"fraction must be a number in [0, 1), got {self.fraction!r}") from None
        if not 0.0 <= fraction < 1.0:
            raise ValueError(f"fraction must lie in [0, 1) (the share of unlabeled labels revealed), got {fraction}")

    def _fit_binary(self, X, y_pm, labeled, gram):
        c_star = self.C if self.C_star is None else self.C_star
        unl = ~labeled
        r = estimate_r(y_pm[labeled]) if self.r is None else self.r
        if self.kernel == "linear":
            first = l2svm_mfn(X[labeled], y_pm[labeled], self.C, lam=1.0, bias="free", tol=min(self.tol, 1e-6),
                              max_iter=self.max_iter)
            out = np.asarray(X[unl] @ first.coef).ravel() + first.intercept
        else:
            first = kernel_newton(gram[np.ix_(labeled, labeled)], y_pm[labeled], self.C, tol=self.tol,
                                  max_iter=self.max_iter)
            out = gram[np.ix_(unl, labeled)] @ first.coef + first.intercept
        # Constraint (3) on the points still unlabeled: exactly round(u r) of them positive.
        y_all = y_pm.copy()
        y_all[unl] = threshold_to_count(out, n_positive(int(unl.sum()), r))
        cost = np.where(labeled, self.C, c_star)
        if self.kernel == "linear":
            res = l2svm_mfn(X, y_all, cost, lam=1.0, bias="free", tol=min(self.tol, 1e-6), max_iter=self.max_iter)
        else:
            res = kernel_newton(gram, y_all, cost, tol=self.tol, max_iter=self.max_iter)
        return BinaryFit(np.asarray(res.coef, dtype=float), float(res.intercept), first.n_iter + res.n_iter,
                         res.stop_reason, {"objective": res.objective})
