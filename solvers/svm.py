"""Supervised baselines: the L2-SVM on the labeled points only, and the 5-fold CV reference.

* ``svm`` -- JMLR 2008 Table 8, "SVM" column: a standard SVM (p = 2, eq. 1 without the
  unlabeled term) trained on the labeled points only. Kernel: primal Newton in the expansion
  coefficients (Chapelle 2007); linear: L2-SVM-MFN with a free bias (SIGIR 2006 Sec. 2).
* ``svm_5cv`` -- JMLR 2008 Table 8, "SVM-5cv" column: the same SVM trained with the true labels
  of every point; the harness reports its 5-fold cross-validation error (a lower bound on the
  achievable error). The estimator is the same; :attr:`SVM5CV.evaluation` tells the harness.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from ._base import BaseS3VM, BinaryFit
from ._primal import kernel_newton, l2svm_mfn
from ._validation import Interval, Options

__all__ = ["SVM", "SVM5CV"]


class SVM(BaseS3VM):
    """Squared-hinge SVM on the labeled points (unlabeled points, ``y == -1``, are ignored).

    Minimizes ``1/2 ||w||^2 + C sum_labeled max(0, 1 - y_i (w.x_i + b))^2`` with a free bias
    (JMLR 2008 eq. 1, p = 2, no unlabeled term).

    Parameters
    ----------
    kernel : {"rbf", "linear"}, default="rbf"
        ``exp(-||x - z||^2 / (2 sigma^2))`` (JMLR 2008 Sec. 5.2) or the linear kernel.
    sigma : float, default=1.0
        Gaussian width (JMLR 2008 Table 5 gives it per data set).
    C : float, default=1.0
        Cost of the labeled losses.
    tol : float, default=1e-9
        Stopping tolerance handed to the primal solver.
    max_iter : int, default=100
        Newton/MFN iterations at most.

    Attributes
    ----------
    classes_ : ndarray
    dual_coef_ : ndarray of shape (n_problems, n_labeled)
        Expansion coefficients over ``X_fit_`` (rbf kernel).
    coef_ : ndarray of shape (n_problems, n_features)
        Weights (linear kernel).
    intercept_ : ndarray of shape (n_problems,)
    transduction_ : ndarray of shape (n_samples,)
        Labels of the training points (predicted where unlabeled).
    n_iter_ : ndarray of shape (n_problems,)
    stop_reason_ : list of str

    References
    ----------
    .. [1] O. Chapelle. Training a support vector machine in the primal. *Neural Computation*,
           19(5):1155-1178, 2007.
    .. [2] O. Chapelle, V. Sindhwani and S. S. Keerthi. Optimization techniques for semi-supervised support
           vector machines. *Journal of Machine Learning Research*, 9:203-233, 2008.
    """

    _needs_unlabeled = False
    evaluation = "transductive"
    _parameter_constraints: dict = {
        "kernel": [Options({"rbf", "linear"})],
        "sigma": [Interval(Real, 0, None, closed="neither"), None],
        "C": [Interval(Real, 0, None, closed="neither")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, kernel="rbf", sigma=1.0, C=1.0, tol=1e-9, max_iter=100):
        self.kernel = kernel
        self.sigma = sigma
        self.C = C
        self.tol = tol
        self.max_iter = max_iter

    def _expansion_mask(self, labeled):
        return labeled  # the solution only involves the labeled points

    def _fit_binary(self, X, y_pm, labeled, gram):
        y_l = y_pm[labeled]
        if self.kernel == "linear":
            res = l2svm_mfn(X[labeled], y_l, self.C, lam=1.0, bias="free", tol=min(self.tol, 1e-6),
                            max_iter=self.max_iter)
        else:
            res = kernel_newton(gram, y_l, self.C, tol=self.tol, max_iter=self.max_iter)
        return BinaryFit(np.asarray(res.coef, dtype=float), float(res.intercept), res.n_iter, res.stop_reason,
                         {"objective": res.objective})


class SVM5CV(SVM):
    """:class:`SVM` whose protocol evaluation is 5-fold CV with every point's true label.

    JMLR 2008 Table 8 last column [1]_. Fitting it directly behaves exactly like :class:`SVM`.

    References
    ----------
    .. [1] O. Chapelle, V. Sindhwani and S. S. Keerthi. Optimization techniques for semi-supervised support
           vector machines. *JMLR*, 9:203-233, 2008 (Sec. 5.2, Table 8).
    """

    evaluation = "cv5"
