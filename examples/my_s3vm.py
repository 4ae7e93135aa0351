"""Two small solvers from outside the package, for ``s3vm-bench run``, ``compare`` and ``reproduce``.

``SelfTraining`` is a plain scikit-learn estimator: it needs nothing from the suite. ``SupervisedOnly``
uses the suite's public base class (:mod:`s3vm_bench.solvers.base`) and its primal Newton solver.
Name them by file, from anywhere::

    s3vm-bench compare examples/my_s3vm.py:SelfTraining --datasets two_moons --splits 10
    s3vm-bench run --solver examples/my_s3vm.py:SupervisedOnly --dataset g50c --splits 2
    s3vm-bench reproduce jmlr2008-table8 --datasets g50c --solvers examples/my_s3vm.py:SelfTraining
"""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.svm import SVC

from s3vm_bench.solvers.base import BaseS3VM, BinaryFit
from s3vm_bench.solvers.numerics import kernel_newton


class SelfTraining(ClassifierMixin, BaseEstimator):
    """Self-training with an RBF SVC: label the unlabeled points (``y == -1``) by the SVC trained on
    the labeled ones, retrain on all of them, ``n_rounds`` times."""

    def __init__(self, kernel="rbf", sigma=1.0, C=1.0, C_star=None, r=None, n_rounds=3):
        self.kernel, self.sigma, self.C, self.C_star, self.r, self.n_rounds = kernel, sigma, C, C_star, r, n_rounds

    def _svc(self):
        return SVC(kernel=self.kernel, gamma=1.0 / (2.0 * self.sigma ** 2), C=self.C)

    def fit(self, X, y):
        labeled = np.asarray(y) != -1
        self.svc_ = self._svc().fit(X[labeled], y[labeled])
        for _ in range(self.n_rounds):
            self.svc_ = self._svc().fit(X, np.where(labeled, y, self.svc_.predict(X)))
        self.classes_ = self.svc_.classes_
        return self

    def decision_function(self, X):
        return self.svc_.decision_function(X)

    def predict(self, X):
        return self.svc_.predict(X)


class SupervisedOnly(BaseS3VM):
    """Ignores the unlabeled points (cost 0): the weakest possible "S3VM", so the gap is positive."""

    balance = "threshold"  # the harness thresholds the outputs to exactly round(u r) positives

    def __init__(self, kernel="rbf", sigma=1.0, C=1.0, C_star=None, r=None):
        self.kernel, self.sigma, self.C, self.C_star, self.r = kernel, sigma, C, C_star, r

    def _fit_binary(self, X, y_pm, labeled, gram):
        res = kernel_newton(gram, np.where(labeled, y_pm, 1.0), np.where(labeled, self.C, 0.0))
        return BinaryFit(coef=res.coef, intercept=res.intercept, n_iter=res.n_iter, stop_reason=res.stop_reason)
