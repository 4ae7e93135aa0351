"""The (re)training back-ends of S3VM-light (JMLR 2008, Algorithm 1): one SVM per loss and kernel.

Each has ``supervised(y, cost)`` and ``retrain(y, cost, prev)`` returning a
:class:`solvers._primal.PrimalResult`: the squared hinge (p = 2) by kernel Newton on the Gram
matrix (:class:`_KernelTrainer`) or by L2-SVM-MFN on X (:class:`_LinearTrainer`), both
warm-started from ``prev``; the hinge (p = 1) by libsvm's dual (:class:`_HingeTrainer`).
Used by :mod:`solvers.s3vm_light`, whose module docstring describes the choices.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ._losses import hinge_loss
from ._primal import CholeskyCache, PrimalResult, kernel_newton, l2svm_mfn


class _KernelTrainer:
    """L2-SVM on the Gram matrix by primal Newton, warm-started (coef = beta over all points)."""

    def __init__(self, gram, tol, max_iter):
        # The Newton systems' factorization is kept across the retrains of one fit.
        self.K, self.tol, self.max_iter = CholeskyCache(gram), tol, max_iter

    def supervised(self, y, cost):
        # Cost 0 on the unlabeled points: the Newton steps only involve the labeled ones.
        return kernel_newton(self.K, y, cost, tol=self.tol, max_iter=self.max_iter)

    def retrain(self, y, cost, prev):
        return kernel_newton(self.K, y, cost, beta0=prev.coef, b0=prev.intercept, tol=self.tol,
                             max_iter=self.max_iter)


class _LinearTrainer:
    """L2-SVM-MFN with a free bias (JMLR eq. 1), warm-started (coef = w); dense or CSR X."""

    def __init__(self, X, labeled, tol, max_iter):
        self.X, self.labeled, self.tol, self.max_iter = X, labeled, tol, max_iter

    def supervised(self, y, cost):
        lab = self.labeled
        res = l2svm_mfn(self.X[lab], y[lab], cost[lab], lam=1.0, bias="free", tol=self.tol,
                        max_iter=self.max_iter)
        outputs = np.asarray(self.X @ res.coef).ravel() + res.intercept
        return dataclasses.replace(res, outputs=outputs, support=(cost > 0) & (y * outputs < 1.0))

    def retrain(self, y, cost, prev):
        return l2svm_mfn(self.X, y, cost, lam=1.0, w0=prev.coef, b0=prev.intercept, bias="free", tol=self.tol,
                         max_iter=self.max_iter)


class _HingeTrainer:
    """Hinge-loss SVM (p = 1) by libsvm's dual, scikit-learn's ``SVC`` with ``C = 1`` and the costs
    as ``sample_weight`` (libsvm multiplies C by each example's weight, so C and C~ enter exactly).

    Points of cost 0 are left out. ``coef`` is beta over all points (rbf: ``dual_coef_`` = y_i
    alpha_i placed at the support vectors, ``f = K beta + b``) or w (linear, dense or CSR X). libsvm
    has no warm start: ``retrain`` ignores ``prev``. The objective is eq. (1) with p = 1.

    libsvm's kernel cache dies with each fit, so with the linear kernel every retraining would
    recompute the inner products; the linear Gram matrix ``X X^T`` is therefore formed once when
    it takes at most ``LINEAR_GRAM_MAX_BYTES`` (n <= 5000), and the solves run on it
    (precomputed kernel). Larger problems use libsvm's linear kernel on X, with no n x n matrix.
    """

    LINEAR_GRAM_MAX_BYTES = 200 * 2 ** 20

    def __init__(self, X, gram, tol, linear_gram=None):
        self.X, self.K, self.tol = X, gram, tol
        self.linear_gram = linear_gram
        if gram is None and linear_gram is None and 8 * X.shape[0] ** 2 <= self.LINEAR_GRAM_MAX_BYTES:
            G = X @ X.T
            self.linear_gram = np.asarray(G.toarray() if hasattr(G, "toarray") else G, dtype=float)

    def supervised(self, y, cost):
        return self._fit(y, cost)

    def retrain(self, y, cost, prev):
        return self._fit(y, cost)

    def _fit(self, y, cost):
        from sklearn.svm import SVC

        keep = np.flatnonzero(cost > 0.0)
        gram = self.K if self.K is not None else self.linear_gram
        if gram is not None:
            svc = SVC(C=1.0, kernel="precomputed", tol=self.tol, cache_size=200, max_iter=-1)
            sub = gram if keep.size == gram.shape[0] else gram[np.ix_(keep, keep)]  # no n x n copy if all
            svc.fit(sub, y[keep], sample_weight=cost[keep])
        else:
            svc = SVC(C=1.0, kernel="linear", tol=self.tol, cache_size=200, max_iter=-1)
            svc.fit(self.X[keep], y[keep], sample_weight=cost[keep])
        # classes_ are sorted, [-1, 1]: the decision function is positive for +1.
        if not np.array_equal(svc.classes_, [-1.0, 1.0]):  # pragma: no cover - guarded by the base class
            raise RuntimeError(f"expected classes [-1, 1] in the hinge SVM, got {svc.classes_}")
        sv = keep[svc.support_]
        dual = svc.dual_coef_  # a sparse matrix when X is
        alpha = np.asarray(dual.toarray() if hasattr(dual, "toarray") else dual, dtype=float).ravel()
        b = float(svc.intercept_[0])
        if self.K is not None:
            coef = np.zeros(y.size)
            coef[sv] = alpha
            outputs = self.K[:, sv] @ alpha + b
            reg = 0.5 * float(alpha @ outputs[sv]) - 0.5 * b * float(alpha.sum())
        else:
            coef = np.asarray(self.X[sv].T @ alpha, dtype=float).ravel()
            outputs = np.asarray(self.X @ coef, dtype=float).ravel() + b
            reg = 0.5 * float(coef @ coef)
        margins = y * outputs
        objective = reg + float(np.sum(cost * hinge_loss(margins).value))
        return PrimalResult(coef, b, objective, int(np.sum(svc.n_iter_)), "kkt_tol", outputs,
                            (cost > 0.0) & (margins < 1.0))
