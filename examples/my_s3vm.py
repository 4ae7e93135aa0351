"""A minimal new solver for ``s3vm-bench compare`` (README: "Measure your own solver").

Run from this directory::

    PYTHONPATH=. s3vm-bench compare my_s3vm:SupervisedOnly --datasets two_moons --splits 10
"""

import numpy as np

from s3vm_bench.solvers._base import BaseS3VM, BinaryFit
from s3vm_bench.solvers._primal import kernel_newton


class SupervisedOnly(BaseS3VM):
    """Ignores the unlabeled points (cost 0): the weakest possible "S3VM", so the gap is positive."""

    balance = "threshold"  # the harness thresholds the outputs to exactly round(u r) positives

    def __init__(self, kernel="rbf", sigma=1.0, C=1.0, C_star=None, r=None):
        self.kernel, self.sigma, self.C, self.C_star, self.r = kernel, sigma, C, C_star, r

    def _fit_binary(self, X, y_pm, labeled, gram):
        res = kernel_newton(gram, np.where(labeled, y_pm, 1.0), np.where(labeled, self.C, 0.0))
        return BinaryFit(coef=res.coef, intercept=res.intercept, n_iter=res.n_iter, stop_reason=res.stop_reason)
